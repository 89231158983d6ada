package client

import (
	"sync"
	"sync/atomic"
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
	panicked atomic.Pointer[func(error)] // told of a recovered panic
}

// onPanic sets f to be told of a panic recovered in the line's goroutine
// (in deliver, or in the simulator itself).
func (d *delayLine) onPanic(f func(error)) { d.panicked.Store(&f) }

// recovered reports a panic v (nil: none) to the onPanic function.
func (d *delayLine) recovered(v any) bool {
	if v == nil {
		return false
	}
	if f := d.panicked.Load(); f != nil {
		(*f)(panicError("lag simulator", v))
	}
	return true
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

type lagMsg struct {
	data     []byte
	reliable bool
}

// run delivers messages as they fall due. A panic (in deliver, or in the
// simulator) is reported and the loop goes on: the line must keep
// delivering, or the connection would freeze.
func (d *delayLine) run() {
	defer close(d.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var ready []lagMsg
	for {
		var wait time.Duration
		ready, wait = d.step(ready[:0])
		t.Reset(wait)
		select {
		case <-d.stop:
			return
		case <-d.wake:
		case <-t.C:
		}
	}
}

// step pops and delivers what is due, and returns when to look again.
func (d *delayLine) step(ready []lagMsg) (_ []lagMsg, wait time.Duration) {
	wait = time.Hour
	defer func() {
		if d.recovered(recover()) {
			wait = 10 * time.Millisecond // do not spin on a repeating failure
		}
	}()
	func() {
		d.mu.Lock()
		defer d.mu.Unlock() // also on a panic in the simulator
		now := d.now()
		for {
			b, rel, ok := d.line.Pop(now)
			if !ok {
				break
			}
			ready = append(ready, lagMsg{b, rel})
		}
		if due, ok := d.line.Next(); ok {
			wait = due - now
		}
	}()
	for i, m := range ready {
		ready[i] = lagMsg{}
		d.deliverSafely(m)
	}
	return ready, wait
}

// deliverSafely delivers one message; a panic loses that message only.
func (d *delayLine) deliverSafely(m lagMsg) {
	defer func() { d.recovered(recover()) }()
	d.deliver(m.data, m.reliable)
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
