package netroom

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// TestPredictorStampsAtSend: a local entity's state is handed to the link
// some time after its physics frame's time (the StepClock trails the wall
// clock, a rigid body is read a step late). The state must reach the link
// stamped at the hand-off, on the Room's clock, and carried there along its
// velocity: receivers then see only the network's delay.
func TestPredictorStampsAtSend(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Connect())
	h.until(has(EventConnected))
	h.link.msg(joinedAs("ABCDEF", 1, 1, player(1, "Ann")))
	h.until(has(EventJoined))
	p := NewPredictor()
	p.SetDim(Dim3D)
	p.Ready(h.room)

	const wait = 12 * time.Millisecond // frame time to hand-off
	vel := geom.Vec3{X: 20, Z: -5}
	start := time.Second
	h.clock.add(start - h.clock.Now())
	type frame struct{ t, sent time.Duration }
	var frames []frame
	for i := range 30 {
		ft := start + time.Duration(i)*time.Second/60
		h.clock.add(ft + wait - h.clock.Now()) // the wall clock when physics runs
		pos := vel.Scale(ft.Seconds())
		if p.Sample(ft, pos, geom.Identity, vel, true) {
			frames = append(frames, frame{ft, h.clock.Now()})
		}
	}
	h.link.mu.Lock()
	sent := append([]wire.State(nil), h.link.sentSt...)
	h.link.mu.Unlock()
	require.Len(t, sent, len(frames))
	require.Greater(t, len(sent), 20)
	for i, st := range sent {
		f := frames[i]
		assert.Equal(t, wire.StampOf(f.sent), st.Stamp, "state %d stamped at the hand-off, not at %v", i, f.t)
		want := vel.Scale(f.sent.Seconds())
		assert.InDelta(t, 0, want.Sub(st.Pos).Len(), 1e-4, "state %d carried by v*%v", i, wait)
	}
}

// TestLocalPollAt: PollAt carries within SendLead (RecommendedSendLead by
// default), Poll stamps the sample time.
func TestLocalPollAt(t *testing.T) {
	loc, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	assert.Equal(t, sender.RecommendedSendLead, loc.Config().SendLead)
	vel := geom.Vec3{X: 10}
	loc.Sample(time.Second, geom.Vec3{}, geom.Identity, vel, true)
	st, ok := loc.PollAt(time.Second+5*time.Millisecond, 0)
	require.True(t, ok)
	assert.Equal(t, wire.StampOf(time.Second+5*time.Millisecond), st.Stamp)
	assert.InDelta(t, 0.05, st.Pos.X, 1e-6)

	loc.Sample(time.Second+time.Second/60, geom.Vec3{X: 1}, geom.Identity, vel, true)
	st, ok = loc.Poll(0)
	require.True(t, ok)
	assert.Equal(t, wire.StampOf(time.Second+time.Second/60), st.Stamp, "Poll: the sample time")
	assert.InDelta(t, 1, st.Pos.X, 1e-6)

	late, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	late.Sample(time.Second, geom.Vec3{}, geom.Identity, vel, true)
	st, ok = late.PollAt(time.Second+sender.RecommendedSendLead+time.Millisecond, 0)
	require.True(t, ok)
	assert.Equal(t, wire.StampOf(time.Second), st.Stamp, "older than SendLead: as sampled")
}
