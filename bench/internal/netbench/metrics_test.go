package netbench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
)

// straight is the truth of an entity moving along +X at speed from x=0.
func straight(t, speed float64) Kin {
	return Kin{Pos: geom.Vec3{X: speed * t}, Vel: geom.Vec3{X: speed}, Rot: geom.Identity}
}

func TestSeriesErrorsAndPercentiles(t *testing.T) {
	var s series
	s.grow(0, true)
	// Drawn 0.1 m ahead and 0.2 m to the side on every frame but one,
	// which is 1 m behind.
	for i := range 100 {
		tt := float64(i) / 60
		k := straight(tt, 10)
		off := geom.Vec3{X: 0.1, Z: 0.2}
		if i == 50 {
			off = geom.Vec3{X: -1}
		}
		s.add(&frameIn{t: tt, truth: k, drawn: k.Pos.Add(off), hasSplit: true})
	}
	var r Row
	s.stats(&r, 100.0/60/60)
	assert.Equal(t, 100, r.Frames)
	assert.InDelta(t, 0.1, r.AlongP50, 1e-9)
	assert.InDelta(t, 0.1, r.AlongP95, 1e-9)
	assert.InDelta(t, 1, r.AlongMax, 1e-9)
	assert.InDelta(t, 0.2, r.SideP95, 1e-9)
	assert.InDelta(t, (99*0.1-1)/100, r.Bias, 1e-9, "bias is signed: ahead positive")
	// Going 1.1 m back and 1.1 m forward again in a frame each: two jumps.
	assert.InDelta(t, 2/(100.0/60/60), r.JumpsPerMin, 1e-9)
	require.NotNil(t, r.SplitTiming)
}

// truthAt is a truth for the reversal tests: along +X at speed until
// stopAt (s), then still, or turning to +Z at turnAt.
type truthPath func(t float64) Kin

// judgeFrames feeds 1 s of 60 Hz frames drawn by drawn(t) against truth
// into a series, with the true directions of travel as render gives them.
func judgeFrames(truth truthPath, drawn func(t float64) geom.Vec3) *series {
	var s series
	s.grow(0, false)
	for i := range 61 {
		tt := float64(i) / 60
		f := frameIn{t: tt, truth: truth(tt), drawn: drawn(tt)}
		for j := range 13 {
			v := truth(tt - float64(j)*reversalLookback/12).Vel
			if hs := math.Hypot(v.X, v.Z); hs > reversalMinSpeed {
				f.dirs = append(f.dirs, geom.Vec3{X: v.X / hs, Z: v.Z / hs})
			}
		}
		s.add(&f)
	}
	return &s
}

func TestSeriesReversals(t *testing.T) {
	run := func(t float64) Kin { return straight(t, 6) }
	// Runs +X at 6 m/s and stops dead at 0.5 s.
	stop := func(t float64) Kin {
		if t < 0.5 {
			return straight(t, 6)
		}
		return Kin{Pos: geom.Vec3{X: 3}, Rot: geom.Identity}
	}
	// Runs +X and turns back (-X) at 0.5 s.
	back := func(t float64) Kin {
		if t < 0.5 {
			return straight(t, 6)
		}
		return Kin{Pos: geom.Vec3{X: 3 - 6*(t-0.5)}, Vel: geom.Vec3{X: -6}, Rot: geom.Identity}
	}
	for _, tc := range []struct {
		name  string
		truth truthPath
		drawn func(t float64) geom.Vec3
		want  int
	}{
		{"on the truth", run, func(t float64) geom.Vec3 { return run(t).Pos }, 0},
		{"forward and back every frame", run, func(t float64) geom.Vec3 {
			p := run(t).Pos
			if int(math.Round(t*60))%2 == 1 {
				p.X -= 0.3
			}
			return p
		}, 29},
		{"a true turn back, drawn 100 ms late, is no reversal", back, func(t float64) geom.Vec3 {
			return back(t - 0.1).Pos
		}, 0},
		// Extrapolation past a stop, then pulled back: the bounce players
		// see. The truth stops, so the old steady-heading filter never
		// judged these frames.
		{"overshoot at a stop, pulled back", stop, func(t float64) geom.Vec3 {
			switch {
			case t < 0.5+0.08:
				return geom.Vec3{X: 6 * t}
			default: // 0.48 m past, fading back with a 50 ms time constant
				return geom.Vec3{X: 3 + 0.48*math.Exp(-(t-0.58)/0.05)}
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := judgeFrames(tc.truth, tc.drawn)
			assert.Equal(t, tc.want, s.reversals)
		})
	}
}

func TestSeriesPops(t *testing.T) {
	// A run that turns back at 0.5 s. Drawing it 100 ms late replays the
	// true moves: no pops. Snapping two samples in one frame (a bunched
	// arrival) moves twice as far as the truth ever did in a frame: a pop.
	back := func(t float64) Kin {
		if t < 0.5 {
			return straight(t, 12)
		}
		return Kin{Pos: geom.Vec3{X: 6 - 12*(t-0.5)}, Vel: geom.Vec3{X: -12}, Rot: geom.Identity}
	}
	count := func(drawn func(float64) geom.Vec3) int {
		var s series
		s.grow(0, false)
		for i := range 61 {
			tt := float64(i) / 60
			f := frameIn{t: tt, truth: back(tt), drawn: drawn(tt)}
			for j := range int(popLookback/popLagStep) + 1 {
				at := tt - float64(j)*popLagStep
				f.moves = append(f.moves, back(at).Pos.Sub(back(at-1.0/60).Pos))
			}
			s.add(&f)
		}
		return s.pops
	}
	assert.Zero(t, count(func(t float64) geom.Vec3 { return back(t - 0.1).Pos }), "late is not a pop")
	assert.Equal(t, 2, count(func(t float64) geom.Vec3 {
		i := int(math.Round(t * 60))
		if i == 10 {
			i = 11 // this frame draws the next sample too: the next frame does not move
		}
		return back(float64(i) / 60).Pos
	}), "a double move, then a still frame")
}

func TestSeriesPopEvents(t *testing.T) {
	// A character running at 6 m/s (0.1 m a frame) drawn with a 0.4 m jump
	// at frame 30 and a 0.15 m one at frame 33 (50 ms later), then three
	// 0.15 m jumps 200 ms apart. Frames closer than PopEventGap to the
	// start of an event are that event; each size class counts its own.
	run := func(t float64) Kin { return straight(t, 6) }
	var s series
	s.grow(0, false)
	off := 0.0
	for i := range 120 {
		tt := float64(i) / 60
		switch i {
		case 30:
			off += 0.4
		case 33, 60, 72, 84:
			off += 0.15
		}
		f := frameIn{t: tt, truth: run(tt), drawn: run(tt).Pos.Add(geom.Vec3{Z: off})}
		for j := range int(popLookback/popLagStep) + 1 {
			at := tt - float64(j)*popLagStep
			f.moves = append(f.moves, run(at).Pos.Sub(run(at-1.0/60).Pos))
		}
		s.add(&f)
	}
	assert.Equal(t, 5, s.pops, "every popping frame")
	assert.Equal(t, [numPopSizes + 1]int{4, 1, 1, 0, 4}, s.popEvents,
		"> 0.1 m: the 0.4 m jump and the one 50 ms after it are one event; > 0.3 m: one; relative (half a frame's travel, 0.05 m) as > 0.1 m")
}

func TestOffPath(t *testing.T) {
	trail := []geom.Vec3{{X: 2}, {X: 1}, {X: 1, Z: -1}} // newest first
	assert.InDelta(t, 0.5, offPath(geom.Vec3{X: 1.5, Z: 0.5}, 0.7, trail), 1e-12)
	assert.InDelta(t, 0.01, offPath(geom.Vec3{X: 2.01}, 0.01, trail), 1e-12, "small errors are taken as they are")
	assert.InDelta(t, 0.3, offPath(geom.Vec3{X: 0.7, Z: -0.5}, 1.4, trail), 1e-12)
}

func TestWobble(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	sample := func(f func(t float64) float64) float64 {
		var ts []float64
		var es []geom.Vec3
		tt := 0.0
		for range 60 * 20 {
			tt += 1.0/60 + rng.Float64()*0.002 // frame jitter
			ts = append(ts, tt)
			es = append(es, geom.Vec3{X: f(tt)})
		}
		return wobble(ts, es)
	}
	slow := sample(func(t float64) float64 { return 0.5 * math.Sin(2*math.Pi*0.2*t) })
	fast := sample(func(t float64) float64 { return 0.1 * math.Sin(2*math.Pi*12*t) })
	constant := sample(func(float64) float64 { return 3 })
	t.Logf("wobble: 0.5 m at 0.2 Hz %.4f, 0.1 m at 12 Hz %.4f, constant %.4f", slow, fast, constant)
	assert.Less(t, slow, 0.01, "a slow drift is not wobble")
	assert.InDelta(t, 0.1/math.Sqrt2, fast, 0.01, "a 12 Hz shake is all wobble (RMS of a sine)")
	assert.InDelta(t, 0, constant, 1e-9)
}

func TestSlideRate(t *testing.T) {
	var s series
	s.grow(0, true)
	for i := range 600 { // 10 s; the timing error slides 2 ms/s, plus frame noise
		tt := float64(i) / 60
		e := 0.002*tt + 0.0001*float64(i%3)
		s.add(&frameIn{t: tt, truth: straight(tt, 1), drawn: straight(tt, 1).Pos, hasSplit: true, timingS: e})
	}
	assert.InDelta(t, 2, s.slideRate(), 0.25)
}

func TestPct(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	assert.Equal(t, 5.0, pct(xs, 0.5))
	assert.Equal(t, 10.0, pct(xs, 0.95))
	assert.Equal(t, 1.0, pct(xs, 0))
	assert.Equal(t, 0.0, pct(nil, 0.5))
}

func TestInterpBuf(t *testing.T) {
	var b interpBuf
	ms := time.Millisecond
	_, ok, _ := b.draw(time.Second)
	assert.False(t, ok)
	// Snapshots every 50 ms at x = t (in ms), added out of order once.
	for _, at := range []time.Duration{0, 50, 150, 100, 200, 200} {
		b.add(snap{t: at * ms, pos: geom.Vec3{X: float64(at)}})
	}
	assert.Equal(t, 5, b.n, "duplicates dropped")
	for _, tc := range []struct {
		now       time.Duration
		want      float64
		wantDry   bool
		wantFirst bool
	}{
		{225 * ms, 125, false, false},
		{150 * ms, 50, false, false},
		{300 * ms, 200, true, false},
		{400 * ms, 200, true, false},
		{50 * ms, 0, false, true},
	} {
		pos, ok, dry := b.draw(tc.now)
		require.True(t, ok)
		assert.InDelta(t, tc.want, pos.X, 1e-9, "at %v", tc.now)
		assert.Equal(t, tc.wantDry, dry, "at %v", tc.now)
	}
	// A full ring keeps the newest.
	for i := range 100 {
		b.add(snap{t: time.Duration(300+i) * ms, pos: geom.Vec3{X: float64(300 + i)}})
	}
	assert.Equal(t, len(b.buf), b.n)
	assert.Equal(t, 399*ms, b.at(b.n-1).t)
}

func TestLerp(t *testing.T) {
	var l lerpState
	_, ok := l.draw()
	assert.False(t, ok)
	l.add(1, geom.Vec3{X: 8})
	p, _ := l.draw()
	assert.Equal(t, 8.0, p.X, "the first draw is the sample")
	l.add(3, geom.Vec3{X: 16})
	l.add(2, geom.Vec3{X: 100}) // older: ignored
	p, _ = l.draw()
	assert.Equal(t, 12.0, p.X, "halfway")
	p, _ = l.draw()
	assert.Equal(t, 14.0, p.X)
}
