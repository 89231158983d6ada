// Package direct is the peer-to-peer transport of docs/architecture.md §5:
// a WebRTC data channel, unordered with no retransmits, between every pair
// of players in a room, carrying states only. The room server's signal
// messages carry the offers and answers; the lower slot offers. Players
// who cannot link stay on the server path.
//
// # Layers
//
// A link is WebRTC's data-channel stack without its SDP and media parts,
// built from pion's lower layers: ICE (pion/ice: host, server-reflexive
// and relay candidates from the room's STUN and TURN servers, loopback
// included, mDNS off; the offerer is the controlling agent), DTLS
// (pion/dtls over the ICE connection; the offerer is the client), an SCTP
// association (pion/sctp) and one data channel on it (pion/datachannel,
// label "nearzero-states", partial reliability with 0 retransmits,
// unordered). Each Mesh makes a self-signed ECDSA P-256 certificate; the
// DTLS handshake accepts only a peer certificate whose SHA-256 hash is the
// fingerprint the peer signalled, which is what authenticates a link (to
// the signalling channel, the server, as in WebRTC). Browsers are not
// peers: only nearzero clients link.
//
// A Mesh is one player's links. It imports neither the engine nor the
// server: the room model (client/netroom) drives it through the Links
// interface, which its tests fake.
//
// # Threads
//
// Mesh methods are called from one goroutine (the engine's main thread)
// and never block: pion's blocking calls (gathering, the ICE checks, the
// handshakes, reading a channel, closing) run in the Mesh's goroutines,
// and pion's callbacks only queue. Received states and
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
// # Signals
//
// An offer's or answer's Data is a JSON object of version SignalVersion
// (1), at most protocol.MaxSignalData bytes:
//
//	{"v":1,"ufrag":"…","pwd":"…","fp":"sha-256 AB:CD:…","cands":["…"]}
//
// ufrag and pwd are the sender's ICE credentials for this attempt, fp the
// SHA-256 fingerprint of its DTLS certificate (32 bytes in hex, colon
// separated), cands its ICE candidates as pion writes them ("candidate:"
// optional). Candidates ride in the offer and answer (gathering completes
// first), so a link costs two signals, well inside the server's signal
// budget; a "candidate" signal (trickle: Data is one candidate) is
// accepted too. A signal that does not decode, or of another version,
// fails that attempt with a log line; the pair stays on the server path.
// This format replaced SDP offers and answers (pion/webrtc's): a client
// from before it cannot link with one after it, and the two play over the
// server.
package direct
