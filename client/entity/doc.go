// Package entity is the engine-free model behind the Godot node
// NetPredictor (extension/): one entity drawn from received states or
// sampled and sent, everything that node decides, written as plain Go
// that `go test` reaches without the engine. The node only moves values
// between the engine and this package. The entity binds to the game-side
// room, client/netroom's Room, which routes its states (the NetRoom's
// model); the bench (bench/internal/netbench) runs Local and Remote too.
//
// # Parts
//
//	Remote  the drawing side of one remote entity: a netcode/predict
//	        Predictor plus the ghost / hidden / snapped changes that become
//	        signals; the netroom.Receiver a Room routes that entity's
//	        states to. It keeps the recent states for the comparison
//	        markers (NewestState, Interpolated) and the loss estimate.
//	Local   the owning side: a netcode/sender Sender fed each physics frame,
//	        stamped with the frame's own time (a FrameClock, one per
//	        process), handing due states to the Room; at rest it sends one
//	        every RestKeepAlive.
//	Predictor
//	        the whole model of a NetPredictor: its settings and motion
//	        profile (Profile), the mode state machine (unbound, local,
//	        remote, fed, shared), the Remote or Local it drives (settings
//	        changed at run time keep the predictor's history), shared
//	        objects' ownership (SyncOwner), the visibility policy (Effects),
//	        and FindRoom, which NetRoom a local entity sends through. A
//	        second entity for one player is refused (netroom.ErrTaken) and
//	        reported. Under the room's input delay our own entity is drawn
//	        that late (Delayed, from the poses Sample recorded).
//	Props   the owner side of an entity's synced properties: changed
//	        values sent through the Room at most Rate times a second.
//	PredictorWarnings, EntityWarnings, SyncedWarnings
//	        the NetPredictor's configuration warnings, from what the editor
//	        sees.
//
// # Threads
//
// Everything here belongs to one goroutine, the engine's main thread, with
// the Room it is bound to: the NetRoom updates and routes (Room.Update,
// Room.Route), then each NetPredictor draws (Predictor.Frame) or samples
// (Predictor.Sample). Nothing here starts a goroutine.
//
// # Time
//
// Every time is on the Room's local clock (netroom.Config.Clock): a
// Remote's samples and arrivals, the frame time passed to Frame, and a
// Local's stamps, which come from the FrameClock (a physics frame's own
// time on that clock).
//
// # Invariants
//
//   - No cgo and no engine.
//   - Remote.Add and Frame and Local.Sample and Poll do not allocate (the
//     per-frame path, TestFramePathDoesNotAllocate).
//   - One sender per entity id and one Remote per key in a Room: a second
//     is refused and reported, never swapped in silently.
package entity
