package serverlink

import (
	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/netcode/clock"
)

func syncWithSlew(rate float64) clock.SyncConfig { return clock.SyncConfig{SlewRate: rate} }

// Offline returns a Conn seated in room code as slot, with a connection
// that has no socket: for the send path's benchmark. write runs the
// writer's step (nextWrites) and returns the bytes it would hand to the
// socket; stop ends the lag simulator's goroutines.
func Offline(opts *Options, code string, slot int) (c *Conn, write func() []byte, stop func(), err error) {
	o := opts.WithDefaults()
	c = &Conn{opts: o, clock: o.Clock, log: o.Log, closedCh: make(chan struct{}), code: code, slot: slot,
		events: newRing[Event](o.EventQueue), states: newRing[RemoteState](o.StateQueue), notify: make(chan struct{}, 1)}
	if c.core, err = core.NewServerPath(&o.Sync, o.SendQueue, o.SendLead); err != nil {
		return nil, nil, nil, err
	}
	c.lead.Max = o.SendLead
	c.lagOut, _ = newDelayLine(o.Lag, o.lagSeed()+1, c.enqueueDelayed)
	c.lagIn, _ = newDelayLine(o.Lag, o.lagSeed()+2, func(b []byte, _ bool) { c.process(b, c.clock.Now()) })
	s := &session{wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.sess = s
	var w writeBufs
	write = func() []byte {
		c.nextWrites(s, &w)
		return w.batch
	}
	return c, write, c.stopLag, nil
}
