// Package wire is nearzero's binary wire format: the per-entity state message,
// the framing of reliable control messages, and the version constants.
//
// # Frames
//
// Every frame (a WebSocket binary message or a data-channel datagram) starts
// with one header byte whose top two bits give the kind:
//
//	01xxxxxx  state of a 3D entity
//	10xxxxxx  state of a 2D entity
//	11000000  control message
//	00xxxxxx  invalid (a zeroed buffer is never a frame)
//
// All multi-byte fields are little-endian, the byte order of Godot's
// PackedByteArray.decode_* helpers, so a GDScript client can read them.
//
// # State message
//
// The low six bits of a state header say which optional parts follow and
// carry three flag bits:
//
//	bit 5  A  acceleration present
//	bit 4  T  turn rate present
//	bit 3  E  extras present (animation state and input bits)
//	bit 2     FlagTeleport: the entity moved discontinuously; receivers snap
//	bit 1     FlagGame1 (game-defined)
//	bit 0     FlagGame0 (game-defined)
//
// Layout of a 3D state, byte by byte:
//
//	off size field
//	  0   1  header (kind, A, T, E, flags)
//	  1   1  sender slot
//	  2   2  sequence, uint16, wraps (compare with Seq.Newer)
//	  4   4  sender timestamp, uint32 in units of 10 µs, wraps every 11.9 h
//	  8  12  position x, y, z as float32
//	 20   6  velocity x, y, z as IEEE 754 half floats
//	 26   4  orientation, smallest three: bits 31-30 index of the dropped
//	         (largest) component, then three 10-bit fields for the others in
//	         x, y, z, w order, each mapping [-1/√2, 1/√2] onto 0..1023
//	 30   6  (A) acceleration x, y, z as half floats
//	  …   2  (T) turn rate about the up axis (+Y), rad/s, half float
//	  …   1  (E) animation state
//	  …   1  (E) input bits
//
// A 3D state is 30 bytes with position, velocity and orientation alone (the
// 32-byte goal is met there) and 40 bytes with every field (the 40-byte
// budget). A 2D state replaces the three-component position, velocity and
// acceleration with two components and the quaternion with one angle:
//
//	off size field
//	  0   8  header, slot, sequence, timestamp as above
//	  8   8  position x, y as float32
//	 16   4  velocity x, y as half floats
//	 20   2  angle about +Z, uint16 mapping [-π, π) in steps of 2π/65536
//	 22   4  (A) acceleration x, y as half floats
//	  …   2  (T) turn rate, rad/s, half float
//	  …   2  (E) animation state, input bits
//
// so 22 to 30 bytes. Half floats hold ±65504 with 11 significant bits: a
// velocity of 20 m/s travels with a step of 1/64 m/s.
//
// # Control message
//
//	off size field
//	  0   1  0xC0
//	  1   2  protocol version, uint16
//	  3   1  message type (defined by the protocol user, see netcode/protocol)
//	  4   …  body, at most MaxControlBody bytes (JSON for the room protocol)
//
// A control frame of another protocol version decodes to an
// *UpdateRequiredError, so the user can be told to update rather than see
// garbage.
//
// # Invariants
//
// Decoders never panic, whatever the input, and DecodeState never allocates:
// truncated, oversized, wrong kind, NaN or infinite numbers all return an error. Every
// decoder has a fuzz target beside it.
package wire
