package predict

import (
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// settings are how a drawing draws: how far behind the present, with
// which motion model, and how it fades its corrections. Without Auto they
// are the Config's; with Auto, the best candidate's (the tuner's).
type settings struct {
	lag time.Duration // the render lag: drawn as predicted for now - lag
	m   model
	tau time.Duration // the smoothing time constant
	// capped: the fade moves the drawing at most Config.MaxCorrectionSpeed.
	capped bool
}

// drawFrame is what every drawing shares in one frame: the real one
// (PoseAt) and each Auto shadow.
type drawFrame struct {
	dt time.Duration // the frame's time; no fade when 0
	// v is how far a capped fade may move the drawing in dt
	// (MaxCorrectionSpeed·dt; 0: no cap), v2 its square.
	v, v2 float64
	td2   float64 // TeleportDistance squared
	// The frame's events: restart (first frame, or back from Hidden)
	// clears the offset; changed (new data, or a path switch) turns the
	// jump of the prediction into offset, unless snap (a teleport flag).
	restart, changed, snap bool
}

// newDrawFrame returns the frame of dt under cfg.
func newDrawFrame(cfg *Config, dt time.Duration, restart, changed, snap bool) drawFrame {
	f := drawFrame{dt: dt, td2: cfg.TeleportDistance * cfg.TeleportDistance,
		restart: restart, changed: changed, snap: snap}
	if cfg.MaxCorrectionSpeed > 0 {
		f.v = cfg.MaxCorrectionSpeed * dt.Seconds()
		f.v2 = f.v * f.v
	}
	return f
}

// fadeOf returns the fade of an offset over dt with time constant tau,
// e^(-dt/tau), and what it takes off, 1 minus that.
func fadeOf(dt, tau time.Duration) (k, loss float64) {
	k = math.Exp(-float64(dt) / float64(tau))
	return k, 1 - k
}

// drawStep is one raw prediction's frame: what the drawings from it share
// (the real one, or an Auto lag's shadows of one model). Its step is the
// one rule by which every drawing moves, so a shadow draws exactly as
// PoseAt would with its settings.
type drawStep struct {
	*drawFrame
	est  geom.Vec3 // the raw prediction
	corr geom.Vec3 // the jump new data made: the old prediction minus est
	// pops, when not nil, is the frame's pop test (an Auto shadow's,
	// judged this frame); own is the prediction's own move this frame,
	// before new data moved it, and prevRaw last frame's raw prediction.
	pops         *popTest
	own, prevRaw geom.Vec3
}

// step moves the offset off (drawn minus raw) through the frame: restart
// clears it; a change of prediction adds the jump corr to it, or clears it
// instead (a snap) on a teleport flag or beyond the teleport distance;
// then, when dt > 0, it fades by k (loss = 1-k, fadeOf), and when capped by
// at most v (bound). It returns the new offset, the drawn position est
// plus it, the fade applied (k, or less when bound; 1 without a fade), the
// pops (a snap; with a pop test, a frame move unlike the prediction's own
// and unlike any the entity was seen to make) and whether the cap bound.
//
// Lengths are compared squared: no square root unless the cap binds.
func (s *drawStep) step(off geom.Vec3, k, loss float64, capped bool) (next, drawn geom.Vec3, fade float64, pops int, bound bool) {
	was := s.prevRaw.Add(off) // last frame's drawing: the same sum as then, so the same value
	l2 := -1.0                // the offset's squared length, once known
	switch {
	case s.restart:
		off, l2 = geom.Vec3{}, 0
	case s.changed:
		off = off.Add(s.corr)
		if l2 = off.Dot(off); s.snap || l2 > s.td2 {
			off, l2 = geom.Vec3{}, 0
			pops += 1 + bigPop
		}
	}
	fade = 1
	if s.dt > 0 {
		fade = k
		if capped && s.v > 0 {
			if l2 < 0 {
				l2 = off.Dot(off)
			}
			if l2*loss*loss > s.v2 {
				fade, bound = 1-s.v/math.Sqrt(l2), true
			}
		}
		off = off.Scale(fade)
	}
	drawn = s.est.Add(off)
	if t := s.pops; t != nil {
		// Moved as its own prediction did (most frames), else popped.
		move := drawn.Sub(was)
		if d := move.Sub(s.own); d.Dot(d) > t.low2 {
			pops += t.popped(move, d.Dot(d))
		}
	}
	return off, drawn, fade, pops, bound
}

// bigPop is what a pop of the erratic rule's size adds to a pop count:
// one count holds both sizes (pops%bigPop the pop step's, pops/bigPop the
// erratic rule's), so the bank's reuse moves them together.
const bigPop = 1 << 16

// popTest is a frame's pop test: a frame move that departs from the
// prediction's own by more than the pop step (step2 is its square) is a
// pop unless it is within that of a move the entity was seen to make
// lately (seen: the recent samples' velocities over the frame); the same
// with the erratic rule's step (big2) is a big pop. low2 is the smaller
// of the two.
type popTest struct {
	step2, big2, low2 float64
	seen              [autoSeen]geom.Vec3
	nSeen             int
}

// popped returns the pops of move, whose departure from its own
// prediction's is dd squared: 1 for a pop, bigPop for a big one, each
// more than its step from every move seen. So drawing late, or as the
// entity was seen to move, is not popping; a correction that moves it
// otherwise is.
func (t *popTest) popped(move geom.Vec3, dd float64) int {
	small, big := dd > t.step2, dd > t.big2
	for _, sm := range t.seen[:t.nSeen] {
		d := move.Sub(sm)
		e := d.Dot(d)
		small = small && e > t.step2
		big = big && e > t.big2
		if !small && !big {
			return 0
		}
	}
	n := 0
	if small {
		n++
	}
	if big {
		n += bigPop
	}
	return n
}
