// Package netroom is the engine-free model behind the Godot node NetRoom
// (extension/): the game-side room, everything that node decides, written
// as plain Go that `go test` reaches without the engine. The node only
// moves values between the engine and this package. The NetPredictor's
// model, the entities drawn and sent, is client/entity, which binds to a
// Room; this package knows them only as Receivers.
//
// Four types are "a room" in this repository: Room here is the game's
// model of its seat in a room; client/serverlink's Conn is the WebSocket
// connection to the server that a Room drives; client/core's ServerPath
// is that connection's clock sync and stamp mapping, with no socket; and
// server/room's Room is the server's own room, which the others talk to.
//
// # Parts
//
//	Room    one player's connection and room: connect, create, join, leave,
//	        ready, start, vote...; turns what the server said into Events
//	        (the NetRoom's signals), keeps the player list, says which
//	        remote players need a spawned scene (EventSpawn, EventDespawn),
//	        spawns and despawns entities, follows shared objects' owners,
//	        keeps the synced properties others sent, and routes each
//	        received state to the Receiver bound to its key, (slot, entity)
//	        with entity 0 a player's own: one path for the server's states
//	        and the direct links', called once per frame (Route, from the
//	        NetRoom's _process, which runs before the NetPredictors':
//	        ProcessPriority). With the room's input delay (SetInputDelay,
//	        InputDelay; netcode/inputdelay) every state is placed that far
//	        ahead of its mapped time first.
//	Receiver
//	        what the Room asks of a drawn entity (Add, Jitter, Loss):
//	        client/entity's Remote, bound by its NetPredictor (Bind,
//	        BindEntity). Our own entities that send hold a claim of their
//	        id (ClaimLocalEntity), so that one id has one sender.
//	ServerLink, Dialer
//	        the part of the server connection (client/serverlink) the Room
//	        uses, and how it makes one: tests script a fake.
//	direct links
//	        once seated with other players, a Room makes its direct peer
//	        links (client/direct, through Config.NewDirect; off with
//	        Config.NoDirect or SetDirectLinks(false)): it hands them the
//	        server's signals and our states, routes what they receive to
//	        the Receivers on the direct path, and reports each link up at
//	        its first state and down after DirectSilence, so the server
//	        stops and resumes relaying that pair. Direct states skip the
//	        server's checks, so the Room runs the same motion checks
//	        (netcode/motion, the room's limits from the welcome) per sender
//	        and entity: a failing state is dropped, and a sender that fails
//	        DirectFailLimit times within DirectFailWindow is dropped to the
//	        server path and reported (protocol.DirectCheat).
//	Events  game events and chat (their arguments typed by
//	        netcode/typedargs), hits, entity spawns, owners and synced
//	        properties, each one NetRoom signal.
//	RoomWarnings
//	        the NetRoom's configuration warnings, from what the editor sees.
//
// # Threads
//
// A Room and the entities bound to it belong to one goroutine: the
// engine's main thread, which calls Update and Route once per frame (the
// NetRoom), then draws each entity (the NetPredictors, client/entity).
// Blocking work (dial, create, join, leave, close) runs in goroutines that
// never call back: they queue their result, and the next Update applies
// it. The server link (client/serverlink) and the direct links
// (client/direct) likewise queue events, signals and states until they
// are polled. So no engine call can ever come from a goroutine.
//
// # Time
//
// Every time is a time.Duration on one local clock (Config.Clock, a
// client/realtime.Clock; default a realtime.Wall), the one the server link
// stamps arrivals with: the arrivals routed, the times passed to Update
// and the entities' samples and frames are all on it. The server's clock
// is reached through Room.ServerTime.
//
// # Invariants
//
//   - No cgo and no engine; goroutines only for blocking network calls, and
//     every one ends at Close. A panic in one is recovered, logged and
//     reported as EventError (ErrPanic), never a crash of the game; so are
//     those the server link recovers in its own goroutines
//     (serverlink.ErrPanic).
//   - Update and Route do not allocate when nothing happened in the room
//     (the per-frame path), nor does a Receiver's Add (client/entity's
//     TestFramePathDoesNotAllocate runs them with 64 Remotes).
//   - Events come out in the order the server's messages arrived; after
//     EventDisconnected or EventLeft no spawned slot remains (each got
//     EventDespawn).
//   - A slot is spawned at most once at a time, and never the local one.
//   - This package imports no entity model (test/boundaries): entities
//     bind to the Room, the Room routes to Receivers.
package netroom
