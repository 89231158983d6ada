package client

import (
	"container/heap"
	"math/rand/v2"
	"sync"
	"time"
)

// delayLine is one direction of the lag simulator: messages come out after
// Latency plus a random part of Jitter, states may be lost, and reliable
// messages never overtake each other. It runs one goroutine on real time.
type delayLine struct {
	cfg     LagConfig
	deliver func(data []byte, reliable bool) // called on the line's goroutine

	mu           sync.Mutex // guards below
	rng          *rand.Rand
	items        itemHeap
	seq          uint64
	lastReliable time.Time
	lost         int64
	wake         chan struct{}
	stop         chan struct{}
	done         chan struct{}
}

type item struct {
	due      time.Time
	seq      uint64 // ties keep arrival order
	data     []byte
	reliable bool
}

type itemHeap []item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(item)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

func newDelayLine(cfg LagConfig, seed uint64, deliver func([]byte, bool)) *delayLine {
	d := &delayLine{cfg: cfg, deliver: deliver, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go d.run()
	return d
}

// push takes ownership of data.
func (d *delayLine) push(data []byte, reliable bool) {
	d.mu.Lock()
	if !reliable && d.cfg.Loss > 0 && d.rng.Float64() < d.cfg.Loss {
		d.lost++
		d.mu.Unlock()
		return
	}
	delay := d.cfg.Latency
	if d.cfg.Jitter > 0 {
		delay += time.Duration(d.rng.Int64N(int64(d.cfg.Jitter)))
	}
	due := time.Now().Add(delay)
	if reliable {
		if due.Before(d.lastReliable) {
			due = d.lastReliable
		}
		d.lastReliable = due
	}
	d.seq++
	heap.Push(&d.items, item{due: due, seq: d.seq, data: data, reliable: reliable})
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *delayLine) run() {
	defer close(d.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		d.mu.Lock()
		var wait time.Duration = time.Hour
		now := time.Now()
		var ready []item
		for len(d.items) > 0 && !d.items[0].due.After(now) {
			ready = append(ready, heap.Pop(&d.items).(item))
		}
		if len(d.items) > 0 {
			wait = d.items[0].due.Sub(now)
		}
		d.mu.Unlock()
		for _, it := range ready {
			d.deliver(it.data, it.reliable)
		}
		t.Reset(wait)
		select {
		case <-d.stop:
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

// close stops the line; undelivered messages are dropped.
func (d *delayLine) close() {
	close(d.stop)
	<-d.done
}

// dropped returns how many states the line lost on purpose.
func (d *delayLine) dropped() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lost
}
