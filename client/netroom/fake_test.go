package netroom

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// fakeLink is a scriptable ServerLink: the test queues client events and states
// for the Room to poll, and reads what the Room sent. Its request methods
// answer with the funcs set (nil: success with no message).
type fakeLink struct {
	mu       sync.Mutex
	events   []serverlink.Event
	states   []serverlink.RemoteState
	sent     []protocol.Message
	sentSt   []wire.State
	creates  int
	joins    []string
	leaves   int
	closed   bool
	synced   bool
	offset   time.Duration // server minus local
	token    string
	createFn func() error
	joinFn   func(code string) error
	leaveFn  func() error
	lag      []serverlink.LagConfig
}

// SetLag records live lag changes (the Room finds it by interface).
func (f *fakeLink) SetLag(l serverlink.LagConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lag = append(f.lag, l)
	return nil
}

func (f *fakeLink) Create(ctx context.Context, _ *protocol.Settings) (*protocol.Joined, error) {
	f.mu.Lock()
	f.creates++
	fn := f.createFn
	f.mu.Unlock()
	if fn != nil {
		return nil, fn()
	}
	return &protocol.Joined{}, nil
}

func (f *fakeLink) Join(ctx context.Context, code string) (*protocol.Joined, error) {
	f.mu.Lock()
	f.joins = append(f.joins, code)
	fn := f.joinFn
	f.mu.Unlock()
	if fn != nil {
		return nil, fn(code)
	}
	return &protocol.Joined{}, nil
}

func (f *fakeLink) Leave(ctx context.Context) error {
	f.mu.Lock()
	f.leaves++
	fn := f.leaveFn
	f.mu.Unlock()
	if fn != nil {
		return fn()
	}
	return nil
}

func (f *fakeLink) Send(m protocol.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m)
	return nil
}

func (f *fakeLink) SendState(s *wire.State) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sentSt = append(f.sentSt, *s)
	return nil
}

func (f *fakeLink) PollEvents(dst []serverlink.Event) []serverlink.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	dst = append(dst, f.events...)
	f.events = f.events[:0]
	return dst
}

func (f *fakeLink) PollStates(dst []serverlink.RemoteState) []serverlink.RemoteState {
	f.mu.Lock()
	defer f.mu.Unlock()
	dst = append(dst, f.states...)
	f.states = f.states[:0]
	return dst
}

func (f *fakeLink) Synced() bool                             { f.mu.Lock(); defer f.mu.Unlock(); return f.synced }
func (f *fakeLink) ServerTime(l time.Duration) time.Duration { return l + f.offset }
func (f *fakeLink) LocalTime(s time.Duration) time.Duration  { return s - f.offset }
func (f *fakeLink) RTT() time.Duration                       { return 3 * time.Millisecond }
func (f *fakeLink) Token() string                            { return f.token }

func (f *fakeLink) Close(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// push queues client events for the next poll.
func (f *fakeLink) push(evs ...serverlink.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, evs...)
}

func (f *fakeLink) msg(m protocol.Message) {
	f.push(serverlink.Event{Kind: serverlink.EventMessage, Msg: m})
}

func (f *fakeLink) isClosed() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.closed }

func (f *fakeLink) sentMessages() []protocol.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]protocol.Message(nil), f.sent...)
}

// fakeClock is a clock the test steps.
type fakeClock struct {
	mu sync.Mutex
	t  time.Duration
}

func (c *fakeClock) Now() time.Duration  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t += d; c.mu.Unlock() }

// harness is a Room on a fake link and a fake clock.
type harness struct {
	t       *testing.T
	room    *Room
	link    *fakeLink
	clock   *fakeClock
	dials   []dialCall
	dialErr error
	mu      sync.Mutex
}

type dialCall struct {
	url  string
	opts serverlink.Options
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{t: t, link: &fakeLink{token: "tok-1"}, clock: &fakeClock{}}
	if cfg.Server == "" {
		cfg.Server = "127.0.0.1:8787"
	}
	cfg.Clock = h.clock
	if cfg.NewDirect == nil {
		cfg.NewDirect = func(direct.Config) (direct.Links, error) { return &fakeLinks{}, nil } // no real network
	}
	cfg.Dial = func(ctx context.Context, url string, opts *serverlink.Options) (ServerLink, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.dials = append(h.dials, dialCall{url: url, opts: *opts})
		if h.dialErr != nil {
			return nil, h.dialErr
		}
		return h.link, nil
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.room = r
	t.Cleanup(func() {
		r.Close()
		if !r.Wait(5 * time.Second) {
			t.Error("room goroutines did not end")
		}
	})
	return h
}

// until calls Update until cond holds on the accumulated events (goroutine
// results arrive asynchronously), failing after a generous bound. It
// returns every event seen.
func (h *harness) until(cond func([]Event) bool) []Event {
	h.t.Helper()
	var all []Event
	deadline := time.Now().Add(5 * time.Second)
	for {
		all = append(all, h.room.Update(h.clock.Now())...)
		if cond(all) {
			return all
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("condition not met; events so far: %v", kinds(all))
		}
		time.Sleep(time.Millisecond)
	}
}

// update runs one Update and returns a copy of its events.
func (h *harness) update() []Event {
	return append([]Event(nil), h.room.Update(h.clock.Now())...)
}

func has(k EventKind) func([]Event) bool {
	return func(evs []Event) bool {
		for _, e := range evs {
			if e.Kind == k {
				return true
			}
		}
		return false
	}
}

func kinds(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind.String()
	}
	return out
}

// joinedAs builds the Joined message for slot in a room with players.
func joinedAs(code string, slot, host int, players ...protocol.PlayerState) *protocol.Joined {
	return &protocol.Joined{Code: code, Invite: "nearzero://join/" + code, Slot: slot,
		Room: protocol.RoomState{Code: code, Rev: 1, Phase: protocol.PhaseLobby, Host: host, Players: players}}
}

func player(slot int, name string) protocol.PlayerState {
	return protocol.PlayerState{Slot: slot, User: "u" + name, Name: name, Connected: true}
}
