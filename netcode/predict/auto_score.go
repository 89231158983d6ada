package predict

import (
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// The labels: every new sample says where the entity truly was at its
// time, and each shadow is scored on where it drew it then. A shadow's
// score is an exponentially weighted mean, over AutoParams.Window
// arrivals, of its error's length plus Config.AutoPopCost (less for a
// fast mover, popCost) per pop, to which the ranking adds its running 95th
// percentile and tailWeight times its 99th (a tail of overshoots counts
// as well as the typical error: extrapolating past a reversal overshoots
// by up to twice the speed times the data age, snap-on-arrival never by
// more than once).

// label scores the shadows against s, a sample just added: where did each
// draw the entity at s.Time, where it truly was? It then picks the
// drawing's settings.
func (a *tuner) label(p *Predictor, s *Sample) {
	a.seen[a.seenI], a.seenT[a.seenI] = s.Vel, s.Time
	a.seenI = (a.seenI + 1) % autoSeen
	if (a.labels > 0 || a.skipSeen || a.npend > 0) && s.Time <= a.lastLabel {
		return // a late sample, or the other path's copy: no label, and its speed was seen
	}
	// The top speed, horizontal (a character's jump is not running speed),
	// forgetting per new sample so that two paths do not halve its memory.
	horiz := func(v geom.Vec3) geom.Vec3 { return v.Sub(p.up.Scale(v.Dot(p.up))) }
	a.peak = max(horiz(s.Vel).Len(), a.peak*a.par.PeakKeep)
	a.countJump(horiz, s)
	lo, hi, ok := a.framesAround(s.Time)
	if !ok {
		if a.hn > 0 && s.Time > a.hist[a.hi].t && a.npend < autoPend {
			// Newer than every frame drawn (a state placed ahead by the
			// room's input delay): scored once a frame passes it
			// (labelPending).
			a.pend[a.npend] = pendingLabel{t: s.Time, pos: s.Pos}
			a.npend++
			a.lastLabel = s.Time
		}
		return
	}
	a.scoreLabel(p, lo, hi, s)
}

// labelPending scores the labels that were newer than every frame when
// they arrived and that the newest frame has now passed: each is scored
// on what every shadow drew at its time, knowing it, as the real drawing
// did.
func (a *tuner) labelPending(p *Predictor) {
	n := 0
	for i := range a.npend {
		l := a.pend[i]
		lo, hi, ok := a.framesAround(l.t)
		if !ok {
			a.pend[n] = l // not passed yet
			n++
			continue
		}
		a.scoreLabel(p, lo, hi, &Sample{Time: l.t, Pos: l.pos})
	}
	a.npend = n
}

// scoreLabel scores the shadows against s, drawn between frames lo and hi, and
// picks the drawing's settings.
func (a *tuner) scoreLabel(p *Predictor, lo, hi *histFrame, s *Sample) {
	if a.skipped < a.par.SkipLabels {
		// The mover's start (AutoParams.SkipLabels): not scored, and the
		// pops drawn meanwhile count for nothing.
		a.skipped++
		a.lastLabel, a.skipSeen = s.Time, true
		a.pops = [numShadows]int{}
		return
	}
	f := 0.0
	if hi.t > lo.t {
		f = float64(s.Time-lo.t) / float64(hi.t-lo.t)
	}
	popCost := a.popCost(p)
	// The tail and the switch margin weigh as this mover's pops do (fully
	// up to popSpeed, less above): a car's overshoot at a wall is no
	// reversal, and its drawing should follow its scores promptly.
	slow := popCost / p.cfg.AutoPopCost
	tw := a.par.TailWeight * slow
	lim := a.limits(lo, hi, f, s)
	best, bestSum, bestMean := a.scoreAll(lo, hi, f, s, popCost, tw, &lim)
	a.labels++
	a.lastLabel = s.Time
	// A switch only for a clear gain (priced as this mover's pops are):
	// every switch of smoothing can move the drawing unlike any shadow did.
	margin := a.par.SwitchMargin * slow
	a.erratic = a.isErratic() && bestMean >= 0
	if a.erratic {
		// The erratic rule: the lowest mean error among the candidates
		// within the tail and pop limits; the current one is left for a
		// clear gain, or at once when it broke a limit.
		cur := a.root(a.best)
		within := a.q[cur][1] <= lim.tail && a.em[cur][1] <= lim.pops
		if a.labels == a.par.MinLabels || (a.labels > a.par.MinLabels &&
			(!within || a.em[bestMean][0] < a.em[cur][0]*(1-margin))) {
			a.best = bestMean
		}
		a.target = a.par.Lags[shadowLag(a.best)]
		return
	}
	cur := a.root(a.best)
	curSum := a.score[cur] + a.q[cur][0] + tw*a.q[cur][1]
	if a.labels == a.par.MinLabels || (a.labels > a.par.MinLabels && bestSum < curSum*(1-margin)) {
		a.best = best
	}
	a.target = a.refineLag(tw)
}

// countJump counts s's velocity jump, if it is one: a change of the
// horizontal velocity since the last labelled sample, at most ErraticSpan
// before, by ErraticShare of the top speed or more (an instant turn or a
// stop). The count decays over ErraticKeep.
func (a *tuner) countJump(horiz func(geom.Vec3) geom.Vec3, s *Sample) {
	if a.par.ErraticRate <= 0 {
		return
	}
	if a.hasPrev && s.Time > a.prevT {
		dt := s.Time - a.prevT
		a.jumps *= math.Exp(-float64(dt) / float64(a.par.ErraticKeep))
		if dt <= a.par.ErraticSpan && a.peak > 0 && horiz(s.Vel.Sub(a.prevVel)).Len() >= a.par.ErraticShare*a.peak {
			a.jumps++
		}
		// The mean time between labels, for pops a minute (a pause, up to
		// a second, counts as a second).
		k := 1 / float64(a.par.Window)
		if a.labelDt == 0 {
			k = 1
		}
		a.labelDt += k * (min(dt.Seconds(), 1) - a.labelDt)
		switch rate := a.jumps / a.par.ErraticKeep.Minutes(); {
		case rate > a.par.ErraticRate:
			a.jumpy = true
		case rate < erraticLeave*a.par.ErraticRate:
			a.jumpy = false
		}
	}
	a.prevVel, a.prevT, a.hasPrev = s.Vel, s.Time, true
}

// isErratic reports whether the mover is erratic: its velocity jumped
// more often than ErraticRate a minute, and has not fallen below
// erraticLeave of that rate since (so a mover near the rate does not flip
// between the rules).
func (a *tuner) isErratic() bool { return a.par.ErraticRate > 0 && a.jumpy }

// ruleLimits are the erratic rule's limits at a label: the tail (a
// running 99th percentile of the error) and the pops per arrival a
// candidate may have.
type ruleLimits struct{ tail, pops float64 }

// limits scores snap-on-arrival on the label s (drawn between frames lo
// and hi at f) and returns the erratic rule's limits: TailFactor times
// its running 99th percentile, and PopRate a minute at the mean time
// between labels.
func (a *tuner) limits(lo, hi *histFrame, f float64, s *Sample) ruleLimits {
	e := lo.snap.Lerp(hi.snap, f).Sub(s.Pos).Len()
	k := 1.0 / float64(a.par.Window)
	if a.labels < a.par.Window {
		k = 1 / float64(a.labels+1)
	}
	a.snapM += k * (e - a.snapM)
	a.snapQ = trackQuantile(a.snapQ, e, max(a.snapM, 1e-4), 0.99, 0.01)
	return ruleLimits{tail: a.par.TailFactor * a.snapQ, pops: a.par.PopRate / 60 * a.labelDt}
}

// framesAround returns the two frames of hist around t; ok is false when t
// is outside them.
func (a *tuner) framesAround(t time.Duration) (lo, hi *histFrame, ok bool) {
	if a.hn < 2 {
		return nil, nil, false
	}
	j := a.hi
	for range a.hn - 1 {
		prev := (j + autoHist - 1) % autoHist
		if a.hist[prev].t <= t {
			if a.hist[j].t < t {
				return nil, nil, false // newer than every frame: not drawn yet
			}
			return &a.hist[prev], &a.hist[j], true
		}
		j = prev
	}
	return nil, nil, false
}

// scoreAll scores every shadow stepped on its own on the label s, drawn
// between frames lo and hi at f, and returns the one with the lowest sum
// (score, 95th and tw times the 99th percentile) and that sum. The others
// score as the one they equal and, being later in order, are never the
// best over it (auto_reuse.go). Plain comparisons, not the float min and
// max builtins (which handle NaN and signed zeros), and the best sum kept
// in a local: this loop runs for every live shadow at every label.
func (a *tuner) scoreAll(lo, hi *histFrame, f float64, s *Sample, popCost, tw float64, lim *ruleLimits) (best int, bestSum float64, bestMean int) {
	k := 1.0 / float64(a.par.Window)
	if a.labels < a.par.Window {
		k = 1 / float64(a.labels+1)
	}
	kp := 1.0 / float64(a.par.PopWindow)
	if a.labels < a.par.PopWindow {
		kp = 1 / float64(a.labels+1)
	}
	best, bestSum = 0, math.Inf(1)
	bestMean, lowMean := -1, math.Inf(1)
	// A shadow that drew exactly as another at both frames (it took its
	// step, see stepLag) has its error.
	var es [numShadows]float64
	var both [2]shadowBits
	for k := range both {
		for w := range both[k] {
			both[k][w] = lo.same[k][w] & hi.same[k][w]
		}
	}
	live := a.split
	for w := range live {
		live[w] |= rootShadows[w]
	}
	for i := live.pop(); i < numShadows; i = live.pop() {
		var e float64
		switch {
		case both[0].has(i):
			e = es[i-1]
		case both[1].has(i):
			e = es[i-numPerModel]
		default:
			e = lo.drawn[i].Lerp(hi.drawn[i], f).Sub(s.Pos).Len()
		}
		es[i] = e
		n, big := float64(a.pops[i]%bigPop), float64(a.pops[i]/bigPop)
		score := a.score[i] + k*(e+popCost*n-a.score[i])
		a.score[i] = score
		a.pops[i] = 0
		em := &a.em[i]
		em[0] += k * (e - em[0])
		em[1] += kp * (big - em[1])
		// Quantile trackers: up by 0.95 steps when exceeded, down by 0.05
		// otherwise (0.99 and 0.01 for the 99th), a step being a twentieth
		// of the mean error or of the tracker's own value, whichever is
		// more, so that a long tail shows within seconds and the trackers
		// still settle at the quantile.
		step := 1e-4
		if score > step {
			step = score
		}
		qs := &a.q[i]
		q := trackQuantile(qs[0], e, step, 0.95, 0.05)
		q99 := trackQuantile(qs[1], e, step, 0.99, 0.01)
		qs[0], qs[1] = q, q99
		if sum := score + q + tw*q99; sum < bestSum {
			best, bestSum = i, sum
		}
		if em[0] < lowMean && q99 <= lim.tail && em[1] <= lim.pops {
			bestMean, lowMean = i, em[0]
		}
	}
	return best, bestSum, bestMean
}

// trackQuantile is one label of a running quantile tracker at q, for
// the error e: up by up steps when exceeded, down by down steps otherwise
// (up/(up+down) is the quantile), a step being a twentieth of step or of
// q, whichever is more (step > 0). The constants are passed apart, not
// as 1-up, so the arithmetic stays exactly as written.
func trackQuantile(q, e, step, up, down float64) float64 {
	st := step // max(step, q) without the builtin's NaN and zero-sign cases
	if q > st {
		st = q
	}
	st *= 0.05
	if e > q {
		return q + up*st
	}
	if q -= down * st; q < 0 {
		q = 0
	}
	return q
}

// popSpeed returns AutoParams.PopSpeed in the predictor's units.
func (a *tuner) popSpeed(p *Predictor) float64 {
	if p.cfg.Dim2D {
		return a.par.PopSpeed2D
	}
	return a.par.PopSpeed
}

// popCost returns what a pop costs this entity: Config.AutoPopCost up to
// popSpeed of top speed, less by the ratio to the power popFall above it.
func (a *tuner) popCost(p *Predictor) float64 {
	ref := a.popSpeed(p)
	c := p.cfg.AutoPopCost
	if pk := a.peak; pk > ref {
		c *= math.Pow(ref/pk, a.par.PopFall)
	}
	return c
}

// popStepAt returns the pop step for a frame of dt: popStep, or popTravel
// of a frame's travel at the top speed when that is more.
func (a *tuner) popStepAt(p *Predictor, dt time.Duration) float64 {
	step := a.par.PopStep
	if p.cfg.Dim2D {
		step = a.par.PopStep2D
	}
	return max(step, a.par.PopTravel*a.peak*dt.Seconds())
}

// bigPopStep returns the erratic rule's pop step in the predictor's
// units.
func (a *tuner) bigPopStep(p *Predictor) float64 {
	if p.cfg.Dim2D {
		return a.par.ErraticPopStep2D
	}
	return a.par.ErraticPopStep
}

// refineLag returns the lag to draw the best shadow's settings at: for a
// capped shadow whose lag has a candidate on either side, the lowest point
// of the parabola through its score sum (score, 95th and tw times the 99th
// percentile, as label ranks them) and those of its two neighbours of the
// same time constant, cap and model, kept within half-way to each
// neighbour (beyond that the neighbour is the better candidate); else the
// shadow's own lag. Only capped shadows: an uncapped one drawn between
// lags pops.
func (a *tuner) refineLag(tw float64) time.Duration {
	b := a.best
	l := shadowLag(b)
	lags := &a.par.Lags
	if !a.par.Refine || l == 0 || l == NumAutoLags-1 || !shadowCapped(b) {
		return lags[l]
	}
	sum := func(i int) float64 { // through root: a shadow not yet parted keeps no score of its own
		i = a.root(i)
		return a.score[i] + a.q[i][0] + tw*a.q[i][1]
	}
	x0, x1, x2 := lags[l-1].Seconds(), lags[l].Seconds(), lags[l+1].Seconds()
	y0, y1, y2 := sum(b-numPerLag), sum(b), sum(b+numPerLag)
	// The slopes of the two chords and the parabola's curvature (half its
	// second derivative); a flat or concave one has no lowest point inside.
	d01, d12 := (y1-y0)/(x1-x0), (y2-y1)/(x2-x1)
	c := (d12 - d01) / (x2 - x0)
	if !(c > 0) {
		return lags[l]
	}
	x := (x0+x1)/2 - d01/(2*c) // where the slope, d01 at the first chord's middle, is zero
	x = min(max(x, (x0+x1)/2), (x1+x2)/2)
	return time.Duration(x * float64(time.Second))
}
