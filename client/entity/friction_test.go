package entity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// placedFor is a NetPredictor placed in the level for slot, readied in
// h's room.
func placedFor(t *testing.T, h *harness, slot int) *Predictor {
	t.Helper()
	p := NewPredictor()
	require.NoError(t, p.SetPlayerSlot(slot))
	p.SetDim(Dim3D)
	p.Ready(h.room)
	return p
}

// TestPlacedNodeStandsForASlot: two paddles placed in the level, slot 0's
// and slot 1's. On Bob's machine (slot 1) the right paddle is his and
// sends, the left one draws Ann; nothing is spawned for Ann (before, every
// placed NetPredictor was the local player's: the second one was refused
// as "the player already has an entity", and Ann got a spawned copy).
func TestPlacedNodeStandsForASlot(t *testing.T) {
	h := newHarness(t)
	left, right := placedFor(t, h, 0), placedFor(t, h, 1)
	assert.Equal(t, ModeIdle, left.Mode(), "before a room: idle, as placed")
	assert.Equal(t, ModeIdle, right.Mode())
	assert.Empty(t, left.Errors())
	assert.Empty(t, right.Errors())

	require.NoError(t, h.room.Join("ABCDEF"))
	h.until(has(netroom.EventConnected))
	h.link.Msg(&protocol.Joined{Code: "ABCDEF", Slot: 1, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
		Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{player(0, "Ann"), player(1, "Bob")}}})
	evs := h.until(has(netroom.EventJoined))
	for _, e := range evs {
		assert.NotEqual(t, netroom.EventSpawn, e.Kind, "no player scene for a slot a placed node stands for")
	}
	assert.True(t, left.SyncSlot())
	assert.True(t, right.SyncSlot())
	assert.Equal(t, ModeRemote, left.Mode(), "Ann's paddle draws Ann")
	assert.Equal(t, 0, left.Slot())
	assert.Equal(t, ModeLocal, right.Mode(), "Bob's paddle is his")
	assert.True(t, right.IsLocal())
	assert.Empty(t, right.Errors())

	require.True(t, right.Sample(0, geom.Vec3{X: 7}, geom.Identity, geom.Vec3{}, true), "it sends")
	assert.Equal(t, 7.0, h.link.SentStates()[0].Pos.X)
	h.link.PushStates(entityState(0, 0, 1, 3))
	h.room.Route()
	pose, _ := left.Frame(16 * time.Millisecond)
	require.True(t, pose.Valid, "Ann's states reach the placed node")
	assert.InDelta(t, 3, pose.Pos.X, 0.5)
	assert.False(t, left.SyncSlot(), "no change")

	// Ann leaves: her paddle goes idle, and comes back for the next
	// player in slot 0.
	h.link.Msg(&protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 1,
		Players: []protocol.PlayerState{player(1, "Bob")}})
	h.update()
	assert.True(t, left.SyncSlot())
	assert.Equal(t, ModeIdle, left.Mode())

	// A second node for one slot is an error, as a second local entity is.
	dup := placedFor(t, h, 1)
	errs := dup.Errors()
	require.NotEmpty(t, errs)
	assert.ErrorIs(t, errs[0], netroom.ErrTaken)

	assert.ErrorIs(t, NewPredictor().SetPlayerSlot(300), ErrPlayerSlot)
	ball := NewPredictor()
	require.NoError(t, ball.SetEntity(0, true))
	assert.ErrorIs(t, ball.SetPlayerSlot(1), ErrPlayerSlot, "a shared object has an owner, not a slot")
}

// TestPlacedNodeHost: on the host's machine (slot 0) the same level: the
// left paddle sends, the right one draws Bob once he is there.
func TestPlacedNodeHost(t *testing.T) {
	h := seated(t, 0, 0, player(0, "Ann"))
	left, right := placedFor(t, h, 0), placedFor(t, h, 1)
	left.SyncSlot()
	right.SyncSlot()
	assert.Equal(t, ModeLocal, left.Mode())
	assert.Equal(t, ModeIdle, right.Mode(), "nobody in slot 1 yet")
	h.link.Msg(&protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 0,
		Players: []protocol.PlayerState{player(0, "Ann"), player(1, "Bob")}})
	evs := h.update()
	for _, e := range evs {
		assert.NotEqual(t, netroom.EventSpawn, e.Kind)
	}
	assert.True(t, right.SyncSlot())
	assert.Equal(t, ModeRemote, right.Mode())
	assert.True(t, h.room.Reserved(1))
	right.ExitTree()
	assert.False(t, h.room.Reserved(1))
	assert.Equal(t, netroom.EventSpawn, h.update()[0].Kind, "released: Bob gets a player scene again")
}

// TestResetToSharedObject: the host resets a shared object (reset_to): one
// it owns at once, flagged as a jump; one another player owns after
// claiming it. A player who is not the host cannot reset one it does not
// own.
func TestResetToSharedObject(t *testing.T) {
	h := joined(t, 0, 0)
	p := sharedBall(t, h)
	id := netroom.SharedID(3)
	h.link.Msg(&protocol.Owner{Entity: id, Slot: 2, Epoch: 1}) // Cy has the ball
	h.until(has(netroom.EventOwner))
	p.SyncOwner(0)
	require.False(t, p.Owned())
	h.link.TakeSent()

	now, err := p.ResetTo(Reset{Pos: geom.Vec3{X: 0}, Rot: geom.Identity})
	require.NoError(t, err)
	assert.False(t, now, "not ours yet: placed when the claim is granted")
	sent := h.link.TakeSent()
	require.Len(t, sent, 1)
	assert.Equal(t, &protocol.Claim{Entity: id}, sent[0], "the host claims it to reset it")
	_, ok := p.TakeReset()
	assert.False(t, ok)

	h.link.Msg(&protocol.Owner{Entity: id, Slot: 0, Epoch: 2})
	h.until(has(netroom.EventOwner))
	require.True(t, p.SyncOwner(time.Second))
	r, ok := p.TakeReset()
	require.True(t, ok, "owned: the reset is placed now")
	assert.Equal(t, geom.Vec3{}, r.Pos)
	require.True(t, p.Sample(time.Second, geom.Vec3{}, geom.Identity, geom.Vec3{}, true))
	st := h.link.SentStates()[len(h.link.SentStates())-1]
	assert.NotZero(t, st.Flags&wire.FlagTeleport, "flagged: everyone draws one jump")
	_, ok = p.TakeReset()
	assert.False(t, ok, "once")

	// Owned: at once.
	now, err = p.ResetTo(Reset{Pos: geom.Vec3{X: 3}, Rot: geom.Identity})
	require.NoError(t, err)
	assert.True(t, now)

	// Bob, not the host, without the ball.
	hb := joined(t, 1, 0)
	q := sharedBall(t, hb)
	_, err = q.ResetTo(Reset{Rot: geom.Identity})
	assert.ErrorIs(t, err, ErrNoReset)
}

// TestMovedInProcessWarns: a root moved between physics frames (in
// _process) is sampled late; after MovedOutsidePhysicsAfter rendered
// frames that find it moved, one warning says so. A root moved in
// _physics_process is never warned about.
func TestMovedInProcessWarns(t *testing.T) {
	h := joined(t, 0, 0)
	p := NewPredictor()
	p.SetDim(Dim3D)
	p.Ready(h.room)
	for i := range 200 { // moved in _physics_process: rendered where sampled
		x := float64(i)
		p.Sample(time.Duration(i)*16*time.Millisecond, geom.Vec3{X: x}, geom.Identity, geom.Vec3{}, false)
		_, warned := p.RenderedAt(geom.Vec3{X: x})
		require.False(t, warned)
	}
	warnings := 0
	for i := range 200 { // moved in _process: two rendered frames per physics frame, each moved
		x := 200 + float64(i)
		p.Sample(time.Duration(200+i)*16*time.Millisecond, geom.Vec3{X: x}, geom.Identity, geom.Vec3{}, false)
		for j := 1; j <= 2; j++ {
			if w, ok := p.RenderedAt(geom.Vec3{X: x + 0.5*float64(j)}); ok {
				warnings++
				assert.Contains(t, w, "_physics_process")
			}
		}
	}
	assert.Equal(t, 1, warnings, "once")
}

// TestDrawFigures: a drawn entity counts its snaps (a reset) and pops (a
// frame moving far from its drawn velocity), and keeps its drawn speed.
func TestDrawFigures(t *testing.T) {
	h := joined(t, 0, 0)
	p := NewPredictor()
	p.SetDim(Dim3D)
	p.BindRemote(h.room, 1)
	p.Ready(nil)
	for i := 1; i <= 60; i++ {
		at := time.Duration(i) * 16 * time.Millisecond
		st := entityState(1, 0, wire.Seq(i), 5*at.Seconds())
		st.State.Vel = geom.Vec3{X: 5}
		if i == 40 {
			st.State.Pos.X, st.State.Flags = -50, wire.FlagTeleport
		}
		if i > 40 {
			st.State.Pos.X = -50 + 5*(at-40*16*time.Millisecond).Seconds()
		}
		h.link.PushStates(st)
		h.room.Route()
		p.Frame(at + 5*time.Millisecond)
	}
	f := p.DrawFigures()
	assert.Equal(t, uint64(1), f.Snaps, "the reset")
	assert.InDelta(t, 5, f.Speed, 1, "drawn at 5 m/s")
	assert.Equal(t, predict.PathServer, p.Pose().Path)
}

// TestPlacedExtraEntity: a placed node standing for another entity of a
// slot's player (entity_id 1: a paddle beside the avatar) reserves
// nothing: the player's scene is still spawned.
func TestPlacedExtraEntity(t *testing.T) {
	h := seated(t, 0, 0, player(0, "Ann"), player(1, "Bob"))
	p := NewPredictor()
	require.NoError(t, p.SetEntity(1, false))
	require.NoError(t, p.SetPlayerSlot(1))
	p.SetDim(Dim3D)
	p.Ready(h.room)
	p.SyncSlot()
	assert.Equal(t, ModeRemote, p.Mode())
	assert.False(t, h.room.Reserved(1))
	assert.Equal(t, netroom.KeyOf(1, 1), p.key())
	assert.NotNil(t, h.room.BoundEntity(netroom.KeyOf(1, 1)))
}
