package netbench

import (
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Method names: how a client draws the other player.
const (
	// MethodNearzero is netcode/predict: extrapolate to the present.
	MethodNearzero = "nearzero"
	// MethodInterp100 draws the other player 100 ms in the past by
	// interpolating received snapshots (Godot tutorials, the Source engine).
	MethodInterp100 = "interp100"
	// MethodLerp moves the drawn position halfway toward the newest
	// received position every frame (the common Godot pattern).
	MethodLerp = "lerp"
)

// Methods lists the methods in table order.
var Methods = []string{MethodNearzero, MethodInterp100, MethodLerp}

// interpDelay is interp100's interpolation delay.
const interpDelay = 100 * time.Millisecond

// snap is one received snapshot, on the receiver's clock.
type snap struct {
	t   time.Duration
	pos geom.Vec3
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
	if b.n == 0 {
		return geom.Vec3{}, false, false
	}
	rt := now - interpDelay
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
