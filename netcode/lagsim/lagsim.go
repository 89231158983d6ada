// Package lagsim is the lag simulator of docs/architecture.md §5, as a pure
// delay line on injected time: messages pushed at now come out of Pop once
// now has passed their due time, after Latency plus a random part of
// Jitter. It has no goroutine and reads no clock: the game client drives
// it from real time (client/realtime), tests and the bench from simulated time.
//
// A Line is one direction of one link, of one of two kinds:
//
//   - a datagram line (NewLine: UDP, a data channel, the direct links):
//     states (unreliable messages) may be lost and reordered; reliable
//     messages keep their order.
//   - a stream line (NewStreamLine: TCP, the server's WebSocket): nothing is
//     lost and nothing overtakes. A message Loss hits is sent again after a
//     retransmission delay (again if hit again), and every message behind
//     it waits for it (head-of-line blocking), as TCP delivers: a lossy
//     server link makes states late, in bursts, rather than missing.
//
// A Line is not safe for concurrent use; the caller serialises access.
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

// Retransmission on a stream line: a lost segment is found lost when a
// later one is acknowledged and the reordering window after it has passed
// (TCP's RACK, Linux's default), then sent again (Config.Retransmit). A
// retransmission lost again is found the same way, since RACK goes by
// when a segment was sent and a game sends a state every frame after it:
// the retransmission timer (200 ms and more beyond a round trip) fires
// only at the tail of a stream, which a 60 Hz stream has not. The network
// lab showed it: over twenty runs at 40±10 ms and 2 % loss the real TCP
// drew 1 frame with a state over 400 ms old, a simulator that waited for
// the timer 26; over four, the kernel found 7 retransmissions lost again
// and fired no retransmission timeout.
const (
	// RetransmitWait is what a loss detection waits beyond a round trip
	// and a quarter: the segment after the lost one (a frame at 60 Hz)
	// and the receiver's delayed acknowledgement of it.
	RetransmitWait = 20 * time.Millisecond
	// MaxRetransmits bounds the retransmissions of one message, so that a
	// Loss of 1 still delivers (a simulator set to an extreme loss should
	// slow a game, not stop it).
	MaxRetransmits = 8
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
	// messages are never dropped. On a stream line it is the probability
	// that each transmission of a message is lost (and sent again).
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
	stream       bool
	rng          *rand.Rand
	items        itemHeap
	seq          uint64
	lastReliable time.Duration
	lost         int64
	resent       int64
}

// NewLine returns a datagram line with cfg, its random draws seeded by
// seed. An invalid cfg is refused.
func NewLine(cfg Config, seed uint64) (*Line, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Line{cfg: cfg, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}, nil
}

// NewStreamLine returns a stream line (TCP's behaviour: see the package
// documentation) with cfg, its random draws seeded by seed. An invalid
// cfg is refused.
func NewStreamLine(cfg Config, seed uint64) (*Line, error) {
	l, err := NewLine(cfg, seed)
	if err != nil {
		return nil, err
	}
	l.stream = true
	return l, nil
}

// Stream reports whether the line is a stream line.
func (l *Line) Stream() bool { return l.stream }

// Retransmit returns the delay a lost transmission adds on a stream line
// with cfg: a round trip (twice Latency plus the mean jitter each way),
// a quarter more (TCP's reordering window), and RetransmitWait.
func (c Config) Retransmit() time.Duration {
	rtt := c.rtt()
	return rtt + rtt/4 + RetransmitWait
}

// rtt is a stream line's round trip: twice Latency plus the mean jitter
// each way.
func (c Config) rtt() time.Duration { return 2*c.Latency + c.Jitter }

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
// reports false when the simulator lost the message on purpose (states on
// a datagram line only). On a stream line every message is delivered in
// order; Pop still says which were pushed as reliable.
func (l *Line) Push(now time.Duration, data []byte, reliable bool) bool {
	ordered := reliable || l.stream
	if l.stream {
		for range MaxRetransmits {
			if l.cfg.Loss <= 0 || l.rng.Float64() >= l.cfg.Loss {
				break
			}
			now += l.cfg.Retransmit() // the transmission that gets through leaves then
			l.resent++
		}
	}
	if !ordered && l.cfg.Loss > 0 && l.rng.Float64() < l.cfg.Loss {
		l.lost++
		return false
	}
	due := now + l.cfg.Latency
	if l.cfg.Jitter > 0 {
		due += time.Duration(l.rng.Int64N(int64(l.cfg.Jitter)))
	}
	if ordered {
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

// Lost returns how many states the line lost on purpose (none on a stream
// line).
func (l *Line) Lost() int64 { return l.lost }

// Retransmitted returns how many transmissions a stream line lost and made
// again.
func (l *Line) Retransmitted() int64 { return l.resent }

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
