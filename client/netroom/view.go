package netroom

import "github.com/nearzero/nearzero/netcode/protocol"

// View is the room as one event announced it: the facts a signal handler
// reads back from the NetRoom (local_slot, host_slot, room_code, phase,
// status). Update applies a whole frame's messages before the node emits
// their signals, so without views a handler would see later changes of
// the same frame: the joiner already host in player_left of the old host,
// or slot -1 in room_joined when a kick came in the same frame. Each
// Event carries the View of the moment it was queued; the node shows it
// to the handlers of that event (SetView) and the live state after
// (ClearView).
type View struct {
	Status Status
	InRoom bool
	Code   string
	Slot   int // -1 when in no room
	Host   int // -1 when in no room or hostless
	Phase  protocol.Phase
}

// view returns the live facts as a View.
func (r *Room) view() View {
	return View{Status: r.status, InRoom: r.inRoom, Code: r.code, Slot: r.slot, Host: r.room.Host, Phase: r.room.Phase}
}

// SetView makes the getters the node reads in signal handlers (Status,
// InRoom, Code, Slot, Host, Phase) return v, the View of the event being
// signalled, until ClearView: handlers see the room as that event left it,
// not as the rest of the frame's messages did.
func (r *Room) SetView(v View) { r.shown, r.showing = v, true }

// ClearView makes those getters return the live state again.
func (r *Room) ClearView() { r.showing = false }
