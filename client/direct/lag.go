package direct

import (
	"fmt"
	"sync"
	"time"

	"github.com/nearzero/nearzero/netcode/lagsim"
)

// lagRunner is the lag simulator under the direct links: two
// netcode/lagsim Lines (out and in) driven on real time by one goroutine,
// as client/lag.go drives the server link's. Each message carries its
// link's slot in a first byte. While the simulator is off and nothing
// waits, messages pass straight through on the caller's goroutine.
type lagRunner struct {
	send, recv func(slot int, data []byte) // never called with mu held
	now        func() time.Duration

	mu      sync.Mutex
	outLine *lagsim.Line
	inLine  *lagsim.Line
	wake    chan struct{}
	stop    chan struct{}
	once    sync.Once
	done    chan struct{}
}

func newLagRunner(cfg lagsim.Config, seed uint64, send, recv func(int, []byte), now func() time.Duration) (*lagRunner, error) {
	out, err := lagsim.NewLine(cfg, seed+1)
	if err != nil {
		return nil, fmt.Errorf("lag: %w", err)
	}
	in, _ := lagsim.NewLine(cfg, seed+2) // the same cfg: valid
	l := &lagRunner{send: send, recv: recv, now: now, outLine: out, inLine: in,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l, nil
}

func (l *lagRunner) setConfig(cfg lagsim.Config) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.outLine.SetConfig(cfg); err != nil {
		return err
	}
	return l.inLine.SetConfig(cfg)
}

// out sends data to slot through the simulator (data is copied when it
// must wait).
func (l *lagRunner) out(slot int, data []byte) { l.push(l.outLine, l.send, slot, data) }

// in receives data from slot through the simulator.
func (l *lagRunner) in(slot int, data []byte) { l.push(l.inLine, l.recv, slot, data) }

func (l *lagRunner) push(line *lagsim.Line, deliver func(int, []byte), slot int, data []byte) {
	l.mu.Lock()
	if !line.Config().On() && line.Len() == 0 {
		l.mu.Unlock()
		deliver(slot, data)
		return
	}
	b := make([]byte, 1+len(data))
	b[0] = byte(slot)
	copy(b[1:], data)
	line.Push(l.now(), b, false) // states and pings alike may drop: it is a lossy path
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *lagRunner) run() {
	defer close(l.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		t.Reset(l.step())
		select {
		case <-l.stop:
			return
		case <-l.wake:
		case <-t.C:
		}
	}
}

// step delivers what is due and returns how long to wait.
func (l *lagRunner) step() (wait time.Duration) {
	type due struct {
		deliver func(int, []byte)
		b       []byte
	}
	var ready []due
	wait = time.Hour
	l.mu.Lock()
	now := l.now()
	for _, x := range []struct {
		line    *lagsim.Line
		deliver func(int, []byte)
	}{{l.outLine, l.send}, {l.inLine, l.recv}} {
		for {
			b, _, ok := x.line.Pop(now)
			if !ok {
				break
			}
			ready = append(ready, due{x.deliver, b})
		}
		if at, ok := x.line.Next(); ok {
			wait = min(wait, at-now)
		}
	}
	l.mu.Unlock()
	for _, d := range ready {
		deliverSafely(d.deliver, d.b)
	}
	return max(wait, 0)
}

// deliverSafely delivers one message; a panic loses that message only
// (the runner must go on, or every link would freeze).
func deliverSafely(deliver func(int, []byte), b []byte) {
	defer func() { _ = recover() }()
	deliver(int(b[0]), b[1:])
}

// close stops the runner; messages still waiting are dropped.
func (l *lagRunner) close() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}
