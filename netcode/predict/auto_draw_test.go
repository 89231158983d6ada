package predict

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// TestAutoShadowDrawsAsPoseAt checks that every shadow draws exactly what
// PoseAt draws with its settings (lag, time constant, cap and model): for
// each shadow, an Auto predictor pinned to it draws a long varied stream
// (variedStream: a mover that speeds up past the fast-fade speed, turns,
// teleports with and without the flag, stalls until hidden; two paths
// with jitter, reordering and loss; uneven, repeated and late frames), and
// at every frame its pose must equal the shadow's drawing in its own bank.
//
// A fast mover's first time constant is not a fixed setting: it follows
// the data age (AutoParams.FastFade), and the drawing takes it as the
// shadow fades with it in the same frame (tuner.frame), so those shadows
// are checked too (the stream speeds up past the fast-fade speed). In 2D,
// which differs
// only in its units and turn axis, a fifth of the shadows (every time
// constant, cap and model among them) keeps the test short under -race.
func TestAutoShadowDrawsAsPoseAt(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			cfg := Config{Auto: true, Dim2D: d.dim2D}
			stream := variedStream(11, d.dim2D, 16*time.Second)
			var snaps, large, switches, hidden int
			lastPath := PathServer
			for i := range numShadows {
				if d.dim2D && i%5 != 0 {
					continue
				}
				p := pinned(t, cfg, i)
				a := p.auto
				frames := 0
				stream.replay(p, func(now time.Duration, pose Pose) {
					require.Equal(t, a.hist[a.hi].drawn[a.root(i)], pose.Pos, "shadow %d, frame at %v", i, now)
					frames++
					if i != 0 {
						return
					}
					snaps += btoi(pose.Snapped)
					large += btoi(pose.Correction > 0.5*unit(d.dim2D))
					switches += btoi(pose.Path != lastPath)
					hidden += btoi(pose.Visibility == Hidden)
					lastPath = pose.Path
				})
				require.Greater(t, frames, 800)
				lag, _ := p.AutoSettings()
				require.Equal(t, a.par.Lags[shadowLag(i)], lag, "shadow %d stayed pinned", i)
				require.Equal(t, i, a.best, "shadow %d stayed pinned", i)
			}
			t.Logf("first shadow: %d snaps, %d frames with a correction over 0.5 m, %d path switches, %d hidden",
				snaps, large, switches, hidden)
			assert.Positive(t, snaps, "the stream snaps")
			assert.Positive(t, large, "and corrects by more than the cap moves in a frame")
			assert.Positive(t, switches, "and switches paths")
			assert.Positive(t, hidden, "and stalls until hidden")
		})
	}
}

// pinned returns an Auto predictor that draws shadow i's settings from the
// first frame on: past minLabels with i the best, an infinite switch
// margin (no switch) and no refined lag.
func pinned(t testing.TB, cfg Config, i int) *Predictor {
	p := newPredictor(t, cfg)
	a := p.auto
	a.par.SwitchMargin = math.Inf(1)
	a.par.Refine = false
	// The erratic rule keeps it too: no candidate beyond its limits.
	a.par.TailFactor, a.par.PopRate = math.Inf(1), math.Inf(1)
	a.labels = a.par.MinLabels + 1
	a.best = i
	a.target = a.par.Lags[shadowLag(i)]
	a.lag = a.target
	return p
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// stream is a recorded input for predictors: arrivals and frame times.
type stream struct {
	arrivals []streamArrival // by arrival time
	frames   []time.Duration // non-decreasing
}

type streamArrival struct {
	path Path
	s    Sample
	at   time.Duration
}

// replay feeds p the stream: before each frame the arrivals due by then,
// then PoseAt, whose pose goes to frame when valid.
func (st *stream) replay(p *Predictor, frame func(now time.Duration, pose Pose)) {
	next := 0
	for _, now := range st.frames {
		for ; next < len(st.arrivals) && st.arrivals[next].at <= now; next++ {
			a := st.arrivals[next]
			p.Add(a.path, a.s, a.at)
		}
		if pose := p.PoseAt(now); pose.Valid {
			frame(now, pose)
		}
	}
}

// variedStream returns dur of a seeded random mover's states on both
// paths and the frames that draw it. The mover holds each behaviour for
// 0.2-1 s: a speed up to 3x the fast-fade speed (AutoParams.PopSpeed),
// an acceleration and a turn rate, sent or not. Every 4 s or so it
// teleports with the flag or jumps past TeleportDistance without it, and
// once it stalls for longer than HideAfter. The direct
// path carries states 30-60 ms late with 4% loss (out of order where the
// delays cross) and goes quiet for a second now and then; the server's copy
// is 30 ms later, stamped 3 ms apart, with 2% loss. Frames are 1/60 s
// apart, 0-3 ms late, a few repeated and a few after a hitch.
func variedStream(seed uint64, dim2D bool, dur time.Duration) *stream {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	fwd, side, up := axes(dim2D)
	u := unit(dim2D)
	var st stream
	var pos, vel, acc geom.Vec3
	var turn float64
	hold := time.Duration(0)
	const tick = time.Second / 60
	stall := dur / 2
	seq := 0
	for t := 3 * time.Millisecond; t < dur; t += tick {
		if t >= stall && t < stall+2500*time.Millisecond {
			continue // the sender stalls: nothing is sent
		}
		var flags wire.Flags
		switch {
		case t >= hold:
			hold = t + time.Duration((0.2+0.8*r.Float64())*float64(time.Second))
			speed := 24 * r.Float64() * u
			h := 2 * math.Pi * r.Float64()
			vel = fwd.Scale(speed * math.Cos(h)).Add(side.Scale(speed * math.Sin(h)))
			acc, turn = geom.Vec3{}, 0
			if r.IntN(2) == 0 {
				acc = fwd.Scale(6 * (r.Float64() - 0.5) * u).Add(side.Scale(6 * (r.Float64() - 0.5) * u))
				turn = 3 * (r.Float64() - 0.5)
			}
			if !dim2D && r.IntN(4) == 0 {
				vel = vel.Add(up.Scale(3))
			}
		case r.IntN(480) == 0:
			pos, flags = pos.Add(side.Scale(20*u)), wire.FlagTeleport
		case r.IntN(480) == 0:
			pos = pos.Add(fwd.Scale(8 * u)) // beyond TeleportDistance, unflagged
		}
		vel = vel.RotateAbout(up, turn*tick.Seconds()).Add(acc.Scale(tick.Seconds()))
		pos = pos.Add(vel.Scale(tick.Seconds()))
		seq++
		s := Sample{Time: t, Seq: seqOf(seq), Pos: pos, Vel: vel, Acc: acc, Turn: turn,
			Rot: geom.AxisAngle(up, float64(seq)*0.01), Flags: flags}
		if r.Float64() >= 0.04 && t%(5*time.Second) < 4*time.Second {
			st.arrivals = append(st.arrivals, streamArrival{PathDirect, s,
				t + 30*time.Millisecond + time.Duration(r.Float64()*float64(30*time.Millisecond))})
		}
		if r.Float64() >= 0.02 {
			ps := s
			ps.Time += 3 * time.Millisecond
			st.arrivals = append(st.arrivals, streamArrival{PathServer, ps,
				t + 60*time.Millisecond + time.Duration(r.Float64()*float64(10*time.Millisecond))})
		}
	}
	slices.SortStableFunc(st.arrivals, func(a, b streamArrival) int { return int(a.at - b.at) })
	for now := time.Duration(0); now < dur+time.Second; now += tick {
		f := now + time.Duration(r.IntN(4))*time.Millisecond
		switch r.IntN(100) {
		case 0:
			st.frames = append(st.frames, f) // drawn twice: dt 0
		case 1:
			now += 60 * time.Millisecond // a hitch
			f += 60 * time.Millisecond
		}
		st.frames = append(st.frames, f)
	}
	return &st
}
