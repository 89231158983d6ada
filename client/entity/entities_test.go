package entity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// sharedBall is a shared-object Predictor bound to h's room.
func sharedBall(t *testing.T, h *harness) *Predictor {
	p := NewPredictor()
	require.NoError(t, p.SetEntity(3, true))
	p.SetDim(Dim3D)
	p.Ready(h.room)
	require.Equal(t, ModeShared, p.Mode())
	return p
}

// claimsOf counts the claims of object id among msgs.
func claimsOf(msgs []protocol.Message, id int) int {
	n := 0
	for _, m := range msgs {
		if c, ok := m.(*protocol.Claim); ok && c.Entity == id {
			n++
		}
	}
	return n
}

func TestHostClaimsUnownedSharedObject(t *testing.T) {
	h := joined(t, 0, 0)
	p := sharedBall(t, h)
	id := netroom.SharedID(3)
	assert.False(t, p.SyncOwner(h.clock.Now()), "no owner yet: nothing changed")
	claims := func() int { return claimsOf(h.link.Sent(), id) }
	assert.Equal(t, 1, claims(), "the host claims an object nobody owns")
	p.SyncOwner(h.clock.Now())
	assert.Equal(t, 1, claims(), "one claim in flight at a time")
	assert.True(t, p.Draws(), "drawn until granted")

	h.link.Msg(&protocol.Owner{Entity: id, Slot: 0, Epoch: 1})
	h.until(has(netroom.EventOwner))
	assert.True(t, p.SyncOwner(h.clock.Now()))
	assert.True(t, p.Owned())
	assert.True(t, p.IsLocal())
	assert.False(t, p.Draws())
	assert.Equal(t, 0, p.OwnerSlot())

	// While owned, samples go out with the shared id, by the server only.
	sent := 0
	for i := range 10 {
		tm := time.Duration(i) * 16 * time.Millisecond
		if p.Sample(tm, geom.Vec3{X: float64(i)}, geom.Identity, geom.Vec3{X: 60}, true) {
			sent++
		}
	}
	require.Positive(t, sent)
	first, last := h.link.SentStates()[0], h.link.SentStates()[len(h.link.SentStates())-1]
	assert.Equal(t, uint8(id), last.Entity)
	assert.Zero(t, first.Flags&wire.FlagTeleport, "a new owner's first state joins the old owner's: no snap")
}

func TestHandoverSeedsTheOldOwner(t *testing.T) {
	h := joined(t, 1, 0) // Bob, not the host
	p := sharedBall(t, h)
	id := netroom.SharedID(3)
	p.SyncOwner(0)
	for _, m := range h.link.Sent() {
		_, isClaim := m.(*protocol.Claim)
		assert.False(t, isClaim, "only the host claims unowned objects by itself")
	}
	require.NoError(t, p.Claim())
	h.link.Msg(&protocol.Owner{Entity: id, Slot: 1, Epoch: 4})
	h.until(has(netroom.EventOwner))
	require.True(t, p.SyncOwner(0))
	require.True(t, p.Owned())
	// We push the ball along x at 5 m/s for a second.
	for i := range 60 {
		tm := time.Duration(i) * time.Second / 60
		p.Sample(tm, geom.Vec3{X: 5 * tm.Seconds()}, geom.Identity, geom.Vec3{X: 5}, true)
	}
	// Cy takes it over; an older handover arriving late changes nothing.
	h.link.Msg(&protocol.Owner{Entity: id, Slot: 2, Epoch: 5, Known: true, Seq: 777})
	h.link.Msg(&protocol.Owner{Entity: id, Slot: 1, Epoch: 4})
	h.until(has(netroom.EventOwner))
	h.update()
	now := time.Second
	require.True(t, p.SyncOwner(now))
	assert.False(t, p.Owned())
	assert.Equal(t, 2, p.OwnerSlot(), "the late epoch-4 message is ignored")
	assert.True(t, p.Draws())
	// Until Cy's states arrive we draw on from our own last sample: no jump.
	pose, _ := p.Frame(now)
	require.True(t, pose.Valid, "seeded with our last sample")
	assert.InDelta(t, 5*(now.Seconds()), pose.Pos.X, 0.1)
	// Cy's first states continue the motion; the server numbered them
	// after the handover's 777.
	for i := range 3 {
		at := now + time.Duration(i+1)*16*time.Millisecond
		h.link.PushStates(serverlink.RemoteState{State: wire.State{Slot: 2, Entity: uint8(id),
			Seq: wire.Seq(778 + i), Rot: geom.Identity, Pos: geom.Vec3{X: 5 * at.Seconds()}, Vel: geom.Vec3{X: 5}},
			Local: at, Arrival: at + 30*time.Millisecond})
	}
	prev := pose.Pos.X
	for i := 1; i <= 10; i++ {
		tm := now + time.Duration(i)*16*time.Millisecond
		pose, _ = p.Frame(tm)
		step := pose.Pos.X - prev
		assert.InDelta(t, 5*0.016, step, 0.05, "frame %d moves on smoothly", i)
		prev = pose.Pos.X
	}
	// Sampling as a non-owner sends nothing.
	before := len(h.link.SentStates())
	assert.False(t, p.Sample(2*time.Second, geom.Vec3{}, geom.Identity, geom.Vec3{}, true))
	assert.Equal(t, before, len(h.link.SentStates()))
}

func TestSetEntityRange(t *testing.T) {
	p := NewPredictor()
	assert.ErrorIs(t, p.SetEntity(-1, false), netroom.ErrEntity)
	assert.ErrorIs(t, p.SetEntity(wire.MaxPlayerEntity+1, true), netroom.ErrEntity)
	require.NoError(t, p.SetEntity(5, false))
	assert.Equal(t, 5, p.WireEntity())
	require.NoError(t, p.SetEntity(5, true))
	assert.Equal(t, wire.FirstShared+5, p.WireEntity())
	assert.Error(t, p.Claim(), "not bound")
}

func TestBindLocalEntity(t *testing.T) {
	h := joined(t, 0, 0)
	p := NewPredictor()
	assert.ErrorIs(t, p.BindLocalEntity(h.room, 0), netroom.ErrEntity, "0 is the player's own")
	require.NoError(t, p.BindLocalEntity(h.room, 4))
	p.SetDim(Dim3D)
	p.Ready(h.room)
	require.Equal(t, ModeLocal, p.Mode())
	require.True(t, p.Sample(0, geom.Vec3{X: 1}, geom.Identity, geom.Vec3{}, true))
	st := h.link.SentStates()[len(h.link.SentStates())-1]
	assert.Equal(t, uint8(4), st.Entity)
	// The player's own entity sends beside it: separate claims.
	own := NewPredictor()
	own.SetDim(Dim3D)
	own.Ready(h.room)
	assert.True(t, own.Sample(0, geom.Vec3{}, geom.Identity, geom.Vec3{}, true))
	next, _ := h.room.FreeEntity()
	assert.NotEqual(t, 4, next, "a local entity's id is not free")
	assert.True(t, netroom.SceneAllowed([]string{"res://a.tscn", "res://b.tscn"}, "res://b.tscn"))
	assert.False(t, netroom.SceneAllowed([]string{"res://a.tscn"}, "res://secret.tres"))
}

// TestClaimEveryFrameIsPaced: a game claims the ball every frame its
// player touches it (the arena's bot does). Each claim was sent, 60 a
// second, and the server disconnected the player for control_rate
// (TestGodotBallHandover). A claim still unanswered is not sent again, and
// answered ones go out at most netroom.ClaimRate a second after a burst.
func TestClaimEveryFrameIsPaced(t *testing.T) {
	h := joined(t, 1, 0) // Bob, not the host
	p := sharedBall(t, h)
	id := netroom.SharedID(3)
	claims := func() int { return claimsOf(h.link.TakeSent(), id) }
	h.link.TakeSent()
	for range 10 {
		require.NoError(t, p.Claim())
	}
	assert.Equal(t, 1, claims(), "one claim until it is answered")

	// Two seconds at 60 frames a second, each claim refused at once.
	sent := 1
	for range 120 {
		h.link.Msg(&protocol.Owner{Entity: id, Slot: 0, Epoch: 1, Reason: "its owner (slot 0) is at least as near"})
		h.update()
		h.clock.Add(time.Second / 60)
		require.NoError(t, p.Claim())
		sent += claims()
	}
	t.Logf("claims sent in 2 s of claiming every frame: %d", sent)
	assert.LessOrEqual(t, float64(sent), netroom.ClaimBurst+2*netroom.ClaimRate+1, "paced")
	assert.Less(t, float64(sent), 2*10.0+20, "within the server's default limit (10 a second, burst 20)")
	assert.GreaterOrEqual(t, float64(sent), 2*netroom.ClaimRate, "and not starved")

	// A claim whose answer never comes (lost across a reconnect) does not
	// block the object: a second later, the next call asks again.
	h.clock.Add(time.Second)
	require.NoError(t, p.Claim())
	claims()
	h.clock.Add(500 * time.Millisecond)
	require.NoError(t, p.Claim())
	assert.Zero(t, claims(), "still waiting for the answer")
	h.clock.Add(600 * time.Millisecond)
	require.NoError(t, p.Claim())
	assert.Equal(t, 1, claims(), "unanswered for over a second: asked again")
}
