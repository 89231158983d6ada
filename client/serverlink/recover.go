package serverlink

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrPanic marks an error made from a panic in one of the client's
// goroutines (reader, writer, supervisor, lag simulator). The panic is
// recovered and logged with its stack, the connection is restarted (or
// reported gone when the supervisor itself failed), and the error arrives
// in the Err of EventReconnecting or EventDisconnected: a bug in the
// network code must not take the game down with it.
var ErrPanic = errors.New("serverlink: internal error (recovered panic)")

// panicError turns a recovered value into an error wrapping ErrPanic.
func panicError(where string, v any) error {
	return fmt.Errorf("%w in %s: %v", ErrPanic, where, v)
}

// recovered logs the panic v of goroutine where and returns it as an
// error; nil when v is nil (no panic). Call it as recovered(where, recover())
// from a deferred function.
func (c *Conn) recovered(where string, v any) error {
	if v == nil {
		return nil
	}
	err := panicError(where, v)
	c.log.Error("serverlink: recovered a panic; restarting the connection", "where", where, "err", err,
		"stack", string(debug.Stack()))
	return err
}

// readSafely runs the reader of s; a panic ends the session with it.
func (c *Conn) readSafely(s *session) (err error) {
	defer func() {
		if p := c.recovered("reader", recover()); p != nil {
			err = p
		}
	}()
	err = c.readLoop(s)
	c.mu.Lock()
	if s.fault != nil {
		err = s.fault // the writer failed and cut the connection
	}
	c.mu.Unlock()
	return err
}

// recoverSession, deferred by the writer, ends s with a panic: the reader
// then returns the fault, and the supervisor reconnects.
func (c *Conn) recoverSession(s *session, where string) {
	if err := c.recovered(where, recover()); err != nil {
		c.endSession(s, err)
	}
}

// endSession records err as the reason s ended and cuts its connection.
func (c *Conn) endSession(s *session, err error) {
	c.mu.Lock()
	if s.fault == nil {
		s.fault = err
	}
	c.mu.Unlock()
	_ = s.ws.CloseNow()
}

// recoverRun, deferred by the supervisor, reports a panic there as the
// end of the client: nobody is left to reconnect.
func (c *Conn) recoverRun() {
	err := c.recovered("supervisor", recover())
	if err == nil {
		return
	}
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s != nil {
		_ = s.ws.CloseNow()
	}
	c.disconnected(err)
}

// fault reports a panic recovered outside the session's goroutines (the
// lag simulator): the current connection is restarted with it, or, while
// reconnecting, it is reported as such.
func (c *Conn) fault(err error) {
	c.log.Error("serverlink: recovered a panic", "err", err)
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	switch {
	case s != nil:
		c.endSession(s, err)
	case !c.isClosed():
		c.push(Event{Kind: EventReconnecting, Err: err, At: c.clock.Now()})
	}
}
