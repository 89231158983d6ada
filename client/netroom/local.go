package netroom

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Local is the owning side of the local player's entity: each physics
// frame it samples the entity, stamped with the frame's own time (from a
// FrameClock), and it says when a state is due. PollAt, called when the
// state is handed to the network, carries a fresh sample forward to that
// moment and stamps it then (sender.Config.SendLead): the time between the
// physics frame's time and the send (a StepClock behind the wall clock, a
// rigid body read a step late, the rest of the frame) is known here and
// must not reach the receivers as network delay. Not safe for concurrent
// use; Sample and Poll never allocate.
type Local struct {
	snd   *sender.Sender
	stamp time.Duration // the newest sample's time
	has   bool
	buf   [wire.MaxStateSize]byte
	st    wire.State
}

// NewLocal returns a Local sending with cfg (zero fields: defaults). A zero
// SendLead is sender.RecommendedSendLead here (50 ms: StepClock's
// DefaultMaxStepLag, the most a frame's time trails the wall clock; a rigid
// body read a step late can be older, and is then sent as sampled); a
// Local polled with Poll, at the sample's own time, never carries.
func NewLocal(cfg sender.Config) (*Local, error) {
	if cfg.SendLead == 0 {
		cfg.SendLead = sender.RecommendedSendLead
	}
	s, err := sender.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("netroom.NewLocal: %w", err)
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
// state is handed to the network), if one is due then, from slot. A sample
// sent for the first time, at most SendLead old, is carried forward to now
// and stamped now. The state is the Local's: send it before the next Poll.
func (l *Local) PollAt(now time.Duration, slot int) (*wire.State, bool) {
	if !l.has {
		return nil, false
	}
	b, ok, err := l.snd.Poll(max(now, l.stamp), uint8(slot), l.buf[:0])
	if !ok || err != nil {
		return nil, false
	}
	if wire.DecodeState(b, &l.st) != nil {
		return nil, false
	}
	return &l.st, true
}

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
	l.has = false
}

// Restart is Reset without the teleport flag (sender.Sender.Restart): a
// shared object's new owner continues what receivers already draw.
func (l *Local) Restart() {
	l.snd.Restart()
	l.has = false
}

// Stats returns the sender's counters.
func (l *Local) Stats() sender.Stats { return l.snd.Stats() }
