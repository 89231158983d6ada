package predict

import (
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// A model is what extrapolation carries the newest sample forward with.
type model uint8

const (
	// fullModel: velocity, acceleration and turn rate.
	fullModel model = iota
	// velocityModel: velocity alone, for movers whose acceleration and
	// turn rate change faster than the data age (an Auto candidate).
	velocityModel
)

// estimate is the raw prediction of one path at one moment.
type estimate struct {
	kin
	newest  *entry        // the newest sample it used
	age     time.Duration // now - newest.Time
	pastCap bool
	// modelFree: the motion model played no part (interpolated, held, or
	// extrapolated without acceleration and turn rate), so both models
	// agree (Auto steps one estimate for both).
	modelFree bool
	// gen is the newest gen of the samples it used (entry.gen): below the
	// epoch, the prediction before the latest arrivals was this same one.
	gen uint64
}

// estimate predicts path at now with model m from the samples with
// gen < below (every sample for math.MaxUint64). When there are none it
// uses fallback, if not nil; ok is false when it has nothing to go on.
func (p *Predictor) estimate(path Path, now time.Duration, below uint64, fallback *entry, m model) (est estimate, ok bool) {
	lo, hi, newest, gen := p.around(path, now, below, fallback)
	if newest == nil {
		return est, false
	}
	est.newest, est.gen, est.age = newest, gen, now-newest.Time
	switch {
	case hi == nil:
		est.kin, est.pastCap = p.extrapolate(lo, now-lo.Time, m)
		est.modelFree = lo.accRest == (geom.Vec3{}) && lo.Turn == 0
	case lo == nil:
		// now is before every sample (stamped ahead by a clock error):
		// hold the oldest rather than run the model backwards.
		est.kin, est.modelFree = kin{pos: hi.Pos, vel: hi.Vel, rot: hi.Rot}, true
	default:
		h := hi.Time - lo.Time
		est.kin = hermite(lo, hi, h.Seconds(), float64(now-lo.Time)/float64(h), false)
		est.modelFree = true
	}
	return est, true
}

// shadowEst is what an Auto shadow needs of an estimate.
type shadowEst struct {
	pos       geom.Vec3
	modelFree bool
	gen       uint64
}

// shadowEstimate is estimate's position, modelFree and gen alone, for
// Auto's shadows, which draw positions only and need many a frame: the
// same arithmetic, so the same values (TestAutoShadowDrawsAsPoseAt).
func (p *Predictor) shadowEstimate(path Path, now time.Duration, below uint64, fallback *entry, m model) (e shadowEst, ok bool) {
	lo, hi, newest, gen := p.around(path, now, below, fallback)
	switch {
	case newest == nil:
		return e, false
	case hi == nil:
		return shadowEst{pos: p.extrapolatePos(lo, now-lo.Time, m), modelFree: lo.accRest == (geom.Vec3{}) && lo.Turn == 0,
			gen: gen}, true
	case lo == nil:
		return shadowEst{pos: hi.Pos, modelFree: true, gen: gen}, true
	default:
		h := hi.Time - lo.Time
		return shadowEst{pos: hermite(lo, hi, h.Seconds(), float64(now-lo.Time)/float64(h), true).pos, modelFree: true,
			gen: gen}, true
	}
}

// around returns the samples of path around now with gen < below (lo.Time
// <= now < hi.Time; either may be nil), the newest of them and the newest
// gen of lo and hi. When there are none it uses fallback, if not nil;
// newest is nil when it has nothing to go on.
func (p *Predictor) around(path Path, now time.Duration, below uint64, fallback *entry) (lo, hi, newest *entry, gen uint64) {
	r := &p.paths[path]
	for i := r.n - 1; i >= 0; i-- {
		e := r.at(i)
		if e.gen >= below {
			continue
		}
		if newest == nil {
			newest = e
		}
		if e.Time <= now {
			lo = e
			break
		}
		hi = e
	}
	if newest == nil {
		if fallback == nil {
			return nil, nil, nil, 0
		}
		newest = fallback
		if fallback.Time <= now {
			lo = fallback
		} else {
			hi = fallback
		}
	}
	if lo != nil {
		gen = lo.gen
	}
	if hi != nil {
		gen = max(gen, hi.gen)
	}
	return lo, hi, newest, gen
}

// extrapolate carries e forward by age (>= 0) with model m: up to the cap,
// then constant speed and turn rate up to CoastUntil, then still.
func (p *Predictor) extrapolate(e *entry, age time.Duration, m model) (kin, bool) {
	capAge := p.cfg.PredictionCap
	acc, turn := e.accRest, e.Turn
	if m == velocityModel {
		acc, turn = geom.Vec3{}, 0
	}
	if age <= capAge {
		return advance(e.Pos, e.Vel, acc, e.Rot, turn, p.up, age.Seconds()), false
	}
	k := advance(e.Pos, e.Vel, acc, e.Rot, turn, p.up, capAge.Seconds())
	coast := min(age, p.cfg.CoastUntil) - capAge
	k = advance(k.pos, k.vel, geom.Vec3{}, k.rot, turn, p.up, coast.Seconds())
	if age > p.cfg.CoastUntil {
		k.vel = geom.Vec3{}
	}
	return k, true
}

// extrapolatePos is extrapolate's position alone (through advancePos; past
// the cap it runs extrapolate).
func (p *Predictor) extrapolatePos(e *entry, age time.Duration, m model) geom.Vec3 {
	if age > p.cfg.PredictionCap {
		k, _ := p.extrapolate(e, age, m)
		return k.pos
	}
	acc, turn := e.accRest, e.Turn
	if m == velocityModel {
		acc, turn = geom.Vec3{}, 0
	}
	return advancePos(e.Pos, e.Vel, acc, turn, p.up, age.Seconds())
}
