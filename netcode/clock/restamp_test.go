package clock

import (
	"testing"
	"time"

	"github.com/nearzero/nearzero/netcode/simnet"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newRestamper(t testing.TB, cfg *RestampConfig) *Restamper {
	t.Helper()
	r, err := NewRestamper(cfg)
	require.NoError(t, err)
	return r
}

// restampWorld is a sender 40 ms away whose clock reads 3 h ahead of the
// receiver's, on a link with the given jitter.
func restampWorld(jitter simnet.Jitter) stampWorld {
	return stampWorld{
		sender:   simClock{offset: 3 * time.Hour},
		receiver: simClock{offset: 20 * time.Minute},
		link:     simLink{base: 40 * time.Millisecond, jitter: jitter},
	}
}

func TestRestampAccuracy(t *testing.T) {
	warm := 5 * time.Second
	for _, tc := range []struct {
		name       string
		world      func(w *stampWorld)
		dur        time.Duration
		p95, worst time.Duration
	}{
		{"constant latency, exact round trip", func(w *stampWorld) { w.exactRTT = true },
			3 * time.Minute, 20 * time.Microsecond, 20 * time.Microsecond},
		{"normal jitter", func(w *stampWorld) { w.link.jitter = simnet.NormalJitter{Sigma: 5 * time.Millisecond} },
			3 * time.Minute, 2 * time.Millisecond, 4 * time.Millisecond},
		{"long-tailed jitter", func(w *stampWorld) {
			w.link.jitter = simnet.ParetoJitter{Scale: 3 * time.Millisecond, Alpha: 1.5, Max: time.Second}
		}, 3 * time.Minute, 2 * time.Millisecond, 4 * time.Millisecond},
		{"busy sender", func(w *stampWorld) {
			w.link.jitter = simnet.NormalJitter{Sigma: 2 * time.Millisecond}
			w.wait = simnet.ParetoJitter{Scale: 2 * time.Millisecond, Alpha: 1.5, Max: 100 * time.Millisecond}
		}, 3 * time.Minute, 2 * time.Millisecond, 4 * time.Millisecond},
		{"50 ppm drift for 10 minutes", func(w *stampWorld) {
			w.link.jitter = simnet.NormalJitter{Sigma: 5 * time.Millisecond}
			w.sender.ppm = 50
		}, 10 * time.Minute, 3 * time.Millisecond, 5 * time.Millisecond},
		{"-50 ppm drift for 10 minutes", func(w *stampWorld) {
			w.link.jitter = simnet.NormalJitter{Sigma: 5 * time.Millisecond}
			w.receiver.ppm = 50
		}, 10 * time.Minute, 3 * time.Millisecond, 5 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// About half an hour of simulated states per case, and at least three runs.
			seeds := max(int(30*time.Minute/tc.dur), 3)
			var all []stampMeas
			for i := range seeds {
				seed := uint64(5000 + i)
				w := restampWorld(nil)
				tc.world(&w)
				meas := runRestamp(newRestamper(t, nil), w, seed, tc.dur)
				require.Zero(t, checkSlide(t, meas, DefaultRestampSlewRate), "seed %d: jumps after the first state", seed)
				all = append(all, meas...)
			}
			p95, worst := stampStats(all, warm)
			t.Logf("%s: |restamp error| after %v over %d seeds: p95 %v, worst %v", tc.name, warm, seeds, p95, worst)
			assert.LessOrEqual(t, p95, tc.p95)
			assert.LessOrEqual(t, worst, tc.worst)
		})
	}
}

// checkSlide asserts that the applied offset moved at most rate per second
// between states, except at the states that jumped, and returns how many did.
func checkSlide(t *testing.T, meas []stampMeas, rate float64) (jumps int) {
	t.Helper()
	for i := 1; i < len(meas); i++ {
		if meas[i].jumped {
			jumps++
			continue
		}
		dt := meas[i].arrival - meas[i-1].arrival
		d := absDur(meas[i].applied - meas[i-1].applied)
		if !assert.LessOrEqual(t, float64(d), rate*float64(dt)+1, "slid %v in %v at %v", d, dt, meas[i].at) {
			return jumps
		}
	}
	return jumps
}

func TestRestampStallIsNotAStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold time.Duration
	}{
		{"300 ms hold", 300 * time.Millisecond},
		{"900 ms hold", 900 * time.Millisecond},
		{"4 s hold", 4 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := restampWorld(simnet.NormalJitter{Sigma: 3 * time.Millisecond})
			w.link.loss = 0.1
			w.link.stalls = []stall{{10 * time.Second, tc.hold}, {20 * time.Second, tc.hold}, {25 * time.Second, tc.hold}}
			meas := runRestamp(newRestamper(t, nil), w, 6000, 40*time.Second)
			assert.Zero(t, checkSlide(t, meas, DefaultRestampSlewRate), "a stall is no reason to jump")
			p95, worst := stampStats(meas, 5*time.Second)
			t.Logf("%s: p95 %v, worst %v", tc.name, p95, worst)
			assert.LessOrEqual(t, p95, 2*time.Millisecond)
		})
	}
}

// TestRestampQueueIsNotAStep: a bottleneck that holds gaps high for longer
// than StepAfter while its queue fills and drains (congestion, a slow
// catch-up after a retransmission stall) is no clock step: taking it for
// one jumped the mapping forward, then back, and drew states going back.
func TestRestampQueueIsNotAStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    queue
	}{
		{"fills 1.5 s, drains 1.5 s, 600 ms deep", queue{10 * time.Second, 1500 * time.Millisecond, 1500 * time.Millisecond, 600 * time.Millisecond}},
		{"fills 300 ms, drains 3 s, 900 ms deep", queue{10 * time.Second, 300 * time.Millisecond, 3 * time.Second, 900 * time.Millisecond}},
		{"fills 3 s, drains 800 ms, 500 ms deep", queue{10 * time.Second, 3 * time.Second, 800 * time.Millisecond, 500 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := restampWorld(simnet.NormalJitter{Sigma: 2 * time.Millisecond})
			w.link.queues = []queue{tc.q, {25 * time.Second, tc.q.grow, tc.q.drain, tc.q.peak}}
			meas := runRestamp(newRestamper(t, nil), w, 6100, 40*time.Second)
			assert.Zero(t, checkSlide(t, meas, DefaultRestampSlewRate), "a queue is no reason to jump")
			p95, worst := stampStats(meas, 5*time.Second)
			t.Logf("%s: p95 %v, worst %v", tc.name, p95, worst)
			assert.LessOrEqual(t, p95, 2*time.Millisecond)
		})
	}
}

func TestRestampSenderClockStep(t *testing.T) {
	const stepAt = 30 * time.Second
	for _, tc := range []struct {
		name  string
		delta time.Duration
		taken time.Duration // how long after the step the jump comes, at most
	}{
		{"forward 10 s", 10 * time.Second, 100 * time.Millisecond},
		{"forward 200 ms", 200 * time.Millisecond, 100 * time.Millisecond},
		{"back 1 h (restart)", -time.Hour, DefaultStepAfter + 100*time.Millisecond},
		{"back 200 ms", -200 * time.Millisecond, DefaultStepAfter + 100*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := restampWorld(simnet.NormalJitter{Sigma: 2 * time.Millisecond})
			w.sender.steps = []clockStep{{stepAt, tc.delta}}
			meas := runRestamp(newRestamper(t, nil), w, 7000, time.Minute)
			require.Equal(t, 1, checkSlide(t, meas, DefaultRestampSlewRate), "one jump")
			var jumpAt time.Duration
			for _, m := range meas[1:] {
				if m.jumped {
					jumpAt = m.at
				}
			}
			assert.Greater(t, jumpAt, stepAt)
			assert.LessOrEqual(t, jumpAt, stepAt+tc.taken)
			_, worst := stampStats(meas, jumpAt)
			assert.LessOrEqual(t, worst, 10*time.Millisecond, "from the jump on")
			p95, _ := stampStats(meas, jumpAt+3*time.Second)
			assert.LessOrEqual(t, p95, 2*time.Millisecond, "once settled")
		})
	}
}

func TestRestampStampWrap(t *testing.T) {
	period := time.Duration(1<<32) * wire.StampUnit
	plain := restampWorld(simnet.NormalJitter{Sigma: 3 * time.Millisecond})
	wrapping := plain
	// The stamps wrap 30 s into the run; the offsets differ by whole ticks.
	wrapping.sender.offset = period - 30*time.Second
	a := runRestamp(newRestamper(t, nil), plain, 8000, time.Minute)
	b := runRestamp(newRestamper(t, nil), wrapping, 8000, time.Minute)
	require.Equal(t, len(a), len(b))
	for i := range a {
		require.Equal(t, a[i].err, b[i].err, "state %d at %v", i, a[i].at)
	}
	assert.Zero(t, checkSlide(t, b, DefaultRestampSlewRate))
}

func TestRestampWindows(t *testing.T) {
	type rttAt struct{ rtt, at time.Duration }
	for _, tc := range []struct {
		name string
		gaps []time.Duration // one state a second, with these stamp-to-arrival gaps
		rtts []rttAt         // round trips and when they were measured, in ms from the first state
		want time.Duration   // target after the last state
	}{
		{"first state", []time.Duration{70 * time.Millisecond}, nil, 70 * time.Millisecond},
		{"fastest gap", []time.Duration{70, 50, 60, 80}, nil, 50},
		{"fastest gap leaves the window", []time.Duration{40, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 90, 70}, nil, 70},
		{"minus half the fastest round trip", []time.Duration{70, 80}, []rttAt{{100, -10e3}, {60, -10e3}, {80, -10e3}}, 70 - 30},
		{"round trips expire", []time.Duration{70, 80}, []rttAt{{20, -70e3}, {60, -10e3}, {100, 0}}, 70 - 30},
		{"the newest round trip stays", []time.Duration{70, 80}, []rttAt{{20, -200e3}, {60, -90e3}}, 70 - 30},
		{"non-positive round trips are ignored", []time.Duration{70}, []rttAt{{0, 0}, {-10, 0}}, 70},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRestamper(t, nil)
			const ms = time.Millisecond
			start := 2 * time.Minute // receiver time of the first state
			for _, x := range tc.rtts {
				r.ObserveRTT(x.rtt*ms, start+x.at*ms)
			}
			var arrival time.Duration
			for i, g := range tc.gaps {
				if g < ms {
					g *= ms
				}
				arrival = start + time.Duration(i)*time.Second
				r.Restamp(wire.StampOf(time.Hour+arrival-g), arrival)
			}
			want := tc.want
			if want < ms {
				want *= ms
			}
			assert.Equal(t, want-time.Hour, r.Target())
		})
	}
}

func TestRestampFirstRoundTripJumps(t *testing.T) {
	// States arrive before any round trip is known (a client's first
	// states reach the server before its first ping reports one): the
	// estimate is a whole one-way latency off. The first round trip must
	// correct it at once, not slide it at SlewRate for seconds.
	const latency = 40 * time.Millisecond
	r := newRestamper(t, nil)
	state := func(at time.Duration) time.Duration {
		return r.Restamp(wire.StampOf(time.Hour+at-latency), at)
	}
	at := time.Minute
	for range 60 {
		state(at)
		at += time.Second / 60
	}
	const unit = float64(wire.StampUnit)
	require.InDelta(t, 0, float64(state(at)-at), unit, "no round trip yet: sampled = arrival")
	r.ObserveRTT(2*latency, at)
	at += time.Second / 60
	assert.InDelta(t, float64(at-latency), float64(state(at)), unit, "the first round trip is taken at once")
	assert.Equal(t, r.Target(), r.Offset(at))

	// Later round trips slide as usual.
	r.ObserveRTT(2*latency-20*time.Millisecond, at)
	at += time.Second / 60
	before := r.Offset(at - time.Second/60)
	state(at)
	assert.InDelta(t, float64(before), float64(r.Offset(at)), DefaultRestampSlewRate*float64(time.Second/60)+1,
		"a faster round trip later slides")
	assert.NotEqual(t, r.Target(), r.Offset(at))
}

func TestRestampReset(t *testing.T) {
	r := newRestamper(t, nil)
	r.ObserveRTT(80*time.Millisecond, 0)
	for i := range 100 {
		at := time.Duration(i) * 16 * time.Millisecond
		r.Restamp(wire.StampOf(5*time.Hour+at-40*time.Millisecond), at)
	}
	require.Equal(t, -5*time.Hour, r.Offset(2*time.Second))
	r.Reset()
	assert.Equal(t, time.Duration(0), r.Offset(2*time.Second))
	assert.Equal(t, time.Duration(0), r.Target())
	// A new sender is taken at once, without the old round trip.
	got := r.Restamp(wire.StampOf(time.Minute), 3*time.Second+25*time.Millisecond)
	assert.Equal(t, 3*time.Second+25*time.Millisecond, got)
	assert.Equal(t, 3*time.Second+25*time.Millisecond-time.Minute, r.Offset(4*time.Second))
}

func TestRestampConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  *RestampConfig
		err  string // empty: valid
	}{
		{"nil is the defaults", nil, ""},
		{"zero is the defaults", &RestampConfig{}, ""},
		{"step never seen", &RestampConfig{GapWindow: time.Second}, "StepAfter 1s is not shorter than GapWindow 1s"},
		{"negative gap window", &RestampConfig{GapWindow: -time.Second}, "GapWindow -1s is negative"},
		{"negative RTT window", &RestampConfig{RTTWindow: -time.Second}, "RTTWindow -1s is negative"},
		{"slew rate above one", &RestampConfig{SlewRate: 2}, "SlewRate 2 is outside (0, 1)"},
		{"negative jump", &RestampConfig{JumpAbove: -time.Millisecond}, "JumpAbove -1ms is negative"},
		{"negative step", &RestampConfig{StepAfter: -time.Millisecond}, "StepAfter -1ms is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRestamper(tc.cfg)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, DefaultGapWindow, r.cfg.GapWindow)
				assert.Equal(t, DefaultRestampSlewRate, r.cfg.SlewRate)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.ErrorContains(t, err, tc.err)
			assert.Nil(t, r)
		})
	}
}

// TestRestampPeerGap: the sender's lowest gap of our stamps, added to ours
// of its stamps, is a round trip of the two fastest one-way trips; when it
// is below the fastest measured round trip it takes its place, so the
// offset is the midpoint of the two trips whatever the pings measured.
func TestRestampPeerGap(t *testing.T) {
	const skew = 7 * time.Second // receiver clock minus sender clock
	const ab, ba = 30 * time.Millisecond, 30 * time.Millisecond
	r := newRestamper(t, nil)
	r.ObserveRTT(100*time.Millisecond, time.Second) // a ping held up 40 ms
	sent := 10 * time.Second
	got := r.Restamp(wire.StampOf(sent), sent+skew+ab)
	assert.InDelta(t, (sent + skew - 20*time.Millisecond).Seconds(), got.Seconds(), 1e-5,
		"half the held-up round trip: 20 ms early")
	gap, ok := r.LowGap()
	require.True(t, ok)
	assert.Equal(t, skew+ab, gap.Round(10*time.Microsecond))

	// The sender saw our states arrive ba after we sampled them: on its
	// clock, ba minus the skew after.
	r.ObservePeerGap(ba-skew, 11*time.Second)
	sent += time.Second
	got = r.Restamp(wire.StampOf(sent), sent+skew+ab)
	assert.InDelta(t, skew.Seconds(), r.Target().Seconds(), 1e-5, "the estimate: the midpoint of the fastest trips, exact")
	sent += time.Second
	got = r.Restamp(wire.StampOf(sent), sent+skew+ab)
	assert.Greater(t, got, sent+skew-20*time.Millisecond, "the applied offset slides toward it")
	for range 10 { // 10 s: the 20 ms slide at 4 ms/s is over
		sent += time.Second
		got = r.Restamp(wire.StampOf(sent), sent+skew+ab)
	}
	assert.InDelta(t, (sent + skew).Seconds(), got.Seconds(), 1e-5, "mapped exactly")

	// Settling (a new direct link's first seconds), the better estimate
	// is taken at once.
	r2 := newRestamper(t, nil)
	r2.SettleUntil(20 * time.Second)
	r2.ObserveRTT(100*time.Millisecond, time.Second)
	sent = 10 * time.Second
	r2.Restamp(wire.StampOf(sent), sent+skew+ab)
	r2.ObservePeerGap(ba-skew, 11*time.Second)
	sent += time.Second
	got = r2.Restamp(wire.StampOf(sent), sent+skew+ab)
	assert.InDelta(t, (sent + skew).Seconds(), got.Seconds(), 1e-5, "settling: exact at once")

	r.Reset()
	_, ok = r.LowGap()
	assert.False(t, ok, "Reset forgets the gaps")
	got = r.Restamp(wire.StampOf(sent), sent+skew+ab)
	assert.False(t, r.HasRoundTrip(), "Reset forgets the peer's gap too")
	_ = got
}

// TestRestampForgetRoundTrips: a round trip measured beneath the path
// (ICE's, under a lag simulator) is forgotten when one measured the
// states' way comes; the mapping takes the new one at once, though it is
// the larger.
func TestRestampForgetRoundTrips(t *testing.T) {
	const oneWay = 50 * time.Millisecond
	r := newRestamper(t, nil)
	r.ObserveRTT(time.Millisecond, 0) // beneath the simulator
	sent := time.Second
	got := r.Restamp(wire.StampOf(sent), sent+oneWay)
	assert.InDelta(t, (sent + oneWay - 500*time.Microsecond).Seconds(), got.Seconds(), 1e-5, "the latency taken for an offset")
	r.ForgetRoundTrips()
	assert.False(t, r.HasRoundTrip())
	r.ObserveRTT(2*oneWay, 2*time.Second)
	sent = 3 * time.Second
	got = r.Restamp(wire.StampOf(sent), sent+oneWay)
	assert.InDelta(t, sent.Seconds(), got.Seconds(), 1e-5, "placed at its sample time, at once")
	assert.True(t, r.HasRoundTrip())
}

// TestRestampSettleFromFirstState: with Settle, a better estimate within
// Settle of the first state (and of the first after Reset) is taken at
// once; later ones slide at SlewRate, as without it.
func TestRestampSettleFromFirstState(t *testing.T) {
	const oneWay, skew = 30 * time.Millisecond, 5 * time.Second
	for _, settle := range []time.Duration{0, 2 * time.Second} {
		r := newRestamper(t, &RestampConfig{Settle: settle})
		r.ObserveRTT(2*oneWay+10*time.Millisecond, 0) // a first round trip 10 ms slow
		for _, start := range []time.Duration{10 * time.Second, 40 * time.Second} {
			sent := start
			r.Restamp(wire.StampOf(sent), sent+skew+oneWay)
			// A faster round trip a second later: the estimate moves 5 ms.
			r.ObserveRTT(2*oneWay, start+time.Second)
			sent += time.Second
			got := r.Restamp(wire.StampOf(sent), sent+skew+oneWay)
			if settle > 0 {
				assert.InDelta(t, (sent + skew).Seconds(), got.Seconds(), 1e-5, "settle %v, start %v: exact at once", settle, start)
			} else {
				assert.InDelta(t, (sent + skew - 5*time.Millisecond).Seconds(), got.Seconds(), 1e-5, "settle %v, start %v: the slide starts", settle, start)
			}
			// Past Settle, a 5 ms better gap slides.
			sent += 2 * time.Second
			got = r.Restamp(wire.StampOf(sent), sent+skew+oneWay-5*time.Millisecond)
			assert.Greater(t, got, sent+skew-5*time.Millisecond+time.Millisecond, "settle %v, start %v: past it, slid", settle, start)
			r.Reset()
			r.ObserveRTT(2*oneWay+10*time.Millisecond, start+30*time.Second)
		}
	}
	var bad RestampConfig
	bad.Settle = -time.Second
	assert.Error(t, bad.Validate())
	_, err := NewRestamper(&bad)
	assert.ErrorIs(t, err, ErrInvalidConfig)
}
