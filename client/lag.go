package client

import (
	"sync"
	"time"

	"github.com/nearzero/nearzero/netcode/lagsim"
)

// delayLine drives one direction of the lag simulator (netcode/lagsim) on
// real time: one goroutine pops messages when they fall due and hands them
// to deliver. While the simulator is off and nothing waits, push delivers
// at once on the caller's goroutine, so an idle simulator costs nothing.
type delayLine struct {
	deliver func(data []byte, reliable bool) // never called with mu held
	start   time.Time

	mu       sync.Mutex // guards line
	line     *lagsim.Line
	wake     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func newDelayLine(cfg LagConfig, seed uint64, deliver func([]byte, bool)) (*delayLine, error) {
	line, err := lagsim.NewLine(cfg, seed)
	if err != nil {
		return nil, err
	}
	d := &delayLine{deliver: deliver, start: time.Now(), line: line,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go d.run()
	return d, nil
}

func (d *delayLine) now() time.Duration { return time.Since(d.start) }

// setConfig changes the simulator live.
func (d *delayLine) setConfig(cfg LagConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.line.SetConfig(cfg)
}

// active reports whether messages must go through the line: the simulator
// is on, or messages from before it was turned off still wait. When it is
// not, callers skip the line (and the copy a push needs).
func (d *delayLine) active() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.line.Config().On() || d.line.Len() > 0
}

// push takes ownership of data.
func (d *delayLine) push(data []byte, reliable bool) {
	d.mu.Lock()
	d.line.Push(d.now(), data, reliable)
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
	type msg struct {
		data     []byte
		reliable bool
	}
	var ready []msg
	for {
		d.mu.Lock()
		wait := time.Hour
		now := d.now()
		ready = ready[:0]
		for {
			b, rel, ok := d.line.Pop(now)
			if !ok {
				break
			}
			ready = append(ready, msg{b, rel})
		}
		if due, ok := d.line.Next(); ok {
			wait = due - now
		}
		d.mu.Unlock()
		for _, m := range ready {
			d.deliver(m.data, m.reliable)
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

// close stops the line; undelivered messages are dropped. Safe to repeat.
func (d *delayLine) close() {
	d.stopOnce.Do(func() { close(d.stop) })
	<-d.done
}

// dropped returns how many states the line lost on purpose.
func (d *delayLine) dropped() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.line.Lost()
}
