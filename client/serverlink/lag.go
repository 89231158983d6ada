package serverlink

import (
	"sync/atomic"

	"github.com/nearzero/nearzero/client/realtime"
)

// delayLine is one direction of the lag simulator under the server link,
// on the one real-time runner (realtime.Lag) the direct links and the UDP
// relay use too: a stream line (TCP's behaviour: nothing lost, a loss
// delays what follows) for what rides the WebSocket, and a datagram line
// (UDP's: a loss loses that message alone) for what rides the datagram
// path. While the simulator is off and nothing waits, callers skip it
// (active) and deliver at once, so an idle simulator costs nothing.
type delayLine struct {
	lag      *realtime.Lag
	line     *realtime.LagLine           // the WebSocket's
	dgLine   *realtime.LagLine           // the datagram path's
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
	if d.dgLine, err = d.lag.NewLine(cfg, seed^0x9e3779b97f4a7c15, deliver); err != nil {
		d.lag.Close()
		return nil, err
	}
	return d, nil
}

// onPanic sets f to be told of a panic recovered in the line's goroutine
// (in deliver, or in the simulator itself).
func (d *delayLine) onPanic(f func(error)) { d.panicked.Store(&f) }

// setConfig changes the simulator live.
func (d *delayLine) setConfig(cfg LagConfig) error { return d.lag.SetConfig(cfg) }

// active reports whether messages must go through the line (see
// realtime.LagLine.Active); when not, callers skip the copy push needs.
func (d *delayLine) active() bool { return d.line.Active() || d.dgLine.Active() }

// push takes ownership of data, a message on the WebSocket.
func (d *delayLine) push(data []byte, reliable bool) { d.line.Push(data, reliable) }

// pushDatagram takes ownership of data, a datagram: the simulator may
// lose it.
func (d *delayLine) pushDatagram(data []byte) { d.dgLine.Push(data, false) }

// close stops the line; undelivered messages are dropped. Safe to repeat.
func (d *delayLine) close() { d.lag.Close() }

// dropped returns how many messages the datagram line lost on purpose
// (the stream line delays instead).
func (d *delayLine) dropped() int64 { return d.line.Lost() + d.dgLine.Lost() }

// retransmitted returns how many transmissions the line lost and made
// again.
func (d *delayLine) retransmitted() int64 { return d.line.Retransmitted() }
