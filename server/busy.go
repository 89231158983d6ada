package server

import (
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	smetrics "github.com/nearzero/nearzero/server/metrics"
)

// How the server tells it is behind its own work: the time a goroutine
// that is ready waits before it runs (the Go scheduler's latency, from
// runtime/metrics), which is what a connection's messages wait in its
// socket when the machine or the process has too much to do.
const (
	// DefaultBusyAfter is Config.BusyAfter's default: well above what a
	// server that keeps up shows.
	DefaultBusyAfter = 20 * time.Millisecond
	// DefaultOverloadAfter is Config.OverloadAfter's default.
	DefaultOverloadAfter = 100 * time.Millisecond
	// busyEvery is how often the delay is sampled, and busyHold how long
	// a high one is held: a backlog takes a while to drain after.
	busyEvery = 250 * time.Millisecond
	busyHold  = 5 * time.Second
)

// busyMeter keeps the server's scheduling delay: the 99th percentile of
// each busyEvery, and the most of those over busyHold.
type busyMeter struct {
	delay atomic.Int64 // held delay (ns)

	sample []metrics.Sample
	prev   []uint64
	recent [busyHold / busyEvery]time.Duration
	next   int
}

func newBusyMeter() *busyMeter {
	return &busyMeter{sample: []metrics.Sample{{Name: "/sched/latencies:seconds"}}}
}

// read samples the scheduler's latency histogram and returns the held
// delay.
func (b *busyMeter) read() time.Duration {
	metrics.Read(b.sample)
	if b.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0 // not measured by this runtime
	}
	h := b.sample[0].Value.Float64Histogram()
	if len(b.prev) != len(h.Counts) {
		b.prev = append(b.prev[:0], h.Counts...)
		return 0
	}
	var total uint64
	for i, c := range h.Counts {
		total += c - b.prev[i]
	}
	p99 := time.Duration(0)
	if total > 0 {
		var acc uint64
		for i, c := range h.Counts {
			acc += c - b.prev[i]
			if acc*100 >= total*99 {
				// The bucket's upper bound (the last one's is +Inf: its
				// lower bound then).
				up := h.Buckets[i+1]
				if up > 1e9 {
					up = h.Buckets[i]
				}
				p99 = time.Duration(up * float64(time.Second))
				break
			}
		}
	}
	copy(b.prev, h.Counts)
	b.recent[b.next] = p99
	b.next = (b.next + 1) % len(b.recent)
	held := time.Duration(0)
	for _, d := range b.recent {
		held = max(held, d)
	}
	b.delay.Store(int64(held))
	return held
}

// watchBusy samples the scheduling delay until the server stops.
func (s *Server) watchBusy() {
	t := time.NewTicker(busyEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		d := s.busy.read()
		s.m.SchedDelaySecs.Set(d.Seconds())
		over := s.overloaded()
		if over != s.wasOver.Swap(over) {
			if over {
				s.log.Warn("server overloaded: new rooms refused until it keeps up", "sched_delay", d)
				s.m.Overloaded.Set(1)
			} else {
				s.log.Info("server keeps up again: new rooms taken", "sched_delay", d)
				s.m.Overloaded.Set(0)
			}
			if s.cluster != nil {
				s.cluster.Changed()
			}
		}
	}
}

// behind is room.Hooks.Behind: the held scheduling delay once it reaches
// Config.BusyAfter, else 0.
func (s *Server) behind() time.Duration {
	if s.cfg.BusyAfter < 0 {
		return 0
	}
	if d := time.Duration(s.busy.delay.Load()); d >= s.cfg.BusyAfter {
		return d
	}
	return 0
}

// overloaded reports whether the held scheduling delay reaches
// Config.OverloadAfter: the server takes no new rooms.
func (s *Server) overloaded() bool {
	return s.cfg.OverloadAfter >= 0 && time.Duration(s.busy.delay.Load()) >= s.cfg.OverloadAfter
}

// overloadError is the answer to a create while overloaded.
func (s *Server) overloadError() *protocol.Error {
	s.m.Limited(smetrics.LimitOverload)
	return protocol.Errorf(protocol.CodeServerFull, "the server is too busy for a new room; try again in a minute")
}
