// Package direct is the peer-to-peer transport of docs/architecture.md §5:
// a WebRTC data channel, unordered with a 150 ms lifetime, between every
// pair of players in a room, carrying states only. The room server's signal
// messages carry the offers and answers; the lower slot offers. Players
// who cannot link stay on the server path.
//
// # Layers
//
// A link is WebRTC's data-channel stack without its SDP and media parts,
// built from pion's lower layers: ICE (pion/ice: host, server-reflexive
// and relay candidates from the room's STUN and TURN servers, host ones
// as mDNS names; the offerer is the controlling agent), DTLS
// (pion/dtls over the ICE connection; the offerer is the client), an SCTP
// association (pion/sctp) and one data channel on it (pion/datachannel,
// label "nearzero-states", stream 0, unordered, with timed partial
// reliability: SCTP may retransmit a message for 150 ms, then gives it
// up). Each Mesh makes a self-signed ECDSA P-256 certificate; the DTLS
// handshake accepts only a peer certificate whose SHA-256 hash is the
// fingerprint the peer signalled, which is what authenticates a link (to
// the signalling channel, the server, as in WebRTC). Browsers are not
// peers: only nearzero clients link.
//
// The channel's lifetime, not a count of retransmits, is what keeps
// jitter from losing states: a message given up is announced to the
// receiver (FORWARD-TSN), and with 0 retransmits the announcement leaves
// at once, overtakes the message on a jittery path, and makes the
// receiver discard it when it comes (a quarter of the states, at ±10 ms).
// A message is given up only once it is older than any path delays it.
//
// # Link-up
//
// A link should be up within a few round trips of the offer, on a lossy
// path too. The offer and the answer go out at once, and each side's
// candidates follow one by one as they are gathered (trickle), so a pair
// of host candidates on a LAN links while an unreachable STUN or TURN
// server is still being tried, and gathering does not count against
// ConnectTimeout. ICE checks every 50 ms and takes a working direct pair
// at once (pion waits 0.5 to 2 s for better ones; a relay pair waits 300
// ms for a direct one); DTLS skips the cookie exchange (ICE's checks
// proved the peer's address) and retransmits a lost flight after 250 ms;
// the SCTP association opens from the INIT chunks the offer and answer
// carry (SNAP), and the data channel is negotiated (both sides make stream
// 0), so no handshake runs after DTLS's. The first states are placed in
// time with the round trip ICE's checks measured on the pair, without
// waiting for a ping.
//
// # Candidates
//
// A peer's candidates are addresses of its choosing that we send
// connectivity checks to (up to 41 to each, from each of our candidates),
// and ours tell any player of the room where we are, so both ways are
// bounded:
//
//   - Ours: a host candidate (an address of our own: LAN, IPv6) goes as an
//     mDNS name, a random "….local" that only a machine on our network
//     resolves, as browsers do; Config.ShareHostCandidates sends the
//     addresses instead. Loopback and link-local candidates are never
//     sent (loopback with Config.LoopbackCandidates, for two instances on
//     a machine with no network, and tests), nor is the related address
//     of a server-reflexive or relay candidate ("raddr 0.0.0.0 rport 0").
//     Where pion cannot open its multicast socket, host candidates are
//     not sent at all unless shared.
//   - Theirs: only UDP host, server-reflexive and relay candidates at an
//     address of one machine (not loopback, link-local, unspecified,
//     multicast, broadcast or reserved), or an mDNS name for a host one,
//     are taken; at most Config.MaxCandidates per attempt (16), the
//     offer's or answer's list and the trickled ones together, no type
//     more than half of them. The rest are ignored (Stats.Ignored).
//   - A peer's offers start attempts: we answer at most Config.OfferBurst
//     (3) at once, then Config.OfferRate (one per 5 s); the others are
//     ignored (Stats.OffersIgnored; the first is logged as a warning).
//
// Two players on one network whose STUN and TURN servers are out of reach
// still link: each resolves the other's mDNS name by multicast on the
// LAN (the one who resolves second often learns the other's address from
// its checks first: a peer-reflexive remote candidate, the same address).
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
// the direct and server paths agree on when a state was sampled. Each
// side's pongs also carry its fastest trip of the other's states
// (clock.Restamper.ObservePeerGap): the two fastest one-way trips, from 60
// states a second each way, make a far tighter round trip than a ping a
// second, and keep the mapping within a couple of milliseconds under
// jitter.
//
// # Messages on a data channel
//
// A state frame as on the server link (one per message; the slot byte is
// ignored: the link says who sent it), or a ping: 0xC1, 'p', then the
// pinger's clock in microseconds, int64 little-endian; or a pong: the ping
// echoed with 'P', then the ponger's lowest stamp-to-arrival gap of the
// pinger's states in microseconds, int64 little-endian (math.MinInt64
// before it has one).
// Anything else is garbage: a peer sending MaxBad of it, or more than
// MaxRate messages a second, is dropped from direct play with a log line.
//
// # Signals
//
// An offer's or answer's Data is a JSON object of version SignalVersion
// (2), at most protocol.MaxSignalData bytes:
//
//	{"v":2,"ufrag":"…","pwd":"…","fp":"sha-256 AB:CD:…","sctp":"…"}
//
// ufrag and pwd are the sender's ICE credentials for this attempt, fp the
// SHA-256 fingerprint of its DTLS certificate (32 bytes in hex, colon
// separated), sctp its SCTP INIT chunk (base64, at most 1 KiB; SNAP). Its
// ICE candidates follow as "candidate" signals, Data one candidate as
// pion writes it ("candidate:" optional); a "cands" array in the offer or
// answer is taken too. A link costs a handful of signals, well inside the
// server's signal budget. A signal that does not decode, or of another
// version, fails that attempt with a log line; the pair stays on the
// server path. Version 1 (candidates gathered in full before the offer,
// the SCTP handshake and the data channel's open message on the link,
// 0 retransmits) cannot link with version 2; the two play over the
// server, as clients from before version 1 (SDP) do with either.
package direct
