package predict

import (
	"math"
	"time"
)

// The labels: every new sample says where the entity truly was at its
// time, and each shadow is scored on where it drew it then. A shadow's
// score is an exponentially weighted mean, over autoParams.window
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
	if a.labels > 0 && s.Time <= a.lastLabel {
		return // a late sample, or the other path's copy: no label, and its speed was seen
	}
	// The top speed, horizontal (a character's jump is not running speed),
	// forgetting per new sample so that two paths do not halve its memory.
	a.peak = max(s.Vel.Sub(p.up.Scale(s.Vel.Dot(p.up))).Len(), a.peak*a.par.peakKeep)
	lo, hi, ok := a.framesAround(s.Time)
	if !ok {
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
	tw := a.par.tailWeight * slow
	best, bestSum := a.scoreAll(lo, hi, f, s, popCost, tw)
	cur := a.root(a.best)
	curSum := a.score[cur] + a.q[cur][0] + tw*a.q[cur][1]
	a.labels++
	a.lastLabel = s.Time
	// A switch only for a clear gain (priced as this mover's pops are):
	// every switch of smoothing can move the drawing unlike any shadow did.
	margin := a.par.switchMargin * slow
	if a.labels == a.par.minLabels || (a.labels > a.par.minLabels && bestSum < curSum*(1-margin)) {
		a.best = best
	}
	a.target = a.refineLag(tw)
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
func (a *tuner) scoreAll(lo, hi *histFrame, f float64, s *Sample, popCost, tw float64) (best int, bestSum float64) {
	k := 1.0 / float64(a.par.window)
	if a.labels < a.par.window {
		k = 1 / float64(a.labels+1)
	}
	best, bestSum = 0, math.Inf(1)
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
		score := a.score[i] + k*(e+popCost*float64(a.pops[i])-a.score[i])
		a.score[i] = score
		a.pops[i] = 0
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
	}
	return best, bestSum
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

// popSpeed returns autoParams.popSpeed in the predictor's units.
func (a *tuner) popSpeed(p *Predictor) float64 {
	if p.cfg.Dim2D {
		return a.par.popSpeed2D
	}
	return a.par.popSpeed
}

// popCost returns what a pop costs this entity: Config.AutoPopCost up to
// popSpeed of top speed, less by the ratio to the power popFall above it.
func (a *tuner) popCost(p *Predictor) float64 {
	ref := a.popSpeed(p)
	c := p.cfg.AutoPopCost
	if pk := a.peak; pk > ref {
		c *= math.Pow(ref/pk, a.par.popFall)
	}
	return c
}

// popStepAt returns the pop step for a frame of dt: popStep, or popTravel
// of a frame's travel at the top speed when that is more.
func (a *tuner) popStepAt(p *Predictor, dt time.Duration) float64 {
	step := a.par.popStep
	if p.cfg.Dim2D {
		step = a.par.popStep2D
	}
	return max(step, a.par.popTravel*a.peak*dt.Seconds())
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
	lags := &a.par.lags
	if !a.par.refine || l == 0 || l == numAutoLags-1 || !shadowCapped(b) {
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
