package testkit

import (
	"context"
	"sync"
	"time"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// FakeLink is a scriptable server link (a netroom.ServerLink, the part of
// a serverlink.Conn a Room uses): the test queues the events and states
// the Room polls and reads what the Room sent. Create, Join and Leave
// succeed at once unless OnCreate, OnJoin or OnLeave say otherwise. Safe
// for concurrent use: the Room calls its requests from goroutines.
type FakeLink struct {
	mu             sync.Mutex
	events         []serverlink.Event
	states         []serverlink.RemoteState
	sent           []protocol.Message
	sentSt         []wire.State
	creates        int
	createSettings *protocol.Settings
	joins          []string
	leaves         int
	closed         bool
	offset         time.Duration // server minus local
	token          string
	createFn       func() error
	joinFn         func(code string) error
	leaveFn        func() error
	lag            []serverlink.LagConfig
}

// NewFakeLink returns a FakeLink whose server gave token.
func NewFakeLink(token string) *FakeLink { return &FakeLink{token: token} }

// Create counts the request, keeps its settings (CreateSettings) and
// answers with OnCreate's error, if set.
func (f *FakeLink) Create(_ context.Context, settings *protocol.Settings) (*protocol.Joined, error) {
	f.mu.Lock()
	f.creates++
	f.createSettings = settings
	fn := f.createFn
	f.mu.Unlock()
	if fn != nil {
		return nil, fn()
	}
	return &protocol.Joined{}, nil
}

// Join records the code and answers with OnJoin's error, if set.
func (f *FakeLink) Join(_ context.Context, code string) (*protocol.Joined, error) {
	f.mu.Lock()
	f.joins = append(f.joins, code)
	fn := f.joinFn
	f.mu.Unlock()
	if fn != nil {
		return nil, fn(code)
	}
	return &protocol.Joined{}, nil
}

// Leave counts the request and answers with OnLeave's error, if set.
func (f *FakeLink) Leave(context.Context) error {
	f.mu.Lock()
	f.leaves++
	fn := f.leaveFn
	f.mu.Unlock()
	if fn != nil {
		return fn()
	}
	return nil
}

// Send records m (Sent).
func (f *FakeLink) Send(m protocol.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m)
	return nil
}

// SendState records a copy of s (SentStates).
func (f *FakeLink) SendState(s *wire.State) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sentSt = append(f.sentSt, *s)
	return nil
}

// PollEvents hands over the events queued by Push and Msg.
func (f *FakeLink) PollEvents(dst []serverlink.Event) []serverlink.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	dst = append(dst, f.events...)
	f.events = f.events[:0]
	return dst
}

// PollStates hands over the states queued by PushStates.
func (f *FakeLink) PollStates(dst []serverlink.RemoteState) []serverlink.RemoteState {
	f.mu.Lock()
	defer f.mu.Unlock()
	dst = append(dst, f.states...)
	f.states = f.states[:0]
	return dst
}

// Synced reports false: a Room learns it from EventSynced.
func (f *FakeLink) Synced() bool { return false }

// ServerTime is local plus the offset set (SetOffset).
func (f *FakeLink) ServerTime(local time.Duration) time.Duration { return local + f.Offset() }

// LocalTime is server minus the offset set.
func (f *FakeLink) LocalTime(server time.Duration) time.Duration { return server - f.Offset() }

// RTT is 3 ms.
func (f *FakeLink) RTT() time.Duration { return 3 * time.Millisecond }

// Token returns the token given to NewFakeLink.
func (f *FakeLink) Token() string { return f.token }

// Close marks the link closed (Closed).
func (f *FakeLink) Close(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// SetLag records live lag changes (Lags); a Room finds it by interface,
// as on a serverlink.Conn.
func (f *FakeLink) SetLag(l serverlink.LagConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lag = append(f.lag, l)
	return nil
}

// Push queues events for the next PollEvents.
func (f *FakeLink) Push(evs ...serverlink.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, evs...)
}

// Msg queues a server message (an EventMessage) for the next PollEvents.
func (f *FakeLink) Msg(m protocol.Message) {
	f.Push(serverlink.Event{Kind: serverlink.EventMessage, Msg: m})
}

// PushStates queues received states for the next PollStates.
func (f *FakeLink) PushStates(states ...serverlink.RemoteState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states = append(f.states, states...)
}

// Sent returns a copy of the messages sent so far.
func (f *FakeLink) Sent() []protocol.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]protocol.Message(nil), f.sent...)
}

// TakeSent returns the messages sent since the last TakeSent.
func (f *FakeLink) TakeSent() []protocol.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.sent
	f.sent = nil
	return out
}

// SentStates returns a copy of the states sent so far.
func (f *FakeLink) SentStates() []wire.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wire.State(nil), f.sentSt...)
}

// TakeSentStates returns the states sent since the last TakeSentStates.
func (f *FakeLink) TakeSentStates() []wire.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.sentSt
	f.sentSt = nil
	return out
}

// CreateSettings returns the settings of the last Create (nil: none).
func (f *FakeLink) CreateSettings() *protocol.Settings {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.createSettings
}

// Creates returns how many creates were asked.
func (f *FakeLink) Creates() int { f.mu.Lock(); defer f.mu.Unlock(); return f.creates }

// Joins returns the codes joined so far.
func (f *FakeLink) Joins() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.joins...)
}

// Leaves returns how many leaves were asked.
func (f *FakeLink) Leaves() int { f.mu.Lock(); defer f.mu.Unlock(); return f.leaves }

// Closed reports whether Close was called.
func (f *FakeLink) Closed() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.closed }

// Lags returns the lag settings applied live so far.
func (f *FakeLink) Lags() []serverlink.LagConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]serverlink.LagConfig(nil), f.lag...)
}

// Offset returns the server clock minus the local one.
func (f *FakeLink) Offset() time.Duration { f.mu.Lock(); defer f.mu.Unlock(); return f.offset }

// SetOffset sets the server clock minus the local one.
func (f *FakeLink) SetOffset(d time.Duration) { f.mu.Lock(); f.offset = d; f.mu.Unlock() }

// OnCreate makes Create answer with fn's error (nil: success).
func (f *FakeLink) OnCreate(fn func() error) { f.mu.Lock(); f.createFn = fn; f.mu.Unlock() }

// OnJoin makes Join answer with fn's error for the code (nil fn: success).
func (f *FakeLink) OnJoin(fn func(code string) error) { f.mu.Lock(); f.joinFn = fn; f.mu.Unlock() }

// OnLeave makes Leave answer with fn's error (nil: success).
func (f *FakeLink) OnLeave(fn func() error) { f.mu.Lock(); f.leaveFn = fn; f.mu.Unlock() }
