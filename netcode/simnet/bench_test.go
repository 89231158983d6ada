package simnet

import (
	"testing"
	"time"
)

// BenchmarkSchedulerEvent runs events from a heap kept at 1000 pending, each
// rescheduling itself at a pseudo-random later time.
func BenchmarkSchedulerEvent(b *testing.B) {
	s := NewScheduler(1)
	r := s.Rand("bench")
	delays := make([]time.Duration, 1024)
	for i := range delays {
		delays[i] = time.Duration(r.IntN(50000)) * time.Microsecond
	}
	i := 0
	var fn func()
	fn = func() {
		i++
		s.After(delays[i&1023], fn)
	}
	for range 1000 {
		s.After(delays[r.IntN(1024)], fn)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkLinkSend sends one packet and runs the scheduler to its delivery,
// on a link with latency, jitter and loss.
func BenchmarkLinkSend(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  LinkConfig
	}{
		{"unordered", LinkConfig{Latency: 30 * time.Millisecond, Jitter: NormalJitter{Sigma: 5 * time.Millisecond}, Loss: Bernoulli{P: 0.01}}},
		{"ordered", LinkConfig{Latency: 30 * time.Millisecond, Jitter: NormalJitter{Sigma: 5 * time.Millisecond}, Loss: Bernoulli{P: 0.01}, Ordered: true}},
		{"stalls", LinkConfig{Latency: 30 * time.Millisecond, Jitter: ParetoJitter{Scale: 5 * time.Millisecond},
			Loss: &GilbertElliott{PGoodBad: 0.01, PBadGood: 0.3, LossBad: 1}, Stalls: &Stalls{Every: time.Second}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := NewScheduler(1)
			l := NewLink(s, tc.cfg, nil)
			payload := make([]byte, 40)
			b.ReportAllocs()
			for range b.N {
				// One 60 Hz send; ~2 packets in flight at any time.
				l.Send(payload)
				s.RunFor(time.Second / 60)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "packets/s")
		})
	}
}

// BenchmarkTwoMinuteScenario is the bench's shape: two clients at 60 Hz
// exchanging states directly and through a server, on jittery lossy links,
// for two minutes of virtual time. It reports the wall time per scenario.
func BenchmarkTwoMinuteScenario(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		s := NewScheduler(7)
		payload := make([]byte, 40)
		delivered := 0
		count := func([]byte) { delivered++ }
		direct := LinkConfig{Latency: 25 * time.Millisecond, Jitter: ParetoJitter{Scale: 3 * time.Millisecond},
			Loss: &GilbertElliott{PGoodBad: 0.005, PBadGood: 0.3, LossBad: 1}, Stalls: &Stalls{}}
		server := LinkConfig{Latency: 40 * time.Millisecond, Jitter: NormalJitter{Sigma: 4 * time.Millisecond}, Reliable: true, Loss: Bernoulli{P: 0.01}}
		d1, d2 := NewPair(s, direct, direct, count, count)
		s1, s2 := NewPair(s, server, server, count, count)
		r1, r2 := NewPair(s, server, server, count, count)
		NewFrames(s, FrameConfig{Hitches: &Stalls{}}, func(Frame) { d1.Send(payload); s1.Send(payload); r1.Send(payload) })
		NewFrames(s, FrameConfig{Period: time.Second / 30}, func(Frame) { d2.Send(payload); s2.Send(payload); r2.Send(payload) })
		s.RunUntil(2 * time.Minute)
		if delivered == 0 {
			b.Fatal("nothing delivered")
		}
	}
}
