package clock

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nearzero/nearzero/netcode/simnet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newSync(t testing.TB, cfg *SyncConfig) *Sync {
	t.Helper()
	s, err := NewSync(cfg)
	require.NoError(t, err)
	return s
}

// randomSyncWorld draws clocks and a symmetric link with one-way base
// latency in [20, 100) ms.
func randomSyncWorld(seed uint64, jitter simnet.Jitter, ppm float64) syncWorld {
	r := rand.New(rand.NewPCG(seed, 1))
	base := 20*time.Millisecond + time.Duration(r.Int64N(int64(80*time.Millisecond)))
	return syncWorld{
		client: simClock{offset: time.Duration(r.Int64N(int64(time.Hour))), ppm: ppm},
		server: simClock{offset: time.Duration(r.Int64N(int64(time.Hour)))},
		up:     simLink{base: base, jitter: jitter},
		down:   simLink{base: base, jitter: jitter},
	}
}

func TestSyncAccuracy(t *testing.T) {
	const seeds = 40
	warm := 6 * time.Second // 16 pings at 250 ms plus the slowest round trip
	for _, tc := range []struct {
		name       string
		jitter     simnet.Jitter
		ppm        float64
		dur        time.Duration
		p95, worst time.Duration
	}{
		{"normal jitter", simnet.NormalJitter{Sigma: 5 * time.Millisecond}, 0, 3 * time.Minute, time.Millisecond, 2 * time.Millisecond},
		{"long-tailed jitter", simnet.ParetoJitter{Scale: 3 * time.Millisecond, Alpha: 1.5, Max: time.Second}, 0, 3 * time.Minute, 1500 * time.Microsecond, 3 * time.Millisecond},
		{"50 ppm drift", simnet.NormalJitter{Sigma: 5 * time.Millisecond}, 50, 10 * time.Minute, 2 * time.Millisecond, 4 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var all []syncMeas
			for i := range seeds {
				seed := uint64(1000 + i)
				s := newSync(t, nil)
				run := runSync(s, randomSyncWorld(seed, tc.jitter, tc.ppm), seed, tc.dur, warm, 100*time.Millisecond)
				assert.Empty(t, run.jumps, "seed %d: the applied offset jumped after the first sync", seed)
				all = append(all, run.meas...)
				p95, worst := errStats(run.meas, warm)
				if !assert.LessOrEqual(t, worst, tc.worst, "seed %d", seed) {
					t.Logf("seed %d: p95 %v, worst %v", seed, p95, worst)
				}
			}
			p95, worst := errStats(all, warm)
			t.Logf("%s: |offset error| after warm-up over %d seeds: p95 %v, worst %v", tc.name, seeds, p95, worst)
			assert.LessOrEqual(t, p95, tc.p95)
		})
	}
}

func TestSyncLossAndStalls(t *testing.T) {
	const seeds = 20
	warm := 8 * time.Second
	var all []syncMeas
	for i := range seeds {
		seed := uint64(2000 + i)
		w := randomSyncWorld(seed, simnet.NormalJitter{Sigma: 5 * time.Millisecond}, 0)
		for _, l := range []*simLink{&w.up, &w.down} {
			l.loss = 0.1
		}
		// Holds of 300 ms in each direction, in the warm-up and later.
		w.up.stalls = []stall{{2 * time.Second, 300 * time.Millisecond}, {40 * time.Second, 300 * time.Millisecond}}
		w.down.stalls = []stall{{3 * time.Second, 300 * time.Millisecond}, {61 * time.Second, 300 * time.Millisecond}}
		s := newSync(t, nil)
		run := runSync(s, w, seed, 2*time.Minute, warm, 100*time.Millisecond)
		require.Greater(t, run.samples, 16, "seed %d: too few samples to judge", seed)
		assert.Empty(t, run.jumps, "seed %d: loss and stalls must be slewed over, never jumped", seed)
		all = append(all, run.meas...)
	}
	p95, worst := errStats(all, warm)
	t.Logf("10%% loss and 300 ms stalls: |offset error| after warm-up: p95 %v, worst %v", p95, worst)
	assert.LessOrEqual(t, p95, time.Millisecond)
	assert.LessOrEqual(t, worst, 3*time.Millisecond)
}

// TestSyncAsymmetry checks that an asymmetric link shifts the estimate by
// exactly what no ping protocol can observe: a world with links 20 ms up and
// 60 ms down and a world with 40 ms both ways whose server clock reads 20 ms
// less give identical pongs, so the estimates are identical, and the error
// in the first world is half the asymmetry.
func TestSyncAsymmetry(t *testing.T) {
	jitter := simnet.NormalJitter{Sigma: 5 * time.Millisecond}
	server := simClock{offset: 7 * time.Second}
	asym := syncWorld{
		client: simClock{offset: 3 * time.Second},
		server: server,
		up:     simLink{base: 20 * time.Millisecond, jitter: jitter},
		down:   simLink{base: 60 * time.Millisecond, jitter: jitter},
	}
	sym := asym
	sym.server.offset -= 20 * time.Millisecond
	sym.up.base, sym.down.base = 40*time.Millisecond, 40*time.Millisecond

	const seed = 3000
	warm := 6 * time.Second
	a := runSync(newSync(t, nil), asym, seed, time.Minute, warm, 100*time.Millisecond)
	b := runSync(newSync(t, nil), sym, seed, time.Minute, warm, 100*time.Millisecond)
	require.Equal(t, len(a.meas), len(b.meas))
	half := (asym.down.base - asym.up.base) / 2
	for i := range a.meas {
		// The same estimate, against truths that differ by half the asymmetry.
		require.Equal(t, -half, a.meas[i].err-b.meas[i].err, "at %v", a.meas[i].at)
	}
	_, worstSym := errStats(b.meas, warm)
	_, worstAsym := errStats(a.meas, warm)
	t.Logf("worst error: symmetric %v, asymmetric %v (half the asymmetry is %v)", worstSym, worstAsym, half)
	assert.LessOrEqual(t, worstSym, 2*time.Millisecond)
	assert.InDelta(t, float64(half), float64(worstAsym), float64(2*time.Millisecond))
}

func TestSyncSynced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after int
	}{
		{"default", 0},
		{"one sample", 1},
		{"ten samples", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSync(t, &SyncConfig{SyncedAfter: tc.after})
			need := tc.after
			if need == 0 {
				need = DefaultSyncedAfter
			}
			now := time.Second
			for i := range need {
				assert.False(t, s.Synced(), "after %d samples", i)
				s.Sent(now)
				s.Observe(now, now+time.Hour, now+50*time.Millisecond)
				now += 250 * time.Millisecond
			}
			assert.True(t, s.Synced(), "after %d samples", need)
			s.Reset()
			assert.False(t, s.Synced(), "after Reset")
		})
	}
}

// pingPong exchanges one ping with a server whose clock reads local+offset,
// over a link of one-way delay oneWay each way, at local time now.
func pingPong(s *Sync, now, offset, oneWay time.Duration) {
	s.Sent(now)
	s.Observe(now, now+oneWay+offset, now+2*oneWay)
}

func TestSyncStep(t *testing.T) {
	for _, tc := range []struct {
		name   string
		step   time.Duration
		oneWay time.Duration
		jump   bool
	}{
		{"200 ms forward is jumped", 200 * time.Millisecond, 30 * time.Millisecond, true},
		{"200 ms back is jumped", -200 * time.Millisecond, 30 * time.Millisecond, true},
		// A step beyond the round trip contradicts the old samples, which are dropped.
		{"20 ms beyond the round trip is slewed", 20 * time.Millisecond, 5 * time.Millisecond, false},
		// A step within the round trip is consistent with the old samples: the
		// estimate moves as they age out of the window.
		{"20 ms within the round trip is slewed", 20 * time.Millisecond, 30 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSync(t, nil)
			const offset = time.Hour
			now := time.Duration(0)
			for range 40 { // past the warm-up
				pingPong(s, now, offset, tc.oneWay)
				now = s.NextPing()
			}
			require.Equal(t, offset, s.Offset(now))

			rtt := 2 * tc.oneWay
			before := s.Offset(now + rtt)
			pingPong(s, now, offset+tc.step, tc.oneWay)
			after := s.Offset(now + rtt)
			if tc.jump {
				assert.Equal(t, offset+tc.step, after, "the step is taken at once")
				assert.Equal(t, now+DefaultWarmupInterval, s.NextPing(), "the warm-up starts again")
				return
			}
			assert.Equal(t, before, after, "no jump")
			// Keep pinging until the old samples are gone and the slew is done;
			// the applied offset never jumps.
			for range DefaultSyncWindow + 5 {
				now = s.NextPing()
				before := s.Offset(now + rtt)
				pingPong(s, now, offset+tc.step, tc.oneWay)
				require.Equal(t, before, s.Offset(now+rtt), "no jump at %v", now)
			}
			assert.Equal(t, offset+tc.step, s.Offset(now+rtt))
		})
	}
}

// TestSyncStepInSimulation steps the server clock by 200 ms in the middle
// of a jittery run.
func TestSyncStepInSimulation(t *testing.T) {
	const stepAt = 60 * time.Second
	w := randomSyncWorld(4000, simnet.NormalJitter{Sigma: 5 * time.Millisecond}, 0)
	w.server.steps = []clockStep{{stepAt, 200 * time.Millisecond}}
	run := runSync(newSync(t, nil), w, 4000, 2*time.Minute, 6*time.Second, 100*time.Millisecond)
	require.Len(t, run.jumps, 1, "one jump, at the first pong after the step")
	j := run.jumps[0]
	assert.Greater(t, j.at, stepAt)
	assert.Less(t, j.at, stepAt+DefaultSyncInterval+time.Second)
	assert.InDelta(t, float64(200*time.Millisecond), float64(j.size), float64(10*time.Millisecond))
	p95, worst := errStats(run.meas, j.at+10*time.Second)
	t.Logf("after the step: p95 %v, worst %v", p95, worst)
	assert.LessOrEqual(t, worst, 2*time.Millisecond)
}

func TestSyncServerTimeMonotonicWhileSlewing(t *testing.T) {
	for _, tc := range []struct {
		name string
		step time.Duration
	}{
		{"slewing up", 40 * time.Millisecond},
		{"slewing down", -40 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSync(t, nil)
			// The step exceeds the round trip, so the target moves by all of it.
			const offset, oneWay = -time.Minute, 10 * time.Millisecond
			now := time.Duration(0)
			for range 20 {
				pingPong(s, now, offset, oneWay)
				now = s.NextPing()
			}
			pingPong(s, now, offset+tc.step, oneWay)
			require.NotEqual(t, s.Target(), s.Offset(now+2*oneWay), "slewing")

			prev := s.ServerTime(now)
			end := now + 10*time.Second
			for l := now + time.Millisecond; l < end; l += 997 * time.Microsecond {
				st := s.ServerTime(l)
				require.GreaterOrEqual(t, st, prev, "server time ran backwards at local %v", l)
				// The rate stays within 1 ± SlewRate.
				dl := float64(997 * time.Microsecond)
				assert.InDelta(t, dl, float64(st-prev), dl*DefaultSyncSlewRate+2)
				assert.InDelta(t, float64(l), float64(s.LocalTime(st)), 2, "LocalTime inverts ServerTime")
				prev = st
			}
			assert.Equal(t, offset+tc.step, s.Offset(end), "the slew has finished")
		})
	}
}

func TestSyncSchedule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lose   map[int]bool // pings whose pong is lost
		warmup int          // pings at the warm-up interval
	}{
		{"no loss", nil, DefaultWarmupSamples},
		{"two pongs lost", map[int]bool{3: true, 9: true}, DefaultWarmupSamples + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSync(t, nil)
			assert.Equal(t, time.Duration(0), s.NextPing(), "due at once before the first ping")
			now := 5 * time.Second
			var gaps []time.Duration
			for i := range DefaultWarmupSamples + 8 {
				if i > 0 {
					next := s.NextPing()
					gaps = append(gaps, next-now)
					now = next
				}
				s.Sent(now)
				if !tc.lose[i] {
					s.Observe(now, now+time.Hour, now+40*time.Millisecond)
				}
			}
			for i, g := range gaps {
				want := DefaultSyncInterval
				if i+1 < tc.warmup {
					want = DefaultWarmupInterval
				}
				assert.Equal(t, want, g, "gap after ping %d", i)
			}
		})
	}
}

func TestSyncIgnoresAbsurdPongs(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		sent, server, received time.Duration
	}{
		{"zero round trip", time.Second, time.Hour, time.Second},
		{"negative round trip", time.Second, time.Hour, time.Second - time.Millisecond},
		{"round trip over MaxRTT", 0, time.Hour, DefaultMaxRTT + time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSync(t, &SyncConfig{SyncedAfter: 1})
			s.Observe(tc.sent, tc.server, tc.received)
			assert.False(t, s.Synced())
			assert.Equal(t, time.Duration(0), s.Offset(tc.received))
			assert.Equal(t, time.Duration(0), s.RTT())
			assert.Equal(t, tc.received, s.ServerTime(tc.received))
		})
	}
}

func TestSyncRTTAndReset(t *testing.T) {
	s := newSync(t, nil)
	for i, rtt := range []time.Duration{90, 70, 120, 80} {
		now := time.Duration(i) * time.Second
		s.Sent(now)
		s.Observe(now, now+time.Hour+rtt*time.Millisecond/2, now+rtt*time.Millisecond)
	}
	assert.Equal(t, 70*time.Millisecond, s.RTT(), "the fastest kept round trip")
	assert.Equal(t, time.Hour, s.Target())

	s.Reset()
	assert.Equal(t, time.Duration(0), s.RTT())
	assert.Equal(t, time.Duration(0), s.Offset(time.Minute))
	assert.Equal(t, time.Duration(0), s.NextPing())
	assert.False(t, s.Synced())
	// A new server is taken at once.
	pingPong(s, 10*time.Second, -time.Hour, 20*time.Millisecond)
	assert.Equal(t, -time.Hour, s.Offset(10*time.Second+40*time.Millisecond))
}

func TestSyncConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  *SyncConfig
		err  string // empty: valid
	}{
		{"nil is the defaults", nil, ""},
		{"zero is the defaults", &SyncConfig{}, ""},
		{"warm-up slower than steady", &SyncConfig{WarmupInterval: 3 * time.Second}, "WarmupInterval 3s exceeds Interval 1s"},
		{"warm-up longer than the window", &SyncConfig{WarmupSamples: 40}, "WarmupSamples 40 exceeds Window 32"},
		{"slew rate of one", &SyncConfig{SlewRate: 1}, "SlewRate 1 is outside (0, 1)"},
		{"negative slew rate", &SyncConfig{SlewRate: -0.1}, "SlewRate -0.1"},
		{"negative jump", &SyncConfig{JumpAbove: -1}, "JumpAbove -1ns is negative"},
		{"negative window", &SyncConfig{Window: -1}, "Window -1 is negative"},
		{"negative synced after", &SyncConfig{SyncedAfter: -1}, "SyncedAfter -1"},
		{"negative max RTT", &SyncConfig{MaxRTT: -1}, "MaxRTT -1ns"},
		{"huge drift", &SyncConfig{MaxDrift: 0.5}, "MaxDrift 0.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSync(tc.cfg)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, DefaultWarmupInterval, s.cfg.WarmupInterval)
				assert.Equal(t, DefaultSyncWindow, len(s.buf))
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.ErrorContains(t, err, tc.err)
			assert.Nil(t, s)
		})
	}
	cfg := &SyncConfig{Window: 8, WarmupSamples: 4}
	_, err := NewSync(cfg)
	require.NoError(t, err)
	assert.Equal(t, SyncConfig{Window: 8, WarmupSamples: 4}, *cfg, "the caller's config is not changed")
}

// TestSyncTrips: under jitter each way, the fastest trip up plus the
// fastest trip down (made by different pongs) is far closer to the base
// round trip than the fastest single round trip, and never above it.
func TestSyncTrips(t *testing.T) {
	const base = 30 * time.Millisecond // each way, before jitter
	r := rand.New(rand.NewPCG(1, 1))
	s, err := NewSync(nil)
	require.NoError(t, err)
	assert.Zero(t, s.Trips(), "before a sample")
	_, ok := s.ReturnGap()
	assert.False(t, ok, "no return gap before a sample")
	now := time.Second
	for range DefaultSyncWindow {
		up := base + time.Duration(r.Int64N(int64(20*time.Millisecond)))
		down := base + time.Duration(r.Int64N(int64(20*time.Millisecond)))
		s.Sent(now)
		s.Observe(now, now+up+7*time.Second, now+up+down)
		assert.LessOrEqual(t, s.Trips(), s.RTT())
		now += time.Second
	}
	t.Logf("fastest round trip %v, fastest trips %v, base %v", s.RTT(), s.Trips(), 2*base)
	// Each way's fastest of 32 uniform draws over 20 ms is about 0.6 ms
	// above the base.
	assert.InDelta(t, (2 * base).Seconds(), s.Trips().Seconds(), 0.003, "the fastest trip each way")
	assert.Less(t, s.Trips()-2*base, (s.RTT()-2*base)/2, "the fastest single round trip holds the jitter of both ways")
	gap, ok := s.ReturnGap()
	require.True(t, ok)
	assert.InDelta(t, (base - 7*time.Second).Seconds(), gap.Seconds(), 0.002, "the fastest pong down less the offset")
}
