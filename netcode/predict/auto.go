package predict

import (
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// Auto (Config.Auto) tunes the prediction to the mover and the link, per
// path, from the predictor's own data.
//
// Every Auto predictor draws the entity a render lag L behind the present:
// the newest sample is carried forward by its age minus L (interpolated
// between samples when L is longer than the age). L = 0 is full
// extrapolation to the present; L = the data age is snap-on-arrival; longer
// is an interpolation buffer. For a mover that keeps its course, L = 0 is
// exact. For one that turns without warning, extrapolating the whole age
// overshoots every turn by up to twice the speed times the age; holding
// back trades that tail for a steady lag (PREDICTOR-NOTES.md: the
// expected-position answer extrapolates less than the age, by
// (1-e^{-λa})/λ for a mover that turns at rate λ).
//
// Which L serves best is learned online. Every arrival is a free label: the
// new sample says where the entity truly was at its time t, and the buffer
// says what each candidate lag would have drawn for t from the samples that
// had arrived by t. Each candidate's squared error goes into an
// exponentially weighted mean (autoWindow arrivals); the lag aimed at is the
// score-weighted blend of the candidates near the best, within
// [0, autoMaxLag], and the drawn lag slides toward it at autoSlew (a playback
// speed of 0.9x to 1.1x), so retuning never jolts the entity.
//
// Auto also bounds how fast a correction may move the drawn entity
// (Config.MaxCorrectionSpeed defaults to autoCorrectionSpeed in 3D and
// autoCorrectionSpeed2D in 2D): a late turn is then joined in a smooth
// glide, never in a pop.

// autoLags are the candidate render lags, and autoTaus the candidate
// smoothing time constants: every pair is a shadow, a virtual copy of the
// drawing (raw prediction plus faded corrections) kept frame by frame.
var (
	autoLags = [...]time.Duration{0, 15 * time.Millisecond, 30 * time.Millisecond, 50 * time.Millisecond,
		75 * time.Millisecond, 110 * time.Millisecond, 160 * time.Millisecond}
	autoTaus = [...]time.Duration{15 * time.Millisecond, 40 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}
	// autoCapped: with MaxCorrectionSpeed, or fading freely.
	autoCapped = [...]bool{true, false}
)

const (
	numAutoLags = len(autoLags)
	numShadows  = len(autoLags) * len(autoTaus) * len(autoCapped)
	// autoHist is how many frames of each shadow's drawing are kept to be
	// judged when the truth for them arrives: 0.67 s at 60 Hz, more than
	// any data age the predictor extrapolates fully.
	autoHist = 40
	// autoWindow is the number of arrivals the scores average over
	// (exponentially): about 2 s at 60 Hz.
	autoWindow = 120
	// autoSlew is how fast the drawn lag follows its target (s per s).
	autoSlew = 0.1
	// autoMinLabels is how many scored arrivals a predictor needs before
	// it leaves its start (lag 0, Config.SmoothingTau).
	autoMinLabels = 30
	// autoPopStep is the fade step in one frame (m; autoPopStep2D px)
	// that counts as a pop, and autoPopCost what one costs in a shadow's
	// score, in squared metres (px² in 2D): a pop weighs like being 1 m off
	// for one arrival.
	autoPopStep   = 0.09
	autoPopStep2D = 2.9
	autoPopCost   = 1.0
	autoPopCost2D = 1024.0
	// autoCorrectionSpeed is the default MaxCorrectionSpeed of an Auto
	// predictor: 5 m/s, 83 mm a frame at 60 Hz.
	autoCorrectionSpeed = 5.0
	// autoCorrectionSpeed2D is the same in px/s (at 32 px/m).
	autoCorrectionSpeed2D = 160.0
)

// autoState is the Auto state of a predictor.
type autoState struct {
	off   [numShadows]geom.Vec3 // each shadow's smoothing offset
	score [numShadows]float64   // EWMA of each shadow's squared error plus its pops' cost
	pops  [numShadows]int       // each shadow's pops since the last label
	hist  [autoHist]struct {
		t     time.Duration
		drawn [numShadows]geom.Vec3
	}
	hn, hi    int // frames in hist; index of the newest
	labels    int
	lastLabel time.Duration
	best      int           // the shadow with the lowest score
	lag       time.Duration // the drawn lag
	at        time.Duration // receiver time of the last slide
	slid      bool
}

// shadowLag, shadowTau and shadowCapped are shadow i's settings.
func shadowLag(i int) time.Duration { return autoLags[i/(len(autoTaus)*len(autoCapped))] }
func shadowTau(i int) time.Duration { return autoTaus[i/len(autoCapped)%len(autoTaus)] }
func shadowCapped(i int) bool       { return autoCapped[i%len(autoCapped)] }

// autoFrame steps every shadow to now, as PoseAt steps the real drawing:
// fade (by dt, within MaxCorrectionSpeed), then, when the prediction
// changed (changed, from prevPath to path), add the jump as a correction.
func (p *Predictor) autoFrame(now, dt time.Duration, path, prevPath Path, changed, restart, snap bool) {
	a := p.auto
	v := p.cfg.MaxCorrectionSpeed * dt.Seconds()
	a.hi = (a.hi + 1) % autoHist
	a.hn = min(a.hn+1, autoHist)
	h := &a.hist[a.hi]
	h.t = now
	for l, lag := range autoLags {
		est, ok := p.estimate(path, now-lag, math.MaxUint64, nil)
		if !ok {
			return
		}
		var old estimate
		if changed {
			if old, ok = p.estimate(prevPath, now-lag, p.epoch, &p.anchor); !ok {
				old = est
			}
		}
		for t, tau := range autoTaus {
			for c, capped := range autoCapped {
				i := (l*len(autoTaus)+t)*len(autoCapped) + c
				off := a.off[i]
				if dt > 0 {
					k := math.Exp(-float64(dt) / float64(tau))
					if ln := off.Len(); capped && v > 0 && ln*(1-k) > v {
						k = 1 - v/ln
					}
					if off.Len()*(1-k) > p.autoPopStep() {
						a.pops[i]++
					}
					off = off.Scale(k)
				}
				switch {
				case restart:
					off = geom.Vec3{}
				case changed:
					off = off.Add(old.pos.Sub(est.pos))
					if snap || off.Len() > p.cfg.TeleportDistance {
						off = geom.Vec3{}
						a.pops[i]++
					}
				}
				a.off[i] = off
				h.drawn[i] = est.pos.Add(off)
			}
		}
	}
}

func (p *Predictor) autoPopStep() float64 {
	if p.cfg.Dim2D {
		return autoPopStep2D
	}
	return autoPopStep
}

// autoLabel scores the shadows against s, a sample just added: where did
// each draw the entity at s.Time, where it truly was?
func (p *Predictor) autoLabel(s *Sample) {
	a := p.auto
	if (a.labels > 0 && s.Time <= a.lastLabel) || a.hn < 2 {
		return
	}
	// The two frames around s.Time.
	j := a.hi
	for range a.hn - 1 {
		prev := (j + autoHist - 1) % autoHist
		if a.hist[prev].t <= s.Time {
			if a.hist[j].t < s.Time {
				return // newer than every frame: not drawn yet
			}
			lo, hi := &a.hist[prev], &a.hist[j]
			f := 0.0
			if hi.t > lo.t {
				f = float64(s.Time-lo.t) / float64(hi.t-lo.t)
			}
			k := 1.0 / autoWindow
			if a.labels < autoWindow {
				k = 1 / float64(a.labels+1)
			}
			popCost := autoPopCost
			if p.cfg.Dim2D {
				popCost = autoPopCost2D
			}
			best := 0
			for i := range numShadows {
				d := lo.drawn[i].Lerp(hi.drawn[i], f).Sub(s.Pos)
				a.score[i] += k * (d.Dot(d) + popCost*float64(a.pops[i]) - a.score[i])
				a.pops[i] = 0
				if a.score[i] < a.score[best] {
					best = i
				}
			}
			a.labels++
			a.lastLabel = s.Time
			if a.labels >= autoMinLabels {
				a.best = best
			}
			return
		}
		j = prev
	}
}

// autoTarget returns the lag, the smoothing time constant and whether the
// correction speed is capped, as the best shadow has them (0, SmoothingTau
// and capped until enough labels).
func (p *Predictor) autoTarget() (time.Duration, time.Duration, bool) {
	if p.auto.labels < autoMinLabels {
		return 0, p.cfg.SmoothingTau, true
	}
	return shadowLag(p.auto.best), shadowTau(p.auto.best), shadowCapped(p.auto.best)
}

// autoLag slides the drawn lag toward the best shadow's to now and returns
// it (0 unless Auto).
func (p *Predictor) autoLag(now time.Duration) time.Duration {
	if !p.cfg.Auto {
		return 0
	}
	a := p.auto
	target, _, _ := p.autoTarget()
	if a.slid && now > a.at {
		step := time.Duration(float64(now-a.at) * autoSlew)
		switch {
		case target > a.lag:
			a.lag = min(target, a.lag+step)
		case target < a.lag:
			a.lag = max(target, a.lag-step)
		}
	}
	if !a.slid || now > a.at {
		a.at, a.slid = now, true
	}
	return a.lag
}

// AutoSettings returns the render lag an Auto predictor draws with and the
// smoothing time constant it fades with (debug figures; 0 and SmoothingTau
// unless Auto).
func (p *Predictor) AutoSettings() (lag, tau time.Duration) {
	if !p.cfg.Auto {
		return 0, p.cfg.SmoothingTau
	}
	_, tau, _ = p.autoTarget()
	return p.auto.lag, tau
}
