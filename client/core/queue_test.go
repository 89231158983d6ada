package core

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

const base = 10 * time.Second

func decodeAll(t *testing.T, batch []byte) []wire.State {
	t.Helper()
	var got []wire.State
	for len(batch) > 0 {
		var st wire.State
		n := wire.FrameSize(batch)
		require.NoError(t, wire.DecodeState(batch[:n], &st))
		got = append(got, st)
		batch = batch[n:]
	}
	return got
}

func moving(entity uint8, stamp time.Duration, x float64) wire.State {
	return wire.State{Slot: 2, Entity: entity, Seq: 9, Stamp: wire.StampOf(stamp), Pos: geom.Vec3{X: x},
		Vel: geom.Vec3{X: 20}, Rot: geom.Identity}
}

// TestWriterCarriesQueuedStates: states reach the socket stamped at the
// write, carried along their velocity by their wait since the sample;
// too long a wait, a heartbeat, or the lead off leaves them as queued.
func TestWriterCarriesQueuedStates(t *testing.T) {
	q, err := NewQueue(8, DefaultSendLead)
	require.NoError(t, err)
	now := base + 6*time.Millisecond
	for i, from := range []time.Duration{
		base,                          // waits 6 ms
		base + 2*time.Millisecond,     // waits 4 ms
		base - DefaultSendLead - 1,    // waited too long
		base + 6*time.Millisecond - 5, // under a stamp unit
		base + time.Millisecond,       // a heartbeat (below)
	} {
		st := moving(uint8(i), from, float64(i+1))
		q.Push(&st, from)
	}
	hb := moving(4, base+time.Millisecond, 5) // the same stamp again: a heartbeat
	q.Push(&hb, base+time.Millisecond)
	batch := q.AppendBatch(nil, now)
	assert.Zero(t, q.Len())
	got := decodeAll(t, batch)
	require.Len(t, got, 6)
	assert.Equal(t, wire.StampOf(base+6*time.Millisecond), got[0].Stamp, "stamp moved by the 6 ms wait")
	assert.InDelta(t, 1+20*0.006, got[0].Pos.X, 1e-5, "carried by v*6ms")
	assert.Equal(t, wire.StampOf(base+6*time.Millisecond), got[1].Stamp)
	assert.InDelta(t, 2+20*0.004, got[1].Pos.X, 1e-5)
	assert.Equal(t, uint8(2), got[1].Slot)
	assert.Equal(t, wire.Seq(9), got[1].Seq)
	assert.Equal(t, wire.StampOf(base-DefaultSendLead-1), got[2].Stamp, "older than the lead: as queued")
	assert.InDelta(t, 3, got[2].Pos.X, 1e-6)
	assert.Equal(t, wire.StampOf(base+6*time.Millisecond-5), got[3].Stamp, "nothing to carry")
	assert.Equal(t, wire.StampOf(base+time.Millisecond), got[5].Stamp, "a heartbeat goes as sampled")

	off, err := NewQueue(8, -1)
	require.NoError(t, err)
	st := moving(0, base, 1)
	off.Push(&st, base)
	want, err := wire.AppendState(nil, &st)
	require.NoError(t, err)
	assert.Equal(t, want, off.AppendBatch(nil, now), "lead off: the state as queued")
}

// TestBatchCarriesOnlyTheNewest: three states of one entity waited in one
// batch: only the newest is carried, so their stamps stay apart (carried
// alike, all three would be stamped at the write, and the server would
// read teleports).
func TestBatchCarriesOnlyTheNewest(t *testing.T) {
	q, err := NewQueue(8, DefaultSendLead)
	require.NoError(t, err)
	for i := range 3 {
		at := base + time.Duration(i)*5*time.Millisecond
		st := moving(0, at, float64(i+1))
		q.Push(&st, at)
	}
	states := q.Drain(nil)
	got := decodeAll(t, AppendBatch(nil, states, base+12*time.Millisecond, DefaultSendLead))
	require.Len(t, got, 3)
	assert.Equal(t, wire.StampOf(base), got[0].Stamp, "older states of the entity as queued")
	assert.Equal(t, wire.StampOf(base+5*time.Millisecond), got[1].Stamp)
	assert.Equal(t, wire.StampOf(base+12*time.Millisecond), got[2].Stamp, "the newest carried to the write")
}

func TestQueueDropsOldest(t *testing.T) {
	q, err := NewQueue(2, DefaultSendLead)
	require.NoError(t, err)
	for i := range 3 {
		st := moving(0, base+time.Duration(i)*time.Millisecond, float64(i))
		assert.Equal(t, i == 2, q.Push(&st, 0), "push %d", i)
	}
	got := q.Drain(nil)
	require.Len(t, got, 2)
	assert.InDelta(t, 1, got[0].State.Pos.X, 0)
	_, err = NewQueue(0, 0)
	assert.ErrorIs(t, err, ErrQueueLen)
}

// TestSendLeadFromSample: a sender sampled on a circle at 10 m/s, 2 rad/s,
// polled 7 ms after each sample, its states written 3 ms later: the one
// carry, from the sample to the write, lands each state on the true motion
// at the write.
func TestSendLeadFromSample(t *testing.T) {
	const r, w = 5.0, 2.0 // m, rad/s
	circle := func(t time.Duration) (geom.Vec3, geom.Vec3, geom.Quat) {
		a := w * t.Seconds()
		return geom.Vec3{X: r * math.Cos(a), Z: r * math.Sin(a)}, geom.Vec3{X: -r * w * math.Sin(a), Z: r * w * math.Cos(a)},
			geom.AxisAngle(geom.Up3D, -a)
	}
	s, err := sender.New(sender.Config{})
	require.NoError(t, err)
	q, err := NewQueue(8, DefaultSendLead)
	require.NoError(t, err)
	var buf []byte
	n := 0
	for i := range 60 {
		ft := base + time.Duration(i)*time.Second/60
		pos, vel, rot := circle(ft)
		s.SampleWithVelocity(ft, pos, rot, vel)
		st, ok := s.PollState(ft+7*time.Millisecond, 1)
		require.True(t, ok)
		q.Push(&st, SampledAt(&st, ft+7*time.Millisecond))
		write := ft + 10*time.Millisecond
		buf = q.AppendBatch(buf[:0], write)
		got := decodeAll(t, buf)
		require.Len(t, got, 1)
		assert.Equal(t, wire.StampOf(write), got[0].Stamp, "stamped at the write")
		if i >= 10 { // the derived motion has settled
			want, _, _ := circle(write)
			assert.InDelta(t, 0, want.Sub(got[0].Pos).Len(), 2e-3, "carried to the write")
			n++
		}
	}
	assert.Equal(t, 50, n)
}

func TestLeadApply(t *testing.T) {
	l := Lead{Max: DefaultSendLead}
	st := moving(0, base, 1)
	l.Apply(&st, base, base+4*time.Millisecond)
	assert.Equal(t, wire.StampOf(base+4*time.Millisecond), st.Stamp)
	hb := moving(0, base, 1)
	l.Apply(&hb, base, base+20*time.Millisecond)
	assert.Equal(t, wire.StampOf(base), hb.Stamp, "a heartbeat is not carried")
	var off Lead
	st = moving(1, base, 1)
	off.Apply(&st, base, base+4*time.Millisecond)
	assert.Equal(t, wire.StampOf(base), st.Stamp, "the zero Lead is off")
}

// TestAppendBatchDoesNotAllocate: the writer's encoding, into a buffer
// with room, allocates nothing.
func TestAppendBatchDoesNotAllocate(t *testing.T) {
	q, err := NewQueue(8, DefaultSendLead)
	require.NoError(t, err)
	buf := make([]byte, 0, 4*wire.MaxStateSize)
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		i++
		at := base + time.Duration(i)*time.Millisecond
		st := moving(0, at, 1)
		q.Push(&st, at)
		buf = q.AppendBatch(buf[:0], at+2*time.Millisecond)
	})
	assert.Zero(t, allocs)
}
