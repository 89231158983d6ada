package server

import (
	"math"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	smetrics "github.com/nearzero/nearzero/server/metrics"
)

// How the server tells it is behind its own work: the time a goroutine
// that is ready waits before it runs (the Go scheduler's latency, from
// runtime/metrics), which is what a connection's messages wait in its
// socket when the machine or the process has too much to do, and how late
// its own sampling tick comes (a frozen or throttled process).
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
	// overloadShare is the share of the samples over busyHold that must
	// reach Config.OverloadAfter before the server refuses new rooms: one
	// hitch of a shared or burstable machine (115 ms read for a room of 4
	// at load 20) is no overload, a delay that lasts 1.25 s of 5 is.
	overloadShare = 4
)

// busyMeter keeps the server's scheduling delay: the 99th percentile of
// each busyEvery, and the most of those over busyHold.
type busyMeter struct {
	delay     atomic.Int64 // held delay (ns)
	sustained atomic.Int64 // the delay a quarter of the samples held reach (ns)

	sample []metrics.Sample
	prev   []uint64
	recent [busyHold / busyEvery]time.Duration
	next   int
}

func newBusyMeter() *busyMeter {
	return &busyMeter{sample: []metrics.Sample{{Name: "/sched/latencies:seconds"}}}
}

// read samples the scheduler's latency histogram and keeps the held
// delay: the histogram's 99th percentile since the last read, or late,
// how late the caller's own tick came (a process that was frozen or
// throttled shows no scheduler delay), whichever is more.
func (b *busyMeter) read(late time.Duration) {
	d := max(0, late)
	metrics.Read(b.sample)
	if b.sample[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := b.sample[0].Value.Float64Histogram()
		if len(b.prev) == len(h.Counts) {
			d = max(d, p99Since(h.Buckets, b.prev, h.Counts))
		}
		b.prev = append(b.prev[:0], h.Counts...)
	}
	b.recent[b.next] = d
	b.next = (b.next + 1) % len(b.recent)
	held := time.Duration(0)
	for _, r := range b.recent {
		held = max(held, r)
	}
	b.delay.Store(int64(held))
	sorted := b.recent
	slices.Sort(sorted[:])
	b.sustained.Store(int64(sorted[len(sorted)-len(sorted)/overloadShare]))
}

// p99Since returns the 99th percentile of what a cumulative histogram
// (runtime/metrics: len(buckets) = len(counts)+1 boundaries, in seconds)
// counted between prev and now, as the upper bound of its bucket (the
// lower one for the last, unbounded bucket); 0 when it counted nothing.
func p99Since(buckets []float64, prev, now []uint64) time.Duration {
	var total uint64
	for i, c := range now {
		total += c - prev[i]
	}
	if total == 0 {
		return 0
	}
	var acc uint64
	for i, c := range now {
		acc += c - prev[i]
		if acc*100 >= total*99 {
			up := buckets[i+1]
			if math.IsInf(up, 1) {
				up = buckets[i]
			}
			return time.Duration(up * float64(time.Second))
		}
	}
	return 0
}

// watchBusy samples the scheduling delay until the server stops.
func (s *Server) watchBusy() {
	t := time.NewTicker(busyEvery)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		s.busy.read(now.Sub(last) - busyEvery)
		last = now
		d := s.delay()
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

// delay is how far behind its own work the server runs: Deps.Delay, or
// the held scheduling delay.
func (s *Server) delay() time.Duration {
	if s.delayFn != nil {
		return s.delayFn()
	}
	return time.Duration(s.busy.delay.Load())
}

// behind is room.Hooks.Behind: the delay once it reaches Config.BusyAfter,
// else 0.
func (s *Server) behind() time.Duration {
	if s.cfg.BusyAfter < 0 {
		return 0
	}
	if d := s.delay(); d >= s.cfg.BusyAfter {
		return d
	}
	return 0
}

// overloaded reports whether the delay reaches Config.OverloadAfter and
// lasts (a quarter of the samples held reach it: overloadShare): the
// server takes no new rooms.
func (s *Server) overloaded() bool {
	if s.cfg.OverloadAfter < 0 {
		return false
	}
	d := time.Duration(s.busy.sustained.Load())
	if s.delayFn != nil {
		d = s.delayFn()
	}
	return d >= s.cfg.OverloadAfter
}

// overloadError is the answer to a create while overloaded.
func (s *Server) overloadError() *protocol.Error {
	s.m.Limited(smetrics.LimitOverload)
	return protocol.Errorf(protocol.CodeServerFull, "the server is too busy for a new room; try again in a minute")
}
