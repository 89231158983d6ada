package entity

import (
	"time"

	"github.com/nearzero/nearzero/netcode/wire"
)

// Defaults of StepClock.
const (
	// DefaultMaxStepLag is StepClock's default MaxLag.
	DefaultMaxStepLag = 50 * time.Millisecond
	// DefaultStepCatchUp is StepClock's default CatchUp.
	DefaultStepCatchUp = 0.02
)

// StepClock gives each physics frame its own time: the previous frame's
// time plus the fixed physics step, so a body moved by velocity × step is
// stamped at the times its positions belong to, even when the engine runs
// several physics frames back to back to catch up (their wall times would
// be microseconds apart).
//
// An engine runs physics frame k once the wall clock has passed the k-th
// step of its schedule, never before; so the earliest wall times seen
// locate the schedule, and the step times follow them: a step time is
// never later than the wall time it is computed at (it is pulled back when
// a frame comes early), and never more than MaxLag earlier. When the
// schedule shifts later (a hitch the engine does not catch up on), the
// step times gain CatchUp of a step per frame on it, so a lag does not
// stick: receivers map stamps as if taken when sent, and a lasting lag
// would show as a lasting error. Each step is thus between one step and
// 1+CatchUp steps after the previous one, except when pulled back.
// Not safe for concurrent use.
type StepClock struct {
	// MaxLag is how far the step time may fall behind the wall clock
	// before it jumps to catch up. Default (zero) DefaultMaxStepLag, 50 ms:
	// three 60 Hz frames.
	MaxLag time.Duration
	// CatchUp is the share of a step by which a step time behind the wall
	// clock gains on it per frame. Default (zero) DefaultStepCatchUp, 2%: a
	// one-frame lag is gone in under a second, and a derived velocity is
	// off by at most 2% meanwhile.
	CatchUp float64

	t   time.Duration
	has bool
}

// Step returns the time of a physics frame of length step that runs at
// wall time wall.
func (c *StepClock) Step(wall, step time.Duration) time.Duration {
	maxLag, catchUp := c.MaxLag, c.CatchUp
	if maxLag <= 0 {
		maxLag = DefaultMaxStepLag
	}
	if catchUp <= 0 {
		catchUp = DefaultStepCatchUp
	}
	t := c.t + step
	if lag := wall - t; c.has && lag > 0 {
		t += min(lag, time.Duration(catchUp*float64(step)))
	}
	switch {
	case !c.has || t > wall:
		t = wall
	case t < wall-maxLag:
		t = wall - maxLag
	}
	if c.has && t < c.t+wire.StampUnit {
		// The wall clock may not have moved (or moved less than a stamp
		// unit): times stay increasing by a whole stamp so that the sender
		// refuses no sample as stale.
		t = c.t + wire.StampUnit
	}
	c.t, c.has = t, true
	return t
}

// Reset forgets the previous frame: the next Step starts at the wall time.
func (c *StepClock) Reset() { c.t, c.has = 0, false }

// FrameClock is a StepClock keyed by physics frame number: every caller in
// one physics frame gets the same time, whoever asks first. One per
// process (all bodies share the physics time): the NetPredictors stamp
// their samples with it, and game code that moves an entity as a function
// of time reads the same value (NetRoom.physics_server_time). Not safe for
// concurrent use.
type FrameClock struct {
	StepClock
	frame uint64 // the frame whose time StepClock holds, once it holds one
}

// At returns the time of physics frame number frame, computing it with
// Step(wall, step) the first time that frame is asked for (or the first
// time after Reset).
func (c *FrameClock) At(frame uint64, wall, step time.Duration) time.Duration {
	if !c.has || frame != c.frame {
		c.frame = frame
		c.Step(wall, step)
	}
	return c.t
}
