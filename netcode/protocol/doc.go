// Package protocol is the room protocol between nearzero clients and the room
// server: the control message types and their JSON bodies, the numeric error
// and close codes, room codes and invite links, display-name rules, and the
// framing of state batches.
//
// # Transport
//
// One WebSocket connection per client, binary messages only. A message is
// either one control frame (wire.AppendControl: 0xC0, protocol version,
// type, JSON body) or one or more state frames (wire.AppendState) back to
// back; a state frame's length follows from its header byte (StateLen), so a
// batch needs no extra framing. The server batches the states queued for a
// slow moment into one message; clients may send one state per message.
//
// The full message-by-message description, written for someone writing
// another client, is docs/protocol.md at the repository root.
//
// # Times
//
// Every time in a JSON body is an integer count of microseconds: times on
// the server clock are named *_us and count from the server's arbitrary
// origin; durations are named *_us too and say so in their doc.
//
// # Invariants
//
//   - Decode never panics, whatever the input; unknown types and malformed
//     bodies are errors (ErrUnknownType, ErrBadBody) and another protocol
//     version is a *wire.UpdateRequiredError.
//   - Codes 4000-4999 are ours and mean the same in an Error message and in
//     a WebSocket close frame; 1000 and 1001 are the RFC 6455 codes.
//   - Room codes use CodeAlphabet only: no 0/O, no 1/I/L.
package protocol
