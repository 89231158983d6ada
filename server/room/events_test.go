package room

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

func TestEventsRelayToAllOrOne(t *testing.T) {
	h := newHarness(t, testConfig())
	a, sa := h.join("a")
	b, sb := h.join("b")
	c, sc := h.join("c")
	h.quiet(a, b, c)

	h.send(a, &protocol.Event{Name: "fire", Args: json.RawMessage(`[1,"x",[2,3]]`), To: protocol.ToAll, From: 77})
	assert.Empty(t, ofType[*protocol.Event](msgs(a)), "the sender gets no copy")
	for _, p := range []*MemPeer{b, c} {
		ev := ofType[*protocol.Event](msgs(p))
		require.Len(t, ev, 1)
		assert.Equal(t, &protocol.Event{Name: "fire", Args: json.RawMessage(`[1,"x",[2,3]]`), To: protocol.ToAll, From: sa}, ev[0],
			"From is the sender's slot whatever it claimed")
	}

	h.send(b, &protocol.Event{Name: "whisper", To: sc})
	assert.Empty(t, ofType[*protocol.Event](msgs(a)))
	ev := ofType[*protocol.Event](msgs(c))
	require.Len(t, ev, 1)
	assert.Equal(t, sb, ev[0].From)

	// Order is kept: reliable messages in sending order.
	for i := range 10 {
		h.send(a, &protocol.Event{Name: "n", Args: json.RawMessage(`[` + string(rune('0'+i)) + `]`), To: sb})
	}
	got := ofType[*protocol.Event](msgs(b))
	require.Len(t, got, 10)
	for i, e := range got {
		assert.Equal(t, `[`+string(rune('0'+i))+`]`, string(e.Args))
	}
}

func TestEventRefusals(t *testing.T) {
	h := newHarness(t, &Config{MaxPlayers: 4, Events: EventLimits{EventBytes: 100}})
	a, sa := h.join("a")
	b, sb := h.join("b")
	h.quiet(a, b)
	tests := []struct {
		name string
		m    *protocol.Event
		code protocol.Code
		text string
	}{
		{"to self", &protocol.Event{Name: "x", To: sa}, protocol.CodeBadRequest, "slot 0"},
		{"to empty slot", &protocol.Event{Name: "x", To: 3}, protocol.CodeBadRequest, "slot 3"},
		{"over the room's size", &protocol.Event{Name: "big", Args: json.RawMessage(`["` + strings.Repeat("x", 120) + `"]`), To: sb},
			protocol.CodeBadRequest, "at most 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.send(a, tt.m)
			es := errorsIn(msgs(a))
			require.Len(t, es, 1)
			assert.Equal(t, tt.code, es[0].Code)
			assert.Contains(t, es[0].Message, tt.text)
			assert.Equal(t, protocol.TypeEvent, es[0].Request)
			assert.Empty(t, ofType[*protocol.Event](msgs(b)))
		})
	}
}

func TestEventRateLimit(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, sb := h.join("b")
	h.quiet(a, b)
	// The burst passes at once, the next is refused with a clear error.
	for range int(DefaultEventBurst) {
		h.send(a, &protocol.Event{Name: "tick", To: sb})
	}
	assert.Len(t, ofType[*protocol.Event](msgs(b)), int(DefaultEventBurst),
		"events have their own budget, above the control budget (%v)", DefaultControlBurst)
	assert.Empty(t, errorsIn(msgs(a)))
	h.send(a, &protocol.Event{Name: "tick", To: sb})
	es := errorsIn(msgs(a))
	require.Len(t, es, 1)
	assert.Equal(t, protocol.CodeRateLimited, es[0].Code)
	assert.Contains(t, es[0].Message, "more than 30 events per second")
	assert.Empty(t, msgs(b))

	// At the rate it keeps flowing, for a long time, without a close.
	for range 300 {
		h.now += time.Second / 29 // a hair under the rate: float refills
		h.send(a, &protocol.Event{Name: "tick", To: sb})
	}
	assert.Len(t, ofType[*protocol.Event](msgs(b)), 300)
	assert.Empty(t, errorsIn(msgs(a)))
	assert.False(t, a.Closed)

	// A flood is closed with rate_limited.
	for range 1000 {
		h.now += time.Millisecond
		h.send(a, &protocol.Event{Name: "tick", To: sb})
	}
	assert.True(t, a.Closed)
	assert.Equal(t, 1, h.metrics.kicked[protocol.CodeRateLimited])
}

func TestChat(t *testing.T) {
	h := newHarness(t, testConfig())
	a, sa := h.join("a")
	b, _ := h.join("b")
	h.quiet(a, b)

	h.send(a, &protocol.Chat{Text: "  hi\u202e there\x07 ", To: protocol.ToAll})
	got := ofType[*protocol.Chat](msgs(b))
	require.Len(t, got, 1)
	assert.Equal(t, &protocol.Chat{Text: "hi there", To: protocol.ToAll, From: sa}, got[0])

	for _, text := range []string{" \x01 ", strings.Repeat("a", protocol.MaxChatRunes+1)} {
		h.send(a, &protocol.Chat{Text: text, To: protocol.ToAll})
		es := errorsIn(msgs(a))
		require.Len(t, es, 1, "%.10q", text)
		assert.Equal(t, protocol.CodeBadRequest, es[0].Code)
		assert.Contains(t, es[0].Message, "chat refused")
	}

	// Burst 5 in all (one already spent), then 2 per second.
	for range 4 {
		h.send(a, &protocol.Chat{Text: "spam", To: protocol.ToAll})
	}
	assert.Len(t, ofType[*protocol.Chat](msgs(b)), 4)
	h.send(a, &protocol.Chat{Text: "spam", To: protocol.ToAll})
	es := errorsIn(msgs(a))
	require.Len(t, es, 1)
	assert.Equal(t, protocol.CodeRateLimited, es[0].Code)
	assert.Contains(t, es[0].Message, "more than 2 lines per second")
	h.now += 500 * time.Millisecond
	h.send(a, &protocol.Chat{Text: "again", To: protocol.ToAll})
	assert.Len(t, ofType[*protocol.Chat](msgs(b)), 1)
}

func TestEventLimitsValidate(t *testing.T) {
	for _, l := range []EventLimits{{EventRate: -1}, {EventBytes: protocol.MaxEventSize + 1}, {ChatRunes: 500}, {ChatBurst: 0.5}} {
		err := (&Config{Events: l}).Validate()
		assert.ErrorIs(t, err, ErrInvalidConfig, "%+v", l)
	}
	require.NoError(t, (&Config{}).Validate())
}

func TestPropsRelayedKeptAndReplayed(t *testing.T) {
	h := newHarness(t, &Config{MaxPlayers: 4, Events: EventLimits{PropKeys: 2}})
	a, sa := h.join("a")
	b, _ := h.join("b")
	h.quiet(a, b)

	h.send(a, &protocol.Prop{Slot: 9, Key: "health", Value: json.RawMessage(`100`)})
	h.send(a, &protocol.Prop{Key: "modulate", Value: json.RawMessage(`[1,0,0,1]`)})
	h.send(a, &protocol.Prop{Key: "health", Value: json.RawMessage(`75`)})
	got := ofType[*protocol.Prop](msgs(b))
	require.Len(t, got, 3)
	assert.Equal(t, &protocol.Prop{Slot: sa, Key: "health", Value: json.RawMessage(`100`)}, got[0], "Slot is the sender's")
	assert.Empty(t, ofType[*protocol.Prop](msgs(a)), "no echo")

	// A third key is over PropKeys.
	h.send(a, &protocol.Prop{Key: "score", Value: json.RawMessage(`1`)})
	es := errorsIn(msgs(a))
	require.Len(t, es, 1)
	assert.Contains(t, es[0].Message, "more than 2 keys")

	// A late joiner gets the last value of every key, in first-set order.
	c, _ := h.join("c")
	got = ofType[*protocol.Prop](msgs(c))
	require.Len(t, got, 2)
	assert.Equal(t, &protocol.Prop{Slot: sa, Key: "health", Value: json.RawMessage(`75`)}, got[0])
	assert.Equal(t, &protocol.Prop{Slot: sa, Key: "modulate", Value: json.RawMessage(`[1,0,0,1]`)}, got[1])

	// Gone with the seat: a player who joins after a leaves gets none of a's.
	h.send(a, &protocol.Leave{})
	d, _ := h.join("d")
	assert.Empty(t, ofType[*protocol.Prop](msgs(d)))
}

func TestPropRateLimit(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.quiet(a, b)
	for i := range int(DefaultPropBurst) + 1 {
		h.send(a, &protocol.Prop{Key: "x", Value: json.RawMessage(strings.Repeat("1", 1+i%3))})
	}
	assert.Len(t, ofType[*protocol.Prop](msgs(b)), int(DefaultPropBurst))
	es := errorsIn(msgs(a))
	require.Len(t, es, 1)
	assert.Equal(t, protocol.CodeRateLimited, es[0].Code)
	assert.Contains(t, es[0].Message, "more than 20 changes per second")
}

// FuzzGameMessages feeds arbitrary bodies of the game message types
// (event, chat, prop, hit) to a room with hits on, between relayed states:
// nothing panics and the other player keeps being served.
func FuzzGameMessages(f *testing.F) {
	for _, m := range []protocol.Message{
		&protocol.Event{Name: "x", Args: json.RawMessage(`[1]`), To: 1}, &protocol.Chat{Text: "hi", To: -1},
		&protocol.Prop{Key: "k", Value: json.RawMessage(`1`)}, &protocol.Hit{Target: 1, FireUS: 3_600_000_000},
	} {
		b := protocol.MustMarshal(m)
		f.Add(b[3], b[4:])
	}
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		h := newHitHarness(t)
		a, _ := h.join("a")
		b, _ := h.join("b")
		frame, err := wire.AppendControl(nil, wire.ControlType(typ), body)
		if err != nil {
			return
		}
		for i := range 3 {
			h.now += 10 * time.Millisecond
			h.r.HandleFrame(h.now, b, stateFrame(t, i+1, h.now, geom.Vec3{X: float64(i)}, geom.Vec3{}, 0))
			h.r.HandleFrame(h.now, a, frame)
		}
		h.send(b, &protocol.Ping{TUS: 5})
		assert.Len(t, ofType[*protocol.Pong](msgs(b)), 1, "the other player is unaffected")
	})
}

// TestDeepArgsRefused replays the deep-arguments attack: event args of
// 2040 nested arrays (4 KiB) were relayed, though a client refuses to
// send more than 16 levels; a receiver's JSON decoder
// recursing that deep is the risk. The server now checks the same rule.
func TestDeepArgsRefused(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.quiet(a, b)
	nest := func(n int) json.RawMessage {
		return json.RawMessage(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	h.send(a, &protocol.Event{Name: "x", Args: nest(2040), To: protocol.ToAll})
	assert.Empty(t, ofType[*protocol.Event](msgs(b)), "2040 deep is not relayed")
	es := errorsIn(msgs(a))
	require.Len(t, es, 1)
	assert.Equal(t, protocol.CodeBadRequest, es[0].Code)
	assert.Contains(t, es[0].Message, "deep")

	// The deepest a client sends: the args array and MaxArgDepth levels in it.
	h.send(a, &protocol.Event{Name: "x", Args: nest(protocol.MaxArgDepth + 1), To: protocol.ToAll})
	assert.Len(t, ofType[*protocol.Event](msgs(b)), 1)
	h.send(a, &protocol.Prop{Key: "k", Value: nest(protocol.MaxArgDepth + 1)})
	assert.Empty(t, ofType[*protocol.Prop](msgs(b)), "a property value one level deeper than an argument may is refused")
	h.send(a, &protocol.Prop{Key: "k", Value: nest(protocol.MaxArgDepth)})
	assert.Len(t, ofType[*protocol.Prop](msgs(b)), 1)
}

// TestChatInvisibleAndWide checks the room's chat against what passed
// before: a line separator, a Hangul filler line, 199 combining marks and
// 200 x U+FDFD, and the room's own ChatWidth.
func TestChatInvisibleAndWide(t *testing.T) {
	cfg := testConfig()
	cfg.Events.ChatRate, cfg.Events.ChatBurst = 100, 100
	cfg.Events.ChatWidth = 20
	h := newHarness(t, cfg)
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.quiet(a, b)
	say := func(text string) (string, []*protocol.Error) {
		h.send(a, &protocol.Chat{Text: text, To: protocol.ToAll})
		got := ofType[*protocol.Chat](msgs(b))
		es := errorsIn(msgs(a))
		if len(got) == 0 {
			return "", es
		}
		return got[0].Text, es
	}
	got, _ := say("a\u2028b")
	assert.Equal(t, "a b", got)
	_, es := say("\u3164")
	require.Len(t, es, 1, "a filler alone is empty")
	got, _ = say("z" + strings.Repeat("\u0301", 199))
	assert.Equal(t, "z"+strings.Repeat("\u0301", protocol.MaxChatMarks), got)
	_, es = say(strings.Repeat("\ufdfd", 200))
	require.Len(t, es, 1)
	assert.Contains(t, es[0].Message, "columns wide")
	_, es = say(strings.Repeat("世", 11))
	require.Len(t, es, 1, "22 columns: over the room's 20")
	got, _ = say(strings.Repeat("世", 10))
	assert.Equal(t, strings.Repeat("世", 10), got)
	require.Error(t, (&Config{Events: EventLimits{ChatWidth: protocol.MaxChatWidth + 1}}).Validate())
}
