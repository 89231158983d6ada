package entity

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Local is the owning side of the local player's entity: each physics
// frame it samples the entity, stamped with the frame's own time (from a
// FrameClock), and it says when a state is due. The state it hands out is
// the sample as taken, unencoded: the link's writer encodes it once and
// carries a fresh one forward to the write (client/core's send lead), so
// that the time between the physics frame's time and the socket (a
// StepClock behind the wall clock, a rigid body read a step late, the rest
// of the frame, the writer's wake-up) does not reach the receivers as
// network delay. Not safe for concurrent use; Sample and Poll never
// allocate.
type Local struct {
	snd   *sender.Sender
	stamp time.Duration // the newest sample's time
	has   bool
	st    wire.State

	// At rest (see RestKeepAlive): the state last sent and when.
	last    wire.State
	lastAt  time.Duration
	sent    bool
	restOff bool
}

// RestKeepAlive is how often an entity at rest still sends: one that has
// not moved since its last state, sent still (no velocity, acceleration or
// turn), with the same flags and extras, sends at this interval instead of
// the full rate, and at the full rate again from the first frame it moves.
// Not silence: receivers ghost an entity after 500 ms without an arrival
// and hide it after 2 s (netcode/predict, GhostAfter and HideAfter), and a
// direct link counts as down after DefaultDirectSilence (250 ms), so a
// resting entity that went quiet would fade out and flip the server relay
// on and off. 100 ms stays under both with a lost state to spare, so a
// resting entity keeps being drawn, solid, and a real outage still shows;
// it costs 10 states a second instead of 60.
const RestKeepAlive = 100 * time.Millisecond

// Limits under which a state counts as still: metres or pixels (and per
// second), radians per second, quaternion components.
const (
	restPos = 1e-4
	restVel = 1e-3
	restRot = 1e-5
)

// NewLocal returns a Local sending with cfg (zero fields: defaults).
func NewLocal(cfg sender.Config) (*Local, error) {
	s, err := sender.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("entity.NewLocal: %w", err)
	}
	return &Local{snd: s}, nil
}

// Config returns the sender's configuration, defaults filled in.
func (l *Local) Config() sender.Config { return l.snd.Config() }

// Sample records the entity at the end of the physics frame whose time is
// t (local clock; FrameClock.At). With hasVel, vel is the body's own
// velocity (a CharacterBody's or RigidBody's); otherwise it is derived
// from positions.
func (l *Local) Sample(t time.Duration, pos geom.Vec3, rot geom.Quat, vel geom.Vec3, hasVel bool) {
	if hasVel {
		l.snd.SampleWithVelocity(t, pos, rot, vel)
	} else {
		l.snd.Sample(t, pos, rot)
	}
	l.stamp, l.has = t, true
}

// Poll returns the state to send, if one is due at the newest sample's
// time, from slot, stamped with the sample's time. The state is the
// Local's: send it before the next Poll. PollAt is the one to use when the
// send time is known.
func (l *Local) Poll(slot int) (*wire.State, bool) { return l.PollAt(l.stamp, slot) }

// PollAt returns the state to send at now (the local clock, the moment the
// state is handed to the network), if one is due then, from slot, stamped
// with its sample's time (the writer carries it to the write). The state
// is the Local's: send it before the next Poll.
func (l *Local) PollAt(now time.Duration, slot int) (*wire.State, bool) {
	if !l.has {
		return nil, false
	}
	now = max(now, l.stamp)
	if l.resting() && now-l.lastAt < RestKeepAlive {
		// Not polled: the sender's schedule restarts from the first frame
		// that moves (sender.Poll after a stall), so that one goes out at once.
		return nil, false
	}
	st, ok := l.snd.PollState(now, uint8(slot))
	if !ok {
		return nil, false
	}
	l.st = st
	l.last, l.lastAt, l.sent = l.st, now, true
	return &l.st, true
}

// resting reports whether the newest sample is at rest: the state last
// sent was still and the entity has neither moved nor changed its flags
// or extras since.
func (l *Local) resting() bool {
	if !l.sent || l.restOff {
		return false
	}
	cur, ok := l.snd.Latest()
	if !ok {
		return false
	}
	last := &l.last
	still := func(st *wire.State) bool {
		return st.Vel.Len() < restVel && st.Acc.Len() < restVel && abs(st.Turn) < restVel
	}
	near := func(a, b float64, eps float64) bool { return abs(a-b) < eps }
	return still(last) && still(&cur) && cur.Pos.Sub(last.Pos).Len() < restPos &&
		near(cur.Rot.X, last.Rot.X, restRot) && near(cur.Rot.Y, last.Rot.Y, restRot) &&
		near(cur.Rot.Z, last.Rot.Z, restRot) && near(cur.Rot.W, last.Rot.W, restRot) &&
		cur.Flags == last.Flags&^wire.FlagTeleport && cur.Anim == last.Anim && cur.Input == last.Input
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// SetRestKeepAlive turns the rest rate (RestKeepAlive) off (send at the
// full rate always) or on again, the default.
func (l *Local) SetRestKeepAlive(on bool) { l.restOff = !on }

// SetExtras sets the animation state and input bits sent from now on.
func (l *Local) SetExtras(anim, input uint8) { l.snd.SetExtras(anim, input) }

// SetGameFlags sets the game flags (wire.FlagGame0, wire.FlagGame1) sent
// from now on.
func (l *Local) SetGameFlags(f wire.Flags) { l.snd.SetGameFlags(f) }

// Teleport marks the next sample as a jump (respawn): receivers snap to it
// instead of fading.
func (l *Local) Teleport() { l.snd.Teleport() }

// Reset forgets the samples and the schedule (after the entity was out of
// play); the next state is flagged as a teleport.
func (l *Local) Reset() {
	l.snd.Reset()
	l.has, l.sent = false, false
}

// Restart is Reset without the teleport flag (sender.Sender.Restart): a
// shared object's new owner continues what receivers already draw.
func (l *Local) Restart() {
	l.snd.Restart()
	l.has, l.sent = false, false // the first state after is never held back
}

// Stats returns the sender's counters.
func (l *Local) Stats() sender.Stats { return l.snd.Stats() }
