package predict

import (
	"math/bits"

	"github.com/nearzero/nearzero/netcode/geom"
)

// The reuse: what is computed once, never changing what is drawn
// (TestAutoReuseChangesNothing checks it against stepping every shadow on
// its own). On a steady mover most of the bank is some other shadow:
//
//   - A shadow whose offset equals another's that stepped from the same
//     estimates takes that one's step (stepLag): a free shadow its capped
//     one's while the cap does not bind, and the second model's the first
//     model's at a lag where the models predict the same. Equal inputs
//     give equal results, up to the sign of a zero, which nothing reads
//     (every test and score takes squares). hist marks them (same), and
//     a label gives them that one's error.
//   - A shadow that has equalled another in every state and score since
//     the last reset (a free one whose capped one's cap never bound, the
//     second model's at a lag where the models never predicted
//     differently) is neither stepped nor scored until it parts: split
//     has its bit unset, and root finds the shadow whose stored state is
//     its own. When it parts it takes that one's state (copyShadow). The
//     first model's capped shadows are always stepped (rootShadows).
//   - The estimates that do not depend on the model or on the latest
//     arrival, and the fades while the frame time repeats (auto_bank.go).

// shadowBits is one bit per shadow.
type shadowBits [(numShadows + 63) / 64]uint64

func (b *shadowBits) set(i int)      { b[i>>6] |= 1 << (i & 63) }
func (b *shadowBits) has(i int) bool { return b[i>>6]&(1<<(i&63)) != 0 }

// pop clears the lowest set bit and returns its shadow (numShadows when
// none is left).
func (b *shadowBits) pop() int {
	for w, word := range b {
		if word != 0 {
			b[w] = word & (word - 1)
			return w<<6 + bits.TrailingZeros64(word)
		}
	}
	return numShadows
}

// rootShadows are the shadows that are always stepped: the first
// model's capped ones.
var rootShadows = func() (b shadowBits) {
	for i := 0; i < numPerModel; i += 2 {
		b.set(i)
	}
	return b
}()

// copyShadow gives shadow dst the state of src, its history included, and
// marks it parted.
func (a *tuner) copyShadow(dst, src int) {
	a.off[dst], a.score[dst], a.q[dst], a.pops[dst] = a.off[src], a.score[src], a.q[src], a.pops[src]
	a.em[dst] = a.em[src]
	for h := range a.hist {
		a.hist[h].drawn[dst] = a.hist[h].drawn[src]
	}
	a.split.set(dst)
}

// splitTwin parts the second model's shadows at lag l from the first's:
// each takes the state of its twin (a free one still equal to its capped
// one stays so).
func (a *tuner) splitTwin(l int) {
	for k := range numPerLag {
		if src := l*numPerLag + k; k%2 == 0 || a.split.has(src) {
			a.copyShadow(numPerModel+src, src)
		}
	}
}

// root returns the shadow whose stored state is shadow i's.
func (a *tuner) root(i int) int {
	if i >= numPerModel && !a.split.has(i-i%numPerLag) {
		i -= numPerModel
	}
	if i%2 == 1 && !a.split.has(i) {
		i--
	}
	return i
}

// settle parts every shadow (tests: the stored states of all are then
// exact).
func (a *tuner) settle() {
	for l := range NumAutoLags {
		if !a.split.has(numPerModel + l*numPerLag) {
			a.splitTwin(l)
		}
	}
	for i := 1; i < numShadows; i += 2 {
		if !a.split.has(i) {
			a.copyShadow(i, i-1)
		}
	}
}

// stepModels steps lag l's shadows of both models from their estimates
// (ests, olds: see tuner.stepLagAt) into hist row h. Where the second
// model predicts exactly as the first (most lags interpolate), both step
// together; while the second's shadows are still the first's (never
// predicted otherwise), only the first's step.
func (a *tuner) stepModels(st *shadowFrame, l int, ests, olds *[len(shadowModels)]shadowEst, h *histFrame) {
	for mi := range shadowModels {
		base := mi*numPerModel + l*numPerLag
		prevRaw := a.prevRaw[mi][l]
		twin := -1
		if mi == 0 && ests[1].pos == ests[0].pos && olds[1].pos == olds[0].pos && a.prevRaw[1][l] == prevRaw {
			twin = numPerModel + l*numPerLag
		}
		if mi == 0 && !a.split.has(numPerModel+l*numPerLag) {
			if twin >= 0 {
				a.stepLag(st, base, -1, ests[0].pos, olds[0].pos, prevRaw, h)
				return
			}
			a.splitTwin(l)
		}
		a.stepLag(st, base, twin, ests[mi].pos, olds[mi].pos, prevRaw, h)
		if twin >= 0 {
			return
		}
	}
}

// stepLag steps the shadows base..base+numPerLag-1 (one model and lag,
// whose estimate is est, old before new data changed it and prevRaw at
// the last frame), and with twin >= 0 those from twin on (the other
// model's at the same lag, whose estimates are the same), into hist row h,
// marking in h.same the shadows that took another's step.
func (a *tuner) stepLag(st *shadowFrame, base, twin int, est, old, prevRaw geom.Vec3, h *histFrame) {
	lf := drawStep{drawFrame: st.drawFrame, est: est, prevRaw: prevRaw}
	lf.own = est.Sub(lf.prevRaw)
	if st.changed {
		lf.own = old.Sub(lf.prevRaw)
		lf.corr = old.Sub(est)
	}
	if st.judge {
		lf.pops = &st.pops
	}
	// step steps a shadow of time constant t, capped or not, from off.
	step := func(t int, capped bool, off geom.Vec3) (geom.Vec3, geom.Vec3, int, bool) {
		off, drawn, _, n, bound := lf.step(off, st.fade[t], st.fadeLoss[t], capped)
		return off, drawn, n, bound
	}
	offs := (*[numPerLag]geom.Vec3)(a.off[base : base+numPerLag])
	outs := (*[numPerLag]geom.Vec3)(h.drawn[base : base+numPerLag])
	pops := (*[numPerLag]int)(a.pops[base : base+numPerLag])
	// Which shadows start as their twins, before any steps; then few
	// values are live in the loops, which is most of their cost. A free
	// shadow that is still its capped one (split unset) has a stale offset:
	// it takes nothing.
	var asTwin [numPerLag]bool
	var toffs, touts *[numPerLag]geom.Vec3
	var tpops *[numPerLag]int
	if twin >= 0 {
		toffs = (*[numPerLag]geom.Vec3)(a.off[twin : twin+numPerLag])
		touts = (*[numPerLag]geom.Vec3)(h.drawn[twin : twin+numPerLag])
		tpops = (*[numPerLag]int)(a.pops[twin : twin+numPerLag])
		for i := range numPerLag {
			asTwin[i] = toffs[i] == offs[i] && (i%2 == 0 || a.split.has(base+i) && a.split.has(twin+i))
		}
	}
	var n [numPerLag]int        // each shadow's pops this frame
	var bound [NumAutoTaus]bool // the cap bound each capped shadow
	for t := range NumAutoTaus {
		i := 2 * t // capped; i+1 free
		was := offs[i]
		o, d, m, b := step(t, true, was)
		if !a.split.has(base + i + 1) {
			if !b { // the free one is still the capped one: nothing to step
				offs[i], outs[i], n[i], bound[t] = o, d, m, b
				pops[i] += m
				continue
			}
			a.copyShadow(base+i+1, base+i) // parting now: its own state from before this step
		}
		offs[i], outs[i], n[i], bound[t] = o, d, m, b
		pops[i] += m
		i++
		if !b && offs[i] == was { // as the capped one, whose cap did not bind
			offs[i], outs[i], n[i] = offs[i-1], outs[i-1], n[i-1]
			h.same[0].set(base + i)
		} else {
			offs[i], outs[i], n[i], _ = step(t, false, offs[i])
		}
		pops[i] += n[i]
	}
	if toffs == nil {
		return
	}
	for t := range NumAutoTaus {
		i := 2 * t
		var o, d geom.Vec3
		var m int
		var b bool
		if asTwin[i] {
			o, d, m, b = offs[i], outs[i], n[i], bound[t]
			h.same[1].set(twin + i) // twin is numPerModel after base
		} else {
			o, d, m, b = step(t, true, toffs[i])
		}
		if !a.split.has(twin + i + 1) {
			if !b {
				toffs[i], touts[i], tpops[i] = o, d, tpops[i]+m
				continue
			}
			a.copyShadow(twin+i+1, twin+i)
		}
		toffs[i], touts[i], tpops[i] = o, d, tpops[i]+m
		i++
		if asTwin[i] {
			toffs[i], touts[i], tpops[i] = offs[i], outs[i], tpops[i]+n[i]
			h.same[1].set(twin + i)
			continue
		}
		toffs[i], touts[i], m, _ = step(t, false, toffs[i])
		tpops[i] += m
	}
}
