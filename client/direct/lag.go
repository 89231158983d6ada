package direct

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/netcode/lagsim"
)

// lagRunner is the lag simulator under the direct links: two lines (out
// and in) of the one real-time runner (realtime.Lag), which the server
// link and the UDP relay use too. A message that must wait carries its
// link's slot in a first byte; while the simulator is off and nothing
// waits, messages pass straight through on the caller's goroutine.
type lagRunner struct {
	lag             *realtime.Lag
	outLine, inLine *realtime.LagLine
	send, recv      func(slot int, data []byte) // never called with the runner's lock held
}

func newLagRunner(cfg lagsim.Config, seed uint64, send, recv func(int, []byte), log *slog.Logger) (*lagRunner, error) {
	l := &lagRunner{send: send, recv: recv}
	// A panic in delivery loses that message only: the runner must go on,
	// or every link would freeze.
	l.lag = realtime.NewLag(func(v any) {
		log.Error("direct: recovered a panic", "in", "lag simulator", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	})
	unwrap := func(deliver func(int, []byte)) func([]byte, bool) {
		return func(b []byte, _ bool) { deliver(int(b[0]), b[1:]) }
	}
	out, err := l.lag.NewLine(cfg, seed+1, unwrap(send))
	if err != nil {
		l.lag.Close()
		return nil, fmt.Errorf("lag: %w", err)
	}
	in, _ := l.lag.NewLine(cfg, seed+2, unwrap(recv)) // the same cfg: valid
	l.outLine, l.inLine = out, in
	return l, nil
}

func (l *lagRunner) setConfig(cfg lagsim.Config) error { return l.lag.SetConfig(cfg) }

// out sends data to slot through the simulator (data is copied when it
// must wait).
func (l *lagRunner) out(slot int, data []byte) { l.push(l.outLine, l.send, slot, data) }

// in receives data from slot through the simulator.
func (l *lagRunner) in(slot int, data []byte) { l.push(l.inLine, l.recv, slot, data) }

func (l *lagRunner) push(line *realtime.LagLine, deliver func(int, []byte), slot int, data []byte) {
	if !line.Active() {
		deliver(slot, data)
		return
	}
	b := make([]byte, 1+len(data))
	b[0] = byte(slot)
	copy(b[1:], data)
	line.Push(b, false) // states and pings alike may drop: it is a lossy path
}

// close stops the runner; messages still waiting are dropped.
func (l *lagRunner) close() { l.lag.Close() }
