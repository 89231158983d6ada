package realtime

import (
	"fmt"
	"sync"
	"time"

	"github.com/nearzero/nearzero/netcode/lagsim"
)

// lagRetry is how soon the runner looks again after a panic in the
// simulator: soon, but not a spin on a repeating failure.
const lagRetry = 10 * time.Millisecond

// Lag drives lag simulator lines (netcode/lagsim) on real time: one
// goroutine pops each message when it falls due and hands it to its
// line's deliver function, never with the lock held. A part makes one Lag
// and a line per direction (and per link, where it has several).
//
// A line that is off and empty costs nothing: Send delivers on the
// caller's goroutine, and Active tells a caller that wants to skip the
// copy Push needs. A panic in a deliver function (or in the simulator) is
// handed to the Lag's panic function and loses that message only: the
// runner goes on, or the link would freeze.
//
// Methods are safe for concurrent use.
type Lag struct {
	clock   *Wall
	onPanic func(v any) // nil: a panic is dropped silently

	mu    sync.Mutex // guards lines and what they hold
	lines []*LagLine

	wake chan struct{}
	stop chan struct{}
	once sync.Once
	done chan struct{}
}

// LagLine is one direction of one link under a Lag.
type LagLine struct {
	lag     *Lag
	line    *lagsim.Line // guarded by lag.mu
	deliver func(data []byte, reliable bool)
}

type due struct {
	line     *LagLine
	data     []byte
	reliable bool
}

// NewLag starts a runner with no lines. onPanic, when not nil, is called
// on the runner's goroutine with the value of each recovered panic, from
// the deferred recovery (debug.Stack there shows where it happened).
// Close stops the runner.
func NewLag(onPanic func(v any)) *Lag {
	g := &Lag{clock: NewWall(), onPanic: onPanic,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go g.run()
	return g
}

// NewLine adds a datagram line (lagsim.NewLine: UDP's behaviour) with cfg
// whose random draws are seeded by seed; deliver receives its messages
// when they fall due, on the runner's goroutine (or on the sender's, while
// the line is off and empty). An invalid cfg is refused.
func (g *Lag) NewLine(cfg lagsim.Config, seed uint64, deliver func(data []byte, reliable bool)) (*LagLine, error) {
	line, err := lagsim.NewLine(cfg, seed)
	if err != nil {
		return nil, fmt.Errorf("lag line: %w", err)
	}
	return g.add(line, deliver), nil
}

// NewStreamLine is NewLine for a stream line (lagsim.NewStreamLine: TCP's
// behaviour, nothing lost, losses delay what follows), as under a
// WebSocket.
func (g *Lag) NewStreamLine(cfg lagsim.Config, seed uint64, deliver func(data []byte, reliable bool)) (*LagLine, error) {
	line, err := lagsim.NewStreamLine(cfg, seed)
	if err != nil {
		return nil, fmt.Errorf("lag line: %w", err)
	}
	return g.add(line, deliver), nil
}

func (g *Lag) add(line *lagsim.Line, deliver func(data []byte, reliable bool)) *LagLine {
	l := &LagLine{lag: g, line: line, deliver: deliver}
	g.mu.Lock()
	g.lines = append(g.lines, l)
	g.mu.Unlock()
	return l
}

// SetConfig changes every line of the runner live; an invalid cfg changes
// none. Messages already waiting keep their due times.
func (g *Lag) SetConfig(cfg lagsim.Config) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("lag: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, l := range g.lines {
		_ = l.line.SetConfig(cfg) // validated above
	}
	return nil
}

// Close stops the runner and returns once its goroutine has ended;
// messages still waiting are dropped. Safe to repeat.
func (g *Lag) Close() {
	g.once.Do(func() { close(g.stop) })
	<-g.done
}

// Config returns the line's settings in force.
func (l *LagLine) Config() lagsim.Config {
	l.lag.mu.Lock()
	defer l.lag.mu.Unlock()
	return l.line.Config()
}

// SetConfig changes the line live. Messages already waiting keep their
// due times; reliable messages still keep their order.
func (l *LagLine) SetConfig(cfg lagsim.Config) error {
	l.lag.mu.Lock()
	defer l.lag.mu.Unlock()
	if err := l.line.SetConfig(cfg); err != nil {
		return fmt.Errorf("lag line: %w", err)
	}
	return nil
}

// Active reports whether messages must go through the line: it is on, or
// messages from before it was turned off still wait. When it is not, a
// caller may deliver itself and skip the copy Push needs.
func (l *LagLine) Active() bool {
	l.lag.mu.Lock()
	defer l.lag.mu.Unlock()
	return l.line.Config().On() || l.line.Len() > 0
}

// Push hands data to the line, which owns it from then on; it comes out
// of deliver when due (or never, if the simulator loses it).
func (l *LagLine) Push(data []byte, reliable bool) {
	l.lag.mu.Lock()
	l.line.Push(l.lag.clock.Now(), data, reliable)
	l.lag.mu.Unlock()
	l.lag.poke()
}

// Send delivers data on the caller's goroutine while the line is off and
// empty, and otherwise pushes a copy (the caller keeps data either way).
func (l *LagLine) Send(data []byte, reliable bool) {
	l.lag.mu.Lock()
	if !l.line.Config().On() && l.line.Len() == 0 {
		l.lag.mu.Unlock()
		l.deliver(data, reliable)
		return
	}
	l.line.Push(l.lag.clock.Now(), append([]byte(nil), data...), reliable)
	l.lag.mu.Unlock()
	l.lag.poke()
}

// Retransmitted returns how many transmissions a stream line lost and
// made again.
func (l *LagLine) Retransmitted() int64 {
	l.lag.mu.Lock()
	defer l.lag.mu.Unlock()
	return l.line.Retransmitted()
}

// Lost returns how many states the line lost on purpose.
func (l *LagLine) Lost() int64 {
	l.lag.mu.Lock()
	defer l.lag.mu.Unlock()
	return l.line.Lost()
}

// Len returns how many messages wait in the line.
func (l *LagLine) Len() int {
	l.lag.mu.Lock()
	defer l.lag.mu.Unlock()
	return l.line.Len()
}

// poke wakes the runner to look at the lines again.
func (g *Lag) poke() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

func (g *Lag) run() {
	defer close(g.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var ready []due // reused
	for {
		var wait time.Duration
		ready, wait = g.step(ready[:0])
		t.Reset(wait)
		select {
		case <-g.stop:
			return
		case <-g.wake:
		case <-t.C:
		}
	}
}

// step delivers what is due on every line and returns how long to wait
// before looking again.
func (g *Lag) step(ready []due) (_ []due, wait time.Duration) {
	ready, wait = g.pop(ready)
	for i := range ready {
		g.deliver(ready[i])
		ready[i] = due{}
	}
	return ready, wait
}

// pop appends what is due on every line to ready.
func (g *Lag) pop(ready []due) (_ []due, wait time.Duration) {
	wait = time.Hour
	defer func() {
		if g.recovered(recover()) {
			wait = lagRetry
		}
	}()
	g.mu.Lock()
	defer g.mu.Unlock() // also on a panic in the simulator
	now := g.clock.Now()
	for _, l := range g.lines {
		for {
			b, rel, ok := l.line.Pop(now)
			if !ok {
				break
			}
			ready = append(ready, due{l, b, rel})
		}
		if at, ok := l.line.Next(); ok {
			wait = min(wait, at-now)
		}
	}
	return ready, max(wait, 0)
}

// deliver hands one message over; a panic loses that message only.
func (g *Lag) deliver(d due) {
	defer func() { g.recovered(recover()) }()
	d.line.deliver(d.data, d.reliable)
}

// recovered reports a panic v (nil: none) to the panic function.
func (g *Lag) recovered(v any) bool {
	if v == nil {
		return false
	}
	if g.onPanic != nil {
		g.onPanic(v)
	}
	return true
}
