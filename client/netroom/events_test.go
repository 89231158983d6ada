package netroom

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/typedargs"
)

func TestReportHitAndResult(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	require.NoError(t, h.room.ReportHit(1, 2*time.Second, geom.Vec3{X: 1, Y: 2, Z: 3}))
	assert.Equal(t, []protocol.Message{&protocol.Hit{Target: 1, FireUS: 2_000_000, Point: [3]float64{1, 2, 3}}},
		h.link.Sent())
	res := &protocol.HitResult{From: 0, Target: 1, Accepted: true, Damage: 25, Health: 75, RewindUS: 90_000, MissBy: 0.2}
	h.link.Msg(res)
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
	h.link.Msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	sent := func() []protocol.Message { // what was sent since the last call
		return h.link.TakeSent()
	}
	sent()

	games := func(evs []Event) []Event {
		var out []Event
		for _, e := range evs {
			if e.Kind == EventGameEvent {
				e.View = View{}
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
	h.link.Msg(&st)
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
