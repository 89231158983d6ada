// Package netroom is the engine-free model behind the Godot nodes NetRoom
// and NetPredictor (extension/): everything those nodes decide, written as
// plain Go that `go test` reaches without the engine. The nodes only move
// values between the engine and this package.
//
// # Parts
//
//	Room    one player's connection and room: connect, create, join, leave,
//	        ready, start, vote...; turns what the server said into Events
//	        (the nodes' signals), keeps the player list, says which remote
//	        players need a spawned scene (EventSpawn, EventDespawn) and
//	        routes each received state to the Remote bound to its key,
//	        (slot, entity) with entity 0 a player's own: one path for the
//	        server's states and the direct links', called once per frame
//	        (Route, from the NetRoom's _process, which runs before the
//	        NetPredictors': ProcessPriority).
//	Remote  the drawing side of one remote entity: a netcode/predict
//	        Predictor plus the ghost / hidden / snapped changes that become
//	        signals.
//	Local   the owning side: a netcode/sender Sender fed each physics frame,
//	        stamped with the frame's own time (a FrameClock, one per
//	        process), handing due states to the Room.
//	Predictor
//	        the whole model of a NetPredictor: its settings and motion
//	        profile, the mode state machine (unbound, local, remote, fed),
//	        the Remote or Local it drives (settings changed at run time keep
//	        the predictor's history), the visibility policy (Effects), and
//	        FindRoom, which NetRoom a local entity sends through. A second
//	        entity for one player is refused (ErrTaken) and reported.
//	direct links
//	        once seated with other players, a Room makes its direct peer
//	        links (client/direct, through Config.NewDirect; off with
//	        Config.NoDirect or SetDirectLinks(false)): it hands them the
//	        server's signals and our states, routes what they receive to
//	        the Remotes on the direct path, and reports each link up at its
//	        first state and down after DirectSilence, so the server stops
//	        and resumes relaying that pair. Direct states skip the server's
//	        checks, so the Room runs the same motion checks (netcode/motion,
//	        the room's limits from the welcome) per sender and entity: a
//	        failing state is dropped, and a sender that fails
//	        DirectFailLimit times within DirectFailWindow is dropped to the
//	        server path and reported (protocol.DirectCheat).
//	RoomWarnings, PredictorWarnings
//	        the nodes' configuration warnings, from what the editor sees.
//
// # Threads
//
// A Room, its Remotes and Locals belong to one goroutine: the engine's
// main thread, which calls Update and Route once per frame (the NetRoom),
// then Frame for each drawn entity (the NetPredictors). Blocking
// work (dial, create, join, leave, close) runs in goroutines that never
// call back: they queue their result, and the next Update applies it. The
// server link (client/serverlink) and the direct links (client/direct) likewise
// queue events, signals and states until they are polled. So no engine call can ever come from a goroutine.
//
// # Time
//
// Every time is a time.Duration on one local clock (Config.Clock, a
// client/realtime.Clock; default a realtime.Wall), the one
// the client stamps arrivals with: a Remote's samples, the frame time passed
// to Frame and a Local's stamps are all on it. The server's clock is reached
// through Room.ServerTime.
//
// # Invariants
//
//   - No cgo and no engine; goroutines only for blocking network calls, and
//     every one ends at Close. A panic in one is recovered, logged and
//     reported as EventError (ErrPanic), never a crash of the game; so are
//     those the client recovers in its own goroutines (serverlink.ErrPanic).
//   - Update, Route, Remote.Frame and Local.Sample/Poll do not allocate when
//     nothing happened in the room (the per-frame path).
//   - Events come out in the order the server's messages arrived; after
//     EventDisconnected or EventLeft no spawned slot remains (each got
//     EventDespawn).
//   - A slot is spawned at most once at a time, and never the local one.
package netroom
