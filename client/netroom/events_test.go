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
	args := []any{nil, true, 3, int64(-7), 2.5, float32(0.5), "héllo", []any{1, "a"},
		map[string]any{"k": []any{map[string]any{"x": 1.25}}}}
	raw, err := EncodeArgs(args)
	require.NoError(t, err)
	got, err := DecodeArgs(raw)
	require.NoError(t, err)
	assert.Equal(t, []any{nil, true, int64(3), int64(-7), 2.5, 0.5, "héllo",
		[]any{int64(1), "a"}, Dict{{"k", []any{Dict{{"x", 1.25}}}}}}, got)

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
	for _, bad := range []any{math.NaN(), math.Inf(1), struct{}{}, map[int]any{1: 2}, []any{1, make(chan int)}, deep,
		Vector2{float32(math.NaN()), 0}, []float64{1, math.Inf(-1)}, Dict{{1.5, 2}}, Dict{{nil, 2}}} {
		_, err := EncodeArgs([]any{bad})
		assert.ErrorIs(t, err, ErrBadArg, "%T", bad)
	}
}

// TestTypedArgsRoundTrip sends every Godot type events carry and gets
// each back as the same type and value, bit for bit.
func TestTypedArgsRoundTrip(t *testing.T) {
	args := []any{
		Vector2{1.5, -0.1}, Vector2i{-3, 7}, Vector3{1, 2, 3.25}, Vector3i{1, -2, 3},
		Vector4{0.1, 0.2, 0.3, 0.4}, Color{1, 0.5, 0, 0.75}, Quaternion{0, 0.7071068, 0, 0.7071068},
		Basis{1, 0, 0, 0, 0.5, -0.8660254, 0, 0.8660254, 0.5}, Transform2D{1, 0, 0, 1, 320.5, -12},
		Transform3D{1, 0, 0, 0, 1, 0, 0, 0, 1, 4, 5, 6}, Rect2{10, 20, 30.5, 40},
		[]byte{0, 1, 254, 255}, []float32{0.1, -2}, []float64{0.1, 1e300}, []int32{-1, 1 << 30},
		[]int64{-1, 1 << 62}, PackedVector2Array{{1, 2}, {3, 4}}, PackedVector3Array{{1, 2, 3}},
		[]string{"a", "", "é\\\""}, StringName("jump"),
		Dict{{int64(2), "two"}, {"name", "Ann"}, {int64(-1), Vector2{1, 2}}, {StringName("sn"), true}, {"@", int64(1)}, {"1", "s"}},
		[]any{Vector3i{1, 1, 1}, Dict{}, []byte{}},
	}
	raw, err := EncodeArgs(args)
	require.NoError(t, err)
	require.NoError(t, protocol.CheckEvent("e", raw))
	got, err := DecodeArgs(raw)
	require.NoError(t, err)
	assert.Equal(t, args, got)
	// Floats arrive bit for bit, negative zero too.
	raw, err = EncodeArgs([]any{Vector2{float32(math.Copysign(0, -1)), 0.1}})
	require.NoError(t, err)
	got, err = DecodeArgs(raw)
	require.NoError(t, err)
	assert.True(t, math.Signbit(float64(got[0].(Vector2)[0])))
	// A typed value nests one level, like the array a vector used to be:
	// the deepest argument may be one.
	deep := any(Vector2{1, 2})
	for range MaxArgDepth - 1 {
		deep = []any{deep}
	}
	raw, err = EncodeArgs([]any{deep})
	require.NoError(t, err)
	assert.NoError(t, protocol.CheckEvent("deep", raw))
}

// TestTypedArgsOnTheWire pins the wire form of typed values
// (docs/protocol.md) and refuses malformed ones.
func TestTypedArgsOnTheWire(t *testing.T) {
	raw, err := EncodeArgs([]any{Vector2{1, 2}, StringName("a"), []string{"x"}, Dict{{int64(1), 2}, {"k", 3}}})
	require.NoError(t, err)
	assert.Equal(t, `[{"@":"Vector2","v":"AACAPwAAAEA="},{"@":"StringName","v":"a"},`+
		`{"@":"PackedStringArray","v":["x"]},{"@":"Dictionary","i1":2,"sk":3}]`, string(raw))
	// An older client's object: a Dictionary of String keys, in its order.
	got, err := DecodeArgs([]byte(`[{"b":1,"a":[2.5]}]`))
	require.NoError(t, err)
	assert.Equal(t, []any{Dict{{"b", int64(1)}, {"a", []any{2.5}}}}, got)
	for _, bad := range []string{
		`[{"@":"Node"}]`, `[{"@":"Vector2","v":"AAA="}]`, `[{"@":"Vector2","v":"!"}]`,
		`[{"@":"Vector2","v":"AACAPwAAAEA=","w":1}]`, `[{"@":"Vector2","v":"AADAfwAAAEA="}]`, // NaN
		`[{"@":"Dictionary","x1":1}]`, `[{"@":"Dictionary","iz":1}]`, `[{"@":"StringName","v":1}]`,
		`[{"@":"PackedStringArray","v":[1]}]`, `[{"@":"PackedInt32Array","v":"AAA="}]`, `[1] 2`,
	} {
		_, err := DecodeArgs([]byte(bad))
		assert.Error(t, err, bad)
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
		require.NoError(t, ann.room.SendEvent("fire", []any{i, "x", Vector2{1.5, 2}}, protocol.ToAll))
	}
	require.NoError(t, ann.room.SendChat("  gg\u202e  ", protocol.ToAll))
	frames(func() bool { return len(of(bob, EventGameEvent)) == 5 && len(of(bob, EventChat)) == 1 })
	for i, e := range of(bob, EventGameEvent) {
		assert.Equal(t, Event{Kind: EventGameEvent, Slot: 0, Text: "fire", Args: []any{int64(i), "x", Vector2{1.5, 2}}}, e)
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
	assert.JSONEq(t, `[1.0, 2.0, 3, [4.0, 1e300], {"@":"Dictionary", "sf": 5.0}]`, string(raw))
	got, err := DecodeArgs(raw)
	require.NoError(t, err)
	assert.Equal(t, []any{1.0, 2.0, int64(3), []any{4.0, 1e300}, Dict{{"f", 5.0}}}, got)
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
	require.NoError(t, h.room.SendEventAll("boom", []any{Vector2{1, 2}, 3}))
	assert.Equal(t, []protocol.Message{&protocol.Event{Name: "boom", Args: []byte(`[{"@":"Vector2","v":"AACAPwAAAEA="},3]`), To: protocol.ToAll}},
		sent())
	assert.Equal(t, []Event{{Kind: EventGameEvent, Slot: 1, Text: "boom", Args: []any{Vector2{1, 2}, int64(3)}}},
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
	assert.ErrorIs(t, h.room.SendEventAll("bad", []any{math.NaN()}), ErrBadArg)
	evs := h.update()
	assert.Empty(t, games(evs))
	assert.True(t, has(EventError)(evs))
}
