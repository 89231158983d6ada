// Package lagsim is the lag simulator of docs/architecture.md §5, as a pure
// delay line on injected time: messages pushed at now come out of Pop once
// now has passed their due time, after Latency plus a random part of
// Jitter; states (unreliable messages) may be lost; reliable messages keep
// their order. It has no goroutine and reads no clock: the game client
// drives it from real time (client/realtime), tests and the bench from simulated
// time.
//
// A Line is one direction of one link. It is not safe for concurrent use;
// the caller serialises access.
package lagsim

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Limits on a Config, so a typo in a setting cannot park messages for hours.
const (
	// MaxLatency is the largest one-way Latency a Config accepts.
	MaxLatency = 5 * time.Second
	// MaxJitter is the largest Jitter a Config accepts.
	MaxJitter = 5 * time.Second
)

// ErrInvalidConfig indicates a Config field out of range.
var ErrInvalidConfig = errors.New("lagsim: invalid config")

// Config is one direction's simulated network. The zero value is off.
type Config struct {
	// Latency is the one-way delay added to every message. 0 to MaxLatency.
	Latency time.Duration
	// Jitter adds a uniform random extra delay in [0, Jitter) per message,
	// so states can be reordered. 0 to MaxJitter.
	Jitter time.Duration
	// Loss is the probability, 0 to 1, that a state is dropped. Reliable
	// messages are never dropped.
	Loss float64
}

// On reports whether the simulator changes anything.
func (c Config) On() bool { return c.Latency > 0 || c.Jitter > 0 || c.Loss > 0 }

// Validate reports the first field out of range, wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	switch {
	case c.Latency < 0 || c.Latency > MaxLatency:
		return fmt.Errorf("%w: latency %v outside [0, %v]", ErrInvalidConfig, c.Latency, MaxLatency)
	case c.Jitter < 0 || c.Jitter > MaxJitter:
		return fmt.Errorf("%w: jitter %v outside [0, %v]", ErrInvalidConfig, c.Jitter, MaxJitter)
	case math.IsNaN(c.Loss) || c.Loss < 0 || c.Loss > 1:
		return fmt.Errorf("%w: loss %v outside [0, 1]", ErrInvalidConfig, c.Loss)
	}
	return nil
}

// Line is one direction of the simulator.
type Line struct {
	cfg          Config
	rng          *rand.Rand
	items        itemHeap
	seq          uint64
	lastReliable time.Duration
	lost         int64
}

// NewLine returns a line with cfg, its random draws seeded by seed. An
// invalid cfg is refused.
func NewLine(cfg Config, seed uint64) (*Line, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Line{cfg: cfg, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}, nil
}

// Config returns the settings in force.
func (l *Line) Config() Config { return l.cfg }

// SetConfig changes the settings live. Messages already in the line keep
// their due times; reliable messages still never overtake each other.
func (l *Line) SetConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	l.cfg = cfg
	return nil
}

// Push hands data to the line at now; the line owns data from then on. It
// reports false when the simulator lost the message on purpose (states only).
func (l *Line) Push(now time.Duration, data []byte, reliable bool) bool {
	if !reliable && l.cfg.Loss > 0 && l.rng.Float64() < l.cfg.Loss {
		l.lost++
		return false
	}
	due := now + l.cfg.Latency
	if l.cfg.Jitter > 0 {
		due += time.Duration(l.rng.Int64N(int64(l.cfg.Jitter)))
	}
	if reliable {
		due = max(due, l.lastReliable)
		l.lastReliable = due
	}
	l.seq++
	heap.Push(&l.items, item{due: due, seq: l.seq, data: data, reliable: reliable})
	return true
}

// Pop returns the next message due at or before now, or ok false when none is.
func (l *Line) Pop(now time.Duration) (data []byte, reliable, ok bool) {
	if len(l.items) == 0 || l.items[0].due > now {
		return nil, false, false
	}
	it := heap.Pop(&l.items).(item)
	return it.data, it.reliable, true
}

// Next returns when the earliest message in the line is due, or ok false
// when the line is empty.
func (l *Line) Next() (due time.Duration, ok bool) {
	if len(l.items) == 0 {
		return 0, false
	}
	return l.items[0].due, true
}

// Len returns how many messages wait in the line.
func (l *Line) Len() int { return len(l.items) }

// Lost returns how many states the line lost on purpose.
func (l *Line) Lost() int64 { return l.lost }

// Clear drops every waiting message (a link that closed).
func (l *Line) Clear() {
	clear(l.items)
	l.items = l.items[:0]
	l.lastReliable = 0
}

type item struct {
	due      time.Duration
	seq      uint64 // ties keep push order
	data     []byte
	reliable bool
}

type itemHeap []item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].seq < h[j].seq
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = item{}
	*h = old[:len(old)-1]
	return it
}
