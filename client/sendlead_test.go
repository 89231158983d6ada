package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// TestWriterCarriesQueuedStates: states that waited in the send queue
// reach the socket stamped at the write, carried along their velocity by
// the wait; too long a wait, or SendLead off, leaves them as queued.
func TestWriterCarriesQueuedStates(t *testing.T) {
	entity := uint8(0)
	enc := func(stamp time.Duration, x float64) []byte {
		st := wire.State{Slot: 2, Entity: entity, Seq: 9, Stamp: wire.StampOf(stamp), Pos: geom.Vec3{X: x},
			Vel: geom.Vec3{X: 20}, Rot: geom.Identity}
		b, err := wire.AppendState(nil, &st)
		require.NoError(t, err)
		return b
	}
	const queued = 10 * time.Second
	// One entity each: a batch carries only the newest state of an entity.
	var states []queuedState
	for i, q := range []struct {
		stamp, at time.Duration
	}{
		{queued - 3*time.Millisecond, queued},     // waits 6 ms
		{queued, queued + 2*time.Millisecond},     // waits 4 ms
		{queued, queued - DefaultSendLead - 1},    // waited too long
		{queued, queued + 6*time.Millisecond - 5}, // under a stamp unit
	} {
		entity = uint8(i)
		states = append(states, queuedState{enc(q.stamp, float64(i+1)), q.at})
	}
	now := queued + 6*time.Millisecond
	batch := appendStates(nil, states, now, DefaultSendLead)
	var got []wire.State
	for len(batch) > 0 {
		var st wire.State
		n := wire.FrameSize(batch)
		require.NoError(t, wire.DecodeState(batch[:n], &st))
		got = append(got, st)
		batch = batch[n:]
	}
	require.Len(t, got, 4)
	assert.Equal(t, wire.StampOf(queued+3*time.Millisecond), got[0].Stamp, "stamp moved by the 6 ms wait")
	assert.InDelta(t, 1+20*0.006, got[0].Pos.X, 1e-5, "carried by v*6ms")
	assert.Equal(t, wire.StampOf(queued+4*time.Millisecond), got[1].Stamp)
	assert.InDelta(t, 2+20*0.004, got[1].Pos.X, 1e-5)
	assert.Equal(t, uint8(2), got[1].Slot)
	assert.Equal(t, wire.Seq(9), got[1].Seq)
	assert.Equal(t, wire.StampOf(queued), got[2].Stamp, "older than SendLead: as queued")
	assert.InDelta(t, 3, got[2].Pos.X, 1e-6)
	assert.Equal(t, wire.StampOf(queued), got[3].Stamp, "nothing to carry")

	off := appendStates(nil, states[:1], now, -1)
	assert.Equal(t, states[0].b, off, "SendLead off: the bytes as queued")

	// Three states of one entity waited in one batch: only the newest is
	// carried, so their stamps stay apart (carried alike, all three would
	// be stamped at the write, and the server would read teleports).
	entity = 0
	same := []queuedState{
		{enc(queued, 1), queued},
		{enc(queued+5*time.Millisecond, 2), queued + 5*time.Millisecond},
		{enc(queued+10*time.Millisecond, 3), queued + 10*time.Millisecond},
	}
	batch = appendStates(nil, same, queued+12*time.Millisecond, DefaultSendLead)
	got = got[:0]
	for len(batch) > 0 {
		var st wire.State
		n := wire.FrameSize(batch)
		require.NoError(t, wire.DecodeState(batch[:n], &st))
		got = append(got, st)
		batch = batch[n:]
	}
	require.Len(t, got, 3)
	assert.Equal(t, wire.StampOf(queued), got[0].Stamp, "older states of the entity as queued")
	assert.Equal(t, wire.StampOf(queued+5*time.Millisecond), got[1].Stamp)
	assert.Equal(t, wire.StampOf(queued+12*time.Millisecond), got[2].Stamp, "the newest carried to the write")
}
