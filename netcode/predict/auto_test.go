package predict

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

func TestAutoStraightIsExact(t *testing.T) {
	p := newPredictor(t, Config{Auto: true})
	rms, pops := drive(p, straightLine{v: geom.Vec3{X: 20}}, 80*time.Millisecond, 10)
	assert.Less(t, rms, 1e-6, "a straight mover is extrapolated exactly")
	assert.Zero(t, pops)
	lag, _ := p.AutoSettings()
	assert.Zero(t, lag, "full extrapolation is right for it")
}

// TestAutoLearnsAZigzag checks that Auto, learning only from the samples
// it receives, does better on a mover that keeps turning back than the
// fixed settings it starts from would.
func TestAutoLearnsAZigzag(t *testing.T) {
	z := newZigzag(7, 40, 6)
	auto := newPredictor(t, Config{Auto: true})
	autoRMS, autoPops := drive(auto, z, 100*time.Millisecond, 40)
	fixed := newPredictor(t, Config{})
	fixedRMS, fixedPops := drive(fixed, z, 100*time.Millisecond, 40)
	lag, tau := auto.AutoSettings()
	t.Logf("auto: rms %.3f m, %d pops (lag %v, tau %v); fixed: rms %.3f m, %d pops", autoRMS, autoPops, lag, tau,
		fixedRMS, fixedPops)
	assert.Less(t, autoRMS, fixedRMS, "Auto's error")
	assert.LessOrEqual(t, autoPops, fixedPops+2, "Auto's pops")
}

// TestAutoCharacterGlides checks that Auto, on a runner that turns back
// without warning, glides its corrections rather than jumping at every
// turn: under the erratic rule (AutoParams.ErraticRate) no frame departs
// from the truth's moves by more than 0.3 m (its pop), where without its
// pop limit (PopRate) the cheapest drawing jumps at most turns. Under the
// sum rule (a mover that is not erratic) the pop cost does the same at
// 50 ms: a quarter of the 0.1 m pops of one pop cost for every mover
// (0.5 m); at 100 ms the tail in the score (AutoParams.TailWeight) alone
// keeps the cheap predictor off extrapolating, so neither pops.
func TestAutoCharacterGlides(t *testing.T) {
	z := newZigzag(7, 40, 6)
	auto := newPredictor(t, Config{Auto: true})
	rms, pops := driveWith(auto, z, 100*time.Millisecond, 40, 0.3)
	free := newPredictor(t, Config{Auto: true})
	free.auto.par.PopRate = math.Inf(1)
	freeRMS, freePops := driveWith(free, z, 100*time.Millisecond, 40, 0.3)
	t.Logf("erratic rule: rms %.3f m, %d pops > 0.3 m; no pop limit: rms %.3f m, %d pops", rms, pops, freeRMS, freePops)
	assert.True(t, auto.auto.erratic, "a runner is erratic")
	assert.LessOrEqual(t, pops, 1, "no pops over 0.3 m")
	assert.Greater(t, freePops, 10, "without the limit it jumps")

	sum := func(cfg Config) *Predictor {
		p := newPredictor(t, cfg)
		p.auto.par.ErraticRate = 0
		return p
	}
	rms, pops = drive(sum(Config{Auto: true}), z, 50*time.Millisecond, 40)
	cheapRMS, cheapPops := drive(sum(Config{Auto: true, AutoPopCost: 0.5}), z, 50*time.Millisecond, 40)
	t.Logf("sum rule: default: rms %.3f m, %d pops; pop cost 0.5 m: rms %.3f m, %d pops", rms, pops, cheapRMS, cheapPops)
	assert.Less(t, pops*4, cheapPops, "a quarter of the pops or fewer")
	assert.Less(t, rms, 2*cheapRMS, "for a bounded price in error")
}

// TestAutoErraticSignal checks the signal the erratic rule goes by: a
// runner that turns at once in eight directions every 0.2-0.7 s jumps
// about 120 times a minute and is erratic; a car weaving at 20 m/s, a
// straight mover and a runner that turns every 4 s are not.
func TestAutoErraticSignal(t *testing.T) {
	rate := func(p *Predictor) float64 { return p.auto.jumps / p.auto.par.ErraticKeep.Minutes() }
	runner := newPredictor(t, Config{Auto: true})
	replayEightWay(runner, 3, 50*time.Millisecond, 0)
	assert.True(t, runner.auto.isErratic(), "the eight-way runner, %.0f jumps a minute", rate(runner))
	assert.InDelta(t, 120, rate(runner), 40)
	car := newPredictor(t, Config{Auto: true})
	drive(car, newWeavingCar(3, 40, 20), 50*time.Millisecond, 40)
	assert.False(t, car.auto.isErratic(), "a weaving car, %.0f jumps a minute", rate(car))
	assert.Less(t, rate(car), 1.0)
	line := newPredictor(t, Config{Auto: true})
	drive(line, straightLine{v: geom.Vec3{X: 6}}, 50*time.Millisecond, 20)
	assert.False(t, line.auto.isErratic())
	slow := newPredictor(t, Config{Auto: true})
	z := zigzag{speed: 6}
	for tt := 0.0; tt < 60; tt += 4 {
		z.turns = append(z.turns, tt)
	}
	drive(slow, z, 50*time.Millisecond, 60)
	assert.False(t, slow.auto.isErratic(), "a turn every 4 s, %.0f jumps a minute", rate(slow))
	assert.InDelta(t, 15, rate(slow), 4)
}

// TestAutoPopCostFollowsTopSpeed checks the pop cost's dependence on the
// entity's recent top speed: the full cost up to AutoParams.PopSpeed, the
// ratio to the power popFall above, and back to the full cost once a fast
// mover has been slow for a while; and the pop step's: 40% of a frame's
// travel at the top speed when that is more than 9 cm.
func TestAutoPopCostFollowsTopSpeed(t *testing.T) {
	feed := func(p *Predictor, from, n int, speed float64) {
		for i := from; i < from+n; i++ {
			s := Sample{Time: time.Duration(i) * time.Second / 60, Seq: seqOf(i),
				Pos: geom.Vec3{X: float64(i) * speed / 60}, Vel: geom.Vec3{X: speed, Y: 3}, Rot: geom.Identity}
			p.Add(PathDirect, s, s.Time+50*time.Millisecond)
			p.PoseAt(s.Time + 50*time.Millisecond)
		}
	}
	runner := newPredictor(t, Config{Auto: true})
	feed(runner, 0, 300, 6)
	def := defaultAutoParams
	assert.Equal(t, def.PopCost, runner.auto.popCost(runner), "a runner (the jump's vertical speed aside)")

	car := newPredictor(t, Config{Auto: true})
	feed(car, 0, 300, 24)
	assert.InDelta(t, 0.428, car.auto.popCost(car), 0.001, "three times popSpeed: 3^-3.5 of it")
	// A 12 cm departure in a frame: a pop for a runner, less than 40% of a
	// frame's travel (16 cm) at 24 m/s.
	dt := time.Second / 60
	move := geom.Vec3{Z: 0.12}
	sq := func(p *Predictor) float64 { s := p.auto.popStepAt(p, dt); return s * s }
	assert.True(t, popRef(runner.auto, move, geom.Vec3{}, sq(runner), 10*time.Second, dt))
	assert.False(t, popRef(car.auto, move, geom.Vec3{}, sq(car), 10*time.Second, dt))
	feed(car, 300, 3000, 4)
	assert.Equal(t, def.PopCost, car.auto.popCost(car), "slow for 50 s: priced as a runner")

	flat := newPredictor(t, Config{Auto: true, Dim2D: true})
	feed(flat, 0, 300, 6*32)
	assert.Equal(t, def.PopCost2D, flat.auto.popCost(flat), "2D: px")
}

func TestAutoConfig(t *testing.T) {
	c := DefaultConfig(false)
	assert.False(t, c.Auto)
	assert.Zero(t, c.MaxCorrectionSpeed, "no bound by default")
	a := Config{Auto: true}.withDefaults()
	assert.Equal(t, 5.0, a.MaxCorrectionSpeed)
	assert.Equal(t, 160.0, Config{Auto: true, Dim2D: true}.withDefaults().MaxCorrectionSpeed)
	assert.Equal(t, 20.0, a.AutoPopCost)
	assert.Equal(t, 640.0, Config{Auto: true, Dim2D: true}.withDefaults().AutoPopCost)
	assert.Zero(t, c.AutoPopCost, "unused without Auto")
	require.ErrorIs(t, Config{AutoPopCost: -1}.Validate(), ErrConfig)
	require.ErrorIs(t, Config{AutoPopCost: math.Inf(1)}.Validate(), ErrConfig)
	require.ErrorIs(t, Config{MaxCorrectionSpeed: -1}.Validate(), ErrConfig)
	require.ErrorIs(t, Config{MaxCorrectionSpeed: math.NaN()}.Validate(), ErrConfig)

	p := newPredictor(t, Config{})
	lag, tau := p.AutoSettings()
	assert.Zero(t, lag)
	assert.Equal(t, DefaultSmoothingTau, tau)
}

func TestMaxCorrectionSpeed(t *testing.T) {
	// A 2 m correction fades at no more than 5 m/s: 83 mm a frame.
	p := newPredictor(t, Config{MaxCorrectionSpeed: 5, SmoothingTau: ms(20)})
	p.Add(PathDirect, moving(0, 1, geom.Vec3{}, geom.Vec3{}), 0)
	p.PoseAt(ms(10))
	p.Add(PathDirect, moving(ms(16), 2, geom.Vec3{X: 2}, geom.Vec3{}), ms(20))
	prev := p.PoseAt(ms(20))
	assert.InDelta(t, 0, prev.Pos.X, 1e-9, "the jump becomes a correction")
	for i := 1; i <= 30; i++ {
		pose := p.PoseAt(ms(20) + time.Duration(i)*time.Second/60)
		step := pose.Pos.X - prev.Pos.X
		assert.LessOrEqual(t, step, 5.0/60*(1+1e-6), "frame %d", i)
		assert.Positive(t, step, "frame %d", i)
		prev = pose
	}
	assert.InDelta(t, 2, prev.Pos.X, 1e-3, "and it gets there")
}

func TestAutoResetAndNoAllocs(t *testing.T) {
	p := newPredictor(t, Config{Auto: true})
	drive(p, newZigzag(3, 4, 6), 50*time.Millisecond, 4)
	p.Reset()
	lag, _ := p.AutoSettings()
	assert.Zero(t, lag)
	assert.Zero(t, p.auto.labels, "Reset forgets what Auto learned")
	assert.False(t, p.PoseAt(time.Second).Valid)

	seq := 0
	now := time.Second
	add := func() {
		seq++
		now += time.Second / 60
		p.Add(PathDirect, moving(now-ms(50), seq, geom.Vec3{X: float64(seq)}, geom.Vec3{X: 60}), now)
	}
	for range 100 {
		add()
		p.PoseAt(now)
	}
	assert.Zero(t, testing.AllocsPerRun(200, add), "Add")
	assert.Zero(t, testing.AllocsPerRun(200, func() { now += time.Millisecond; p.PoseAt(now) }), "PoseAt")
}

// TestAutoModelSwitchIsSmooth checks that when Auto switches between the
// full model and velocity alone, the drawn entity does not jump.
func TestAutoModelSwitchIsSmooth(t *testing.T) {
	p := newPredictor(t, Config{Auto: true, PredictionCap: time.Second})
	// Accelerating hard: the two models differ by acc·age²/2 = 0.45 m.
	s := Sample{Time: 0, Seq: 1, Vel: geom.Vec3{X: 10}, Acc: geom.Vec3{X: 10}, Rot: geom.Identity}
	p.Add(PathDirect, s, ms(1))
	before := p.PoseAt(ms(300))
	p.auto.labels = p.auto.par.MinLabels
	p.auto.best = numPerModel // the first velocity-only shadow: lag 0
	require.Equal(t, velocityModel, shadowModel(p.auto.best))
	after := p.PoseAt(ms(300) + time.Millisecond)
	assert.InDelta(t, before.Pos.X, after.Pos.X, 0.05, "no jump: %v then %v", before.Pos, after.Pos)
	assert.Greater(t, after.Correction, 0.3, "the models' difference fades as a correction")
}

// TestAutoCharacterTail checks the erratic rule on a runner that turns at
// once in eight directions, 75 and 100 ms one way with a little jitter,
// from 5 s on as test/godot's TestGodotCharacter measures: Auto draws it
// with a mean error at most half snap-on-arrival's (the newest state,
// which the speed times the data age bounds) and a 99th percentile within
// 1.5 times snap's (the rule's limit is AutoParams.TailFactor, 1.35, on its
// own running percentiles). Under the sum rule alone (ErraticRate 0) it
// drew such a runner about a data age late, its mean near snap's
// (bench/README.md, "The erratic rule").
func TestAutoCharacterTail(t *testing.T) {
	for _, oneWay := range []time.Duration{75 * time.Millisecond, 100 * time.Millisecond} {
		p := newPredictor(t, Config{Auto: true})
		errs, snaps := replayEightWay(p, 21, oneWay, 4*time.Millisecond)
		require.NotEmpty(t, errs)
		old := newPredictor(t, Config{Auto: true})
		old.auto.par.ErraticRate = 0
		oldErrs, _ := replayEightWay(old, 21, oneWay, 4*time.Millisecond)
		t.Logf("%v: Auto: mean %.3f m, p99 %.3f m, max %.3f m; sum rule: mean %.3f m, p99 %.3f m; snap: mean %.3f m, p99 %.3f m, max %.3f m",
			oneWay, mean(errs), pct(errs, 0.99), pct(errs, 1), mean(oldErrs), pct(oldErrs, 0.99),
			mean(snaps), pct(snaps, 0.99), pct(snaps, 1))
		assert.LessOrEqual(t, mean(errs), mean(snaps)/2, "Auto's mean against snap's")
		assert.LessOrEqual(t, pct(errs, 0.99), 1.5*pct(snaps, 0.99), "Auto's p99 against snap's")
		assert.Greater(t, mean(oldErrs), 0.6*mean(snaps), "the sum rule draws it late")
	}
}

// TestAutoLabelsStatesAhead checks that Auto learns from states placed
// ahead by a room's input delay: a state newer than every frame drawn
// waits (tuner.pend) until a frame passes its time, then scores the
// shadows. With the delay equal to the latency (100 ms each) nearly
// every state arrives ahead of the frames; unscored, Auto kept its
// start settings and drew the runner about as far off as snap-on-arrival.
func TestAutoLabelsStatesAhead(t *testing.T) {
	p := newPredictor(t, Config{Auto: true})
	errs, snaps := replayEightWayAhead(p, 21, 100*time.Millisecond, 4*time.Millisecond, 100*time.Millisecond)
	require.NotEmpty(t, errs)
	t.Logf("Auto: mean %.3f m, p99 %.3f m, max %.3f m, %d labels; snap: mean %.3f m, max %.3f m",
		mean(errs), pct(errs, 0.99), pct(errs, 1), p.auto.labels, mean(snaps), pct(snaps, 1))
	assert.Greater(t, p.auto.labels, p.auto.par.MinLabels, "the states placed ahead were scored")
	assert.LessOrEqual(t, mean(errs), mean(snaps)/4, "Auto's mean against snap's")
}

// TestAutoRefineLag checks where refineLag puts the drawn lag: at the
// lowest point of the parabola through the best capped shadow's score sum
// and its neighbours' (same time constant, cap and model), no further than
// half-way to a neighbour; at the shadow's own lag for an uncapped shadow,
// at either end of the grid and where the sums are not convex.
func TestAutoRefineLag(t *testing.T) {
	const l = 5               // 110 ms, between 75 and 160 ms
	capped := l*numPerLag + 2 // tau 15 ms, capped
	require.True(t, shadowCapped(capped))
	require.Equal(t, 1, shadowTau(capped))
	lags := defaultAutoParams.Lags
	require.Equal(t, 110*time.Millisecond, lags[shadowLag(capped)])
	// set gives the shadows at lags l-1, l, l+1 (from b) the score sums
	// y(lag) (scores alone: q and the tail weight 0).
	set := func(b int, y func(x float64) float64) *tuner {
		a := newTuner(&defaultAutoParams)
		a.best = b
		for _, i := range []int{b - numPerLag, b, b + numPerLag} {
			a.score[i] = y(lags[shadowLag(i)].Seconds())
		}
		return a
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	bowl := func(at float64) func(float64) float64 {
		return func(x float64) float64 { return 1 + 100*(x-at)*(x-at) }
	}
	assert.InDelta(t, 95, ms(set(capped, bowl(0.095)).refineLag(0)), 0.01, "between 75 and 110 ms")
	assert.InDelta(t, 120, ms(set(capped, bowl(0.120)).refineLag(0)), 0.01, "between 110 and 160 ms")
	assert.InDelta(t, 92.5, ms(set(capped, bowl(0.080)).refineLag(0)), 0.01, "at most half-way to 75 ms")
	assert.InDelta(t, 135, ms(set(capped, bowl(0.150)).refineLag(0)), 0.01, "at most half-way to 160 ms")
	hill := func(x float64) float64 { return 2 - 100*(x-0.110)*(x-0.110) }
	assert.Equal(t, 110*time.Millisecond, set(capped, hill).refineLag(0), "not convex")
	require.False(t, shadowCapped(capped+1))
	assert.Equal(t, 110*time.Millisecond, set(capped+1, bowl(0.095)).refineLag(0), "uncapped")
	a := set(capped, bowl(0.095))
	a.par.Refine = false
	assert.Equal(t, 110*time.Millisecond, a.refineLag(0), "not refining")
	a = set(capped, bowl(0.095))
	a.q[capped+numPerLag][1] = 0.2 // the tail counts as label ranks it
	assert.Less(t, ms(a.refineLag(1.5)), 95.0, "the tail weighed in")

	// The second model's shadow at lag l has parted from the first's, its
	// neighbours have not: they keep no scores of their own, and theirs
	// are read through root (the first model's at those lags).
	second := capped + numPerModel
	require.Equal(t, velocityModel, shadowModel(second))
	a = set(capped, bowl(0.095))
	a.best = second
	a.split.set(second - second%numPerLag)
	a.score[second] = a.score[capped]
	require.Equal(t, capped-numPerLag, a.root(second-numPerLag))
	assert.InDelta(t, 95, ms(a.refineLag(0)), 0.01, "neighbours read through root")
}

// TestAutoRefineLagReplay replays, under the sum rule (ErraticRate 0:
// the erratic rule draws a candidate's own lag), the eight-way runner at 120 ms one way
// (0-16 ms send wait, states stamped 10 ms early: a timing error the
// receiver cannot see), where the best bounded drawing lies between the
// candidate lags: drawn at the refined lag, Auto's 95th percentile of the
// error, over four runs, is lower than at the best shadow's own lag.
func TestAutoRefineLagReplay(t *testing.T) {
	var p95 [2]float64
	for k, refine := range []bool{false, true} {
		for seed := uint64(1); seed <= 4; seed++ {
			p := newPredictor(t, Config{Auto: true})
			p.auto.par.Refine = refine
			p.auto.par.ErraticRate = 0 // the sum rule refines
			errs, _ := replayEightWayOff(p, seed, 120*time.Millisecond, 16*time.Millisecond, -10*time.Millisecond)
			require.NotEmpty(t, errs)
			p95[k] += pct(errs, 0.95) / 4
		}
	}
	t.Logf("p95 at the best shadow's lag %.3f m, refined %.3f m", p95[0], p95[1])
	assert.Less(t, p95[1], p95[0]-0.01)
}

// TestAutoFastFade checks AutoParams.FastFade: a mover faster than popSpeed
// fades its corrections over a share of the data age in place of 1 ms
// (a runner, and a 2D one, keep 1 ms), and on a weaving car at 100 ms one
// way with jitter and short stalls that pops less by 0.2 m than the 1 ms
// fade, for about the same error (the test logs both; at 150 ms one way
// this car pops about as often either way).
func TestAutoFastFade(t *testing.T) {
	const oneWay = 100 * time.Millisecond
	car := newWeavingCar(3, 60, 24)
	// 0-10 ms of jitter and a 30-90 ms stall about once a second (seeded,
	// the same for both): the corrections after a stall are large.
	jitter := func() func() time.Duration {
		r := rand.New(rand.NewPCG(5, 5))
		return func() time.Duration {
			d := time.Duration(r.Float64() * float64(10*time.Millisecond))
			if r.IntN(60) == 0 {
				d += 30*time.Millisecond + time.Duration(r.Float64()*float64(60*time.Millisecond))
			}
			return d
		}
	}
	auto := newPredictor(t, Config{Auto: true})
	rms, pops := driveJittered(auto, car, oneWay, 60, 0.2, jitter())
	age := auto.PoseAt(60 * time.Second).Age
	assert.InDelta(t, defaultAutoParams.FastFade*age.Seconds()*1000, auto.auto.taus[0].Seconds()*1000, 0.5,
		"the first time constant, ms, at a data age of %v", age)
	one := newPredictor(t, Config{Auto: true})
	one.auto.par.FastFade = 0
	oneRMS, onePops := driveJittered(one, car, oneWay, 60, 0.2, jitter())
	assert.Equal(t, time.Millisecond, one.auto.taus[0])
	t.Logf("fast fade: rms %.3f m, %d pops > 0.2 m; 1 ms: rms %.3f m, %d pops", rms, pops, oneRMS, onePops)
	assert.Less(t, pops, onePops, "fewer pops")
	assert.Less(t, rms, 1.05*oneRMS, "for about the same error")

	for _, dim2D := range []bool{false, true} {
		runner := newPredictor(t, Config{Auto: true, Dim2D: dim2D})
		drive(runner, newZigzag(7, 10, 6*unit(dim2D)), oneWay, 10)
		assert.Equal(t, time.Millisecond, runner.auto.taus[0], "a runner keeps 1 ms (2D %v)", dim2D)
	}
}

// TestAutoSkipsTheStartOnce: an entity's first SkipLabels labels are not
// scored, and a Reset (a shared object's handover: the same entity) does
// not skip again.
func TestAutoSkipsTheStartOnce(t *testing.T) {
	p, err := New(Config{Auto: true})
	require.NoError(t, err)
	skip := p.auto.par.SkipLabels
	require.Positive(t, skip)
	step := time.Second / 60
	feed := func(from, n int) {
		for i := from; i < from+n; i++ {
			now := time.Duration(i) * step
			p.Add(PathServer, Sample{Time: now - 50*time.Millisecond, Seq: wire.Seq(i), Pos: geom.Vec3{X: float64(i) * 0.1}, Vel: geom.Vec3{X: 6}, Rot: geom.Identity}, now)
			p.PoseAt(now)
		}
	}
	feed(10, 20)
	assert.Equal(t, skip, p.auto.skipped, "the first labels skipped")
	labels := p.auto.labels
	assert.Positive(t, labels, "then scored")
	p.Reset()
	feed(40, 20)
	assert.Equal(t, skip, p.auto.skipped, "no skipping after a reset")
	assert.Greater(t, p.auto.labels, labels, "every label after the reset scored")
}
