// Package direct is the peer-to-peer transport of docs/architecture.md §5:
// WebRTC data channels (pion/webrtc), unordered with no retransmits,
// between every pair of players in a room, carrying states only. The
// room server's signal messages carry the offers and answers; the lower
// slot offers. Players who cannot link stay on the server path.
//
// A Mesh is one player's links. It imports neither the engine nor the
// server: the room model (client/netroom) drives it through the Links
// interface, which its tests fake.
//
// # Threads
//
// Mesh methods are called from one goroutine (the engine's main thread)
// and never block: pion's blocking calls (gathering, closing) run in the
// Mesh's goroutines, and pion's callbacks only queue. Received states and
// outgoing signals wait in queues until Poll and PollSignals. A panic in a
// callback is recovered and logged; the peer it came from is dropped.
//
// # Clocks
//
// Each link re-stamps the sender's stamps onto the local clock with its own
// clock.Restamper, the estimator the server uses for relayed states, fed
// with the link's round trip (measured by pings on the data channel), so
// the direct and server paths agree on when a state was sampled.
//
// # Messages on a data channel
//
// A state frame as on the server link (one per message; the slot byte is
// ignored: the link says who sent it), or a ping: 0xC1, 'p' (ping) or 'P'
// (pong), then the pinger's clock in microseconds, int64 little-endian.
// Anything else is garbage: a peer sending MaxBad of it, or more than
// MaxRate messages a second, is dropped from direct play with a log line.
//
// # Candidates
//
// Candidates ride in the offer and answer (gathering completes first), so
// a link costs two signals, well inside the server's signal budget; a
// "candidate" signal (trickle, from another implementation) is accepted too.
package direct
