// Package core is the client's logic with no goroutines and no sockets:
// stepped by (now, message) like server/room, it is what
// client/serverlink's Conn (the server link) and client/direct (the peer
// links) wrap with their sockets and goroutines, and what the bench
// (bench/internal/netbench) drives on simulated links, so the bench
// measures the code that ships.
//
//   - ServerPath is the server path's logic (no server, and no room: the
//     game's room is client/netroom's, the server's server/room's): the
//     clock sync (pings out, pongs in), the mapping of relayed stamps onto
//     the local clock, and the outgoing state queue with its batching.
//   - Queue holds outgoing states as wire.State values; AppendBatch encodes
//     each once, into the caller's reused buffer, at the write. It owns the
//     send lead: a state first sent at most Lead after its sample is carried
//     forward to the write and stamped then (sender.Carry), once, so the
//     sender's own delay (a frame's time behind the wall clock, a writer's
//     wake-up) is not taken for network delay by the receivers.
//   - Peer is one direct link: its pings (the one format, 0xC1 'p'/'P') and
//     the re-stamping of the peer's stamps onto the local clock.
//
// Nothing here is safe for concurrent use: the wrapper serialises calls.
// Time is always passed in (the local clock), never read.
package core
