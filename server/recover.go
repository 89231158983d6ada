package server

import (
	"runtime/debug"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// restartPause is the least time between two restarts of a background loop
// that panicked, so a loop that panics at once cannot spin a core.
const restartPause = 100 * time.Millisecond

// supervise runs loop on the calling goroutine until it returns, restarting
// it after a panic (logged with its stack). A bug in one background loop
// must not take the process down: embedded in a game (server/embedded),
// the process is the game. It marks s.bg done when loop returns.
func (s *Server) supervise(name string, loop func()) {
	defer s.bg.Done()
	for !s.runRecovered(name, loop) {
		select {
		case <-s.stop:
			return
		case <-time.After(restartPause):
		}
	}
}

// runRecovered runs f and reports false if it panicked.
func (s *Server) runRecovered(name string, f func()) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			s.m.Panics.Inc()
			s.log.Error("panic in a server goroutine; restarting it", "goroutine", name, "panic", v,
				"stack", string(debug.Stack()))
			ok = false
		}
	}()
	f()
	return true
}

// failLocked ends a room whose logic panicked with v (under h.mu): its
// players are closed with CodeInternal and the caller retires the room;
// the server and its other rooms go on.
func (h *host) failLocked(v any) {
	h.s.m.Panics.Inc()
	h.s.log.Error("panic in room logic; closing the room", "room", h.code, "panic", v,
		"stack", string(debug.Stack()))
	func() {
		// Closing may panic again on the same broken state: the room is
		// retired either way.
		defer func() { _ = recover() }()
		h.r.Close(protocol.CodeInternal, "internal server error")
	}()
	h.closed = true
	h.stopTimerLocked()
}

// recoverConn turns a panic in a connection's writer into the end of that
// connection alone. Deferred by writeLoop.
func (c *conn) recoverConn() {
	if v := recover(); v != nil {
		c.s.m.Panics.Inc()
		c.log.Error("panic in a connection writer; closing the connection", "panic", v,
			"stack", string(debug.Stack()))
		_ = c.ws.CloseNow()
	}
}
