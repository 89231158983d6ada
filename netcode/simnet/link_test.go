package simnet

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLinkLatencyExact(t *testing.T) {
	for _, ordered := range []bool{false, true} {
		for _, lat := range []time.Duration{0, time.Millisecond, 50 * time.Millisecond, 333 * time.Microsecond} {
			t.Run(map[bool]string{false: "unordered ", true: "ordered "}[ordered]+lat.String(), func(t *testing.T) {
				s := NewScheduler(testSeed(t))
				rec := newRecorder(s)
				l := NewLink(s, LinkConfig{Latency: lat, Ordered: ordered}, rec.deliver)
				rec.sendEvery(l, 7*time.Millisecond, time.Second)
				require.Len(t, rec.got, len(rec.sent))
				for i, a := range rec.got {
					assert.Equal(t, i, a.id, "order")
					assert.Equal(t, a.sent+lat, a.got, "packet %d", a.id)
				}
				st := l.Stats()
				assert.Equal(t, LinkStats{Sent: len(rec.sent), Delivered: len(rec.sent), MaxDelay: lat, MeanDelay: lat}, st)
			})
		}
	}
}

func TestLinkJitterDistribution(t *testing.T) {
	const sigma, scale = 10 * time.Millisecond, 10 * time.Millisecond
	const lat = 30 * time.Millisecond
	// Lomax quantile q: Scale*((1-q)^(-1/alpha) - 1), alpha = 2.
	lomax := func(q float64) time.Duration { return time.Duration(float64(scale) * (1/sqrt(1-q) - 1)) }
	tests := []struct {
		name     string
		jitter   Jitter
		mean     time.Duration // 0: not checked (infinite variance)
		quantile map[float64]time.Duration
		tol      float64 // relative
	}{
		{"half normal", NormalJitter{Sigma: sigma},
			ms(10 * 0.7978845608), // σ√(2/π)
			map[float64]time.Duration{0.5: ms(6.744898), 0.9: ms(16.448536), 0.95: ms(19.599640)}, 0.03},
		{"pareto alpha 2", ParetoJitter{Scale: scale, Alpha: 2, Max: time.Hour},
			0,
			map[float64]time.Duration{0.5: lomax(0.5), 0.9: lomax(0.9), 0.99: lomax(0.99)}, 0.06},
		{"uniform", UniformJitter{Max: 20 * time.Millisecond},
			10 * time.Millisecond,
			map[float64]time.Duration{0.1: 2 * time.Millisecond, 0.5: 10 * time.Millisecond, 0.9: 18 * time.Millisecond}, 0.03},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler(testSeed(t))
			rec := newRecorder(s)
			l := NewLink(s, LinkConfig{Latency: lat, Jitter: tc.jitter}, rec.deliver)
			rec.sendEvery(l, time.Millisecond, 60*time.Second)
			require.Len(t, rec.got, 60000)
			d := rec.delays()
			for i := range d {
				d[i] -= lat
				require.GreaterOrEqual(t, d[i], time.Duration(0), "jitter never makes a packet early")
			}
			if tc.mean > 0 {
				assert.InEpsilon(t, float64(tc.mean), float64(mean(d)), tc.tol, "mean")
			}
			for q, want := range tc.quantile {
				assert.InEpsilon(t, float64(want), float64(quantile(d, q)), tc.tol, "quantile %v", q)
			}
		})
	}
}

func TestParetoJitterMax(t *testing.T) {
	r := NewScheduler(testSeed(t)).Rand("p")
	tests := []struct {
		name string
		j    ParetoJitter
		max  time.Duration
	}{
		{"explicit cap", ParetoJitter{Scale: 50 * time.Millisecond, Alpha: 1, Max: 200 * time.Millisecond}, 200 * time.Millisecond},
		{"default cap", ParetoJitter{Scale: 100 * time.Millisecond, Alpha: 0.5}, DefaultParetoMax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			atMax := 0
			for range 10000 {
				x := tc.j.Sample(r)
				require.LessOrEqual(t, x, tc.max)
				require.GreaterOrEqual(t, x, time.Duration(0))
				if x == tc.max {
					atMax++
				}
			}
			assert.Positive(t, atMax, "the tail reaches the cap")
		})
	}
}

func TestLinkOrdering(t *testing.T) {
	tests := []struct {
		name     string
		cfg      LinkConfig
		reorders bool
	}{
		{"unordered with jitter reorders", LinkConfig{Latency: 40 * time.Millisecond, Jitter: NormalJitter{Sigma: 20 * time.Millisecond}}, true},
		{"unordered pareto reorders", LinkConfig{Latency: 40 * time.Millisecond, Jitter: ParetoJitter{Scale: 5 * time.Millisecond}}, true},
		{"ordered never reorders", LinkConfig{Latency: 40 * time.Millisecond, Jitter: NormalJitter{Sigma: 20 * time.Millisecond}, Ordered: true}, false},
		{"reliable implies ordered", LinkConfig{Latency: 40 * time.Millisecond, Jitter: NormalJitter{Sigma: 20 * time.Millisecond}, Reliable: true, Loss: Bernoulli{P: 0.1}}, false},
		{"ordered with stalls and pareto", LinkConfig{Latency: 40 * time.Millisecond, Jitter: ParetoJitter{Scale: 5 * time.Millisecond},
			Stalls: &Stalls{Every: time.Second, For: 150 * time.Millisecond, Jitter: 1}, Ordered: true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler(testSeed(t))
			rec := newRecorder(s)
			l := NewLink(s, tc.cfg, rec.deliver)
			rec.sendEvery(l, time.Millisecond, 10*time.Second)
			require.Len(t, rec.got, 10000)
			inv := rec.inversions()
			if tc.reorders {
				assert.Greater(t, inv, 100)
			} else {
				assert.Zero(t, inv)
			}
			for _, d := range rec.delays() {
				require.GreaterOrEqual(t, d, tc.cfg.Latency, "nothing beats the base latency")
			}
		})
	}
}

func TestLinkBernoulliLoss(t *testing.T) {
	for _, p := range []float64{0.01, 0.05, 0.2} {
		t.Run(fmt.Sprintf("P=%v", p), func(t *testing.T) {
			s := NewScheduler(testSeed(t))
			rec := newRecorder(s)
			l := NewLink(s, LinkConfig{Latency: 10 * time.Millisecond, Loss: Bernoulli{P: p}}, rec.deliver)
			rec.sendEvery(l, time.Millisecond, 100*time.Second)
			st := l.Stats()
			require.Equal(t, 100000, st.Sent)
			assert.Equal(t, st.Sent, st.Delivered+st.Lost)
			assert.Equal(t, st.Delivered, len(rec.got))
			assert.InDelta(t, p, float64(st.Lost)/float64(st.Sent), 5*sqrt(p*(1-p)/1e5), "P=%v", p)
		})
	}
}

func TestLinkExactLoss(t *testing.T) {
	s := NewScheduler(testSeed(t))
	rec := newRecorder(s)
	l := NewLink(s, LinkConfig{Latency: 10 * time.Millisecond, Loss: &ExactLoss{Drop: 2, Every: 25}}, rec.deliver)
	rec.sendEvery(l, time.Millisecond, time.Second)
	st := l.Stats()
	assert.Equal(t, 1000, st.Sent)
	assert.Equal(t, 80, st.Lost)
	// Exactly 2 of every block of 25 ids are missing.
	got := make([]bool, 1000)
	for _, a := range rec.got {
		got[a.id] = true
	}
	for b := 0; b < 1000; b += 25 {
		missing := 0
		for _, ok := range got[b : b+25] {
			if !ok {
				missing++
			}
		}
		assert.Equal(t, 2, missing, "block at %d", b)
	}
}

func TestLinkLossDoesNotShiftJitter(t *testing.T) {
	seed := testSeed(t)
	run := func(cfg LinkConfig) map[int]time.Duration {
		s := NewScheduler(seed)
		rec := newRecorder(s)
		l := NewLink(s, cfg, rec.deliver)
		rec.sendEvery(l, time.Millisecond, 2*time.Second)
		out := map[int]time.Duration{}
		for _, a := range rec.got {
			out[a.id] = a.got - a.sent
		}
		return out
	}
	base := LinkConfig{Name: "x", Latency: 20 * time.Millisecond, Jitter: NormalJitter{Sigma: 5 * time.Millisecond}}
	clean := run(base)
	lossy := base
	lossy.Loss = Bernoulli{P: 0.3}
	lossy.Outages = []Window{{From: 500 * time.Millisecond, To: 700 * time.Millisecond}}
	withLoss := run(lossy)
	require.Greater(t, len(withLoss), 1000)
	require.Less(t, len(withLoss), 1500)
	for id, d := range withLoss {
		assert.Equal(t, clean[id], d, "packet %d", id)
	}
}

func TestLinkOutages(t *testing.T) {
	const lat = 50 * time.Millisecond
	out := Window{From: time.Second, To: 2 * time.Second}
	tests := []struct {
		name     string
		cfg      LinkConfig
		dropped  int
		heldTo   time.Duration // Reliable: where the held packets arrive
		heldWant int
	}{
		// Sent every 10 ms over 3 s: 100 sent inside, and 5 sent in
		// [950, 1000) ms fall due inside.
		{"unordered", LinkConfig{Latency: lat, Outages: []Window{out}}, 105, 0, 0},
		{"ordered", LinkConfig{Latency: lat, Outages: []Window{out}, Ordered: true}, 105, 0, 0},
		{"overlapping windows", LinkConfig{Latency: lat, Ordered: true,
			Outages: []Window{{From: time.Second, To: 1500 * time.Millisecond}, {From: 1400 * time.Millisecond, To: 2 * time.Second}}}, 105, 0, 0},
		{"reliable holds instead", LinkConfig{Latency: lat, Outages: []Window{out}, Reliable: true}, 0, out.To + lat, 105 + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler(testSeed(t))
			rec := newRecorder(s)
			l := NewLink(s, tc.cfg, rec.deliver)
			rec.sendEvery(l, 10*time.Millisecond, 3*time.Second)
			st := l.Stats()
			assert.Equal(t, 300, st.Sent)
			assert.Equal(t, tc.dropped, st.Dropped)
			assert.Equal(t, st.Sent-tc.dropped, st.Delivered)
			assert.Zero(t, st.InFlight)
			held := 0
			for _, a := range rec.got {
				assert.False(t, out.Contains(a.got), "packet %d arrived at %v inside the outage", a.id, a.got)
				if tc.dropped > 0 {
					assert.False(t, out.Contains(a.sent), "packet %d sent at %v inside the outage arrived", a.id, a.sent)
				}
				if tc.heldTo > 0 && a.got == tc.heldTo {
					held++
				}
			}
			assert.Equal(t, tc.heldWant, held, "packets released together after the outage")
			assert.Zero(t, rec.inversions())
		})
	}
}

func TestLinkOutageMidRun(t *testing.T) {
	// The outage is set at 1 s while packets are in flight (100 ms latency):
	// those due inside it are dropped too, or held on a Reliable link.
	const lat = 100 * time.Millisecond
	window := Window{From: 1050 * time.Millisecond, To: 1200 * time.Millisecond}
	tests := []struct {
		name     string
		cfg      LinkConfig
		reliable bool
	}{
		{"unordered", LinkConfig{Latency: lat}, false},
		{"ordered", LinkConfig{Latency: lat, Ordered: true}, false},
		{"reliable", LinkConfig{Latency: lat, Reliable: true}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler(testSeed(t))
			rec := newRecorder(s)
			l := NewLink(s, tc.cfg, rec.deliver)
			s.At(time.Second, func() {
				c := l.Config()
				c.Outages = []Window{window}
				l.SetConfig(c)
			})
			rec.sendEvery(l, 10*time.Millisecond, 2*time.Second)
			st := l.Stats()
			// Ids sent in [950, 1200) ms were due or sent inside the window.
			hit := func(a arrival) bool { return a.sent >= 950*time.Millisecond && a.sent < 1200*time.Millisecond }
			assert.Zero(t, rec.inversions())
			if !tc.reliable {
				assert.Equal(t, 25, st.Dropped)
				for _, a := range rec.got {
					assert.False(t, hit(a), "packet %d sent at %v", a.id, a.sent)
				}
				return
			}
			assert.Zero(t, st.Dropped)
			assert.Equal(t, 200, st.Delivered)
			for _, a := range rec.got {
				if hit(a) {
					assert.Equal(t, window.To+lat, a.got, "packet %d sent at %v is held", a.id, a.sent)
				} else {
					assert.Equal(t, a.sent+lat, a.got, "packet %d", a.id)
				}
			}
		})
	}
}

func TestLinkStalls(t *testing.T) {
	const lat = 20 * time.Millisecond
	const total = 60 * time.Second
	stalls := Stalls{Every: time.Second, For: 200 * time.Millisecond, Jitter: 0.5}
	tests := []struct {
		name string
		cfg  LinkConfig
	}{
		{"unordered", LinkConfig{Name: "s", Latency: lat, Stalls: &stalls}},
		{"ordered", LinkConfig{Name: "s", Latency: lat, Stalls: &stalls, Ordered: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seed := testSeed(t)
			s := NewScheduler(seed)
			rec := newRecorder(s)
			l := NewLink(s, tc.cfg, rec.deliver)
			rec.sendEvery(l, 2*time.Millisecond, total)

			// The oracle: the same stream, generated on its own.
			g := stallGen{r: NewScheduler(seed).Rand("s/stalls")}
			g.reset(stalls, 0)
			var windows []Window
			for g.cur.From < total+lat {
				g.next()
				windows = append(windows, g.cur)
			}
			require.Greater(t, len(windows), 30)
			expect := func(due time.Duration) time.Duration {
				for _, w := range windows {
					if w.Contains(due) {
						return w.To
					}
				}
				return due
			}

			st := l.Stats()
			require.Equal(t, st.Sent, st.Delivered, "stalls lose nothing")
			assert.Zero(t, rec.inversions(), "released in order")
			burst := map[time.Duration]int{}
			for _, a := range rec.got {
				if !assert.Equal(t, expect(a.sent+lat), a.got, "packet %d sent at %v", a.id, a.sent) {
					return
				}
				burst[a.got]++
			}
			// A stall in the middle of the traffic releases everything that
			// fell due inside it, in one burst at its end.
			begun := 0
			for _, w := range windows {
				if w.From <= s.Now() && w.Len() > 0 {
					begun++
				}
				if w.From >= lat && w.To <= total {
					assert.GreaterOrEqual(t, burst[w.To], int(w.Len()/(2*time.Millisecond))-1, "burst after stall %v", w)
				}
			}
			assert.Equal(t, begun, st.Stalls)
			assert.LessOrEqual(t, st.MaxDelay, lat+300*time.Millisecond)
			assert.GreaterOrEqual(t, st.MaxDelay, lat+100*time.Millisecond)
		})
	}
}

func TestLinkStallsSetConfig(t *testing.T) {
	s := NewScheduler(testSeed(t))
	rec := newRecorder(s)
	l := NewLink(s, LinkConfig{Latency: 10 * time.Millisecond}, rec.deliver)
	s.At(time.Second, func() {
		c := l.Config()
		c.Stalls = &Stalls{Every: 100 * time.Millisecond, For: 100 * time.Millisecond}
		l.SetConfig(c)
	})
	s.At(5*time.Second, func() {
		c := l.Config()
		c.Stalls = nil
		l.SetConfig(c)
	})
	rec.sendEvery(l, time.Millisecond, 8*time.Second)
	for _, a := range rec.got {
		if a.sent < time.Second-10*time.Millisecond || a.sent >= 5*time.Second {
			require.Equal(t, a.sent+10*time.Millisecond, a.got, "no stall outside [1 s, 5 s): packet %d", a.id)
		}
	}
	assert.Greater(t, l.Stats().MaxDelay, 50*time.Millisecond, "stalls happened inside")
	assert.Equal(t, 8000, l.Stats().Delivered)
}

func TestLinkReliable(t *testing.T) {
	const lat = 30 * time.Millisecond
	tests := []struct {
		name  string
		cfg   LinkConfig
		check func(t *testing.T, st LinkStats, delays []time.Duration)
	}{
		{"20 percent loss becomes delay", LinkConfig{Latency: lat, Reliable: true, Loss: Bernoulli{P: 0.2}},
			func(t *testing.T, st LinkStats, delays []time.Duration) {
				rto := 3*lat + 200*time.Millisecond
				// Retransmits per packet: p/(1-p) = 0.25.
				assert.InEpsilon(t, 0.25*float64(st.Sent), float64(st.Retransmits), 0.1)
				// Each lost packet is late by at least one RTO (those behind it
				// wait too: head-of-line blocking, as on TCP).
				late := 0
				for _, d := range delays {
					if d >= lat+rto {
						late++
					}
				}
				assert.GreaterOrEqual(t, late, st.Sent*15/100)
			}},
		{"certain loss gives up after maxRetransmits", LinkConfig{Latency: lat, Reliable: true, Loss: Bernoulli{P: 1}, RTO: 100 * time.Millisecond},
			func(t *testing.T, st LinkStats, delays []time.Duration) {
				want := lat + 255*100*time.Millisecond // 100 ms * (1+2+...+128)
				for _, d := range delays {
					require.Equal(t, want, d)
				}
				assert.Equal(t, maxRetransmits*st.Sent, st.Retransmits)
			}},
		{"bursts", LinkConfig{Latency: lat, Reliable: true, Loss: &GilbertElliott{PGoodBad: 0.02, PBadGood: 0.3, LossBad: 1}},
			func(t *testing.T, st LinkStats, delays []time.Duration) {
				assert.Positive(t, st.Retransmits)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler(testSeed(t))
			rec := newRecorder(s)
			l := NewLink(s, tc.cfg, rec.deliver)
			rec.sendEvery(l, 5*time.Millisecond, 25*time.Second)
			st := l.Stats()
			assert.Equal(t, 5000, st.Sent)
			assert.Zero(t, st.Lost)
			assert.Equal(t, st.Sent, st.Delivered, "reliable never loses")
			assert.Zero(t, rec.inversions(), "reliable is ordered")
			tc.check(t, st, rec.delays())
		})
	}
}

func TestNewPairAsymmetric(t *testing.T) {
	s := NewScheduler(testSeed(t))
	var atB, atA []time.Duration
	var ab, ba *Link
	ab, ba = NewPair(s,
		LinkConfig{Latency: 20 * time.Millisecond},
		LinkConfig{Latency: 80 * time.Millisecond, Ordered: true},
		func(p []byte) { atB = append(atB, s.Now()); ba.Send(p) },
		func(p []byte) { atA = append(atA, s.Now()) },
	)
	assert.Equal(t, "pair1/ab", ab.Name())
	assert.Equal(t, "pair1/ba", ba.Name())
	s.At(time.Second, func() { ab.Send([]byte("ping")) })
	s.RunUntil(2 * time.Second)
	assert.Equal(t, []time.Duration{1020 * time.Millisecond}, atB)
	assert.Equal(t, []time.Duration{1100 * time.Millisecond}, atA)
	assert.Equal(t, 20*time.Millisecond, ab.Stats().MeanDelay)
	assert.Equal(t, 80*time.Millisecond, ba.Stats().MeanDelay)
	assert.True(t, ba.Config().Ordered)
	assert.False(t, ab.Config().Ordered)
}

func TestLinkSendFromDeliver(t *testing.T) {
	// An ordered link that echoes into itself with zero latency: the echo
	// joins the queue behind what is already due and still goes out in order.
	s := NewScheduler(1)
	var got []string
	var l *Link
	l = NewLink(s, LinkConfig{Ordered: true}, func(p []byte) {
		got = append(got, string(p))
		if len(p) < 3 {
			l.Send(append(p, '+'))
		}
	})
	s.At(0, func() { l.Send([]byte("a")); l.Send([]byte("b")) })
	s.RunUntil(time.Second)
	assert.Equal(t, []string{"a", "b", "a+", "b+", "a++", "b++"}, got)
}

func TestLinkConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     LinkConfig
		wantErr string
	}{
		{"zero value", LinkConfig{}, ""},
		{"full", LinkConfig{Latency: time.Millisecond, Jitter: NormalJitter{Sigma: 1}, Loss: &ExactLoss{Drop: 1, Every: 2},
			Stalls: &Stalls{}, Outages: []Window{{From: 1, To: 2}}, Reliable: true}, ""},
		{"negative latency", LinkConfig{Latency: -1}, "Latency -1ns is negative"},
		{"negative rto", LinkConfig{RTO: -time.Second}, "RTO -1s is negative"},
		{"bad jitter", LinkConfig{Jitter: NormalJitter{Sigma: -1}}, "NormalJitter.Sigma -1ns"},
		{"bad pareto", LinkConfig{Jitter: ParetoJitter{Alpha: -2}}, "ParetoJitter.Alpha -2"},
		{"bad uniform", LinkConfig{Jitter: UniformJitter{Max: -1}}, "UniformJitter.Max"},
		{"bad loss", LinkConfig{Loss: Bernoulli{P: 2}}, "Bernoulli.P 2"},
		{"bad stalls", LinkConfig{Stalls: &Stalls{Jitter: 1.5}}, "Stalls.Jitter 1.5"},
		{"backwards outage", LinkConfig{Outages: []Window{{}, {From: 2 * time.Second, To: time.Second}}},
			"Outages[1].From 2s is after To 1s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.NotPanics(t, func() { NewLink(NewScheduler(1), tc.cfg, nil) })
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			assert.PanicsWithError(t, `simnet: NewLink "link1": `+err.Error(), func() { NewLink(NewScheduler(1), tc.cfg, nil) })
			l := NewLink(NewScheduler(1), LinkConfig{}, nil)
			assert.Panics(t, func() { l.SetConfig(tc.cfg) })
		})
	}
}
