package predict

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// engine-like replay: irregular frames, arrivals quantized to frames.
func replayEngineLike(p *Predictor, seed uint64, oneWay, delay, frameJit, sendJit time.Duration) (errs, snaps []float64) {
	const dur = 45.0
	w := newEightWay(seed, dur, 6)
	r := rand.New(rand.NewPCG(seed, 7))
	type pending struct {
		s   Sample
		arr time.Duration
	}
	var queue []pending
	var snap geom.Vec3
	const frame = time.Second / 60
	next := 3 * time.Millisecond
	now := time.Duration(0)
	for now.Seconds() < dur {
		dt := frame
		if frameJit > 0 {
			dt += time.Duration(r.Int64N(int64(2*frameJit))) - frameJit
		}
		now += dt
		for ; next <= now; next += frame {
			pos, vel := w.at(next.Seconds())
			d := oneWay + time.Duration(r.Int64N(int64(sendJit)+1))
			queue = append(queue, pending{s: Sample{Time: next + delay, Seq: seqOf(int(next / frame)), Pos: pos, Vel: vel,
				Rot: geom.Identity}, arr: next + d})
		}
		slices.SortStableFunc(queue, func(a, b pending) int { return int(a.arr - b.arr) })
		for len(queue) > 0 && queue[0].arr <= now {
			if p.Add(PathDirect, queue[0].s, now) {
				snap = queue[0].s.Pos
			}
			queue = queue[1:]
		}
		pose := p.PoseAt(now)
		if !pose.Valid || now < 5*time.Second {
			continue
		}
		truth, _ := w.at((now - delay).Seconds())
		errs = append(errs, pose.Pos.Sub(truth).Len())
		snaps = append(snaps, snap.Sub(truth).Len())
	}
	return errs, snaps
}

func TestZZEngineLike(t *testing.T) {
	for _, c := range []struct{ fj, sj, d time.Duration }{{0, 4, 0}, {5, 17, 0}, {8, 33, 0}, {0, 4, 100}, {5, 17, 100}, {8, 33, 100}, {8, 33, 50}} {
		for seed := uint64(1); seed <= 2; seed++ {
			p := newPredictor(t, Config{Auto: true})
			errs, snaps := replayEngineLike(p, seed, 100*time.Millisecond, c.d*time.Millisecond, c.fj*time.Millisecond, c.sj*time.Millisecond)
			t.Logf("fj %d sj %d delay %d seed %d: Auto mean %.3f p99 %.3f max %.3f lag %v erratic %v; snap mean %.3f", c.fj, c.sj, c.d, seed,
				mean(errs), pct(errs, 0.99), pct(errs, 1), p.auto.target, p.auto.erratic, mean(snaps))
			_ = math.Abs
		}
	}
}
