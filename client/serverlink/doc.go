// Package serverlink is a client's link to the room server: one WebSocket
// connection speaking the room protocol (docs/protocol.md), Conn. It is
// what the game's room model (client/netroom), the load test and the
// server's tests use to talk to nearzero-server. Pure Go, no cgo. It is
// the socket and the goroutines around client/core's ServerPath, which
// holds the logic (and which the bench drives on simulated links).
//
// Conn is the connection, not the room: the room the game sees (its seat,
// players, spawns, entities) is client/netroom's Room, which drives a Conn;
// the server's own room is server/room's Room.
//
// # Use
//
//	c, err := serverlink.Dial(ctx, "ws://127.0.0.1:8787/ws", &serverlink.Options{Name: "Ann", Token: saved})
//	joined, err := c.Join(ctx, "ABC-DEF")            // or c.Create(ctx, nil)
//	c.Send(&protocol.Ready{Ready: true})              // any room message; never blocks
//	c.SendState(&st)                                  // the local player's state; never blocks
//	for _, ev := range c.PollEvents(nil) { ... }      // each frame, on the engine's thread
//	for _, rs := range c.PollStates(nil) { ... }      // rs.Local: sample time on the local clock
//	c.Close(ctx)
//
// Keep c.Token() to stay the same player next time.
//
// # What it does for you
//
//   - Clock sync: pings on the netcode/clock.Sync schedule, each carrying the
//     best round trip so far (which the server's re-stamp estimator uses);
//     ServerTime and LocalTime convert, RTT reports.
//   - Remote states: each relayed state's server stamp is mapped onto the
//     local clock, Local = LocalTime(stamp.Near(ServerTime(arrival))), and
//     queued with its Arrival. States before the first sync are dropped.
//   - Sending states: SendState queues the state as a value, without
//     allocating; the writer encodes each queued state once, into one
//     reused buffer, and carries a fresh one forward from its sample to
//     the write (Options.SendLead, the one send lead), so the receivers do
//     not take the sender's own delay for network delay.
//   - A dead server is noticed: after a third of SilenceTimeout (2.4 s)
//     without a message the client pings, and once nothing arrived for
//     SilenceTimeout plus the round trip it takes the connection for dead
//     (ErrServerSilent) and reconnects, as for a dropped one: a hung
//     server, or a host or NAT mapping gone from the network, would
//     otherwise leave the game frozen and "connected" for minutes.
//   - Reconnects: a lost connection is retried with exponential back-off
//     (BackoffMin doubling to BackoffMax, ±20% jitter, seeded per client)
//     for ReconnectFor, in turn to the node last connected to, the URL
//     given to Dial and the other nodes of a cluster (the welcome names
//     them); the room is rejoined with via "reconnect", keeping the slot
//     within the server's seat hold, and nothing else is sent until the
//     rejoin is answered. A room whose node is gone is reported
//     EventRoomLost once the directory says so. Closes that must not be
//     retried (protocol.Code.Fatal: update required, session replaced,
//     abuse) end the client with EventDisconnected.
//   - A create placed on another node of a cluster that does not answer
//     is made on the node connected to instead.
//   - Time-outs everywhere: DialTimeout per attempt, RequestTimeout for
//     Create/Join/Leave, CloseTimeout for Close; nothing waits forever.
//   - The lag simulator (Options.Lag): latency, jitter and loss under the
//     server link, both ways: as TCP on the WebSocket (reliable messages
//     keep their order), as UDP on the datagram path. Off by default.
//
// # Invariants
//
//   - Nothing is called back: events and states wait in bounded queues
//     (oldest dropped and counted) until PollEvents and PollStates; Notify
//     signals goroutine users. The engine's thread never blocks on the client.
//   - Every method is safe for concurrent use; only Dial, Create, Join,
//     Leave and Close block, each bounded by its context and a time-out.
//   - Every goroutine ends at Close (or when Dial fails).
package serverlink
