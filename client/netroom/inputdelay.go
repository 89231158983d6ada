package netroom

import (
	"errors"
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/inputdelay"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// The room's input delay (netcode/inputdelay; docs/protocol.md, "Input
// delay"): the server holds it, fixed or adaptive, and every player
// applies the same delay D at the same server time. The Room places every
// received state D ahead of its mapped time before its Receiver takes it
// (route); client/entity draws our own entities D late (InputDelay).

// ErrNotHost indicates a room setting changed by a player who is not the
// host, or outside the lobby.
var ErrNotHost = errors.New("netroom: only the host changes room settings, in the lobby")

// InputDelaySetting returns the input delay setting: the room's while
// seated, else the one a Create will ask for (SetInputDelay).
func (r *Room) InputDelaySetting() protocol.InputDelay {
	if r.inRoom {
		if d := r.room.InputDelay; d != nil {
			return d.InputDelay
		}
		return protocol.InputDelay{}
	}
	return r.wantDelay
}

// SetInputDelay sets the room's input delay: asked for by the next Create
// when not seated, sent at once (with the room's other settings) when we
// are the host in the lobby. A guest, or a host outside the lobby, gets
// ErrNotHost; a setting out of range, an error wrapping protocol's. The
// room's answer comes with the next room state (InputDelaySetting); a
// server that sets the delay itself refuses another (EventError).
func (r *Room) SetInputDelay(d protocol.InputDelay) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("netroom: input delay: %w", err)
	}
	r.wantDelay = d
	if !r.inRoom {
		return nil
	}
	if r.slot != r.room.Host || r.room.Phase != protocol.PhaseLobby {
		return ErrNotHost
	}
	s := r.room.Settings
	s.InputDelay = &d
	return r.sendInRoom(&s)
}

// createSettings are the settings a Create asks for: the input delay
// wanted, if any.
func (r *Room) createSettings() *protocol.Settings {
	if r.wantDelay.Mode == protocol.InputDelayOff {
		return nil
	}
	d := r.wantDelay
	return &protocol.Settings{InputDelay: &d}
}

// InputDelay returns the input delay in force at the last Update (0 when
// there is none, or while not seated or synced).
func (r *Room) InputDelay() time.Duration { return r.delayNow }

// updateInputDelay works out the input delay in force at local time now
// from the room state, on the server clock.
func (r *Room) updateInputDelay(now time.Duration) {
	d := r.room.InputDelay
	if !r.inRoom || d == nil {
		r.delayNow = 0
		return
	}
	t, ok := r.ServerTime(now)
	if !ok {
		r.delayNow = 0
		return
	}
	r.delayNow = inputdelay.Slide(protocol.DurationUS(d.FromUS), protocol.DurationUS(d.US), protocol.DurationUS(d.AtUS), t)
}
