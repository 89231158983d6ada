package serverlink

import (
	"sync/atomic"

	"github.com/nearzero/nearzero/client/realtime"
)

// delayLine is one direction of the lag simulator under the server link:
// a stream line (TCP's behaviour: nothing lost, a loss delays what
// follows) of the one real-time runner (realtime.Lag), which the direct
// links and the UDP relay use too with datagram lines. While the
// simulator is off and nothing waits, callers skip it (active) and
// deliver at once, so an idle simulator costs nothing.
type delayLine struct {
	lag      *realtime.Lag
	line     *realtime.LagLine
	panicked atomic.Pointer[func(error)] // told of a recovered panic
}

func newDelayLine(cfg LagConfig, seed uint64, deliver func([]byte, bool)) (*delayLine, error) {
	d := &delayLine{}
	d.lag = realtime.NewLag(func(v any) {
		if f := d.panicked.Load(); f != nil {
			(*f)(panicError("lag simulator", v))
		}
	})
	line, err := d.lag.NewStreamLine(cfg, seed, deliver)
	if err != nil {
		d.lag.Close()
		return nil, err
	}
	d.line = line
	return d, nil
}

// onPanic sets f to be told of a panic recovered in the line's goroutine
// (in deliver, or in the simulator itself).
func (d *delayLine) onPanic(f func(error)) { d.panicked.Store(&f) }

// setConfig changes the simulator live.
func (d *delayLine) setConfig(cfg LagConfig) error { return d.line.SetConfig(cfg) }

// active reports whether messages must go through the line (see
// realtime.LagLine.Active); when not, callers skip the copy push needs.
func (d *delayLine) active() bool { return d.line.Active() }

// push takes ownership of data.
func (d *delayLine) push(data []byte, reliable bool) { d.line.Push(data, reliable) }

// close stops the line; undelivered messages are dropped. Safe to repeat.
func (d *delayLine) close() { d.lag.Close() }

// dropped returns how many states the line lost on purpose (none: a
// stream line delays instead).
func (d *delayLine) dropped() int64 { return d.line.Lost() }

// retransmitted returns how many transmissions the line lost and made
// again.
func (d *delayLine) retransmitted() int64 { return d.line.Retransmitted() }
