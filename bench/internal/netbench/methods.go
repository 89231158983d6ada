package netbench

import (
	"slices"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Method names: how a client draws the other player.
const (
	// MethodNearzero is netcode/predict: extrapolate to the present.
	MethodNearzero = "nearzero"
	// MethodInterp100 draws the other player at the synced clock's now
	// minus 100 ms by interpolating received snapshots (Godot tutorials,
	// the Source engine). At 100 ms one way or more that render time is
	// newer than any data, so it holds the newest sample: snap under
	// another name.
	MethodInterp100 = "interp100"
	// MethodInterpArrival interpolates received snapshots a fixed 100 ms
	// behind the newest arrival: the render time is now minus the data age
	// new samples arrive with (smoothed over about a second) minus 100 ms,
	// so it stays in the buffer at any latency.
	MethodInterpArrival = "interp-arrival100"
	// MethodLerp moves the drawn position halfway toward the newest
	// received position every frame (the common Godot pattern).
	MethodLerp = "lerp"
	// MethodSnap draws the newest received position as it is (Godot's
	// MultiplayerSynchronizer: overwrite on arrival).
	MethodSnap = "snap"
	// MethodExtrapolateV is velocity-only dead reckoning: the newest
	// received position plus its velocity times its age on the mapped
	// clock, no smoothing.
	MethodExtrapolateV = "extrapolate-v"
	// MethodInterpAdaptive interpolates received snapshots at a delay tied
	// to the measured data age and its spread, so that it never runs dry.
	MethodInterpAdaptive = "interp-adaptive"
)

// Methods lists the methods in table order.
var Methods = []string{MethodNearzero, MethodSnap, MethodExtrapolateV, MethodInterpAdaptive, MethodInterp100, MethodInterpArrival, MethodLerp}

// Baselines are the methods other than nearzero.
var Baselines = Methods[1:]

// method indexes into Methods.
const (
	mNearzero = iota
	mSnap
	mExtrapolateV
	mInterpAdaptive
	mInterp100
	mInterpArrival
	mLerp
	numMethods
)

// interpDelay is interp100's interpolation delay.
const interpDelay = 100 * time.Millisecond

// snap is one received snapshot, on the receiver's clock.
type snap struct {
	t        time.Duration
	pos, vel geom.Vec3
}

// newestState is the snap and extrapolate-v baselines: the newest received
// sample by time.
type newestState struct {
	has bool
	s   snap
}

func (n *newestState) add(s snap) {
	if !n.has || s.t > n.s.t {
		n.has, n.s = true, s
	}
}

// extrapolateCap is how far extrapolate-v carries the newest sample at
// most; past it the entity stops where the cap left it.
const extrapolateCap = 500 * time.Millisecond

// extrapolate returns the newest position carried forward to now by its
// velocity (no further than extrapolateCap, and never backwards).
func (n *newestState) extrapolate(now time.Duration) geom.Vec3 {
	age := min(max(now-n.s.t, 0), extrapolateCap)
	return n.s.pos.Add(n.s.vel.Scale(age.Seconds()))
}

// adaptiveInterp is the interp-adaptive baseline: the snapshot buffer drawn
// at now - D, where D follows the data age (now minus the newest sample time
// when the main thread takes a sample newer than any before) at its 95th
// percentile over the last 120 such samples, plus one send
// interval, growing at up to 0.3 s and shrinking at up to 0.1 s per second
// (playback at 0.7x to 1.1x speed, never backwards), so the render time stays
// inside the buffer.
type adaptiveInterp struct {
	buf    interpBuf
	ages   [120]float64 // recent data ages at arrival, s (2 s at 60 Hz)
	sorted [120]float64
	n, i   int
	delay  time.Duration
	last   time.Duration
}

func (a *adaptiveInterp) add(s snap, arrival time.Duration) {
	newest := a.buf.n == 0 || s.t > a.buf.at(a.buf.n-1).t
	a.buf.add(s)
	if !newest {
		return // a late copy of an old sample does not need a longer delay
	}
	a.ages[a.i] = (arrival - s.t).Seconds()
	a.i = (a.i + 1) % len(a.ages)
	a.n = min(a.n+1, len(a.ages))
}

// target is the delay the window asks for: the 95th percentile of the
// recent ages plus one send interval and 5 ms of margin.
func (a *adaptiveInterp) target() time.Duration {
	xs := a.sorted[:a.n]
	copy(xs, a.ages[:a.n])
	slices.Sort(xs)
	return time.Duration(pct(xs, 0.95)*float64(time.Second)) + time.Second/60 + 5*time.Millisecond
}

func (a *adaptiveInterp) draw(now time.Duration) (geom.Vec3, bool, bool) {
	if a.n == 0 {
		return geom.Vec3{}, false, false
	}
	tgt := a.target()
	switch {
	case a.delay == 0:
		a.delay = tgt
	case now > a.last:
		// Playback slows to 0.7x to let the delay grow and speeds up to
		// 1.1x to shrink it: the drawn entity never goes backwards.
		dt := now - a.last
		a.delay = min(max(tgt, a.delay-dt/10), a.delay+dt*3/10)
	}
	a.last = now
	return a.buf.drawAt(now - a.delay)
}

// interpBuf is the interp100 baseline: a snapshot buffer drawn interpDelay
// in the past with linear interpolation, holding the newest snapshot when
// the buffer runs dry (no extrapolation).
type interpBuf struct {
	buf [64]snap // ring, sorted by t
	n   int
	pos int // index of the oldest
}

func (b *interpBuf) at(i int) *snap { return &b.buf[(b.pos+i)%len(b.buf)] }

// add inserts a snapshot in time order; duplicates (same time) are dropped.
func (b *interpBuf) add(s snap) {
	k := b.n // insert position
	for k > 0 && b.at(k-1).t > s.t {
		k--
	}
	if k > 0 && b.at(k-1).t == s.t {
		return
	}
	if b.n == len(b.buf) {
		if k == 0 {
			return // older than everything in a full buffer
		}
		b.pos = (b.pos + 1) % len(b.buf)
		b.n--
		k--
	}
	for i := b.n; i > k; i-- {
		*b.at(i) = *b.at(i - 1)
	}
	*b.at(k) = s
	b.n++
}

// draw returns the position at now-interpDelay, whether there is one, and
// whether the buffer ran dry (the render time is past the newest snapshot).
func (b *interpBuf) draw(now time.Duration) (pos geom.Vec3, ok, dry bool) {
	return b.drawAt(now - interpDelay)
}

// drawAt returns the position at render time rt (see draw).
func (b *interpBuf) drawAt(rt time.Duration) (pos geom.Vec3, ok, dry bool) {
	if b.n == 0 {
		return geom.Vec3{}, false, false
	}
	newest := b.at(b.n - 1)
	if rt >= newest.t {
		return newest.pos, true, true
	}
	for i := b.n - 2; i >= 0; i-- {
		lo := b.at(i)
		if lo.t <= rt {
			hi := b.at(i + 1)
			f := float64(rt-lo.t) / float64(hi.t-lo.t)
			return lo.pos.Lerp(hi.pos, f), true, false
		}
	}
	return b.at(0).pos, true, false
}

// arrivalInterp is the interp-arrival100 baseline: the snapshot buffer
// drawn interpDelay behind the newest arrival.
type arrivalInterp struct {
	buf interpBuf
	// offset is the data age new samples arrive with, an exponential mean
	// over about arrivalSmooth of them: the render time is now - offset -
	// interpDelay. Taking each arrival's own age would move the render
	// time by the jitter at every arrival (a pop per arrival at speed).
	offset time.Duration
	has    bool
}

// arrivalSmooth is how many new samples arrivalInterp's offset averages.
const arrivalSmooth = 60

func (a *arrivalInterp) add(s snap, arrival time.Duration) {
	if a.buf.n == 0 || s.t > a.buf.at(a.buf.n-1).t {
		age := arrival - s.t
		if !a.has {
			a.offset, a.has = age, true
		} else {
			a.offset += (age - a.offset) / arrivalSmooth
		}
	}
	a.buf.add(s)
}

func (a *arrivalInterp) draw(now time.Duration) (geom.Vec3, bool, bool) {
	return a.buf.drawAt(now - a.offset - interpDelay)
}

// lerpState is the lerp baseline: each frame the drawn position moves
// halfway toward the newest received position.
type lerpState struct {
	has, hasDrawn bool
	seq           wire.Seq
	latest, drawn geom.Vec3
}

// add takes a received position; only the newest by sequence counts.
func (l *lerpState) add(seq wire.Seq, pos geom.Vec3) {
	if l.has && !seq.Newer(l.seq) {
		return
	}
	l.has, l.seq, l.latest = true, seq, pos
}

// draw moves one frame and returns the drawn position.
func (l *lerpState) draw() (geom.Vec3, bool) {
	if !l.has {
		return geom.Vec3{}, false
	}
	if !l.hasDrawn {
		l.drawn, l.hasDrawn = l.latest, true
	} else {
		l.drawn = l.drawn.Lerp(l.latest, 0.5)
	}
	return l.drawn, true
}
