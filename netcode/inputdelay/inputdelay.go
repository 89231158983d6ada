// Package inputdelay is the input-delay scheme, opt-in: a player's own
// entity shows its inputs Delay late, and every state it sends is placed
// Delay ahead on the shared timeline, so that receivers whose data age is
// below Delay draw from data of the future (interpolation, no guessing).
//
// The owner simulates on its inputs at once, as usual, and sends those
// states as usual (stamped with its clock: a stamp moved ahead would be
// taken for a clock offset by the receivers' re-stamping, netcode/clock).
// It draws its own entity from an Own buffer, Delay in the past: what every
// other player will draw for that moment. Every receiver adds the same
// Delay to each mapped sample time (Place) before predict.Predictor.Add.
// The room must agree on Delay (everyone adds it, or nobody): the room
// server holds it (protocol.InputDelayState), fixed or adaptive (Adaptive,
// from the players' round trips), and a change slides at Slew on the
// server clock (Slide), so every player applies the same delay at the
// same moment. client/netroom places the states, client/entity draws the
// owner's entity from an Own buffer.
//
// The price is the owner's own input lag, Delay, on top of the engine's;
// what it buys is about Delay off every receiver's data age. On the bench
// (seed 1, `go run ./bench -scenario direct-50,direct-100,direct-150
// -input-delay 100ms`, against the same rows without): the character's
// p95 falls from 0.42 to 0.02 m at 50 ms one way, from 0.75 to 0.10 m at
// 100 ms and from 1.11 to 0.42 m at 150 ms, with 0-4 pops a minute; the
// vehicle's from 0.27 to 0.17 m at 150 ms (at 50 ms its 0.18 m is link
// asymmetry, which no delay removes).
package inputdelay

import (
	"errors"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// ErrConfig reports a bad delay or capacity.
var ErrConfig = errors.New("inputdelay: bad config")

// Slew is how fast a room's delay slides to a new value (s per s): an
// adaptive delay that changes by 50 ms takes half a second, and the
// drawings play at 0.9x to 1.1x meanwhile, never a jolt.
const Slew = 0.1

// Slide returns the delay in force at t when it was from until at and has
// slid toward to at Slew since (t, at: the server clock, so that every
// player computes the same one).
func Slide(from, to, at, t time.Duration) time.Duration {
	if t <= at || from == to {
		if t <= at {
			return from
		}
		return to
	}
	step := time.Duration(float64(t-at) * Slew)
	if to > from {
		return min(to, from+step)
	}
	return max(to, from-step)
}

// AdaptiveMargin is what an adaptive delay adds to the slowest pair's
// one-way network delay: the rest of a state's age, a frame to wait for
// at either end (and the send schedule's), so that most states arrive
// before their time.
const AdaptiveMargin = 25 * time.Millisecond

// AdaptiveStep rounds an adaptive delay up: 5 ms.
const AdaptiveStep = 5 * time.Millisecond

// Adaptive returns the adaptive delay for players whose round trips to
// the server are rtts: the slowest pair's one-way delay through the
// server ((a + b) / 2) plus AdaptiveMargin, rounded up to AdaptiveStep, at
// most limit; 0 for fewer than two players.
func Adaptive(rtts []time.Duration, limit time.Duration) time.Duration {
	if len(rtts) < 2 {
		return 0
	}
	var a, b time.Duration // the two largest
	for _, r := range rtts {
		switch {
		case r > a:
			a, b = r, a
		case r > b:
			b = r
		}
	}
	d := (a+b)/2 + AdaptiveMargin
	d = (d + AdaptiveStep - 1) / AdaptiveStep * AdaptiveStep
	return min(max(d, 0), limit)
}

// Place returns where a sample whose stamp mapped to mapped (receiver
// clock) belongs on the shared timeline with the room's delay: mapped +
// delay. Receivers call it on every remote sample before the predictor.
func Place(mapped, delay time.Duration) time.Duration { return mapped + delay }

// pose is one recorded frame of the owner's own entity.
type pose struct {
	t   time.Duration
	pos geom.Vec3
	rot geom.Quat
}

// Own is the owner's drawing of its own entity, Delay late: Record every
// simulated frame, draw At each rendered frame. It never allocates after
// New; it is not safe for concurrent use.
type Own struct {
	delay time.Duration
	buf   []pose // ring, sorted by t
	n     int
	head  int // index of the oldest
}

// New returns an Own buffer with the delay, holding up to capacity frames
// (at least Delay's worth at the simulation rate, plus a few).
func New(delay time.Duration, capacity int) (*Own, error) {
	if delay < 0 || capacity < 2 {
		return nil, ErrConfig
	}
	return &Own{delay: delay, buf: make([]pose, capacity)}, nil
}

// Delay returns the delay.
func (o *Own) Delay() time.Duration { return o.delay }

// Reset forgets every recorded frame (the entity teleported, or was out
// of play).
func (o *Own) Reset() { o.n, o.head = 0, 0 }

func (o *Own) at(i int) *pose { return &o.buf[(o.head+i)%len(o.buf)] }

// Record adds the simulated pose at t (local clock). Times must grow; a
// frame not newer than the last is ignored. When full, the oldest goes.
func (o *Own) Record(t time.Duration, pos geom.Vec3, rot geom.Quat) {
	if o.n > 0 && t <= o.at(o.n-1).t {
		return
	}
	if o.n == len(o.buf) {
		o.head = (o.head + 1) % len(o.buf)
		o.n--
	}
	*o.at(o.n) = pose{t: t, pos: pos, rot: rot}
	o.n++
}

// At returns the pose to draw at now: the simulated one at now - Delay,
// interpolated between the recorded frames around it (the oldest before
// the buffer reaches back that far, the newest with no delay), and false
// before anything was recorded.
func (o *Own) At(now time.Duration) (geom.Vec3, geom.Quat, bool) { return o.AtDelay(now, o.delay) }

// AtDelay is At with another delay (a room's that changes, Slide).
func (o *Own) AtDelay(now, delay time.Duration) (geom.Vec3, geom.Quat, bool) {
	if o.n == 0 {
		return geom.Vec3{}, geom.Identity, false
	}
	rt := now - delay
	if newest := o.at(o.n - 1); rt >= newest.t {
		return newest.pos, newest.rot, true
	}
	for i := o.n - 2; i >= 0; i-- {
		lo := o.at(i)
		if lo.t <= rt {
			hi := o.at(i + 1)
			f := float64(rt-lo.t) / float64(hi.t-lo.t)
			return lo.pos.Lerp(hi.pos, f), lo.rot.Slerp(hi.rot, f), true
		}
	}
	oldest := o.at(0)
	return oldest.pos, oldest.rot, true
}
