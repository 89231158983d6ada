package entity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// TestPredictorStampsAtSend: a local entity's state is handed to the link
// some time after its physics frame's time (the StepClock trails the wall
// clock, a rigid body is read a step late). The link gets the sample as
// taken; its writer (client/core's Queue, what serverlink.Conn runs) must put
// it on the socket stamped at the write, on the Room's clock, and carried
// there along its velocity: receivers then see only the network's delay.
func TestPredictorStampsAtSend(t *testing.T) {
	h := seated(t, 1, 1, player(1, "Ann"))
	p := NewPredictor()
	p.SetDim(Dim3D)
	p.Ready(h.room)

	const wait = 12 * time.Millisecond // frame time to hand-off
	vel := geom.Vec3{X: 20, Z: -5}
	start := time.Second
	h.clock.Add(start - h.clock.Now())
	type frame struct{ t, sent time.Duration }
	var frames []frame
	for i := range 30 {
		ft := start + time.Duration(i)*time.Second/60
		h.clock.Add(ft + wait - h.clock.Now()) // the wall clock when physics runs
		pos := vel.Scale(ft.Seconds())
		if p.Sample(ft, pos, geom.Identity, vel, true) {
			frames = append(frames, frame{ft, h.clock.Now()})
		}
	}
	sent := h.link.SentStates()
	require.Len(t, sent, len(frames))
	require.Greater(t, len(sent), 20)
	q, err := core.NewQueue(4, serverlink.DefaultSendLead)
	require.NoError(t, err)
	for i, st := range sent {
		f := frames[i]
		assert.Equal(t, wire.StampOf(f.t), st.Stamp, "state %d handed over as sampled", i)
		q.Push(&st, core.SampledAt(&st, f.sent))
		require.NoError(t, wire.DecodeState(q.AppendBatch(nil, f.sent), &st), "the writer at the hand-off")
		assert.Equal(t, wire.StampOf(f.sent), st.Stamp, "state %d stamped at the write, not at %v", i, f.t)
		want := vel.Scale(f.sent.Seconds())
		assert.InDelta(t, 0, want.Sub(st.Pos).Len(), 1e-4, "state %d carried by v*%v", i, wait)
	}
}

// TestLocalPollAt: PollAt hands out the sample as taken, stamped with its
// own time, whenever it is polled: the one carry to the send happens at
// the write (client/core), not here.
func TestLocalPollAt(t *testing.T) {
	loc, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	vel := geom.Vec3{X: 10}
	loc.Sample(time.Second, geom.Vec3{}, geom.Identity, vel, true)
	st, ok := loc.PollAt(time.Second+5*time.Millisecond, 0)
	require.True(t, ok)
	assert.Equal(t, wire.StampOf(time.Second), st.Stamp, "the sample time, not the poll's")
	assert.InDelta(t, 0, st.Pos.X, 1e-9)

	loc.Sample(time.Second+time.Second/60, geom.Vec3{X: 1}, geom.Identity, vel, true)
	st, ok = loc.Poll(0)
	require.True(t, ok)
	assert.Equal(t, wire.StampOf(time.Second+time.Second/60), st.Stamp, "Poll: the sample time")
	assert.InDelta(t, 1, st.Pos.X, 1e-6)
}

// TestLocalAtRest: an entity that stops sends its still state, then one
// state every RestKeepAlive instead of 60 a second; the first frame it
// moves again goes out at once; a receiver keeps drawing it all along,
// never a ghost, never hidden.
func TestLocalAtRest(t *testing.T) {
	loc, err := NewLocal(sender.Config{Dim2D: true})
	require.NoError(t, err)
	rem, err := NewRemote(predict.Config{Dim2D: true})
	require.NoError(t, err)
	const step = time.Second / 60
	const latency = 30 * time.Millisecond
	var sentAt []time.Duration
	pos := geom.Vec3{X: 100, Y: 50}
	frame := func(i int, vel geom.Vec3) (time.Duration, bool) {
		now := time.Duration(i) * step
		loc.Sample(now, pos, geom.Identity, vel, true)
		st, ok := loc.PollAt(now, 0)
		if ok {
			sentAt = append(sentAt, now)
			rem.Add(predict.PathServer, st, st.Stamp.Near(now), now+latency)
		}
		pose, _ := rem.Frame(now + latency)
		if now > 200*time.Millisecond {
			assert.Equal(t, predict.Visible, pose.Visibility, "frame %d: drawn, not ghosted or hidden", i)
			if i >= 90 && i < 240 { // past the stop's correction fade
				assert.InDelta(t, 0, pose.Pos.Sub(pos).Len(), 0.5, "frame %d: drawn where it rests (px)", i)
			}
		}
		return now, ok
	}
	// Moving for 1 s: every frame sends.
	for i := range 60 {
		pos = pos.Add(geom.Vec3{X: 2})
		_, ok := frame(i, geom.Vec3{X: 120})
		require.True(t, ok, "frame %d moving sends", i)
	}
	// Still for 3 s (acceleration fades out first).
	sentAt = nil
	for i := 60; i < 240; i++ {
		frame(i, geom.Vec3{})
	}
	assert.Less(t, len(sentAt), 60, "at rest: about %d states in 3 s, not 180", int(3*time.Second/RestKeepAlive))
	last := sentAt[len(sentAt)-1]
	for i := 1; i < len(sentAt); i++ {
		assert.LessOrEqual(t, sentAt[i]-sentAt[i-1], RestKeepAlive+step, "keep-alive gap")
	}
	// It moves: that very frame sends.
	pos = pos.Add(geom.Vec3{X: 2})
	now, ok := frame(240, geom.Vec3{X: 120})
	assert.True(t, ok, "the first frame that moves sends at once (last sent %v, now %v)", last, now)
	// Extras changing at rest go out at once too.
	for i := 241; i < 300; i++ {
		frame(i, geom.Vec3{})
	}
	loc.SetExtras(3, 0)
	_, ok = frame(300, geom.Vec3{})
	assert.True(t, ok, "a changed anim_state is not rest")
	// After a Restart (a shared object taken over again) the first
	// state goes out at once, even where the entity rested before.
	loc.Restart()
	loc.SetExtras(3, 0) // as before: only the restart differs
	_, ok = frame(301, geom.Vec3{})
	assert.True(t, ok, "the first state after Restart")
	// Off: the full rate.
	loc.SetRestKeepAlive(false)
	sentAt = nil
	for i := 302; i < 362; i++ {
		frame(i, geom.Vec3{})
	}
	assert.Len(t, sentAt, 60)
}

// TestPredictorAtRest: a local NetPredictor's model at rest hands the room
// one state per RestKeepAlive, and every frame again once it moves.
func TestPredictorAtRest(t *testing.T) {
	h := seated(t, 1, 1, player(1, "Ann"))
	p := NewPredictor()
	p.SetDim(Dim2D)
	p.Ready(h.room)
	sent := func() int { return len(h.link.TakeSentStates()) }
	const step = time.Second / 60
	start := time.Second
	for i := range 120 { // 2 s still
		ft := start + time.Duration(i)*step
		h.clock.Add(ft - h.clock.Now())
		p.Sample(ft, geom.Vec3{X: 10, Y: 20}, geom.Identity, geom.Vec3{}, true)
	}
	n := sent()
	assert.InDelta(t, 1+int(2*time.Second/RestKeepAlive), n, 3, "about one state per %v at rest, not 120", RestKeepAlive)
	for i := 120; i < 180; i++ { // 1 s moving
		ft := start + time.Duration(i)*step
		h.clock.Add(ft - h.clock.Now())
		p.Sample(ft, geom.Vec3{X: 10 + float64(i-119)*5, Y: 20}, geom.Identity, geom.Vec3{X: 300}, true)
	}
	assert.Equal(t, 60, sent(), "every frame while it moves")
}
