// Package typedargs is the codec of the room protocol's typed arguments
// (docs/protocol.md §2, "Typed arguments"): the Godot values an event's
// args, a spawn's args and a synced property carry, as JSON. Besides
// JSON's own (null, bool, numbers, strings, arrays), each Godot type is a
// JSON object whose member "@" names the type: a Dictionary keeps its
// order and its key types, and the numbers of a math type (Vector2 ...
// Transform3D) or a packed array are the base64 of their bytes,
// little-endian as the engine lays them out, so floats arrive bit for bit.
//
// The server relays these bytes as they are: it checks only their size
// and nesting depth (protocol.CheckEvent, CheckSpawn, CheckProp), which
// Encode keeps within (MaxDepth). Clients encode with Encode and decode
// with Decode.
//
// # Invariants
//
//   - Decode never panics, whatever its input (fuzzed: FuzzDecode), and
//     what it decodes within MaxDepth Encode takes back: decoded again,
//     the same values.
//   - A typed value nests one level, like the array it once was, so the
//     depth the server counts is the depth Encode checks.
//   - Pure Go: no cgo, no engine, no sockets.
package typedargs
