package predict

import (
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// Auto (Config.Auto) tunes the drawing to the mover and the link, per
// entity, from the states the predictor receives and nothing else. Its
// tuner sits beside the drawing, which consults it at two points: each
// PoseAt takes the settings to draw the frame with (tuner.frame), and each
// new sample scores the candidates (tuner.label).
//
// A drawing's settings (settings) are the render lag (drawn as predicted
// for now - lag: 0 is full extrapolation, the data age snap-on-arrival,
// longer an interpolation buffer), the smoothing time constant, whether
// corrections are capped by Config.MaxCorrectionSpeed (glide or pop), and
// the motion model (velocity alone for movers whose acceleration and turn
// rate change faster than the data age). Extrapolating a mover that turns
// without warning overshoots each turn by up to twice its speed times the
// data age; holding back trades that tail for a steady lag.
//
// The bank (auto_bank.go) keeps a shadow drawing per candidate setting,
// stepped every frame through the same drawStep as the real drawing, its
// positions kept for autoHist frames. Each new sample is a free label
// (auto_score.go): it says where the entity truly was at its time, and
// each shadow is scored on where it drew it then. The drawing takes the
// best shadow's settings, the lag slid there: for a mover whose velocity
// jumps often (the erratic rule) the lowest mean error within a tail and
// a pop limit, for any other the lowest score sum. Shadows that are still
// equal to another are neither stepped nor scored (auto_reuse.go). The
// constants are autoParams.

// tuner is the Auto state of a predictor.
type tuner struct {
	off   [numShadows]geom.Vec3 // each shadow's smoothing offset
	score [numShadows]float64   // EWMA of each shadow's error length plus its pops' cost
	// q is each shadow's running 95th and 99th percentile of the error
	// length (the 99th: the tail a player notices), side by side for the
	// label loop.
	q    [numShadows][2]float64
	pops [numShadows]int // each shadow's pops since the last label
	// em is each shadow's mean error length (over AutoParams.Window
	// arrivals) and its pops per arrival (over AutoParams.PopWindow), for
	// the erratic rule.
	em [numShadows][2]float64
	// snapQ is snap-on-arrival's running 99th percentile of the error
	// (the newest sample drawn as it is), the erratic rule's tail bound.
	snapQ float64
	// The erratic rule's signal: the velocity of the last labelled
	// sample, the decaying count of velocity jumps (AutoParams.ErraticKeep)
	// and the mean time between labels (s).
	prevVel geom.Vec3
	prevT   time.Duration
	hasPrev bool
	jumps   float64
	labelDt float64
	snapM   float64 // snap-on-arrival's mean error, snapQ's step
	// jumpy: the mover's jumps are frequent (isErratic); erratic: the
	// drawing follows the erratic rule.
	jumpy, erratic bool
	// prevRaw is each model's and lag's raw prediction at the last frame.
	prevRaw [len(shadowModels)][NumAutoLags]geom.Vec3
	// seen are the velocities of the newest samples (seenT their times),
	// the moves the entity was seen to make: a shadow's frame move far from
	// all of them and from its own prediction's is a pop.
	seen   [autoSeen]geom.Vec3
	seenT  [autoSeen]time.Duration
	seenI  int
	hist   [autoHist]histFrame
	hn, hi int // frames in hist; index of the newest
	labels int
	// skipped counts the first labels, not scored (AutoParams.SkipLabels),
	// once in the tuner's life: reset keeps it. skipSeen: lastLabel is a
	// skipped label's (since the last reset).
	skipped  int
	skipSeen bool
	// pend are labels newer than every frame when they arrived (states
	// placed ahead by an input delay), npend how many.
	pend      [autoPend]pendingLabel
	npend     int
	peak      float64 // the top horizontal speed seen lately (AutoParams.PeakKeep)
	lastLabel time.Duration
	best      int // the shadow whose settings the drawing takes
	// target is the lag the drawing slides to: the best shadow's, or
	// between its neighbours' where the scores say (refineLag).
	target time.Duration
	lag    time.Duration // the drawn lag
	at     time.Duration // receiver time of the last slide
	slid   bool
	// fade is each time constant's fade over fadeDt, the last frame's dt,
	// and taus the time constants it is for (AutoParams.Taus, the first
	// one a fast mover's, AutoParams.FastFade).
	fade   [NumAutoTaus]float64
	fadeDt time.Duration
	taus   [NumAutoTaus]time.Duration
	// split marks the shadows that have parted from the one they equalled
	// (auto_reuse.go).
	split shadowBits
	// sink takes warm's sum, so that its loads are not optimised away.
	sink float64
	par  AutoParams
}

// pendingLabel is a label waiting for a frame to pass its time.
type pendingLabel struct {
	t   time.Duration
	pos geom.Vec3
}

// histFrame is one frame of every shadow's drawing.
type histFrame struct {
	t     time.Duration
	snap  geom.Vec3 // the newest sample's position: what snap-on-arrival drew
	drawn [numShadows]geom.Vec3
	// same marks the shadows that took another's step this frame
	// (stepLag), so drew exactly as it: same[0] the shadow before, same[1]
	// the first model's at the same lag (numPerModel before).
	same [2]shadowBits
}

func newTuner(par *AutoParams) *tuner { return &tuner{par: *par} }

// reset forgets everything learnt; the parameters stay, and so do the
// skipped labels of the entity's first appearance (AutoParams.SkipLabels):
// a reset follows the same entity (a shared object's new owner), whose
// handovers are drawn as before the skipping (TestGodotBallHandover's
// jumps were no smaller when each handover skipped again, and that test
// is uneven on a busy machine either way).
func (a *tuner) reset() { *a = tuner{par: a.par, skipped: a.skipped} }

// frame is the tuner's part of PoseAt: it steps every shadow through f
// and returns the settings to draw f with (the best shadow's, the lag
// slid toward its target). The settings are taken after the step, so a
// fast mover's first time constant, which follows the data age
// (AutoParams.FastFade), is the one its shadow fades with this frame.
func (a *tuner) frame(p *Predictor, f *frame) settings {
	a.warm(p)
	a.step(p, f)
	set := a.settings(p)
	set.lag = a.slide(f.now, set.lag)
	return set
}

// settings returns the best shadow's settings, the lag its target
// (refineLag); before minLabels labels the start: lag 0, the Config's
// SmoothingTau, capped, the full model. The time constant is as the
// shadow's last frame faded it.
func (a *tuner) settings(p *Predictor) settings {
	if a.labels < a.par.MinLabels {
		return settings{m: fullModel, tau: p.cfg.SmoothingTau, capped: true}
	}
	b := a.best
	return settings{lag: a.target, m: shadowModel(b), tau: a.tau(shadowTau(b)), capped: shadowCapped(b)}
}

// tau returns the time constant of index t, as the last frame faded it.
func (a *tuner) tau(t int) time.Duration {
	if a.taus[t] == 0 { // no frame faded yet
		return a.par.Taus[t]
	}
	return a.taus[t]
}

// slide moves the drawn lag toward target by AutoParams.Slew of the time
// since the last slide, and returns it.
func (a *tuner) slide(now, target time.Duration) time.Duration {
	if a.slid && now > a.at {
		step := time.Duration(float64(now-a.at) * a.par.Slew)
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
	if p.auto == nil {
		return 0, p.cfg.SmoothingTau
	}
	return p.auto.lag, p.auto.settings(p).tau
}
