package entity

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// circler is the network lab's mover (test/netlab): a 5 m circle at
// 1 rad/s with two smaller, faster wobbles, up to about 9 m/s, its phases
// drawn from seed.
func circler(seed uint64) func(t time.Duration) geom.Vec3 {
	rng := rand.New(rand.NewPCG(seed, 2))
	terms := [...]struct{ r, w, ph float64 }{{5, 1, 0}, {1.2, 2.3, 0}, {0.4, 4.1, 0}}
	for i := range terms {
		terms[i].ph = rng.Float64() * 2 * math.Pi
	}
	return func(t time.Duration) geom.Vec3 {
		var p geom.Vec3
		for _, term := range terms {
			p.X += term.r * math.Cos(term.w*t.Seconds()+term.ph)
			p.Z += term.r * math.Sin(term.w*t.Seconds()+term.ph)
		}
		return p
	}
}

// laggedStart sends the circler from its first sample (a sender's start:
// still, then moving) to a Remote with Auto through 60 ms plus two hops of
// up to 20 ms jitter and 2 % loss at each, states behind a newer one
// dropped (the lab's server path), drawn at 60 frames a second up to 4 ms
// late each (a game's frame times on a busy machine). It returns the share
// of the frames from 1 s to 12 s drawn with a lag of 30 ms or more, and
// the 95th percentile of the drawn error over them.
func laggedStart(t *testing.T, seed uint64, par *predict.AutoParams) (lagged, p95 float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	at := circler(seed)
	loc, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	rem, err := NewRemote(predict.Config{Auto: true, AutoParams: par})
	require.NoError(t, err)
	type arrival struct {
		at, sample time.Duration
		st         wire.State
	}
	var flight []arrival
	const step = time.Second / 60
	newest := -1
	var errs []float64
	for f := range 60 * 12 {
		now := time.Duration(f) * step
		loc.Sample(now, at(now), geom.Identity, geom.Vec3{}, false)
		if s, ok := loc.Poll(1); ok && rng.Float64() >= 0.02 && rng.Float64() >= 0.02 {
			d := 60*time.Millisecond + time.Duration(rng.Int64N(int64(20*time.Millisecond))+rng.Int64N(int64(20*time.Millisecond)))
			flight = append(flight, arrival{now + d, now, *s})
		}
		slices.SortFunc(flight, func(a, b arrival) int { return int(a.at - b.at) })
		for len(flight) > 0 && flight[0].at <= now {
			a := flight[0]
			flight = flight[1:]
			if int(a.st.Seq) > newest { // no wrap in 12 s
				newest = int(a.st.Seq)
				rem.Add(predict.PathServer, &a.st, a.sample, a.at)
			}
		}
		draw := now + time.Duration(rng.Int64N(int64(4*time.Millisecond)))
		pose, _ := rem.Frame(draw)
		if pose.Valid && draw > time.Second {
			errs = append(errs, pose.Pos.Sub(at(draw)).Len())
			if rem.RenderLag() >= 30*time.Millisecond {
				lagged++
			}
		}
	}
	require.NotEmpty(t, errs)
	slices.Sort(errs)
	return lagged / float64(len(errs)), errs[len(errs)*95/100]
}

// TestAutoSenderStartLeavesNoLag: a mover's first states (sent as still,
// then with an acceleration ramping up from zero) are not scored, so Auto
// draws a steady mover as it draws it later, by extrapolation, from its
// first second on. Scored (SkipLabels 0), the start lifted the
// extrapolating candidates' 99th percentile error for tens of seconds and
// Auto drew with a lag of 30 ms or more for a third to all of the frames
// in 6 of 24 seeds here (p95 up to 61 cm), as it did in the network lab.
func TestAutoSenderStartLeavesNoLag(t *testing.T) {
	scored := predict.DefaultAutoParams()
	scored.SkipLabels = 0
	worst, hit := 0.0, 0
	for seed := uint64(1); seed <= 24; seed++ {
		lagged, p95 := laggedStart(t, seed, nil)
		assert.Zero(t, lagged, "seed %d: share of frames drawn 30 ms or more behind", seed)
		assert.Less(t, p95, 0.1, "seed %d: drawn error p95 (m)", seed)
		l, p := laggedStart(t, seed, &scored)
		if l > 0 {
			hit++
		}
		worst = max(worst, p)
		t.Logf("seed %d: lagged %.0f %% p95 %.1f cm; scoring the start: lagged %.0f %% p95 %.1f cm", seed, 100*lagged, 100*p95, 100*l, 100*p)
	}
	t.Logf("scoring the start: %d of 24 seeds drawn lagged, p95 up to %.1f cm", hit, 100*worst)
	assert.Positive(t, hit, "scoring the start lags some seeds (what this test guards against)")
}
