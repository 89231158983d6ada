package netroom

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/typedargs"
)

func TestPropsSetRefuses(t *testing.T) {
	var p Props
	assert.ErrorIs(t, p.Set("health", math.NaN()), typedargs.ErrBadArg)
	assert.ErrorIs(t, p.Set("", 1), protocol.ErrBadProp)
	big := make([]any, protocol.MaxPropValue)
	assert.ErrorIs(t, p.Set("big", big), protocol.ErrBadProp)
	require.NoError(t, p.Set("health", 100))
}

// TestPropsOnLoopback: changes go out merged at most Rate times a second,
// unchanged values not at all, and a late joiner gets the last values.
func TestPropsOnLoopback(t *testing.T) {
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
	props := func(p *peer) []Event {
		var out []Event
		for _, e := range p.events {
			if e.Kind == EventProp {
				out = append(out, e)
			}
		}
		return out
	}

	p := Props{Rate: 10}
	now := time.Duration(0)
	sent := 0
	// 60 physics frames (1 s) of a health bar falling every frame and a
	// colour that never changes: about 10 sends of health, 1 of colour.
	for i := range 60 {
		require.NoError(t, p.Set("health", 100-i))
		require.NoError(t, p.Set("modulate", typedargs.Color{1, 0.5, 0.5, 1}))
		sent += p.Flush(now, ann.room)
		now += time.Second / 60
	}
	assert.InDelta(t, 11, sent, 1, "health 10 times in 1 s, the colour once")
	now += time.Second
	sent += p.Flush(now, ann.room)
	frames(func() bool { return bob.room.PropsOf(Key{})["health"] == int64(41) })
	assert.Equal(t, typedargs.Color{1, 0.5, 0.5, 1}, bob.room.PropsOf(Key{})["modulate"])
	assert.Len(t, props(bob), sent)
	last := props(bob)[len(props(bob))-1]
	assert.Equal(t, Event{Kind: EventProp, Slot: 0, Text: "health", Args: []any{int64(41)}}, last)

	carl := newPeer(t, addr, "Carl")
	require.NoError(t, carl.room.Join(ann.room.Code()))
	frames(func() bool {
		carl.frame()
		return carl.room.PropsOf(Key{})["health"] == int64(41)
	})
	assert.Len(t, props(carl), 2, "the late joiner gets the last value of each key")

	// A second entity of Ann's (a trailer, id 3) has its own values under
	// the same key; the spawned copy's node applies them.
	trailer := Props{Rate: 10, Entity: 3}
	require.NoError(t, trailer.Set("health", 7))
	require.Equal(t, 1, trailer.Flush(now, ann.room))
	frames(func() bool { return bob.room.PropsOf(Key{Slot: 0, Entity: 3})["health"] == int64(7) })
	assert.Equal(t, int64(41), bob.room.PropsOf(Key{})["health"], "the player's own keeps its value")
	last = props(bob)[len(props(bob))-1]
	assert.Equal(t, Event{Kind: EventProp, Slot: 0, Entity: 3, Text: "health", Args: []any{int64(7)}}, last)

	// Ann leaves: her properties are forgotten.
	require.NoError(t, ann.room.Leave())
	frames(func() bool { bob.frame(); return bob.room.PropsOf(Key{}) == nil })
}

func TestSyncedWarnings(t *testing.T) {
	assert.Empty(t, SyncedWarnings([]string{"health", "modulate", "label:text"}))
	many := make([]string, MaxSyncedKeys+1)
	for i := range many {
		many[i] = string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	tests := []struct {
		paths []string
		want  string
	}{
		{[]string{"health", ""}, "empty entry"},
		{[]string{"health", "health"}, "twice"},
		{[]string{string(make([]byte, protocol.MaxPropKey+1))}, "longer than 64 bytes"},
		{many, "at most 32"},
	}
	for _, tt := range tests {
		ws := SyncedWarnings(tt.paths)
		require.Len(t, ws, 1, "%q", tt.paths)
		assert.Contains(t, ws[0], tt.want)
	}
}
