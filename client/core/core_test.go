package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// TestServerSyncsAndMaps: pongs from a server 3 s ahead, 20 ms away, sync
// the clock; states are dropped until then and mapped onto the local clock
// after.
func TestServerSyncsAndMaps(t *testing.T) {
	const offset, oneWay = 3 * time.Second, 10 * time.Millisecond
	s, err := NewServerPath(&clock.SyncConfig{}, 4, DefaultSendLead)
	require.NoError(t, err)
	st := wire.State{Slot: 1, Seq: 3, Stamp: wire.StampOf(offset + time.Second), Rot: geom.Identity}
	msg, err := wire.AppendState(nil, &st)
	require.NoError(t, err)
	got, n := s.DecodeStates(nil, msg, time.Second+oneWay)
	assert.Empty(t, got)
	assert.Equal(t, Counts{Unsynced: 1}, n, "nothing is mapped before the sync")

	now := time.Second
	synced := false
	for i := 0; i < 50 && !synced; i++ {
		now = max(now, s.NextPing())
		p := s.Ping(now)
		synced = s.Pong(&protocol.Pong{TUS: p.TUS, ServerUS: protocol.US(now + oneWay + offset)}, now+2*oneWay)
		now += 2 * oneWay
	}
	require.True(t, synced, "synced")
	assert.True(t, s.Synced())
	assert.Equal(t, 2*oneWay, s.RTT())

	st.Stamp = wire.StampOf(offset + now)
	msg, err = wire.AppendState(msg[:0], &st)
	require.NoError(t, err)
	msg = append(msg, 0xFF) // a torn frame after it
	got, n = s.DecodeStates(got[:0], msg, now+oneWay)
	assert.Equal(t, Counts{Queued: 1, Malformed: 1}, n)
	require.Len(t, got, 1)
	assert.InDelta(t, now.Seconds(), got[0].Local.Seconds(), 1e-4, "the stamp on the local clock")
	assert.Equal(t, now+oneWay, got[0].Arrival)

	s.ResetSync()
	assert.False(t, s.Synced(), "a new node: sync again")
}

// TestPeerPingsAndRestamps: the one ping format, answered at once; its
// round trip feeds the re-stamping of the peer's states.
func TestPeerPingsAndRestamps(t *testing.T) {
	p, err := NewPeer(&clock.RestampConfig{}, 0)
	require.NoError(t, err)
	p.Open(time.Second)
	require.True(t, p.PingDue(time.Second))
	ping := p.AppendPing(nil, time.Second)
	assert.Equal(t, []byte{PingByte, 'p'}, ping[:2])
	assert.Equal(t, KindPing, KindOf(ping))
	assert.False(t, p.PingDue(time.Second+DefaultPingInterval/4-1), "warming up: a quarter interval")
	pong := p.AppendPong(nil, ping)
	assert.Equal(t, KindPong, KindOf(pong))
	assert.Equal(t, ping[2:], pong[2:PingLen])
	assert.Len(t, pong, PongLen, "a pong carries our lowest gap (none yet)")
	rtt, ok := RTTOf(pong, time.Second+30*time.Millisecond)
	assert.True(t, ok)
	assert.Equal(t, 30*time.Millisecond, rtt)
	_, ok = RTTOf(pong, time.Second)
	assert.False(t, ok, "no round trip of zero")
	for range WarmPings - 1 {
		p.AppendPing(nil, time.Second)
	}
	p.AppendPing(nil, time.Second)
	assert.False(t, p.PingDue(time.Second+DefaultPingInterval-1), "warm: the full interval")
	assert.Equal(t, KindGarbage, KindOf([]byte{0x01, 1, 2, 3, 4, 5, 6, 7, 8}), "the bench's old ping is garbage")

	// The peer's clock is 7 s behind ours; states take 15 ms.
	const back, oneWay = 7 * time.Second, 15 * time.Millisecond
	now := 2 * time.Second
	var rs RemoteState
	for i := range 200 {
		p.Pong(p.AppendPong(nil, p.AppendPing(nil, now)), now+2*oneWay)
		st := wire.State{Seq: wire.Seq(i), Stamp: wire.StampOf(now - back), Rot: geom.Identity}
		frame, err := wire.AppendState(nil, &st)
		require.NoError(t, err)
		require.Equal(t, KindState, KindOf(frame))
		require.NoError(t, p.State(frame, now+oneWay, &rs))
		now += 20 * time.Millisecond
	}
	assert.InDelta(t, (now - 20*time.Millisecond).Seconds(), rs.Local.Seconds(), 2e-3, "re-stamped onto our clock")
	assert.Error(t, p.State([]byte{0x80}, now, &rs))
}

// TestPeerStatesWaitForARoundTrip: states that arrive before the link's
// first pong are refused (ErrNoRoundTrip, not a decode error): mapped then
// they would be a whole one-way latency too new. The first pong maps them
// right, including what their gaps taught the re-stamper before it.
func TestPeerStatesWaitForARoundTrip(t *testing.T) {
	p, err := NewPeer(&clock.RestampConfig{}, 0)
	require.NoError(t, err)
	const oneWay = 40 * time.Millisecond
	now := time.Second
	p.Open(now)
	ping := p.AppendPing(nil, now)
	var rs RemoteState
	state := func(at time.Duration) error {
		t.Helper()
		frame, err := wire.AppendState(nil, &wire.State{Stamp: wire.StampOf(at), Rot: geom.Identity})
		require.NoError(t, err)
		return p.State(frame, at+oneWay, &rs)
	}
	for i := range 4 { // sent before the pong is back
		err := state(now + time.Duration(i)*10*time.Millisecond)
		require.ErrorIs(t, err, ErrNoRoundTrip)
		assert.Equal(t, now+time.Duration(i)*10*time.Millisecond+oneWay, rs.Arrival)
	}
	p.Pong(p.AppendPong(nil, ping), now+2*oneWay)
	sent := now + 50*time.Millisecond
	require.NoError(t, state(sent))
	assert.InDelta(t, sent.Seconds(), rs.Local.Seconds(), 1e-4, "mapped to its sample time, not its arrival")

	p.Open(now + time.Second) // a new link starts over
	assert.ErrorIs(t, state(now+time.Second), ErrNoRoundTrip)
}

// TestDirectWatch: up at the first arrival (once), down once after the
// silence, up again at the next arrival; Drop marks down at once.
func TestDirectWatch(t *testing.T) {
	var w DirectWatch
	assert.True(t, w.Arrived(3, time.Second))
	assert.False(t, w.Arrived(3, time.Second+10*time.Millisecond), "up already")
	assert.True(t, w.Up(3))
	assert.Equal(t, 1, w.Count())
	assert.False(t, w.Down(3, time.Second+260*time.Millisecond, 250*time.Millisecond), "silent 250 ms: not yet")
	assert.True(t, w.Down(3, time.Second+261*time.Millisecond, 250*time.Millisecond))
	assert.False(t, w.Down(3, 2*time.Second, 250*time.Millisecond), "reported once")
	assert.Zero(t, w.Count())
	assert.True(t, w.Arrived(3, 2*time.Second), "up again")
	w.Drop(3)
	assert.False(t, w.Up(3))
	assert.Zero(t, w.Count())
	assert.False(t, w.Arrived(-1, 0))
	assert.False(t, w.Arrived(MaxSlots, 0))
}
