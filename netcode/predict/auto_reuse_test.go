package predict

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
)

// TestAutoReuseChangesNothing steps an Auto predictor's bank, with the
// reuse (auto_reuse.go), beside a reference bank that steps every shadow on
// its own (stepPlain) on the same frames and labels: every shadow's drawing
// at every frame, the drawing's settings at every label, and in the end
// every shadow's offset, pops and score must be exactly equal. The
// arrivals come on both paths with jitter (out of order on each), some with
// acceleration and turn rate and some without, the server's mapped 3 ms
// apart, and the direct path goes quiet now and then (the drawing switches
// paths). The reuse covers shadows in the same state stepping once (the
// capped and the free one of a time constant while the cap does not bind,
// the two models where they predict the same) and the fades kept from the
// last frame, so frames come both steadily and at uneven times.
func TestAutoReuseChangesNothing(t *testing.T) {
	for _, d := range dims {
		for _, uneven := range []bool{false, true} {
			name := d.name
			if uneven {
				name += "/uneven"
			}
			t.Run(name, func(t *testing.T) { autoReuseChangesNothing(t, d.dim2D, uneven, 6) })
		}
		// A car's speed: its first time constant follows the data age
		// (AutoParams.FastFade), its fade recomputed alone when that changes.
		t.Run(d.name+"/fast", func(t *testing.T) { autoReuseChangesNothing(t, d.dim2D, true, 24) })
	}
}

// autoReuseChangesNothing is TestAutoReuseChangesNothing for one dimension;
// uneven draws frames 0-3 ms late (so dt varies and sometimes repeats).
func autoReuseChangesNothing(t *testing.T, dim2D, uneven bool, speed float64) {
	a := newPredictor(t, Config{Auto: true, Dim2D: dim2D})
	ref := newTuner(&defaultAutoParams)
	// c parts every shadow now and then (settle): what a shadow takes when
	// it parts from the one it equalled must be exact too.
	c := newPredictor(t, Config{Auto: true, Dim2D: dim2D})
	aliased := 0 // frames in which a's bank still had shadows equal to others
	fwd, side, _ := axes(dim2D)
	u := unit(dim2D)
	r := rand.New(rand.NewPCG(7, 7))
	type arrival struct {
		path Path
		s    Sample
		at   time.Duration
	}
	var queue []arrival
	const step = time.Second / 60
	z := newZigzag(9, 20, speed)
	for i := range 20 * 60 {
		now := time.Duration(i) * step
		if uneven {
			now += time.Duration(r.IntN(4)) * time.Millisecond
		}
		pos, vel := z.at(now.Seconds())
		s := Sample{Time: now, Seq: seqOf(i), Pos: fwd.Scale(pos.X * u).Add(side.Scale(math.Sin(now.Seconds()) * u)),
			Vel: fwd.Scale(vel.X * u), Rot: geom.Identity}
		if i%120 < 60 { // half the time with acceleration and turn rate
			s.Acc, s.Turn = side.Scale(3*u), 0.5
		}
		quiet := i%300 > 240 // the direct path drops for a second in five
		for _, p := range []Path{PathServer, PathDirect} {
			if p == PathDirect && quiet {
				continue
			}
			lat := 40*time.Millisecond + time.Duration(r.IntN(30))*time.Millisecond
			ps := s
			if p == PathServer {
				// Relayed: later, and its stamp maps to the local
				// clock a little differently.
				lat += 30 * time.Millisecond
				ps.Time += 3 * time.Millisecond
			}
			queue = append(queue, arrival{p, ps, now + lat})
		}
		kept := queue[:0]
		for _, q := range queue {
			if q.at > now {
				kept = append(kept, q)
				continue
			}
			// The reference is labelled as Add labels a's bank: by a new
			// newest sample.
			newest := a.paths[q.path].newest()
			if a.Add(q.path, q.s, q.at) && (newest == nil || q.s.Time > newest.Time) {
				ref.label(a, &q.s)
			}
			c.Add(q.path, q.s, q.at)
		}
		queue = kept
		if a.paths[PathServer].n == 0 && a.paths[PathDirect].n == 0 {
			continue // nothing drawn yet
		}
		var f frame
		a.frameAt(now, &f)
		ref.stepPlain(a, &f)
		pa := a.PoseAt(now)
		for k := range numShadows {
			require.Equal(t, ref.hist[ref.hi].drawn[k], a.auto.hist[a.auto.hi].drawn[a.auto.root(k)],
				"shadow %d, frame %d", k, i)
		}
		require.Equal(t, ref.best, a.auto.best, "frame %d", i)
		require.Equal(t, ref.target, a.auto.target, "frame %d", i)
		if i%97 == 0 {
			c.auto.settle()
		}
		require.Equal(t, pa, c.PoseAt(now), "frame %d, settled now and then", i)
		if a.auto.split != allShadows {
			aliased++
		}
	}
	assert.Greater(t, aliased, 60, "shadows stepped as others'")
	assert.NotEqual(t, shadowBits{}, a.auto.split, "shadows parted")
	a.auto.settle()
	assert.Equal(t, ref.score, a.auto.score, "every shadow's score")
	assert.Equal(t, ref.off, a.auto.off, "every shadow's offset")
	assert.Equal(t, ref.q, a.auto.q, "every shadow's 95th and 99th percentiles")
	assert.Equal(t, ref.pops, a.auto.pops, "every shadow's pops since the last label")
	assert.Equal(t, ref.em, a.auto.em, "every shadow's mean error and pop rate")
	assert.Greater(t, a.auto.labels, 1000, "the shadows were scored")
	assert.NotEqual(t, 0, a.auto.best, "and the best changed")
	c.auto.settle()
	assert.Equal(t, ref.score, c.auto.score, "every shadow's score, settled now and then")
	assert.Equal(t, ref.q, c.auto.q, "every shadow's percentiles, settled now and then")
}

// allShadows has every non-root shadow's split bit (all parted).
var allShadows = func() (b shadowBits) {
	for i := range numShadows {
		if !rootShadows.has(i) {
			b.set(i)
		}
	}
	return b
}()

// TestAutoCandidateLayout pins what stepLag and split assume of the
// bank: each time constant's capped shadow right before its free one, a
// lag's shadows together, and the full model's before velocity alone's.
func TestAutoCandidateLayout(t *testing.T) {
	assert.Equal(t, [...]model{fullModel, velocityModel}, shadowModels)
	for i := range numShadows {
		assert.Equal(t, i%2 == 0, shadowCapped(i), "shadow %d", i)
		assert.Equal(t, i%numPerModel/numPerLag, shadowLag(i), "shadow %d", i)
		assert.Equal(t, i%numPerLag/2, shadowTau(i), "shadow %d", i)
		assert.Equal(t, shadowModels[i/numPerModel], shadowModel(i), "shadow %d", i)
	}
}

// stepPlain is tuner.step without the reuse, p's frame f stepped in a's
// bank: every shadow its own estimates (the whole estimate, not the
// position alone) and its own step, each fade computed, each pop test on
// hist's drawings (popRef). It marks every shadow parted and none as
// another's, so that label scores each on its own.
func (a *tuner) stepPlain(p *Predictor, f *frame) {
	now, dt := f.now, f.dt
	judge := a.hn > 0 && dt > 0 && !f.restart && !f.snap
	prev := &a.hist[a.hi]
	a.hi = (a.hi + 1) % autoHist
	a.hn = min(a.hn+1, autoHist)
	h := &a.hist[a.hi]
	h.t, h.same = now, [2]shadowBits{}
	h.snap = p.paths[f.path].newest().Pos
	a.split = allShadows
	df := f.drawFrame // the bound for the rule in force, as step sets it
	a.capFrame(p, &df)
	taus := a.tausAt(p, now-p.paths[f.path].newest().Time)
	if dt > 0 {
		a.taus = taus
	}
	step, big := a.popStepAt(p, dt), a.bigPopStep(p)
	step2, big2 := step*step, big*big
	raws := a.prevRaw
	for i := range numShadows {
		l, m := shadowLag(i), shadowModel(i)
		at := now - a.par.Lags[l]
		est, ok := p.estimate(f.path, at, math.MaxUint64, nil, m)
		if !ok {
			return
		}
		prevRaw := a.prevRaw[m][l]
		raws[m][l] = est.pos
		own, corr := est.pos.Sub(prevRaw), geom.Vec3{}
		if f.changed {
			old, ok := p.estimate(f.prevPath, at, p.epoch, &p.anchor, m)
			if !ok {
				old = est
			}
			own, corr = old.pos.Sub(prevRaw), old.pos.Sub(est.pos)
		}
		k, loss := 1.0, 0.0
		if dt > 0 {
			k, loss = fadeOf(dt, taus[shadowTau(i)])
		}
		s := drawStep{drawFrame: &df, est: est.pos, corr: corr}
		off, drawn, _, snaps, _ := s.step(a.off[i], k, loss, shadowCapped(i))
		a.off[i], h.drawn[i] = off, drawn
		a.pops[i] += snaps
		if judge && popRef(a, h.drawn[i].Sub(prev.drawn[i]), own, step2, now, dt) {
			a.pops[i]++
		}
		if judge && popRef(a, h.drawn[i].Sub(prev.drawn[i]), own, big2, now, dt) {
			a.pops[i] += bigPop
		}
	}
	a.prevRaw = raws
}

// popRef is the pop test on its own: a shadow's frame move is a pop when
// it departs by more than the pop step (step2 is its square) from its own
// prediction's move own and from every move the entity was seen to make
// lately (a recent sample's velocity times dt).
func popRef(a *tuner, move, own geom.Vec3, step2 float64, now, dt time.Duration) bool {
	if d := move.Sub(own); d.Dot(d) <= step2 {
		return false
	}
	for j := range autoSeen {
		if now-a.seenT[j] > a.par.SeenFor {
			continue
		}
		if d := move.Sub(a.seen[j].Scale(dt.Seconds())); d.Dot(d) <= step2 {
			return false
		}
	}
	return true
}
