package serverlink

import (
	"time"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// EventKind says what happened.
type EventKind uint8

// Event kinds.
const (
	// EventMessage: the server sent Msg (Joined, RoomState, Notice,
	// Results, Signal, Left, Error...). Switch on Msg's type.
	EventMessage EventKind = iota + 1
	// EventSynced: the clock is synchronised to the server; remote states
	// flow from now on.
	EventSynced
	// EventReconnecting: the connection was lost (Err says why); the client
	// is retrying. Show "reconnecting".
	EventReconnecting
	// EventReconnected: the connection is back, and the seat too if the
	// client was in a room (a Joined message event precedes this one).
	EventReconnected
	// EventRoomLost: after a reconnect the room could not be rejoined
	// (Err says why, typically room_not_found after the seat hold).
	EventRoomLost
	// EventDisconnected: the connection is gone for good (Err says why; nil
	// after Close). No event follows.
	EventDisconnected
)

var kindNames = map[EventKind]string{EventMessage: "message", EventSynced: "synced",
	EventReconnecting: "reconnecting", EventReconnected: "reconnected", EventRoomLost: "room_lost",
	EventDisconnected: "disconnected"}

// String returns the kind's name.
func (k EventKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "unknown"
}

// Event is something the engine's main thread should know, drained with
// PollEvents.
type Event struct {
	Kind EventKind
	Msg  protocol.Message // EventMessage
	Err  error            // EventReconnecting, EventRoomLost, EventDisconnected
	At   time.Duration    // local clock when it happened
}

// RemoteState is a state relayed from another player (client/core's): Local
// is the sample time on the local clock (Clock), the server stamp mapped
// through the clock sync; feed it to the predictor.
type RemoteState = core.RemoteState

// ring is a bounded FIFO that drops its oldest element when full.
type ring[T any] struct {
	buf     []T
	head, n int
}

func newRing[T any](size int) ring[T] { return ring[T]{buf: make([]T, size)} }

// push adds v and reports whether an old element was dropped.
func (r *ring[T]) push(v T) bool {
	dropped := false
	if r.n == len(r.buf) {
		r.head = (r.head + 1) % len(r.buf)
		r.n--
		dropped = true
	}
	r.buf[(r.head+r.n)%len(r.buf)] = v
	r.n++
	return dropped
}

// drain appends every element to dst, oldest first, and empties the ring.
// The next push starts at the front again, so a ring polled every frame
// keeps to its first few slots in the cache rather than wandering through
// all of them.
func (r *ring[T]) drain(dst []T) []T {
	var zero T
	for ; r.n > 0; r.n-- {
		dst = append(dst, r.buf[r.head])
		r.buf[r.head] = zero
		r.head = (r.head + 1) % len(r.buf)
	}
	r.head = 0
	return dst
}
