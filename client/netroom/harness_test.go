package netroom

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// harness is a Room on a scripted server link (testkit.FakeLink), fake
// direct links (fakeLinks) and a clock the test steps.
type harness struct {
	t       *testing.T
	room    *Room
	link    *testkit.FakeLink
	clock   *testkit.Clock
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
	h := &harness{t: t, link: testkit.NewFakeLink("tok-1"), clock: &testkit.Clock{}}
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

// drawn is the Receiver the Room's tests bind: a netcode/predict
// Predictor, as client/entity's Remote wraps one, counting what it took.
type drawn struct {
	pred  *predict.Predictor
	added uint64
}

func newDrawn(t testing.TB) *drawn {
	t.Helper()
	p, err := predict.New(predict.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &drawn{pred: p}
}

func (d *drawn) Add(path predict.Path, s *wire.State, local, arrival time.Duration) bool {
	if !d.pred.Add(path, predict.SampleOf(s, local), arrival) {
		return false
	}
	d.added++
	return true
}

func (d *drawn) Jitter() time.Duration { return d.pred.Jitter() }
func (d *drawn) Loss() (float64, bool) { return 0, false }

// Added returns how many states it took.
func (d *drawn) Added() uint64 { return d.added }

// Frame returns the pose drawn at now.
func (d *drawn) Frame(now time.Duration) predict.Pose { return d.pred.PoseAt(now) }
