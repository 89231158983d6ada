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
	enc := func(stamp time.Duration, x float64) []byte {
		st := wire.State{Slot: 2, Seq: 9, Stamp: wire.StampOf(stamp), Pos: geom.Vec3{X: x},
			Vel: geom.Vec3{X: 20}, Rot: geom.Identity}
		b, err := wire.AppendState(nil, &st)
		require.NoError(t, err)
		return b
	}
	const queued = 10 * time.Second
	states := []queuedState{
		{enc(queued-3*time.Millisecond, 1), queued},       // waits 6 ms
		{enc(queued, 2), queued + 2*time.Millisecond},     // waits 4 ms
		{enc(queued, 3), queued - DefaultSendLead - 1},    // waited too long
		{enc(queued, 4), queued + 6*time.Millisecond - 5}, // under a stamp unit
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
}
