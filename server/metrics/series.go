package metrics

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// Counter is a value that only goes up. The zero value is ready.
type Counter struct{ bits atomic.Uint64 }

// Add adds v (>= 0).
func (c *Counter) Add(v float64) { addFloat(&c.bits, v) }

// Inc adds 1.
func (c *Counter) Inc() { c.Add(1) }

// Value returns the count.
func (c *Counter) Value() float64 { return math.Float64frombits(c.bits.Load()) }

// Gauge is a value that goes up and down. The zero value is ready.
type Gauge struct{ bits atomic.Uint64 }

// Add adds v (which may be negative).
func (g *Gauge) Add(v float64) { addFloat(&g.bits, v) }

// Inc adds 1.
func (g *Gauge) Inc() { g.Add(1) }

// Dec subtracts 1.
func (g *Gauge) Dec() { g.Add(-1) }

// Set sets the value.
func (g *Gauge) Set(v float64) { g.bits.Store(math.Float64bits(v)) }

// Value returns the value.
func (g *Gauge) Value() float64 { return math.Float64frombits(g.bits.Load()) }

func addFloat(bits *atomic.Uint64, v float64) {
	for {
		old := bits.Load()
		if bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Histogram counts observations into cumulative buckets by upper bound.
type Histogram struct {
	bounds []float64       // upper bounds, ascending
	counts []atomic.Uint64 // per bucket (not cumulative); the last is +Inf
	sum    Counter
	count  atomic.Uint64
}

// NewHistogram returns a histogram with the given ascending upper bounds.
func NewHistogram(bounds ...float64) *Histogram {
	return &Histogram{bounds: slices.Clone(bounds), counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe records v.
func (h *Histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v) // first bound >= v: le semantics
	h.counts[i].Add(1)
	addFloat(&h.sum.bits, v)
	h.count.Add(1)
}

// Snapshot returns the count, the sum and the cumulative count of each
// bound (le), as an exporter reports them.
func (h *Histogram) Snapshot() (count uint64, sum float64, cumulative map[float64]uint64) {
	cumulative = make(map[float64]uint64, len(h.bounds))
	var run uint64
	for i, b := range h.bounds {
		run += h.counts[i].Load()
		cumulative[b] = run
	}
	return h.count.Load(), h.sum.Value(), cumulative
}

// Vec is a family of series of one kind, one per label value.
type Vec[T any] struct {
	mu     sync.RWMutex
	series map[string]*T
	labels []string // in the order first seen
}

// With returns the series for label, made on first use.
func (v *Vec[T]) With(label string) *T {
	v.mu.RLock()
	s, ok := v.series[label]
	v.mu.RUnlock()
	if ok {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok = v.series[label]; ok {
		return s
	}
	if v.series == nil {
		v.series = map[string]*T{}
	}
	s = new(T)
	v.series[label] = s
	v.labels = append(v.labels, label)
	return s
}

// Each calls f for every series, in the order their labels were first seen.
func (v *Vec[T]) Each(f func(label string, s *T)) {
	v.mu.RLock()
	labels := slices.Clone(v.labels)
	v.mu.RUnlock()
	for _, l := range labels {
		f(l, v.With(l))
	}
}
