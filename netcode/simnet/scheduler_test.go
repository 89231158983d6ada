package simnet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchedulerOrder(t *testing.T) {
	tests := []struct {
		name string
		at   []time.Duration // event i is scheduled at at[i], in this order
		want []int           // the order the events run
	}{
		{"increasing", []time.Duration{1, 2, 3}, []int{0, 1, 2}},
		{"decreasing", []time.Duration{3, 2, 1}, []int{2, 1, 0}},
		{"ties keep scheduling order", []time.Duration{5, 5, 5, 5}, []int{0, 1, 2, 3}},
		{"mixed ties", []time.Duration{7, 3, 7, 3, 5, 7}, []int{1, 3, 4, 0, 2, 5}},
		{"zero time", []time.Duration{0, 0, 1}, []int{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler(1)
			var got []int
			var times []time.Duration
			for i, at := range tc.at {
				s.At(at*time.Millisecond, func() {
					got = append(got, i)
					times = append(times, s.Now())
				})
			}
			require.Equal(t, len(tc.at), s.Pending())
			for s.Step() {
			}
			assert.Equal(t, tc.want, got)
			for k, i := range got {
				assert.Equal(t, tc.at[i]*time.Millisecond, times[k], "event %d ran at the wrong time", i)
			}
			assert.Zero(t, s.Pending())
		})
	}
}

// TestSchedulerTiesManyEvents checks FIFO ties through heap reshuffles.
func TestSchedulerTiesManyEvents(t *testing.T) {
	s := NewScheduler(testSeed(t))
	r := s.Rand("test")
	type key struct {
		at  time.Duration
		idx int
	}
	var got []key
	for i := range 2000 {
		at := time.Duration(r.IntN(20)) * time.Millisecond
		s.At(at, func() { got = append(got, key{at, i}) })
	}
	for s.Step() {
	}
	require.Len(t, got, 2000)
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		assert.True(t, a.at < b.at || (a.at == b.at && a.idx < b.idx), "event %v ran before %v", a, b)
	}
}

func TestSchedulerAtInPast(t *testing.T) {
	s := NewScheduler(1)
	var order []string
	s.At(100*time.Millisecond, func() {
		// Scheduled "at 50 ms" from 100 ms: it runs at 100 ms, after the
		// event already due then.
		s.At(50*time.Millisecond, func() { order = append(order, fmt.Sprint("past@", s.Now())) })
		s.After(-time.Second, func() { order = append(order, fmt.Sprint("negative@", s.Now())) })
	})
	s.At(100*time.Millisecond, func() { order = append(order, fmt.Sprint("due@", s.Now())) })
	s.RunUntil(time.Second)
	assert.Equal(t, []string{"due@100ms", "past@100ms", "negative@100ms"}, order)
}

func TestSchedulerEvery(t *testing.T) {
	tests := []struct {
		name   string
		start  time.Duration
		period time.Duration
		until  time.Duration
		stopAt int // stop from inside the n-th call (1-based); 0 never
		want   []time.Duration
	}{
		{"from zero", 0, 10 * time.Millisecond, 55 * time.Millisecond, 0,
			[]time.Duration{10, 20, 30, 40, 50}},
		{"from an odd start", 3 * time.Millisecond, 10 * time.Millisecond, 35 * time.Millisecond, 0,
			[]time.Duration{13, 23, 33}},
		{"stop inside the call", 0, 10 * time.Millisecond, time.Second, 3,
			[]time.Duration{10, 20, 30}},
		{"until exactly on a tick", 0, 10 * time.Millisecond, 30 * time.Millisecond, 0,
			[]time.Duration{10, 20, 30}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler(1)
			s.RunUntil(tc.start)
			var got []time.Duration
			var stop func()
			stop = s.Every(tc.period, func() {
				got = append(got, s.Now()/time.Millisecond)
				if len(got) == tc.stopAt {
					stop()
				}
			})
			s.RunUntil(tc.until)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestSchedulerEveryStopOutside(t *testing.T) {
	s := NewScheduler(1)
	n := 0
	stop := s.Every(time.Millisecond, func() { n++ })
	s.RunUntil(10 * time.Millisecond)
	require.Equal(t, 10, n)
	stop()
	stop() // twice is fine
	s.RunUntil(time.Second)
	assert.Equal(t, 10, n)
	assert.Zero(t, s.Pending(), "the inert event is gone once its time passed")
}

func TestSchedulerPanics(t *testing.T) {
	s := NewScheduler(1)
	assert.Panics(t, func() { s.Every(0, func() {}) })
	assert.Panics(t, func() { s.Every(-time.Second, func() {}) })
	assert.Panics(t, func() { s.At(0, nil) })
	s.At(0, func() { s.Step() })
	assert.Panics(t, func() { s.Step() }, "Step inside an event")
	s.At(0, func() { s.RunUntil(time.Hour) })
	assert.Panics(t, func() { s.RunUntil(time.Second) }, "RunUntil inside an event")
	assert.Equal(t, time.Duration(0), s.Now(), "time did not jump")
}

func TestSchedulerRunUntil(t *testing.T) {
	s := NewScheduler(1)
	ran := 0
	s.At(10*time.Millisecond, func() { ran++ })
	s.At(20*time.Millisecond, func() { ran++ })
	s.At(30*time.Millisecond, func() { ran++ })

	s.RunUntil(20 * time.Millisecond)
	assert.Equal(t, 2, ran, "events at the limit run")
	assert.Equal(t, 20*time.Millisecond, s.Now())

	s.RunUntil(25 * time.Millisecond)
	assert.Equal(t, 25*time.Millisecond, s.Now(), "Now moves to t with nothing due")
	next, ok := s.Next()
	assert.True(t, ok)
	assert.Equal(t, 30*time.Millisecond, next)

	s.RunUntil(5 * time.Millisecond)
	assert.Equal(t, 25*time.Millisecond, s.Now(), "time never goes back")

	s.RunFor(time.Second)
	assert.Equal(t, 3, ran)
	assert.Equal(t, 1025*time.Millisecond, s.Now())
	assert.False(t, s.Step())
	_, ok = s.Next()
	assert.False(t, ok)
}

// scenario runs a small but busy network: two endpoints pinging over a
// jittery, lossy, stalling pair, plus a ticker, and returns the event trace.
func scenario(seed uint64, extraLink bool) string {
	s := NewScheduler(seed)
	var b strings.Builder
	if extraLink {
		// A link created first and used a lot: it must not change the others.
		x := NewLink(s, LinkConfig{Name: "extra", Jitter: NormalJitter{Sigma: 9 * time.Millisecond}, Loss: Bernoulli{P: 0.3}}, nil)
		s.Every(3*time.Millisecond, func() { x.Send(nil) })
	}
	var ab, ba *Link
	ab, ba = NewPair(s,
		LinkConfig{Name: "ab", Latency: 20 * time.Millisecond, Jitter: ParetoJitter{Scale: 5 * time.Millisecond},
			Loss: &GilbertElliott{PGoodBad: 0.05, PBadGood: 0.3, LossBad: 0.8}, Stalls: &Stalls{Every: 500 * time.Millisecond, For: 80 * time.Millisecond}},
		LinkConfig{Name: "ba", Latency: 35 * time.Millisecond, Jitter: NormalJitter{Sigma: 4 * time.Millisecond}, Loss: Bernoulli{P: 0.05}},
		func(p []byte) {
			fmt.Fprintf(&b, "%v B<-%s\n", s.Now(), p)
			ba.Send(append([]byte("echo "), p...))
		},
		func(p []byte) { fmt.Fprintf(&b, "%v A<-%s\n", s.Now(), p) },
	)
	n := 0
	s.Every(16*time.Millisecond, func() {
		n++
		ab.Send(fmt.Appendf(nil, "%d", n))
	})
	s.RunUntil(5 * time.Second)
	fmt.Fprintf(&b, "ab %+v\nba %+v\n", ab.Stats(), ba.Stats())
	return b.String()
}

func TestSchedulerDeterminism(t *testing.T) {
	seed := testSeed(t)
	first := scenario(seed, false)
	require.Greater(t, strings.Count(first, "\n"), 300, "the scenario delivers plenty")
	assert.Equal(t, first, scenario(seed, false), "same seed, same trace")
	assert.NotEqual(t, first, scenario(seed+1, false), "another seed, another trace")
	assert.Equal(t, first, scenario(seed, true), "another link does not change this one's randomness")
}

func TestRandStreams(t *testing.T) {
	seed := testSeed(t)
	draw := func(s *Scheduler, name string) []uint64 {
		r := s.Rand(name)
		out := make([]uint64, 8)
		for i := range out {
			out[i] = r.Uint64()
		}
		return out
	}
	s1 := NewScheduler(seed)
	a1, b1 := draw(s1, "a"), draw(s1, "b")
	s2 := NewScheduler(seed)
	b2, a2 := draw(s2, "b"), draw(s2, "a")
	assert.Equal(t, a1, a2, "stream a does not depend on creation order")
	assert.Equal(t, b1, b2, "stream b does not depend on creation order")
	assert.NotEqual(t, a1, b1, "names give distinct streams")
	assert.NotEqual(t, a1, draw(NewScheduler(seed+1), "a"), "seeds give distinct streams")
	assert.Equal(t, seed, s1.Seed())
}
