package datagram

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

func state(t *testing.T, seq wire.Seq, entity uint8) []byte {
	t.Helper()
	b, err := wire.AppendState(nil, &wire.State{Seq: seq, Entity: entity, Rot: geom.Quat{W: 1}})
	require.NoError(t, err)
	return b
}

func TestPathUpAndDown(t *testing.T) {
	var p Path
	assert.False(t, p.Up(0), "never heard: down")
	p.Bound(time.Second)
	assert.True(t, p.Up(time.Second), "the binding counts as hearing each other")
	assert.True(t, p.Up(time.Second+DeadAfter))
	assert.False(t, p.Up(time.Second+DeadAfter+time.Millisecond), "silent for DeadAfter: down")

	p.Heard(2*time.Second, false)
	assert.True(t, p.Hears(2*time.Second))
	assert.False(t, p.Up(2*time.Second), "the other end says it does not hear us")
	p.Heard(2*time.Second+time.Millisecond, true)
	assert.True(t, p.Up(2*time.Second+time.Millisecond), "it hears us again")
	p.Heard(time.Second, true) // a late arrival does not move the time back
	assert.Equal(t, time.Millisecond, p.Silence(2*time.Second+2*time.Millisecond))
}

func TestKeepaliveDue(t *testing.T) {
	var p Path
	p.Bound(0)
	assert.False(t, p.KeepaliveDue(KeepaliveEvery-time.Millisecond))
	assert.True(t, p.KeepaliveDue(KeepaliveEvery))
	p.Sent(KeepaliveEvery)
	assert.False(t, p.KeepaliveDue(KeepaliveEvery+time.Millisecond))
	assert.Less(t, 2*KeepaliveEvery, DeadAfter, "an idle path's ends hear each other several times within DeadAfter")
}

func TestKeepalive(t *testing.T) {
	k := Keepalive(true)
	hear, ok := ParseKeepalive(k[:])
	assert.True(t, ok)
	assert.True(t, hear)
	k = Keepalive(false)
	hear, ok = ParseKeepalive(k[:])
	assert.True(t, ok)
	assert.False(t, hear)
	_, ok = ParseKeepalive([]byte{KeepaliveByte})
	assert.False(t, ok)
	assert.Equal(t, wire.KindInvalid, wire.KindOf(k[:]), "no room frame starts like a keepalive")
}

func TestBindRoundTrip(t *testing.T) {
	tok := Token{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	got, err := ParseBind(AppendBind(nil, tok))
	require.NoError(t, err)
	assert.Equal(t, tok, got)
	next, err := ParseBound(AppendBound(nil, tok))
	require.NoError(t, err)
	assert.Equal(t, tok, next)
	_, err = ParseBind([]byte{2})
	assert.ErrorIs(t, err, ErrBind)
	_, err = ParseBound(append([]byte{1}, tok[:]...))
	assert.ErrorIs(t, err, ErrBind, "not BindOK")
}

func TestControl(t *testing.T) {
	for _, m := range []protocol.Message{&protocol.Ping{TUS: 1}, &protocol.Pong{TUS: 1}, &protocol.Echo{Probe: 3}} {
		b, err := protocol.Marshal(m)
		require.NoError(t, err)
		assert.True(t, Control(b), protocol.TypeName(m.Type()))
	}
	b, err := protocol.Marshal(&protocol.Ready{Ready: true})
	require.NoError(t, err)
	assert.False(t, Control(b), "room messages stay on the WebSocket")
	assert.False(t, Control(state(t, 1, 0)))
	assert.False(t, Control([]byte{0xC0}))
}

func TestSplit(t *testing.T) {
	var batch []byte
	for i := range 100 {
		batch = append(batch, state(t, wire.Seq(i), 0)...)
	}
	n := 0
	for rest := batch; len(rest) > 0; {
		var head []byte
		head, rest = Split(rest, MaxPayload)
		assert.LessOrEqual(t, len(head), MaxPayload)
		assert.Positive(t, len(head))
		n += Count(head)
	}
	assert.Equal(t, 100, n, "every state in one datagram or another")
	head, rest := Split([]byte{0xC0, 1}, 10)
	assert.Equal(t, []byte{0xC0, 1}, head, "no frames: whole")
	assert.Empty(t, rest)
}

func TestReorder(t *testing.T) {
	var r Reorder
	assert.True(t, r.Keep(state(t, 5, 0)))
	assert.False(t, r.Keep(state(t, 4, 0)), "older")
	assert.False(t, r.Keep(state(t, 5, 0)), "duplicate")
	assert.True(t, r.Keep(state(t, 3, 1)), "each entity its own sequence")
	assert.True(t, r.Keep(state(t, 6, 0)))
	assert.False(t, r.Keep(state(t, 2, 0)))

	batch := append(append(append([]byte(nil), state(t, 7, 0)...), state(t, 6, 0)...), state(t, 4, 1)...)
	out, dropped := r.Filter(nil, batch)
	assert.Equal(t, 1, dropped)
	assert.Equal(t, 2, Count(out))
	r.Reset()
	assert.True(t, r.Keep(state(t, 1, 0)), "a new session starts over")

	bad := []byte{0x40, 0, 0}
	out, dropped = r.Filter(nil, bad)
	assert.Equal(t, bad, out, "a batch that does not split goes on whole")
	assert.Zero(t, dropped)
}

func TestReorderWraps(t *testing.T) {
	var r Reorder
	assert.True(t, r.Keep(state(t, 65535, 0)))
	assert.True(t, r.Keep(state(t, 0, 0)), "the sequence wraps")
	assert.False(t, r.Keep(state(t, 65534, 0)))
}
