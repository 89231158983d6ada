package predict

import "time"

// autoParams are Auto's tuning constants, all in one place. Every value
// was chosen on the bench (bench/README.md, "Auto's tuning decisions",
// has one section per decision: what was measured and the command that
// reproduces it); tests change them per predictor (tuner.par) to measure
// what a rule gains.
type autoParams struct {
	// lags are the candidate render lags, increasing (refineLag fits
	// between neighbours): 0 is full extrapolation, the longest an
	// interpolation buffer.
	lags [numAutoLags]time.Duration
	// taus are the candidate smoothing time constants, shortest first (a
	// fast mover's first one follows its data age, fastFade).
	taus [numAutoTaus]time.Duration

	// window is the number of arrivals the scores average over
	// (exponentially); minLabels how many a predictor needs before it
	// leaves its start (lag 0, Config.SmoothingTau, capped, full model).
	window, minLabels int
	// slew is how fast the drawn lag follows its target (s per s): a
	// retune plays the entity at 0.9x to 1.1x, never a jolt.
	slew float64
	// tailWeight is the weight of a candidate's running 99th percentile
	// of the error in its score, beside its mean error, pops and 95th
	// percentile (a player sees the tail an extrapolation past a reversal
	// leaves), for a mover whose pops cost the full Config.AutoPopCost.
	tailWeight float64
	// switchMargin is how much lower (a share) another candidate's score
	// must be before the drawing takes its settings, for such a mover: a
	// switch of smoothing moves the drawing as no candidate did.
	switchMargin float64
	// refine draws a capped best candidate at the lowest point of the
	// parabola through its and its neighbours' scores (refineLag): the
	// lags are a coarse grid.
	refine bool

	// What a pop is (a frame move of a candidate unlike its prediction's
	// and unlike every move the entity was seen to make within seenFor):
	// a departure beyond popStep (m; popStep2D px), or popTravel of a
	// frame's travel at the entity's top speed when that is more.
	popStep, popStep2D float64
	popTravel          float64
	seenFor            time.Duration
	// popCost (popCost2D) is the default Config.AutoPopCost: what a pop
	// weighs, like being that far off at one arrival, for a mover no
	// faster than popSpeed (m/s; popSpeed2D px/s); above it a pop costs
	// less, by (popSpeed/top speed)^popFall, and the tail weight and
	// switch margin fall with it.
	popCost, popCost2D   float64
	popSpeed, popSpeed2D float64
	popFall              float64
	// peakKeep is the share of the top speed kept per new sample: it
	// forgets in about 10 s at 60 Hz, so a car that has driven slowly for
	// a while is judged by how it moves now.
	peakKeep float64
	// fastFade is a fast mover's first candidate time constant as a share
	// of the data age (between taus[0] and taus[1]; 0: taus[0]), since
	// its corrections grow with the age and taus[0] draws one in a frame.
	fastFade float64
	// correctionSpeed (correctionSpeed2D) is the default
	// Config.MaxCorrectionSpeed with Auto (m/s; px/s): 83 mm a frame at
	// 60 Hz, within a running character's frame travel.
	correctionSpeed, correctionSpeed2D float64
}

// defaultAutoParams are the shipped values.
var defaultAutoParams = autoParams{
	lags: [...]time.Duration{0, 15 * time.Millisecond, 30 * time.Millisecond, 50 * time.Millisecond,
		75 * time.Millisecond, 110 * time.Millisecond, 160 * time.Millisecond},
	taus:              [...]time.Duration{time.Millisecond, 15 * time.Millisecond, 40 * time.Millisecond},
	window:            120, // about 2 s at 60 Hz
	minLabels:         30,
	slew:              0.1,
	tailWeight:        1,
	switchMargin:      0.15,
	refine:            true,
	popStep:           0.09,
	popStep2D:         2.9,
	popTravel:         0.4,
	seenFor:           500 * time.Millisecond,
	popCost:           20,
	popCost2D:         640,
	popSpeed:          8, // above any running character, a third of a car's top speed
	popSpeed2D:        256,
	popFall:           3.5,
	peakKeep:          1 - 1.0/600,
	fastFade:          0.045,
	correctionSpeed:   5,
	correctionSpeed2D: 160, // 5 m/s at 32 px/m
}

// The bank's layout: a candidate (shadow) per lag, time constant, cap and
// model. Shadow i has lag lags[i%numPerModel/numPerLag], time constant
// taus[i%numPerLag/2], is capped when i is even (each capped shadow right
// before its free twin) and has models[i/numPerModel]: the reuse
// (auto_reuse.go) relies on that order.
const (
	numAutoLags = 7
	numAutoTaus = 3
	numPerLag   = numAutoTaus * 2 // one model and lag: every time constant, capped and free
	numPerModel = numAutoLags * numPerLag
	numShadows  = numPerModel * len(shadowModels)
	// autoHist is how many frames of each shadow's drawing are kept to be
	// judged when the truth for them arrives: 0.67 s at 60 Hz, more than
	// any data age the predictor extrapolates fully.
	autoHist = 40
	// autoSeen is how many recent sample velocities the pop test keeps.
	autoSeen = 8
	// autoWarmSamples is how many of the newest samples warm touches:
	// the estimates of the longest lag reach back that far at 60 Hz.
	autoWarmSamples = 12
)

// shadowModels are the candidate models, the full one first (the reuse
// steps the second as the first's twin where they agree).
var shadowModels = [...]model{fullModel, velocityModel}

// shadowLag, shadowTau, shadowCapped and shadowModel give shadow i's
// place in the bank: its lag's and time constant's index, its cap and its
// model.
func shadowLag(i int) int     { return i % numPerModel / numPerLag }
func shadowTau(i int) int     { return i % numPerLag / 2 }
func shadowCapped(i int) bool { return i%2 == 0 }
func shadowModel(i int) model { return shadowModels[i/numPerModel] }
