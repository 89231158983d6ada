package predict

import (
	"fmt"
	"time"
)

// AutoParams are Auto's tuning constants, all in one place. Every value
// was chosen on the bench (bench/README.md, "Auto's tuning decisions",
// has one section per decision: what was measured and the command that
// reproduces it). They are exported for measurement only: the bench
// ablates them (Config.AutoParams; `go run ./bench -auto-params`) and
// tests change them per predictor to measure what a rule gains. A game
// leaves Config.AutoParams nil: the shipped values are
// DefaultAutoParams().
type AutoParams struct {
	// Lags are the candidate render lags, increasing (refineLag fits
	// between neighbours): 0 is full extrapolation, the longest an
	// interpolation buffer.
	Lags [NumAutoLags]time.Duration
	// Taus are the candidate smoothing time constants, shortest first (a
	// fast mover's first one follows its data age, FastFade).
	Taus [NumAutoTaus]time.Duration

	// Window is the number of arrivals the scores average over
	// (exponentially); MinLabels how many a predictor needs before it
	// leaves its start (lag 0, Config.SmoothingTau, capped, full model).
	Window, MinLabels int
	// SkipLabels is how many of an entity's first labels are not scored
	// (once: not again after Reset, which a shared object's every handover
	// goes through): a sender's first states say it is still, then its
	// derived acceleration ramps up from zero (sender.Config.AccSmoothing),
	// and whatever extrapolates them errs by up to its speed times the data
	// age. Scored, that start lifted the extrapolating candidates' 99th
	// percentile error so far that it took tens of seconds to come down
	// (it falls by a 2000th a label), and the drawing took a 50-75 ms lag
	// (40 cm behind a mover at 9 m/s) for seconds after the mover appeared
	// (the network lab's creator drawing a joining player). Skipping the
	// very first was enough in TestAutoSenderStartLeavesNoLag; 5 cover the
	// still state, the jump and most of the acceleration's ramp (83 ms,
	// 1.7 of its filter's time constants) and add a twelfth of a second to
	// the start (MinLabels count after them). The bench moved within 2.4 % either
	// way (`harsh-150` vehicle p95 0.3306 -> 0.3295 m on seeds 1-3; with 10
	// to 30 skipped, 0.3305-0.3356).
	SkipLabels int
	// Slew is how fast the drawn lag follows its target (s per s): a
	// retune plays the entity at 0.9x to 1.1x, never a jolt.
	Slew float64
	// TailWeight is the weight of a candidate's running 99th percentile
	// of the error in its score, beside its mean error, pops and 95th
	// percentile (a player sees the tail an extrapolation past a reversal
	// leaves), for a mover whose pops cost the full Config.AutoPopCost.
	TailWeight float64
	// SwitchMargin is how much lower (a share) another candidate's score
	// must be before the drawing takes its settings, for such a mover: a
	// switch of smoothing moves the drawing as no candidate did.
	SwitchMargin float64
	// Refine draws a capped best candidate at the lowest point of the
	// parabola through its and its neighbours' scores (refineLag): the
	// Lags are a coarse grid.
	Refine bool

	// What a pop is (a frame move of a candidate unlike its prediction's
	// and unlike every move the entity was seen to make within SeenFor):
	// a departure beyond PopStep (m; PopStep2D px), or PopTravel of a
	// frame's travel at the entity's top speed when that is more.
	PopStep, PopStep2D float64
	PopTravel          float64
	SeenFor            time.Duration
	// PopCost (PopCost2D) is the default Config.AutoPopCost: what a pop
	// weighs, like being that far off at one arrival, for a mover no
	// faster than PopSpeed (m/s; PopSpeed2D px/s); above it a pop costs
	// less, by (PopSpeed/top speed)^PopFall, and the tail weight and
	// switch margin fall with it.
	PopCost, PopCost2D   float64
	PopSpeed, PopSpeed2D float64
	PopFall              float64
	// PeakKeep is the share of the top speed kept per new sample: it
	// forgets in about 10 s at 60 Hz, so a car that has driven slowly for
	// a while is judged by how it moves now.
	PeakKeep float64
	// FastFade is a fast mover's first candidate time constant as a share
	// of the data age (between Taus[0] and Taus[1]; 0: Taus[0]), since
	// its corrections grow with the age and Taus[0] draws one in a frame.
	FastFade float64
	// CorrectionSpeed (CorrectionSpeed2D) is the default
	// Config.MaxCorrectionSpeed with Auto (m/s; px/s): 83 mm a frame at
	// 60 Hz, within a running character's frame travel.
	CorrectionSpeed, CorrectionSpeed2D float64

	// The erratic rule (auto_score.go, label): a mover whose velocity
	// jumps (by at least ErraticShare of its top speed between two samples
	// at most ErraticSpan apart: an instant turn, as a character's on a
	// keyboard) more than ErraticRate times a minute, counted over about
	// ErraticKeep (until it falls below two-thirds of that rate), is drawn
	// by the candidate with the lowest mean error
	// among those whose running 99th percentile of the error is at most
	// TailFactor times snap-on-arrival's (drawing the newest state, as
	// Godot's MultiplayerSynchronizer does) and whose pops stay under
	// PopRate a minute (counted over PopWindow arrivals). Any other mover
	// is drawn by the lowest score sum (TailWeight, SwitchMargin).
	// ErraticRate 0 turns the rule off.
	ErraticShare float64
	ErraticSpan  time.Duration
	ErraticRate  float64
	ErraticKeep  time.Duration
	TailFactor   float64
	PopRate      float64
	PopWindow    int
	// Under the erratic rule a pop is a departure beyond ErraticPopStep
	// (m; ErraticPopStep2D px), and a capped candidate corrects at up to
	// ErraticCorrection times Config.MaxCorrectionSpeed, and by at most
	// erraticGlide of a pop in a frame (at a low frame rate too), so a
	// correction glides in steps below a pop.
	ErraticPopStep, ErraticPopStep2D float64
	ErraticCorrection                float64
}

// DefaultAutoParams returns the shipped values.
func DefaultAutoParams() AutoParams { return defaultAutoParams }

// defaultAutoParams are the shipped values.
var defaultAutoParams = AutoParams{
	Lags: [...]time.Duration{0, 15 * time.Millisecond, 30 * time.Millisecond, 50 * time.Millisecond,
		75 * time.Millisecond, 110 * time.Millisecond, 160 * time.Millisecond},
	Taus:              [...]time.Duration{time.Millisecond, 15 * time.Millisecond, 40 * time.Millisecond},
	Window:            120, // about 2 s at 60 Hz
	MinLabels:         30,
	SkipLabels:        5,
	Slew:              0.1,
	TailWeight:        1,
	SwitchMargin:      0.15,
	Refine:            true,
	PopStep:           0.09,
	PopStep2D:         2.9,
	PopTravel:         0.4,
	SeenFor:           500 * time.Millisecond,
	PopCost:           20,
	PopCost2D:         640,
	PopSpeed:          8, // above any running character, a third of a car's top speed
	PopSpeed2D:        256,
	PopFall:           3.5,
	PeakKeep:          1 - 1.0/600,
	FastFade:          0.05,
	CorrectionSpeed:   5,
	CorrectionSpeed2D: 160, // 5 m/s at 32 px/m
	ErraticShare:      1.0 / 3,
	ErraticSpan:       50 * time.Millisecond,
	ErraticRate:       30,
	ErraticKeep:       10 * time.Second,
	TailFactor:        1.35,
	PopRate:           3,
	PopWindow:         600, // about 10 s at 60 Hz
	ErraticPopStep:    0.3,
	ErraticPopStep2D:  9.6, // 0.3 m at 32 px/m
	ErraticCorrection: 3,   // 15 m/s: 0.25 m a frame at 60 Hz
}

// validate reports constants the tuner cannot work with.
func (a *AutoParams) validate() error {
	for i, l := range a.Lags {
		if l < 0 || (i > 0 && l < a.Lags[i-1]) {
			return fmt.Errorf("Lags %v: must be increasing from 0 or more", a.Lags)
		}
	}
	for _, t := range a.Taus {
		if t <= 0 {
			return fmt.Errorf("Taus %v: must be positive", a.Taus)
		}
	}
	if a.SkipLabels < 0 {
		return fmt.Errorf("SkipLabels %d is negative", a.SkipLabels)
	}
	if a.Window < 1 || a.MinLabels < 1 || a.PopWindow < 1 {
		return fmt.Errorf("Window %d, MinLabels %d and PopWindow %d must be at least 1", a.Window, a.MinLabels, a.PopWindow)
	}
	if a.ErraticRate > 0 && a.ErraticKeep <= 0 {
		return fmt.Errorf("ErraticKeep %v must be positive", a.ErraticKeep)
	}
	return nil
}

// The bank's layout: a candidate (shadow) per lag, time constant, cap and
// model. Shadow i has lag lags[i%numPerModel/numPerLag], time constant
// taus[i%numPerLag/2], is capped when i is even (each capped shadow right
// before its free twin) and has models[i/numPerModel]: the reuse
// (auto_reuse.go) relies on that order.
const (
	// NumAutoLags and NumAutoTaus are how many candidate lags and time
	// constants the bank holds (AutoParams.Lags, AutoParams.Taus).
	NumAutoLags = 7
	NumAutoTaus = 3
	numPerLag   = NumAutoTaus * 2 // one model and lag: every time constant, capped and free
	numPerModel = NumAutoLags * numPerLag
	numShadows  = numPerModel * len(shadowModels)
	// autoHist is how many frames of each shadow's drawing are kept to be
	// judged when the truth for them arrives: 0.67 s at 60 Hz, more than
	// any data age the predictor extrapolates fully.
	autoHist = 40
	// erraticLeave is the share of AutoParams.ErraticRate below which an
	// erratic mover is erratic no more.
	erraticLeave = 2.0 / 3
	// erraticGlide is the share of the erratic rule's pop step that a
	// capped candidate's correction may move in one frame.
	erraticGlide = 5.0 / 6
	// autoPend is how many labels newer than every frame may wait for
	// one (tuner.labelPending): a quarter of a second of states at 60 Hz,
	// the largest input delay a room takes (protocol.MaxInputDelayUS).
	autoPend = 16
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
