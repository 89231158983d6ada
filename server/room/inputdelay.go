package room

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/inputdelay"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// The room's input delay (netcode/inputdelay): the host chooses it in the
// lobby (protocol.Settings.InputDelay), unless the server's Config sets
// it; every player gets it in the room state (protocol.InputDelayState)
// and applies the same delay at the same server time. An adaptive delay
// follows the players' round trips (inputdelay.Adaptive, from the ones the
// room measured), up to its cap: it changes by AdaptiveHysteresis or more
// only, sliding there at inputdelay.Slew.

// AdaptiveHysteresis is the least change of an adaptive delay: round trips
// wander by a few milliseconds, and each change is a slide every player
// sees in its own entity.
const AdaptiveHysteresis = 10 * time.Millisecond

// delayState is the input delay in force.
type delayState struct {
	set      protocol.InputDelay // the setting (mode, fixed delay, cap)
	to, from time.Duration       // the delay slid to, and from
	at       time.Duration       // when the slide began
}

// now returns the delay in force at t.
func (d *delayState) now(t time.Duration) time.Duration {
	return inputdelay.Slide(d.from, d.to, d.at, t)
}

// retarget starts a slide to to at now (from the delay in force then).
func (d *delayState) retarget(now, to time.Duration) {
	d.from, d.to, d.at = d.now(now), to, now
}

// setInputDelay applies a new setting at now (the host's, or the
// server's at New): a fixed delay slides there, an adaptive one follows
// the round trips from now on, off slides to 0.
func (r *Room) setInputDelay(now time.Duration, set protocol.InputDelay) {
	if set.Mode == protocol.InputDelayAdaptive && set.CapUS == 0 {
		set.CapUS = protocol.MaxInputDelayUS
	}
	if set.Mode != protocol.InputDelayFixed {
		set.US = 0
	}
	if set.Mode == protocol.InputDelayOff {
		set.CapUS = 0
	}
	r.delay.set = set
	switch set.Mode {
	case protocol.InputDelayFixed:
		r.delay.retarget(now, protocol.DurationUS(set.US))
	case protocol.InputDelayAdaptive:
		r.delay.retarget(now, r.adaptiveDelay(now))
	default:
		r.delay.retarget(now, 0)
	}
	r.dirty = true
}

// adaptInputDelay moves an adaptive delay to the round trips the room
// measured (called as they change), if by AdaptiveHysteresis or more.
func (r *Room) adaptInputDelay(now time.Duration) {
	if r.delay.set.Mode != protocol.InputDelayAdaptive {
		return
	}
	to := r.adaptiveDelay(now)
	if d := to - r.delay.to; d >= AdaptiveHysteresis || -d >= AdaptiveHysteresis {
		r.delay.retarget(now, to)
		r.dirty = true
	}
}

// adaptiveDelay returns the adaptive delay for the connected players'
// round trips (the smallest the room measured; a player not measured yet
// does not count) under the cap.
func (r *Room) adaptiveDelay(now time.Duration) time.Duration {
	rtts := r.rttScratch[:0]
	for _, s := range r.seats {
		if s == nil || s.peer == nil {
			continue
		}
		if d, ok := s.rt.measured(); ok {
			rtts = append(rtts, d)
		}
	}
	r.rttScratch = rtts
	return inputdelay.Adaptive(rtts, protocol.DurationUS(r.delay.set.CapUS))
}

// InputDelay returns the input delay in force at now (0 without one).
func (r *Room) InputDelay(now time.Duration) time.Duration { return r.delay.now(now) }

// delaySnapshot is the room state's input delay: nil when there is none
// and never was.
func (r *Room) delaySnapshot() *protocol.InputDelayState {
	d := &r.delay
	if d.set.Mode == protocol.InputDelayOff && d.to == 0 && d.from == 0 {
		return nil
	}
	st := &protocol.InputDelayState{InputDelay: d.set, FromUS: protocol.US(d.from), AtUS: protocol.US(d.at)}
	st.US = protocol.US(d.to)
	return st
}

// sameDelay reports whether two settings ask for the same delay (the
// fields a mode does not use aside, an adaptive cap of 0 being the
// largest).
func sameDelay(a, b protocol.InputDelay) bool {
	norm := func(d protocol.InputDelay) protocol.InputDelay {
		switch d.Mode {
		case protocol.InputDelayFixed:
			d.CapUS = 0
		case protocol.InputDelayAdaptive:
			d.US = 0
			if d.CapUS == 0 {
				d.CapUS = protocol.MaxInputDelayUS
			}
		default:
			d = protocol.InputDelay{}
		}
		return d
	}
	return norm(a) == norm(b)
}

// describeDelay says what a setting is, for errors.
func describeDelay(d protocol.InputDelay) string {
	switch d.Mode {
	case protocol.InputDelayFixed:
		return fmt.Sprintf("fixed at %v", protocol.DurationUS(d.US))
	case protocol.InputDelayAdaptive:
		if d.CapUS == 0 {
			d.CapUS = protocol.MaxInputDelayUS
		}
		return fmt.Sprintf("adaptive up to %v", protocol.DurationUS(d.CapUS))
	}
	return "off"
}
