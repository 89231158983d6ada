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
)

func TestEncodeDecodeArgs(t *testing.T) {
	args := []any{nil, true, 3, int64(-7), 2.5, float32(0.5), "héllo", []float32{1, 2}, []any{1, "a"},
		map[string]any{"k": []any{map[string]any{"x": 1.25}}}}
	raw, err := EncodeArgs(args)
	require.NoError(t, err)
	got, err := DecodeArgs(raw)
	require.NoError(t, err)
	assert.Equal(t, []any{nil, true, int64(3), int64(-7), 2.5, 0.5, "héllo", []any{1.0, 2.0},
		[]any{int64(1), "a"}, map[string]any{"k": []any{map[string]any{"x": 1.25}}}}, got)

	none, err := EncodeArgs(nil)
	require.NoError(t, err)
	assert.Nil(t, none)
	back, err := DecodeArgs(none)
	require.NoError(t, err)
	assert.Empty(t, back)

	deep := any(1)
	for range MaxArgDepth + 1 {
		deep = []any{deep}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), struct{}{}, map[int]any{1: 2}, []any{1, make(chan int)}, deep} {
		_, err := EncodeArgs([]any{bad})
		assert.ErrorIs(t, err, ErrBadArg, "%T", bad)
	}
}

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
		require.NoError(t, ann.room.SendEvent("fire", []any{i, "x", []float32{1.5, 2}}, protocol.ToAll))
	}
	require.NoError(t, ann.room.SendChat("  gg\u202e  ", protocol.ToAll))
	frames(func() bool { return len(of(bob, EventGameEvent)) == 5 && len(of(bob, EventChat)) == 1 })
	for i, e := range of(bob, EventGameEvent) {
		assert.Equal(t, Event{Kind: EventGameEvent, Slot: 0, Text: "fire", Args: []any{int64(i), "x", []any{1.5, 2.0}}}, e)
	}
	assert.Equal(t, Event{Kind: EventChat, Slot: 0, Text: "gg"}, of(bob, EventChat)[0])
	assert.Empty(t, of(ann, EventGameEvent), "no echo to the sender")

	// Refused locally, with EventError and the error returned.
	n := len(of(ann, EventError))
	err := ann.room.SendEvent("big", []any{strings.Repeat("x", protocol.MaxEventSize)}, protocol.ToAll)
	assert.ErrorIs(t, err, protocol.ErrEventTooBig)
	err = ann.room.SendEvent("bad", []any{math.NaN()}, protocol.ToAll)
	assert.ErrorIs(t, err, ErrBadArg)
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

func TestFloatsStayFloats(t *testing.T) {
	raw, err := EncodeArgs([]any{1.0, float32(2), 3, []any{4.0, 1e300}, map[string]any{"f": 5.0}})
	require.NoError(t, err)
	assert.JSONEq(t, `[1.0, 2.0, 3, [4.0, 1e300], {"f": 5.0}]`, string(raw))
	got, err := DecodeArgs(raw)
	require.NoError(t, err)
	assert.Equal(t, []any{1.0, 2.0, int64(3), []any{4.0, 1e300}, map[string]any{"f": 5.0}}, got)
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
