package netroom

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/typedargs"
)

// TestEventsAndChatOnLoopback sends events and chat between two Rooms
// through a real server.
func TestEventsAndChatOnLoopback(t *testing.T) {
	addr := startServer(t)
	ann, bob := newPeer(t, addr, "Ann"), newPeer(t, addr, "Bob")
	frames := func(cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "ann %v / bob %v", kinds(ann.events), kinds(bob.events))
			ann.frame()
			bob.frame()
			time.Sleep(2 * time.Millisecond)
		}
	}
	require.NoError(t, ann.room.Create())
	frames(func() bool { return ann.room.InRoom() })
	require.NoError(t, bob.room.Join(ann.room.Code()))
	frames(func() bool { return bob.room.InRoom() && len(ann.room.Players()) == 2 })

	of := func(p *peer, k EventKind) []Event {
		var out []Event
		for _, e := range p.events {
			if e.Kind == k {
				out = append(out, e)
			}
		}
		return out
	}
	for i := range 5 {
		require.NoError(t, ann.room.SendEvent("fire", []any{i, "x", typedargs.Vector2{1.5, 2}}, protocol.ToAll))
	}
	require.NoError(t, ann.room.SendChat("  gg\u202e  ", protocol.ToAll))
	frames(func() bool { return len(of(bob, EventGameEvent)) == 5 && len(of(bob, EventChat)) == 1 })
	for i, e := range of(bob, EventGameEvent) {
		assert.Equal(t, Event{Kind: EventGameEvent, Slot: 0, Text: "fire", Args: []any{int64(i), "x", typedargs.Vector2{1.5, 2}}}, e)
	}
	assert.Equal(t, Event{Kind: EventChat, Slot: 0, Text: "gg"}, of(bob, EventChat)[0])
	assert.Empty(t, of(ann, EventGameEvent), "no echo to the sender")

	// Refused locally, with EventError and the error returned.
	n := len(of(ann, EventError))
	err := ann.room.SendEvent("big", []any{strings.Repeat("x", protocol.MaxEventSize)}, protocol.ToAll)
	assert.ErrorIs(t, err, protocol.ErrEventTooBig)
	err = ann.room.SendEvent("bad", []any{math.NaN()}, protocol.ToAll)
	assert.ErrorIs(t, err, typedargs.ErrBadArg)
	err = ann.room.SendChat(strings.Repeat("a", 201), protocol.ToAll)
	assert.ErrorIs(t, err, protocol.ErrBadChat)
	ann.frame()
	assert.Len(t, of(ann, EventError), n+3)

	// Over the server's rate: refused there, reported as rate_limited.
	for range 70 {
		require.NoError(t, ann.room.SendEvent("spam", nil, 1))
	}
	frames(func() bool {
		for _, e := range of(ann, EventError) {
			if e.Code == protocol.CodeRateLimited && strings.Contains(e.Text, "events per second") {
				return true
			}
		}
		return false
	})
}

func TestReportHitAndResult(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	require.NoError(t, h.room.ReportHit(1, 2*time.Second, geom.Vec3{X: 1, Y: 2, Z: 3}))
	assert.Equal(t, []protocol.Message{&protocol.Hit{Target: 1, FireUS: 2_000_000, Point: [3]float64{1, 2, 3}}},
		h.link.sentMessages())
	res := &protocol.HitResult{From: 0, Target: 1, Accepted: true, Damage: 25, Health: 75, RewindUS: 90_000, MissBy: 0.2}
	h.link.msg(res)
	evs := h.update()
	require.Equal(t, []string{"hit"}, kinds(evs))
	assert.Equal(t, res, evs[0].Hit)
	assert.Equal(t, 1, evs[0].Slot)
}

// TestEventModes: an event run here too (call_local), one to our own
// slot, and one to the host, whether that is another player or us.
func TestEventModes(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	sent := func() []protocol.Message { // what was sent since the last call
		h.link.mu.Lock()
		defer h.link.mu.Unlock()
		out := h.link.sent
		h.link.sent = nil
		return out
	}
	sent()

	games := func(evs []Event) []Event {
		var out []Event
		for _, e := range evs {
			if e.Kind == EventGameEvent {
				out = append(out, e)
			}
		}
		return out
	}
	require.NoError(t, h.room.SendEventAll("boom", []any{typedargs.Vector2{1, 2}, 3}))
	assert.Equal(t, []protocol.Message{&protocol.Event{Name: "boom", Args: []byte(`[{"@":"Vector2","v":"AACAPwAAAEA="},3]`), To: protocol.ToAll}},
		sent())
	assert.Equal(t, []Event{{Kind: EventGameEvent, Slot: 1, Text: "boom", Args: []any{typedargs.Vector2{1, 2}, int64(3)}}},
		games(h.update()), "run here too, from our own slot, at the next Update")

	// The host is slot 0: sent to it alone, nothing here.
	require.NoError(t, h.room.SendEventToHost("buy", []any{"sword"}))
	assert.Equal(t, []protocol.Message{&protocol.Event{Name: "buy", Args: []byte(`["sword"]`), To: 0}}, sent())
	assert.Empty(t, games(h.update()))

	// To our own slot: not sent, run here.
	require.NoError(t, h.room.SendEvent("self", nil, 1))
	assert.Empty(t, sent())
	assert.Equal(t, []Event{{Kind: EventGameEvent, Slot: 1, Text: "self"}}, games(h.update()))

	// We become the host: a request to the host runs here only.
	st := h.room.State()
	st.Host, st.Rev = 1, st.Rev+1
	h.link.msg(&st)
	h.update()
	require.Equal(t, 1, h.room.Host())
	require.NoError(t, h.room.SendEventToHost("buy", []any{"shield"}))
	assert.Empty(t, sent())
	assert.Equal(t, []Event{{Kind: EventGameEvent, Slot: 1, Text: "buy", Args: []any{"shield"}}}, games(h.update()))

	// A refused event runs nowhere.
	assert.ErrorIs(t, h.room.SendEventAll("bad", []any{math.NaN()}), typedargs.ErrBadArg)
	evs := h.update()
	assert.Empty(t, games(evs))
	assert.True(t, has(EventError)(evs))
}
