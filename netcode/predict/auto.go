package predict

import (
	"math"
	"math/bits"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// Auto (Config.Auto) tunes the drawing to the mover and the link, per
// entity, from the states the predictor receives and nothing else.
//
// A drawing has four settings here:
//   - the render lag L: the entity is drawn as predicted for now - L. L = 0
//     is full extrapolation to the present; L at the data age is
//     snap-on-arrival; longer is an interpolation buffer. For a mover that
//     keeps its course L = 0 is exact; for one that turns without warning,
//     extrapolating the whole age overshoots every turn by up to twice the
//     speed times the age, and holding back trades that tail for a steady
//     lag (an exponentially weighted lead, (1-e^{-λa})/λ rather than a);
//   - the smoothing time constant tau (1 ms is practically none);
//   - whether corrections are bounded by Config.MaxCorrectionSpeed (a late
//     turn joined in a glide rather than a pop);
//   - the model: velocity, acceleration and turn rate, or velocity alone
//     (for movers whose acceleration and turn rate change faster than the
//     data age).
//
// Every combination is a shadow: a copy of the drawing (raw prediction plus
// faded corrections, exactly as PoseAt does it) stepped frame by frame
// from the same data, its drawn positions kept for autoHist frames. Every
// arrival is a free label: the new sample says where the entity truly was
// at its time, and each shadow is scored on where it drew it then: the
// error's length plus a pop cost for every frame in which the shadow
// popped (moved unlike its own prediction and unlike any velocity the
// entity was seen with lately), in an exponentially weighted mean over
// autoWindow arrivals, plus running 95th and 99th percentiles of the
// error's length (so a tail of overshoots counts as well as the typical
// error: extrapolating past a reversal overshoots by up to twice the speed
// times the data age, snap-on-arrival never by more than once; see
// autoTailWeight). The real drawing takes the settings of the shadow with
// the lowest sum, once it is lower than the current one's by a margin
// (autoSwitchMargin: a switch of smoothing moves the drawing as no shadow
// did); the lag slides there at autoSlew (playback at 0.9x to 1.1x), so
// retuning never jolts the entity. A capped shadow's lag is refined
// between its neighbours' where their scores say the best lies between
// (refineLag: the candidate lags are a coarse grid). An entity costs about
// 20 K instructions a frame more in Go (client/netroom BenchmarkFrame64Auto
// against BenchmarkFrame64 under cachegrind: 28 K against 8 K; it was 41 K
// more with 140 shadows and none parting late; about 2-2.5 µs on a shared
// 2-core machine) and 88 kB of shadows (84, with autoHist frames of drawing
// each; 145 kB with 140). What is computed is
// computed once, never changing what is drawn (TestAutoReuseChangesNothing
// checks it against noReuse): the estimates that do not depend on the model
// or on the latest arrival, positions only (estimatePos); the fades while
// the frame time repeats; and one step for shadows in the same state (a
// capped one and its free twin while the cap does not bind, the two models
// where they predict the same), whose label error is then shared too. A
// shadow that has equalled another in every state and score since the last
// reset (a free one whose twin's cap never bound, the second model's at a
// lag where the models never predicted differently) is neither stepped nor
// scored until it parts (autoState.split): on a steady mover, as both cost
// benchmarks feed, most of the bank.
//
// The pop test and the pop cost depend on what the entity is, learnt from
// its data: the same 10 cm jump is a whole frame's travel for a character
// running at 6 m/s and a quarter of one for a car at 24 m/s. Auto keeps
// the entity's top horizontal speed of the last 10 s or so
// (autoPeakArrivals). A frame move counts as a pop when it departs by more
// than 9 cm (autoPopStep) or 40% of a frame's travel at that top speed
// (autoPopTravel), whichever is more; a pop costs Config.AutoPopCost
// (20 m: like being 20 m off at one arrival, so a slow mover glides its
// corrections within MaxCorrectionSpeed) up to autoPopSpeed (8 m/s) of top
// speed, falling with the top speed to the power 3.5 above it (0.3 m at
// 26 m/s, where tracking matters more than a jump smaller than a frame's
// travel; autoPopFall). With one pop test and cost for every mover (the
// bench, seeds 1-3), 0.5 m left characters popping 135 times a minute and
// 20 m made vehicles' p95 45-80% worse at 150 ms. A mover above
// autoPopSpeed also has a first time constant that follows the data age
// in place of 1 ms (autoFastFade): its corrections grow with the age.

// autoLags are the candidate render lags, and autoTaus the candidate
// smoothing time constants: every pair is a shadow, a virtual copy of the
// drawing (raw prediction plus faded corrections) kept frame by frame.
//
// Every lag is the best for some link (the bench, seeds 1-3 and hold-out,
// share of the frames each setting drew, characters): 0 for nearly every
// vehicle frame; 15 and 30 ms at direct-20, 50 ms at 50 ms one way, 75 ms
// on the server-only relay, 110 at direct-100, 160 at direct-150 and 200.
// Without 15 ms, direct-20 character mean was 30-47% worse. Time constants
// of 100 and 200 ms were drawn in 4% of character frames (mostly at lag
// 160, direct-200) and hardly any vehicle's; without them no row's p95 or
// mean was more than 1.1% worse and direct-200 character 2.6% (p95) and
// 5.2% (mean) better on seeds 1-3, and the bank is 40% smaller (it was
// 140 shadows). Without 40 ms too, hold-out server-only character p95 was
// 3.3% worse; with 150 ms in place of both, hold-out direct-200 character
// mean 2.2% worse.
var (
	autoLags = [...]time.Duration{0, 15 * time.Millisecond, 30 * time.Millisecond, 50 * time.Millisecond,
		75 * time.Millisecond, 110 * time.Millisecond, 160 * time.Millisecond}
	autoTaus = [...]time.Duration{time.Millisecond, 15 * time.Millisecond, 40 * time.Millisecond}
	// autoCapped: with MaxCorrectionSpeed, or fading freely.
	autoCapped = [...]bool{true, false}
	// autoVelOnly: the full model, or velocity alone (for movers whose
	// acceleration and turn rate change faster than the data age).
	autoVelOnly = [...]bool{false, true}
)

const (
	numAutoLags = len(autoLags)
	numPerModel = len(autoLags) * len(autoTaus) * len(autoCapped)
	numShadows  = numPerModel * len(autoVelOnly)
	// autoHist is how many frames of each shadow's drawing are kept to be
	// judged when the truth for them arrives: 0.67 s at 60 Hz, more than
	// any data age the predictor extrapolates fully.
	autoHist = 40
	// autoSeen is how many recent sample velocities the pop test keeps,
	// and autoSeenFor how old they may be.
	autoSeen    = 8
	autoSeenFor = 500 * time.Millisecond
	// autoWarmSamples is how many of the newest samples warm touches:
	// the estimates of the longest lag reach back that far at 60 Hz.
	autoWarmSamples = 12
	// autoWindow is the number of arrivals the scores average over
	// (exponentially): about 2 s at 60 Hz.
	autoWindow = 120
	// autoSlew is how fast the drawn lag follows its target (s per s).
	autoSlew = 0.1
	// autoMinLabels is how many scored arrivals a predictor needs before
	// it leaves its start (lag 0, Config.SmoothingTau).
	autoMinLabels = 30
	// autoPopStep is how far (m; autoPopStep2D px) a shadow's frame move
	// may depart from its prediction's own move and from every move the
	// entity was seen to make before it counts as a pop; autoPopCost is the
	// default Config.AutoPopCost (m; autoPopCost2D px): a pop of an entity
	// no faster than autoPopSpeed weighs like being that far off at one
	// arrival.
	autoPopStep   = 0.09
	autoPopStep2D = 2.9
	autoPopCost   = 20.0
	autoPopCost2D = 640.0
	// autoPopSpeed (m/s; autoPopSpeed2D px/s) is the top speed above which
	// a pop costs less, by (autoPopSpeed/top speed)^autoPopFall, and the
	// first time constant follows the data age (autoFastFade): 8 m/s is
	// above any running character (6 m/s on the bench) and a third of a
	// car's top speed.
	autoPopSpeed   = 8.0
	autoPopSpeed2D = 256.0
	// autoPopTravel is the share of a frame's travel at the top speed a
	// frame move may depart by before it is a pop (when that is more than
	// autoPopStep): 17 cm a frame for a car at 26 m/s, so that Auto prices
	// the jumps a player sees at that speed, not every 9 cm correction. On
	// the bench (seeds 1-3) this with the pop cost then falling by the
	// square put harsh-150's vehicle at 16.5 pops > 0.2 m a minute and p95
	// 0.326 m; with the absolute step alone, the square cost 9% of p95 at
	// direct-200 and the cube left 18.5 pops.
	autoPopTravel = 0.4
	// autoFastFade is the first candidate time constant of a mover faster
	// than autoPopSpeed, as a share of the data age (8 ms at 180 ms; at
	// least autoTaus[0], at most autoTaus[1]); autoPopFall is the power of
	// autoPopSpeed/top speed its pop cost falls by. A correction grows with
	// the age, and a 1 ms fade draws it in one frame: on the bench's
	// harsh-150 vehicle row (seeds 1-3) 98 of the 101 pop events > 0.2 m
	// were one frame's fade of a correction, 80 of them the 1 ms fade's,
	// and Auto's choice between 1 ms and 15 ms did worse than either
	// drawn alone would (lag 0, free, full model: 1 ms p95 0.324 m and
	// 20.2 pops > 0.2 m a minute, 8 ms 0.329 and 13.7, 15 ms 0.341 and
	// 8.5; Auto 0.335 and 16.8, extrapolate-v's 15.5). Both together
	// (seeds 1-3 / hold-out): 0.335, 16.8 / 0.318, 16.7 -> 0.330, 13.3 /
	// 0.305, 14.0, no vehicle row's p95 more than 0.7% worse, no
	// character row moved. 8 ms for every fast mover: low-latency vehicle
	// rows 1.5-3.5% worse (hold-out server-only 0.086 -> 0.089 m), the
	// fade lagging small corrections; the fast fade alone (0.05 of the
	// age), 0.334, 11.0 / 0.320, 11.0; the power alone, hold-out 0.304,
	// 21.5; the powers 3.25 and 3.75, and the shares 0.04 and 0.05, each
	// missed one of the goal's halves by a little on one seed set (the
	// bench's link draws alone move this row's pops by 2 a minute).
	autoFastFade = 0.045
	autoPopFall  = 3.5
	// autoPeakArrivals is how fast the top speed forgets: it decays by
	// 1/autoPeakArrivals per new sample (an e-fold in 10 s at 60 Hz), so a
	// car that stops for a while is not taken for a character, and one
	// that has driven slowly for a minute is judged by how it moves now.
	autoPeakArrivals = 600
	// autoTailWeight is the weight of a shadow's running 99th percentile
	// of the error in its score (beside its mean error, pops and 95th
	// percentile), for a mover no faster than autoPopSpeed, less as the
	// pop cost falls above it: after an unannounced reversal an
	// extrapolating drawing overshoots by up to twice the speed times the
	// data age, snap-on-arrival never by more than once, and a player sees
	// that tail. On the bench (seeds 1-3) the tail at 1.5 took direct-50
	// character p99 from 0.632 to 0.518 m (snap 0.569) but raised harsh-50
	// character pops > 0.1 m from 6 to 15 a minute: with the tail in the
	// sum a free shadow whose pops happened to be few in the window tied
	// with a bounded one. At 1 (with the refined lag, refineLag) harsh-50
	// pops 14.5 -> 8.3 a minute (hold-out 7.3 -> 4.0; seeds 4-11 8.8 ->
	// 6.7), direct-50 3.7 -> 2.7, direct-150 p95 1.111 -> 1.090 m, every
	// character mean lower; the tail a little longer (direct-50 p99 0.526
	// -> 0.543 m, direct-100 max 1.19 -> 1.31 m; snap 0.569 and 1.03 m).
	// In test/godot's TestGodotCharacter at 75 ms one way nearzero read p99
	// 0.524 m, max 0.617 m at 1 and 0.525, 0.626 at 1.5 (snap's max moved
	// 0.555-0.767 m between those runs with the machine's frame hitches);
	// TestAutoCharacterTail's replay p99 0.460 against 0.456 at 1.5 (snap
	// 0.482). 2 popped characters 5.2 times a minute by 0.1 m on direct-50.
	autoTailWeight = 1.0
	// autoSwitchMargin is how much lower (a share) another shadow's score
	// must be before the drawing takes its settings, for a mover whose
	// pops cost the full Config.AutoPopCost; less as its pops cost less
	// (0.24% for a car at 26 m/s). A switch from a bounded correction to a
	// free fade moves the drawing as no shadow did, and with the tail in
	// the score the best shadow changes often: on the bench (seeds 1-3,
	// tail weight 1) direct-50 character popped 7.8 times a minute by
	// 0.1 m without a margin, 4.0 with 10%; 10% for every mover made
	// direct-150 and direct-200 vehicle p95 3-4% worse, 15% up to 10%.
	autoSwitchMargin = 0.15
	// autoCorrectionSpeed is the default MaxCorrectionSpeed of an Auto
	// predictor: 5 m/s, 83 mm a frame at 60 Hz.
	autoCorrectionSpeed = 5.0
	// autoCorrectionSpeed2D is the same in px/s (at 32 px/m).
	autoCorrectionSpeed2D = 160.0
)

// autoState is the Auto state of a predictor.
type autoState struct {
	off   [numShadows]geom.Vec3 // each shadow's smoothing offset
	score [numShadows]float64   // EWMA of each shadow's error length plus its pops' cost
	// q is each shadow's running 95th and 99th percentile of the error
	// length (the 99th: the tail a player notices), side by side for the
	// label loop.
	q    [numShadows][2]float64
	pops [numShadows]int // each shadow's pops since the last label
	// prevRaw is each model's and lag's raw prediction at the last frame.
	prevRaw [len(autoVelOnly)][numAutoLags]geom.Vec3
	// seen are the velocities of the newest samples (seenT their times),
	// the moves the entity was seen to make: a shadow's frame move far from
	// all of them and from its own prediction's is a pop.
	seen  [autoSeen]geom.Vec3
	seenT [autoSeen]time.Duration
	seenI int
	hist  [autoHist]struct {
		t     time.Duration
		drawn [numShadows]geom.Vec3
		// same marks the shadows that took another's step this frame
		// (stepLag), so drew exactly as it: same[0] the shadow before,
		// same[1] the first model's at the same lag (numPerModel before).
		same [2]shadowBits
	}
	hn, hi    int // frames in hist; index of the newest
	labels    int
	peak      float64 // the top horizontal speed seen lately (see autoPeakArrivals)
	lastLabel time.Duration
	best      int // the shadow with the lowest score
	// target is the lag the drawing slides to: the best shadow's, or
	// between its neighbours' where the scores say (refineLag).
	target time.Duration
	lag    time.Duration // the drawn lag
	at     time.Duration // receiver time of the last slide
	slid   bool
	// fade is each time constant's fade over fadeDt, the last frame's dt,
	// and taus the time constants it is for (autoTaus, the first one a
	// fast mover's, autoFastFade).
	fade   [len(autoTaus)]float64
	fadeDt time.Duration
	taus   [len(autoTaus)]time.Duration
	// split marks the shadows that have parted, since the last reset,
	// from the one they were equal to in every state and score: a free
	// shadow from its capped one (until the cap first binds), the second
	// model's from the first's at the same lag (until the models first
	// predict differently there; they part together, splitTwin, and the
	// bit of the lag's first, capped, shadow says whether they have).
	// Until it parts a shadow is neither stepped nor scored (its stored
	// state is stale; root finds the one it equals); when it parts it
	// takes that one's state (copyShadow). The first model's capped
	// shadows are always stepped (rootShadows).
	split shadowBits
	// noReuse makes autoFrame compute every estimate and step every
	// shadow (tests: the reuse must change nothing).
	noReuse bool
	// noRefine draws at the best shadow's own lag (tests: what refineLag
	// gains).
	noRefine bool
	// noFastFade keeps autoTaus[0] for a fast mover (tests: what
	// autoFastFade gains).
	noFastFade bool
	// sink takes warm's sum, so that its loads are not optimised away.
	sink float64
}

// shadowLag, shadowCapped and shadowVelOnly are shadow i's settings
// (autoState.shadowTau its time constant).
func shadowLag(i int) time.Duration {
	return autoLags[i%numPerModel/(len(autoTaus)*len(autoCapped))]
}
func shadowCapped(i int) bool  { return autoCapped[i%len(autoCapped)] }
func shadowVelOnly(i int) bool { return autoVelOnly[i/numPerModel] }

// shadowTau returns shadow i's time constant, as its last frame faded it.
func (a *autoState) shadowTau(i int) time.Duration {
	t := i % numPerModel / len(autoCapped) % len(autoTaus)
	if a.taus[t] == 0 { // no frame faded yet
		return autoTaus[t]
	}
	return a.taus[t]
}

// warm reads one word of every cache line an Auto frame is about to use
// (the offsets, the pop counts, the history row it writes, the newest
// samples), all at once and before any work: in the engine an entity's
// state is cold at each frame (the other entities and the engine ran
// since), and the frame's own loops, each step long, leave few of these
// misses in flight at a time. The loads are independent, so they overlap.
// The drawing does not change: the sum goes to a field nothing reads.
func (p *Predictor) warm() {
	a := p.auto
	const line = 64 / 24 // Vec3s per cache line, rounded down: no line skipped
	var s float64
	next := &a.hist[(a.hi+1)%autoHist].drawn
	var n int
	for base := 0; base < numShadows; base += numPerLag {
		// The second model's shadows at a lag only once parted from the
		// first's: until then nothing reads or writes them (split).
		if base >= numPerModel && !a.split.has(base) && !a.noReuse {
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
		for l := 0; l < numAutoLags; l += line {
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

// autoFrame steps every shadow to now, as PoseAt steps the real drawing:
// fade (by dt, within MaxCorrectionSpeed), then, when the prediction
// changed (changed, from prevPath to path), add the jump as a correction.
func (p *Predictor) autoFrame(now, dt, age time.Duration, path, prevPath Path, changed, restart, snap bool) {
	a := p.auto
	prev := &a.hist[a.hi]
	f := shadowFrame{
		v:       p.cfg.MaxCorrectionSpeed * dt.Seconds(),
		td2:     p.cfg.TeleportDistance * p.cfg.TeleportDistance,
		dt:      dt,
		judge:   a.hn > 0 && dt > 0 && !restart && !snap,
		changed: changed, restart: restart, snap: snap,
		reuse: !a.noReuse,
	}
	a.hi = (a.hi + 1) % autoHist
	a.hn = min(a.hn+1, autoHist)
	h := &a.hist[a.hi]
	h.t = now
	h.same = [2]shadowBits{}
	real := p.velOnly
	defer func() { p.velOnly = real }()
	// The fade of each time constant this frame: one exp per constant, not
	// per shadow (the exp was a tenth of an Auto frame).
	// A frame as long as the last (a steady frame rate) reuses its fades;
	// a fast mover's first constant follows its data age (autoFastFade).
	taus := p.autoTaus(age)
	if dt > 0 {
		switch {
		case dt != a.fadeDt || a.noReuse:
			for t, tau := range taus {
				a.fade[t] = math.Exp(-float64(dt) / float64(tau))
			}
			a.fadeDt = dt
		case taus[0] != a.taus[0]:
			a.fade[0] = math.Exp(-float64(dt) / float64(taus[0]))
		}
		a.taus = taus
		f.fade = a.fade
		for t, k := range f.fade {
			f.fadeLoss[t] = 1 - k
		}
	}
	f.v2 = f.v * f.v
	step := p.autoPopStepAt(dt)
	f.step2 = step * step // squared lengths: no square root per shadow and frame
	// The moves the entity was seen to make lately, over this frame (as
	// autoPopped scales them), once per frame rather than per shadow.
	if f.judge {
		for j := range autoSeen {
			if now-a.seenT[j] <= autoSeenFor {
				f.seen[f.nSeen] = a.seen[j].Scale(dt.Seconds())
				f.nSeen++
			}
		}
	}
	// The first model's estimates per lag, for the second where the model
	// plays no part (most lags interpolate), and no old estimate where the
	// new data changed nothing at that lag: estimates were a third of an
	// Auto frame.
	for l, lag := range autoLags {
		var ests, olds [len(autoVelOnly)]shadowEst
		var oldOK bool
		for mi, velOnly := range autoVelOnly {
			p.velOnly = velOnly
			est := ests[0]
			if mi == 0 || !est.modelFree || a.noReuse {
				var ok bool
				if est, ok = p.shadowEstimate(path, now-lag, math.MaxUint64, nil); !ok {
					return
				}
			}
			var old shadowEst
			if changed {
				switch {
				case path == prevPath && est.gen < p.epoch && !a.noReuse:
					// The samples it stands on arrived before the last
					// frame (the ring is in time order, so none came
					// between them): the old prediction is the same.
					old = est
				case mi > 0 && oldOK && olds[0].modelFree && !a.noReuse:
					old = olds[0]
				default:
					if old, oldOK = p.shadowEstimate(prevPath, now-lag, p.epoch, &p.anchor); !oldOK {
						old = est
					}
				}
			}
			ests[mi], olds[mi] = est, old
		}
		for mi := range autoVelOnly {
			base := mi*numPerModel + l*numPerLag
			prevRaw := a.prevRaw[mi][l]
			if a.noReuse {
				// The reference: every shadow stepped, last frame's drawing
				// as hist has it, each pop test by autoPopped.
				a.stepLag(&f, base, -1, ests[mi].pos, olds[mi].pos, prevRaw, &h.drawn, &h.same)
				if f.judge {
					own := ests[mi].pos.Sub(prevRaw)
					if changed {
						own = olds[mi].pos.Sub(prevRaw)
					}
					for i := base; i < base+numPerLag; i++ {
						if p.autoPopped(h.drawn[i].Sub(prev.drawn[i]), own, f.step2, now, dt) {
							a.pops[i]++
						}
					}
				}
				continue
			}
			// Where the second model predicts exactly as the first (most
			// lags interpolate), both step together; while the second's
			// shadows are still the first's (never predicted otherwise),
			// only the first's step.
			twin := -1
			if mi == 0 && ests[1].pos == ests[0].pos && olds[1].pos == olds[0].pos && a.prevRaw[1][l] == prevRaw {
				twin = numPerModel + l*numPerLag
			}
			if mi == 0 && !a.split.has(numPerModel+l*numPerLag) {
				if twin >= 0 {
					a.stepLag(&f, base, -1, ests[0].pos, olds[0].pos, prevRaw, &h.drawn, &h.same)
					break
				}
				a.splitTwin(l)
			}
			a.stepLag(&f, base, twin, ests[mi].pos, olds[mi].pos, prevRaw, &h.drawn, &h.same)
			if twin >= 0 {
				break
			}
		}
		for mi := range autoVelOnly {
			a.prevRaw[mi][l] = ests[mi].pos
		}
	}
}

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

// numPerLag is the number of shadows of one model and lag (every time
// constant, capped or not): they share one estimate.
const numPerLag = len(autoTaus) * len(autoCapped)

// shadowFrame is what every shadow's step shares in one frame.
type shadowFrame struct {
	fade                   [len(autoTaus)]float64 // each time constant's fade over dt
	fadeLoss               [len(autoTaus)]float64 // 1 - fade
	v, v2                  float64                // how far a capped correction may move in dt; its square
	td2                    float64                // TeleportDistance squared
	step2                  float64                // the pop step squared (autoPopStepAt)
	seen                   [autoSeen]geom.Vec3    // the moves recent samples' velocities make in dt
	nSeen                  int
	dt                     time.Duration
	judge                  bool // pop test this frame
	reuse                  bool // take equal shadows' steps (not noReuse)
	changed, restart, snap bool
}

// lagFrame is what the shadows of one model and lag share in one frame.
type lagFrame struct {
	*shadowFrame
	est     geom.Vec3 // the estimate
	prevRaw geom.Vec3 // last frame's estimate
	corr    geom.Vec3 // the jump new data made
	own     geom.Vec3 // the prediction's own move this frame, before new data moved it
	// countPops: count pops, taking last frame's drawing as prevRaw + off
	// (the same sum as then, so the same value as in hist, without
	// reading it back).
	countPops bool
}

// stepLag steps the shadows base..base+numPerLag-1 (one model and lag,
// whose estimate is est, old before new data changed it and prevRaw at
// the last frame), and with
// twin >= 0 those from twin on (another model's at the same lag, whose
// estimates and last estimate are the same), and writes their drawn
// positions to drawn, marking in same the shadows that took another's
// step.
//
// A shadow whose offset equals another's that stepped from the same
// estimates takes that one's step rather than computing it again: the
// shadow before it (capped while this one is not, when the cap did not
// bind), or its twin. Equal inputs give equal results, up to the sign of
// a zero, which nothing reads (every test and score takes squares).
// Shadows stay equal for long stretches: while no correction exceeds the
// cap, and where the models agree.
func (a *autoState) stepLag(f *shadowFrame, base, twin int, est, old, prevRaw geom.Vec3, drawn *[numShadows]geom.Vec3, same *[2]shadowBits) {
	lf := lagFrame{shadowFrame: f, est: est, prevRaw: prevRaw, countPops: f.judge && f.reuse}
	lf.own = est.Sub(lf.prevRaw)
	if f.changed {
		lf.own = old.Sub(lf.prevRaw)
		lf.corr = old.Sub(est)
	}
	offs := (*[numPerLag]geom.Vec3)(a.off[base : base+numPerLag])
	outs := (*[numPerLag]geom.Vec3)(drawn[base : base+numPerLag])
	pops := (*[numPerLag]int)(a.pops[base : base+numPerLag])
	// Which shadows start as their twins, before any steps; then few
	// values are live in the loops, which is most of their cost. A free
	// shadow that is still its capped one (split unset) has a stale offset:
	// it takes nothing.
	var asTwin [numPerLag]bool
	var toffs, touts *[numPerLag]geom.Vec3
	var tpops *[numPerLag]int
	if f.reuse {
		if twin >= 0 {
			toffs = (*[numPerLag]geom.Vec3)(a.off[twin : twin+numPerLag])
			touts = (*[numPerLag]geom.Vec3)(drawn[twin : twin+numPerLag])
			tpops = (*[numPerLag]int)(a.pops[twin : twin+numPerLag])
			for i := range numPerLag {
				asTwin[i] = toffs[i] == offs[i] && (i%2 == 0 || a.split.has(base+i) && a.split.has(twin+i))
			}
		}
	}
	var n [numPerLag]int          // each shadow's pops this frame
	var bound [len(autoTaus)]bool // the cap bound each capped shadow
	for t := range autoTaus {
		i := 2 * t // capped; i+1 free
		was := offs[i]
		o, d, m, b := lf.step(t, true, was)
		if f.reuse && !a.split.has(base+i+1) {
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
		if f.reuse && !b && offs[i] == was { // as the capped one, whose cap did not bind
			offs[i], outs[i], n[i] = offs[i-1], outs[i-1], n[i-1]
			same[0].set(base + i)
		} else {
			offs[i], outs[i], n[i], _ = lf.step(t, false, offs[i])
		}
		pops[i] += n[i]
	}
	if toffs == nil {
		return
	}
	for t := range autoTaus {
		i := 2 * t
		var o, d geom.Vec3
		var m int
		var b bool
		if asTwin[i] {
			o, d, m, b = offs[i], outs[i], n[i], bound[t]
			same[1].set(twin + i) // twin is numPerModel after base
		} else {
			o, d, m, b = lf.step(t, true, toffs[i])
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
			same[1].set(twin + i)
			continue
		}
		toffs[i], touts[i], m, _ = lf.step(t, false, toffs[i])
		tpops[i] += m
	}
}

// rootShadows are the shadows that are always stepped: the first
// model's capped ones (see autoState.split).
var rootShadows = func() (b shadowBits) {
	for i := 0; i < numPerModel; i += 2 {
		b.set(i)
	}
	return b
}()

// copyShadow gives shadow dst the state of src, its history included, and
// marks it parted.
func (a *autoState) copyShadow(dst, src int) {
	a.off[dst], a.score[dst], a.q[dst], a.pops[dst] = a.off[src], a.score[src], a.q[src], a.pops[src]
	for h := range a.hist {
		a.hist[h].drawn[dst] = a.hist[h].drawn[src]
	}
	a.split.set(dst)
}

// splitTwin parts the second model's shadows at lag l from the first's:
// each takes the state of its twin (a free one still equal to its capped
// one stays so).
func (a *autoState) splitTwin(l int) {
	for k := range numPerLag {
		if src := l*numPerLag + k; k%2 == 0 || a.split.has(src) {
			a.copyShadow(numPerModel+src, src)
		}
	}
}

// root returns the shadow whose stored state is shadow i's.
func (a *autoState) root(i int) int {
	if a.noReuse {
		return i
	}
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
func (a *autoState) settle() {
	for l := range numAutoLags {
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

// step steps one shadow of time constant autoTaus[t], capped or not,
// from the offset off: it returns the new offset, the drawn position, the
// pops and whether the cap bound.
func (lf *lagFrame) step(t int, capped bool, off geom.Vec3) (geom.Vec3, geom.Vec3, int, bool) {
	was := lf.prevRaw.Add(off)
	n := 0     // pops this frame
	l2 := -1.0 // the offset's squared length, once known
	switch {
	case lf.restart:
		off, l2 = geom.Vec3{}, 0
	case lf.changed:
		off = off.Add(lf.corr)
		if l2 = off.Dot(off); lf.snap || l2 > lf.td2 {
			off, l2 = geom.Vec3{}, 0
			n++
		}
	}
	bound := false
	if lf.dt > 0 { // faded from the frame a correction arrives in, as PoseAt does
		k := lf.fade[t]
		// The square root only when the cap may bind.
		if capped && lf.v > 0 {
			if l2 < 0 {
				l2 = off.Dot(off)
			}
			if l2*lf.fadeLoss[t]*lf.fadeLoss[t] > lf.v2 {
				k, bound = 1-lf.v/math.Sqrt(l2), true
			}
		}
		off = off.Scale(k)
	}
	now := lf.est.Add(off)
	if lf.countPops {
		// Moved as its own prediction did (most frames), else popped.
		if move := now.Sub(was); move.Sub(lf.own).Dot(move.Sub(lf.own)) > lf.step2 && popped(move, lf.shadowFrame) {
			n++
		}
	}
	return off, now, n, bound
}

// popped is autoPopped with the frame's seen moves scaled once, for a
// move that departs from its own prediction's.
func popped(move geom.Vec3, f *shadowFrame) bool {
	for _, sm := range f.seen[:f.nSeen] {
		if d := move.Sub(sm); d.Dot(d) <= f.step2 {
			return false
		}
	}
	return true
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

// shadowEst is what a shadow needs of an estimate.
type shadowEst struct {
	pos       geom.Vec3
	modelFree bool
	gen       uint64
}

// shadowEstimate is estimate for the shadows: the position alone (the
// whole estimate with noReuse, which must give the same).
func (p *Predictor) shadowEstimate(path Path, now time.Duration, below uint64, fallback *entry) (e shadowEst, ok bool) {
	if p.auto.noReuse {
		est, ok := p.estimate(path, now, below, fallback)
		return shadowEst{pos: est.pos, modelFree: est.modelFree, gen: est.gen}, ok
	}
	e.pos, e.modelFree, e.gen, ok = p.estimatePos(path, now, below, fallback)
	return e, ok
}

// autoPopped reports whether a shadow's frame move is a pop: more than
// the pop step (step2 is its square, autoPopStepAt) from its own
// prediction's move raw and from every move the entity was seen to make
// lately (a recent sample's velocity times dt). So drawing late, or as the
// entity was seen to move, is not popping; a correction that moves it
// otherwise is.
func (p *Predictor) autoPopped(move, raw geom.Vec3, step2 float64, now, dt time.Duration) bool {
	if d := move.Sub(raw); d.Dot(d) <= step2 {
		return false
	}
	a := p.auto
	for j := range autoSeen {
		if now-a.seenT[j] > autoSeenFor {
			continue
		}
		if d := move.Sub(a.seen[j].Scale(dt.Seconds())); d.Dot(d) <= step2 {
			return false
		}
	}
	return true
}

// autoPopCost returns what a pop costs this entity: Config.AutoPopCost up
// to autoPopSpeed of top speed, less by the ratio to the power autoPopFall
// above it (see the comment above autoLags).
func (p *Predictor) autoPopCost() float64 {
	ref := autoPopSpeed
	if p.cfg.Dim2D {
		ref = autoPopSpeed2D
	}
	c := p.cfg.AutoPopCost
	if pk := p.auto.peak; pk > ref {
		c *= math.Pow(ref/pk, autoPopFall)
	}
	return c
}

// autoTaus returns the candidate time constants for a frame drawn from
// data age old: autoTaus, the first one for a mover faster than
// autoPopSpeed autoFastFade of the age (between autoTaus[0] and
// autoTaus[1], in steps of half a millisecond so that its fade is not
// recomputed every frame).
func (p *Predictor) autoTaus(age time.Duration) [len(autoTaus)]time.Duration {
	taus := autoTaus
	ref := autoPopSpeed
	if p.cfg.Dim2D {
		ref = autoPopSpeed2D
	}
	if p.auto.peak > ref && !p.auto.noFastFade {
		t := time.Duration(autoFastFade * float64(age)).Round(500 * time.Microsecond)
		taus[0] = min(max(t, autoTaus[0]), autoTaus[1])
	}
	return taus
}

// autoPopStepAt returns the pop step for a frame of dt: autoPopStep, or
// autoPopTravel of a frame's travel at the top speed when that is more.
func (p *Predictor) autoPopStepAt(dt time.Duration) float64 {
	return max(p.autoPopStep(), autoPopTravel*p.auto.peak*dt.Seconds())
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
	a.seen[a.seenI], a.seenT[a.seenI] = s.Vel, s.Time
	a.seenI = (a.seenI + 1) % autoSeen
	if a.labels > 0 && s.Time <= a.lastLabel {
		return // a late sample, or the other path's copy: no label, and its speed was seen
	}
	// The top speed, horizontal (a character's jump is not running speed),
	// forgetting per new sample so that two paths do not halve its memory.
	up := geom.Up3D
	if p.cfg.Dim2D {
		up = geom.Up2D
	}
	a.peak = max(s.Vel.Sub(up.Scale(s.Vel.Dot(up))).Len(), a.peak*(1-1.0/autoPeakArrivals))
	if a.hn < 2 {
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
			popCost := p.autoPopCost()
			// The tail and the switch margin weigh as this mover's pops do
			// (fully up to autoPopSpeed, less above): a car's overshoot at
			// a wall is no reversal, and its drawing should follow its
			// scores promptly.
			slow := popCost / p.cfg.AutoPopCost
			tw := autoTailWeight * slow
			// Plain comparisons, not the float min and max builtins (which
			// handle NaN and signed zeros), and the best sum kept in a
			// local: this loop was a third of an Auto frame.
			best, bestSum := 0, math.Inf(1)
			// A shadow that drew exactly as another at both frames (it
			// took its step, see stepLag) has its error.
			var es [numShadows]float64
			var both [2]shadowBits
			for k := range both {
				for w := range both[k] {
					both[k][w] = lo.same[k][w] & hi.same[k][w]
				}
			}
			// Only the shadows stepped on their own (see copyShadow): the
			// others score as the one they equal, and being later in
			// order, are never the best over it.
			live := a.split
			for w := range live {
				live[w] |= rootShadows[w]
				if a.noReuse {
					live[w] = ^uint64(0)
				}
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
				// Quantile trackers: up by 0.95 steps when exceeded, down
				// by 0.05 otherwise (0.99 and 0.01 for the 99th), steps a
				// twentieth of the mean error or of the tracker's own
				// value, whichever is more. With steps of the mean alone
				// the tail of a shadow that extrapolates a runner (small
				// mean, tail twice snap's) took seconds to show, and Auto
				// drew the first 9 s of TestAutoCharacterTail with it
				// (4 s now); the step is the same either way of a label,
				// so the trackers still settle at the quantile.
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
			cur := a.root(a.best)
			curSum := a.score[cur] + a.q[cur][0] + tw*a.q[cur][1]
			a.labels++
			a.lastLabel = s.Time
			// A switch only for a clear gain (autoSwitchMargin, priced as
			// this mover's pops are): every switch of smoothing can move
			// the drawing unlike any shadow did.
			margin := autoSwitchMargin * slow
			if a.labels == autoMinLabels || (a.labels > autoMinLabels && bestSum < curSum*(1-margin)) {
				a.best = best
			}
			a.target = a.refineLag(tw)
			return
		}
		j = prev
	}
}

// autoTarget returns the lag, the smoothing time constant, whether the
// correction speed is capped and whether to extrapolate with velocity
// alone, as the best shadow has them (0, SmoothingTau, capped and the full
// model until enough labels).
func (p *Predictor) autoTarget() (lag, tau time.Duration, capped, velOnly bool) {
	if p.auto.labels < autoMinLabels {
		return 0, p.cfg.SmoothingTau, true, false
	}
	b := p.auto.best
	return p.auto.target, p.auto.shadowTau(b), shadowCapped(b), shadowVelOnly(b)
}

// refineLag returns the lag to draw the best shadow's settings at: for a
// capped shadow whose lag has a candidate on either side, the lowest point
// of the parabola through its score sum (score, 95th and tw times the 99th
// percentile, as autoLabel ranks them) and those of its two neighbours of
// the same time constant, cap and model, kept within half-way to each
// neighbour (beyond that the neighbour is the better candidate); else the
// shadow's own lag.
//
// The candidate lags are a coarse grid, and for a runner the best lag
// depends on the data age: at 100 ms one way (a data age of about
// 125 ms on the bench) the best bounded drawing lies between the 75 ms
// and 110 ms candidates, and drawing at either missed the 0.75 m p95 goal
// of direct-100 (seeds 1-3: 0.775 m; hold-out 1001-1003: 0.755 m). Drawn at
// the refined lag (95 ms or so there) it is 0.733 m and 0.737 m (seeds
// 4-11: 0.765 -> 0.746 m), every other goal row within 0.012 m and no
// vehicle row's p95 moved by more than 0.1% (a vehicle draws at lag 0,
// the grid's end). Only capped shadows: an uncapped one drawn between lags
// popped on some seeds (direct-100 seed 6: 11 pops > 0.1 m a minute), and
// without the half-way bound the parabola's far reach (noisy scores) gave
// 0.747 m.
func (a *autoState) refineLag(tw float64) time.Duration {
	b := a.best
	l := b % numPerModel / numPerLag
	if a.noRefine || l == 0 || l == numAutoLags-1 || !shadowCapped(b) {
		return autoLags[l]
	}
	sum := func(i int) float64 { // through root: a shadow not yet parted keeps no score of its own
		i = a.root(i)
		return a.score[i] + a.q[i][0] + tw*a.q[i][1]
	}
	x0, x1, x2 := autoLags[l-1].Seconds(), autoLags[l].Seconds(), autoLags[l+1].Seconds()
	y0, y1, y2 := sum(b-numPerLag), sum(b), sum(b+numPerLag)
	// The slopes of the two chords and the parabola's curvature (half its
	// second derivative); a flat or concave one has no lowest point inside.
	d01, d12 := (y1-y0)/(x1-x0), (y2-y1)/(x2-x1)
	c := (d12 - d01) / (x2 - x0)
	if !(c > 0) {
		return autoLags[l]
	}
	x := (x0+x1)/2 - d01/(2*c) // where the slope, d01 at the first chord's middle, is zero
	x = min(max(x, (x0+x1)/2), (x1+x2)/2)
	return time.Duration(x * float64(time.Second))
}

// autoLag slides the drawn lag toward its target (autoTarget) to now
// and returns it (0 unless Auto).
func (p *Predictor) autoLag(now time.Duration) time.Duration {
	if p.auto == nil {
		return 0
	}
	a := p.auto
	target, _, _, _ := p.autoTarget()
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
	if p.auto == nil {
		return 0, p.cfg.SmoothingTau
	}
	_, tau, _, _ = p.autoTarget()
	return p.auto.lag, tau
}
