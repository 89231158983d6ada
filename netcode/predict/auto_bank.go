package predict

import (
	"math"
	"time"
)

// The bank: every candidate setting's shadow drawing, stepped each frame
// from the same data as the real one and through the same drawStep, its
// drawn positions kept in hist for the labels (auto_score.go).

// shadowFrame is what every shadow's step shares in one frame.
type shadowFrame struct {
	*drawFrame                      // the frame, as the real drawing's
	fade       [NumAutoTaus]float64 // each time constant's fade over dt
	fadeLoss   [NumAutoTaus]float64 // 1 - fade
	pops       popTest
	judge      bool // pop test this frame
}

// step steps every shadow through frame f, as PoseAt steps the real
// drawing, and records what each drew.
func (a *tuner) step(p *Predictor, f *frame) {
	now, dt := f.now, f.dt
	st := shadowFrame{drawFrame: &f.drawFrame}
	st.judge = a.hn > 0 && dt > 0 && !st.restart && !st.snap
	a.hi = (a.hi + 1) % autoHist
	a.hn = min(a.hn+1, autoHist)
	h := &a.hist[a.hi]
	h.t = now
	if nw := p.paths[f.path].newest(); nw != nil {
		h.snap = nw.Pos
	}
	h.same = [2]shadowBits{}
	a.capFrame(p, st.drawFrame)
	a.fades(p, &st, f.path, now)
	step, big := a.popStepAt(p, dt), a.bigPopStep(p)
	// Squared lengths: no square root per shadow and frame.
	st.pops.step2, st.pops.big2 = step*step, big*big
	st.pops.low2 = min(st.pops.step2, st.pops.big2)
	// The moves the entity was seen to make lately, over this frame, once
	// per frame rather than per shadow.
	if st.judge {
		for j := range autoSeen {
			if now-a.seenT[j] <= a.par.SeenFor {
				st.pops.seen[st.pops.nSeen] = a.seen[j].Scale(dt.Seconds())
				st.pops.nSeen++
			}
		}
	}
	for l, lag := range a.par.Lags {
		if !a.stepLagAt(p, f, &st, l, now-lag, h) {
			return
		}
	}
	if a.npend > 0 {
		a.labelPending(p)
	}
}

// capFrame sets the correction bound of frame df (the real drawing's and
// every shadow's) for the rule in force: the erratic rule's capped
// candidates glide faster, in steps below its pop (at a low frame rate
// too).
func (a *tuner) capFrame(p *Predictor, df *drawFrame) {
	if !a.erratic || df.v <= 0 {
		return
	}
	df.v = min(df.v*a.par.ErraticCorrection, a.bigPopStep(p)*erraticGlide)
	df.v2 = df.v * df.v
}

// fades sets each time constant's fade over the frame: one exp per
// constant, not per shadow, and none while the frame time repeats (a
// steady frame rate); a fast mover's first constant follows its data age
// (tausAt).
func (a *tuner) fades(p *Predictor, st *shadowFrame, path Path, now time.Duration) {
	dt := st.dt
	if dt <= 0 {
		return
	}
	taus := a.tausAt(p, now-p.paths[path].newest().Time)
	switch {
	case dt != a.fadeDt:
		for t, tau := range taus {
			a.fade[t], _ = fadeOf(dt, tau)
		}
		a.fadeDt = dt
	case taus[0] != a.taus[0]:
		a.fade[0], _ = fadeOf(dt, taus[0])
	}
	a.taus = taus
	st.fade = a.fade
	for t, k := range st.fade {
		st.fadeLoss[t] = 1 - k
	}
}

// tausAt returns the candidate time constants for a frame whose data is
// age old: AutoParams.Taus, the first one, for a mover faster than
// popSpeed, fastFade of the age (between taus[0] and taus[1], in steps of
// half a millisecond so that its fade is not recomputed every frame).
func (a *tuner) tausAt(p *Predictor, age time.Duration) [NumAutoTaus]time.Duration {
	taus := a.par.Taus
	if a.peak > a.popSpeed(p) {
		t := time.Duration(a.par.FastFade * float64(age)).Round(500 * time.Microsecond)
		taus[0] = min(max(t, taus[0]), taus[1])
	}
	return taus
}

// stepLagAt steps lag l's shadows of both models, drawn at time at, into
// hist row h (stepModels), from each model's estimate and, when the frame
// changed the prediction, the old one (before the new data, or on the last
// path): the second model's only where the model plays a part (most lags
// interpolate), and no old estimate where the new data changed nothing at
// that time (estimates are much of an Auto frame). It reports false when
// there is nothing to go on.
func (a *tuner) stepLagAt(p *Predictor, f *frame, st *shadowFrame, l int, at time.Duration, h *histFrame) bool {
	var ests, olds [len(shadowModels)]shadowEst
	var oldOK bool
	for mi, m := range shadowModels {
		est := ests[0]
		if mi == 0 || !est.modelFree {
			var ok bool
			if est, ok = p.shadowEstimate(f.path, at, math.MaxUint64, nil, m); !ok {
				return false
			}
		}
		var old shadowEst
		if f.changed {
			switch {
			case f.path == f.prevPath && est.gen < p.epoch:
				// The samples it stands on arrived before the last frame
				// (the ring is in time order, so none came between
				// them): the old prediction is the same.
				old = est
			case mi > 0 && oldOK && olds[0].modelFree:
				old = olds[0]
			default:
				if old, oldOK = p.shadowEstimate(f.prevPath, at, p.epoch, &p.anchor, m); !oldOK {
					old = est
				}
			}
		}
		ests[mi], olds[mi] = est, old
	}
	a.stepModels(st, l, &ests, &olds, h)
	for mi := range shadowModels {
		a.prevRaw[mi][l] = ests[mi].pos
	}
	return true
}

// warm reads one word of every cache line an Auto frame is about to use
// (the offsets, the pop counts, the history row it writes, the newest
// samples), all at once and before any work: in the engine an entity's
// state is cold at each frame (the other entities and the engine ran
// since), and the frame's own loops, each step long, leave few of these
// misses in flight at a time. The loads are independent, so they overlap.
// The drawing does not change: the sum goes to a field nothing reads.
func (a *tuner) warm(p *Predictor) {
	const line = 64 / 24 // Vec3s per cache line, rounded down: no line skipped
	var s float64
	next := &a.hist[(a.hi+1)%autoHist].drawn
	var n int
	for base := 0; base < numShadows; base += numPerLag {
		// The second model's shadows at a lag only once parted from the
		// first's: until then nothing reads or writes them (split).
		if base >= numPerModel && !a.split.has(base) {
			continue
		}
		// A lag's shadows span 144 bytes: these four reads reach every
		// line of them.
		for _, i := range [...]int{base, base + 2, base + 4} {
			s += a.off[i].X + next[i].X
		}
		s += a.off[base+numPerLag-1].Z + next[base+numPerLag-1].Z
		n += a.pops[base] + a.pops[base+numPerLag-1]
	}
	for m := range a.prevRaw {
		for l := 0; l < NumAutoLags; l += line {
			s += a.prevRaw[m][l].X
		}
	}
	for i := 0; i < autoSeen; i += line {
		s += a.seen[i].X
	}
	r := &p.paths[p.path]
	for i := max(r.n-autoWarmSamples, 0); i < r.n; i++ {
		// An entry spans up to four lines; no two of these fields are a
		// line apart.
		e := r.at(i)
		s += float64(e.Time) + e.Acc.X + e.Turn + e.accRest.Z
	}
	a.sink = s + float64(n)
}
