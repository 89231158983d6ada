// Package server is nearzero's room server: the room logic of package room
// on real WebSocket connections (github.com/coder/websocket), with
// identities, storage, health, metrics, analytics and draining. The
// command is server/cmd/nearzero-server; the protocol is docs/protocol.md.
//
// # Shape
//
//	Server         directory of rooms by code, sessions by user, HTTP routes
//	  host         one room.Room behind a mutex, with a timer armed for Room.Next
//	  conn         one WebSocket: the handler goroutine reads and calls the
//	               room under its lock; a writer goroutine drains two queues
//
// A connection says Hello (versions checked, identity issued or verified,
// an older session of the same user closed with CodeSessionReplaced), then
// creates or joins a room by code. From then on every message goes to the
// room's HandleFrame: the same relay path the bench runs in memory.
//
// # Backpressure
//
// A room never blocks on a connection. Relayed states go to a ring of
// Config.StateQueue slots per connection; when it is full the oldest state
// is dropped and counted (states are droppable). Reliable messages go to a
// queue of Config.ControlQueue messages and Config.ControlQueueBytes bytes
// (what a join replays at once fits); when it overflows, the connection is
// closed with CodeTooSlow. The writer sends reliable messages in order and,
// after each, every queued state in one message (a batch), so states never
// wait behind a reliable backlog; the room refuses events for a connection
// whose reliable backlog passes room.Config.BacklogBytes (conn implements
// room.Backlogged), charging their senders. A janitor closes a connection
// whose write has blocked longer than Config.WriteTimeout. The writer is
// woken once per batch, and may wait Config.WriteCoalesce for a tick's
// other states (off by default); nearzero_state_writes_total counts its
// writes of states.
//
// # Overload
//
// The server measures how far behind its own work it runs (busy.go: the
// Go scheduler's delay, 99th percentile, and the lateness of its own
// sampling tick, held 5 s; nearzero_sched_delay_seconds; Deps.Delay
// replaces it). From Config.BusyAfter its rooms judge states on their
// players' timelines (room.Hooks.Behind), so that a backlog in reading
// refuses and kicks nobody; from Config.OverloadAfter (lasting: a quarter of
// the samples held) it refuses new rooms
// (CodeServerFull, limited "overload", nearzero_overloaded; a cluster node
// takes no placements) until it keeps up again. Rooms that play keep
// playing.
//
// # Draining
//
// Drain: Create is refused (CodeDraining), rooms start no new round and are
// told the server is updating (Notice server_updating), /healthz answers
// 503 with the grace left; once no round runs (or DrainGrace ends) every
// connection is closed with 1001 going away, spread over CloseSpread.
// Shutdown then stops the listener and background work; a round still
// running then (the drain was cut short) is stored as interrupted.
//
// # Invariants
//
//   - Locks: Server.mu and a host's mu are never held together; a
//     connection's queue lock is innermost. Peer and Hooks calls made under a
//     room's lock only queue.
//   - Storage is written by background goroutines (never under a room
//     lock): names through a bounded queue that drops (and logs at most
//     once per 10 s), round results through their own queue that never
//     drops and retries until stored (Shutdown waits for it, then logs what
//     is left whole). User rows are written with results, not for Hellos.
//     Analytics go to their own goroutine (Deps.Analytics) and drop rather
//     than block.
//   - The server links no exporter: its metrics (server/metrics) are plain
//     atomics, and the caller serves them (metrics/prom, Deps.MetricsHandler),
//     so a game that embeds it (server/embedded) links no Prometheus client.
//   - Per-address limits (connections, open rooms, new identities, failed
//     joins) key on the remote IP, /64 for IPv6 (limit.go); their limiter
//     forgets idle addresses, so memory does not grow with addresses seen.
//     Open rooms and connections are also counted per network (/24, /48),
//     rooms in the lobby may not take Config.PlayingReserve of MaxRooms,
//     nor networks holding 2 rooms Config.SmallNetReserve of the rest, and
//     a lobby that starts no round closes after Config.LobbyTimeout
//     (host.go).
//   - Connections are capped in all: the listener closes sockets over
//     Config.MaxSockets (below the open-file limit) at accept, and /ws
//     answers 503 over Config.MaxConns (listener.go, conn.go); the last
//     Config.ConnReserve of both is kept for addresses holding few.
//   - TURN credentials go out only in the Joined that seats a player (the
//     welcome carries STUN alone), and the embedded TURN relay (turn.go,
//     Deps.TURN) serves seated players only, within quotas per player,
//     address and in all, its sockets counted in MaxSockets; an
//     allocation not refreshed closes.
//   - Every goroutine the server starts ends at Shutdown.
package server
