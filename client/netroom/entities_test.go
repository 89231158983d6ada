package netroom

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// joined returns a harness seated in slot with Bob (1) and Cy (2) beside
// Ann (0); host is the host's slot.
func joined(t *testing.T, slot, host int) *harness {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.msg(joinedAs("ABCDEF", slot, host, player(0, "Ann"), player(1, "Bob"), player(2, "Cy")))
	h.until(has(EventJoined))
	return h
}

func entityState(slot, entity uint8, seq wire.Seq, x float64) serverlink.RemoteState {
	at := time.Duration(seq) * 16 * time.Millisecond
	return serverlink.RemoteState{State: wire.State{Slot: slot, Entity: entity, Seq: seq, Rot: geom.Identity,
		Pos: geom.Vec3{X: x}}, Local: at, Arrival: at + 5*time.Millisecond}
}

func TestRouteByEntity(t *testing.T) {
	h := joined(t, 0, 0)
	body, _ := NewRemote(predict.Config{})
	trailer, _ := NewRemote(predict.Config{})
	ball, _ := NewRemote(predict.Config{})
	require.NoError(t, h.room.BindEntity(Key{Slot: 1, Entity: 0}, body))
	require.NoError(t, h.room.BindEntity(Key{Slot: 1, Entity: 1}, trailer))
	require.NoError(t, h.room.BindEntity(KeyOf(7, SharedID(3)), ball))
	other, _ := NewRemote(predict.Config{})
	require.ErrorIs(t, h.room.BindEntity(Key{Slot: 1, Entity: 1}, other), ErrTaken)
	assert.Same(t, ball, h.room.BoundEntity(Key{Slot: -1, Entity: SharedID(3)}), "shared objects are keyed by id alone")

	h.link.mu.Lock()
	h.link.states = append(h.link.states,
		entityState(1, 0, 1, 1), entityState(1, 1, 1, 10), // Bob's body and trailer, same seq: their own streams
		entityState(1, uint8(SharedID(3)), 5, 100), entityState(2, uint8(SharedID(3)), 6, 101), // the ball, whoever sends it
		entityState(2, 1, 1, 20),                   // Cy's trailer: nobody bound
		entityState(0, uint8(SharedID(3)), 7, 102)) // our own: never drawn from the echo
	h.link.mu.Unlock()
	assert.Equal(t, 4, h.room.Route())
	assert.Equal(t, uint64(1), body.Added())
	assert.Equal(t, uint64(1), trailer.Added())
	assert.Equal(t, uint64(2), ball.Added(), "one sequence across owners")
	assert.Equal(t, uint64(2), h.room.Stats().Unrouted, "Cy's trailer and our own echo")

	// A shared object never goes over a direct link: a state that claims
	// to is dropped, a player's entity is taken.
	sh := entityState(1, uint8(SharedID(3)), 9, 103)
	assert.False(t, h.room.AddDirect(&sh.State, sh.Local, sh.Arrival))
	tr := entityState(1, 1, 2, 11)
	assert.True(t, h.room.AddDirect(&tr.State, tr.Local, tr.Arrival))

	h.room.UnbindEntity(Key{Slot: 1, Entity: 1}, trailer)
	assert.Nil(t, h.room.BoundEntity(Key{Slot: 1, Entity: 1}))
}

func TestSpawnAndDespawn(t *testing.T) {
	h := joined(t, 0, 0)
	id, err := h.room.FreeEntity()
	require.NoError(t, err)
	assert.Equal(t, 1, id)
	require.NoError(t, h.room.Spawn(id, "res://bullet.tscn", json.RawMessage(`[1,2]`)))
	next, _ := h.room.FreeEntity()
	assert.Equal(t, 2, next, "a spawned id is taken until despawned")
	// Ids go round: one despawned is given again only after all others.
	seen := map[int]bool{}
	for range wire.MaxPlayerEntity - 2 {
		id, err := h.room.FreeEntity()
		require.NoError(t, err)
		assert.False(t, seen[id])
		seen[id] = true
	}
	again, _ := h.room.FreeEntity()
	assert.Equal(t, 2, again, "after 127 the round starts over, skipping the spawned 1")
	assert.ErrorIs(t, h.room.Spawn(SharedID(0), "ball", nil), ErrEntity)
	assert.ErrorIs(t, h.room.Spawn(3, "", nil), protocol.ErrBadSpawn)
	assert.Error(t, h.room.Despawn(9), "never spawned")
	require.NoError(t, h.room.Despawn(id))
	var spawns, despawns int
	for _, m := range h.link.sentMessages() {
		switch m := m.(type) {
		case *protocol.Spawn:
			spawns++
			assert.Equal(t, "res://bullet.tscn", m.Scene)
		case *protocol.Despawn:
			despawns++
			assert.Equal(t, id, m.Entity)
		}
	}
	assert.Equal(t, 1, spawns)
	assert.Equal(t, 1, despawns)

	// Others' spawns become events; a duplicate is ignored; a player who
	// leaves takes their entities along; leaving the room despawns the rest.
	h.link.msg(&protocol.Spawn{Slot: 1, Entity: 4, Scene: "res://pet.tscn", Args: json.RawMessage(`["dog"]`)})
	h.link.msg(&protocol.Spawn{Slot: 1, Entity: 4, Scene: "res://pet.tscn"})
	h.link.msg(&protocol.Spawn{Slot: 2, Entity: 4, Scene: "res://pet.tscn"})
	evs := h.until(has(EventEntitySpawned))
	evs = append(evs, h.update()...)
	var got []Event
	for _, e := range evs {
		if e.Kind == EventEntitySpawned {
			got = append(got, e)
		}
	}
	require.Len(t, got, 2)
	assert.Equal(t, "res://pet.tscn", got[0].Text)
	assert.Equal(t, 4, got[0].Entity)
	assert.Len(t, h.room.RemoteSpawns(), 2)

	h.link.msg(&protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 0,
		Players: []protocol.PlayerState{player(0, "Ann"), player(2, "Cy")}})
	evs = h.until(has(EventEntityDespawned))
	assert.Equal(t, 1, count(evs, EventEntityDespawned), "Bob's pet goes with Bob")
	assert.Len(t, h.room.RemoteSpawns(), 1)
	require.NoError(t, h.room.Leave())
	h.link.msg(&protocol.Left{})
	evs = h.until(has(EventLeft))
	assert.Equal(t, 1, count(evs, EventEntityDespawned), "Cy's pet goes when we leave")
	assert.Empty(t, h.room.RemoteSpawns())
}

func count(evs []Event, k EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// sharedBall is a shared-object Predictor bound to h's room.
func sharedBall(t *testing.T, h *harness) *Predictor {
	p := NewPredictor()
	require.NoError(t, p.SetEntity(3, true))
	p.SetDim(Dim3D)
	p.Ready(h.room)
	require.Equal(t, ModeShared, p.Mode())
	return p
}

func TestHostClaimsUnownedSharedObject(t *testing.T) {
	h := joined(t, 0, 0)
	p := sharedBall(t, h)
	id := SharedID(3)
	assert.False(t, p.SyncOwner(h.clock.Now()), "no owner yet: nothing changed")
	claims := func() int {
		n := 0
		for _, m := range h.link.sentMessages() {
			if c, ok := m.(*protocol.Claim); ok && c.Entity == id {
				n++
			}
		}
		return n
	}
	assert.Equal(t, 1, claims(), "the host claims an object nobody owns")
	p.SyncOwner(h.clock.Now())
	assert.Equal(t, 1, claims(), "one claim in flight at a time")
	assert.True(t, p.Draws(), "drawn until granted")

	h.link.msg(&protocol.Owner{Entity: id, Slot: 0, Epoch: 1})
	h.until(has(EventOwner))
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
	h.link.mu.Lock()
	first, last := h.link.sentSt[0], h.link.sentSt[len(h.link.sentSt)-1]
	h.link.mu.Unlock()
	assert.Equal(t, uint8(id), last.Entity)
	assert.Zero(t, first.Flags&wire.FlagTeleport, "a new owner's first state joins the old owner's: no snap")
}

func TestHandoverSeedsTheOldOwner(t *testing.T) {
	h := joined(t, 1, 0) // Bob, not the host
	p := sharedBall(t, h)
	id := SharedID(3)
	p.SyncOwner(0)
	for _, m := range h.link.sentMessages() {
		_, isClaim := m.(*protocol.Claim)
		assert.False(t, isClaim, "only the host claims unowned objects by itself")
	}
	require.NoError(t, p.Claim())
	h.link.msg(&protocol.Owner{Entity: id, Slot: 1, Epoch: 4})
	h.until(has(EventOwner))
	require.True(t, p.SyncOwner(0))
	require.True(t, p.Owned())
	// We push the ball along x at 5 m/s for a second.
	for i := range 60 {
		tm := time.Duration(i) * time.Second / 60
		p.Sample(tm, geom.Vec3{X: 5 * tm.Seconds()}, geom.Identity, geom.Vec3{X: 5}, true)
	}
	// Cy takes it over; an older handover arriving late changes nothing.
	h.link.msg(&protocol.Owner{Entity: id, Slot: 2, Epoch: 5, Known: true, Seq: 777})
	h.link.msg(&protocol.Owner{Entity: id, Slot: 1, Epoch: 4})
	h.until(has(EventOwner))
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
	h.link.mu.Lock()
	for i := range 3 {
		at := now + time.Duration(i+1)*16*time.Millisecond
		h.link.states = append(h.link.states, serverlink.RemoteState{State: wire.State{Slot: 2, Entity: uint8(id),
			Seq: wire.Seq(778 + i), Rot: geom.Identity, Pos: geom.Vec3{X: 5 * at.Seconds()}, Vel: geom.Vec3{X: 5}},
			Local: at, Arrival: at + 30*time.Millisecond})
	}
	h.link.mu.Unlock()
	prev := pose.Pos.X
	for i := 1; i <= 10; i++ {
		tm := now + time.Duration(i)*16*time.Millisecond
		pose, _ = p.Frame(tm)
		step := pose.Pos.X - prev
		assert.InDelta(t, 5*0.016, step, 0.05, "frame %d moves on smoothly", i)
		prev = pose.Pos.X
	}
	// Sampling as a non-owner sends nothing.
	before := len(h.link.sentSt)
	assert.False(t, p.Sample(2*time.Second, geom.Vec3{}, geom.Identity, geom.Vec3{}, true))
	assert.Equal(t, before, len(h.link.sentSt))
}

func TestSetEntityRange(t *testing.T) {
	p := NewPredictor()
	assert.ErrorIs(t, p.SetEntity(-1, false), ErrEntity)
	assert.ErrorIs(t, p.SetEntity(wire.MaxPlayerEntity+1, true), ErrEntity)
	require.NoError(t, p.SetEntity(5, false))
	assert.Equal(t, 5, p.WireEntity())
	require.NoError(t, p.SetEntity(5, true))
	assert.Equal(t, wire.FirstShared+5, p.WireEntity())
	assert.Error(t, p.Claim(), "not bound")
}

func TestBindLocalEntity(t *testing.T) {
	h := joined(t, 0, 0)
	p := NewPredictor()
	assert.ErrorIs(t, p.BindLocalEntity(h.room, 0), ErrEntity, "0 is the player's own")
	require.NoError(t, p.BindLocalEntity(h.room, 4))
	p.SetDim(Dim3D)
	p.Ready(h.room)
	require.Equal(t, ModeLocal, p.Mode())
	require.True(t, p.Sample(0, geom.Vec3{X: 1}, geom.Identity, geom.Vec3{}, true))
	h.link.mu.Lock()
	st := h.link.sentSt[len(h.link.sentSt)-1]
	h.link.mu.Unlock()
	assert.Equal(t, uint8(4), st.Entity)
	// The player's own entity sends beside it: separate claims.
	own := NewPredictor()
	own.SetDim(Dim3D)
	own.Ready(h.room)
	assert.True(t, own.Sample(0, geom.Vec3{}, geom.Identity, geom.Vec3{}, true))
	next, _ := h.room.FreeEntity()
	assert.NotEqual(t, 4, next, "a local entity's id is not free")
	assert.True(t, SceneAllowed([]string{"res://a.tscn", "res://b.tscn"}, "res://b.tscn"))
	assert.False(t, SceneAllowed([]string{"res://a.tscn"}, "res://secret.tres"))
}

// TestSpawnableWithParent: an entry of spawnable_scenes may name where its
// instances go; the scene part alone decides what may be spawned.
func TestSpawnableWithParent(t *testing.T) {
	list := []string{"res://a.tscn", " res://rocket.tscn | Level/Projectiles ", "|Nowhere"}
	scene, parent := ParseSpawnable(list[1])
	assert.Equal(t, "res://rocket.tscn", scene)
	assert.Equal(t, "Level/Projectiles", parent)
	p, ok := SpawnParent(list, "res://rocket.tscn")
	assert.True(t, ok)
	assert.Equal(t, "Level/Projectiles", p)
	p, ok = SpawnParent(list, "res://a.tscn")
	assert.True(t, ok)
	assert.Empty(t, p, "spawn_path")
	assert.True(t, SceneAllowed(list, "res://rocket.tscn"))
	assert.False(t, SceneAllowed(list, "res://rocket.tscn | Level/Projectiles"), "the whole entry is not a scene")
	assert.False(t, SceneAllowed(list, ""), "an entry without a scene allows nothing")
}

// TestMissingSpawns: players already in the room when the player scene
// is set (their EventSpawn found no scene) are spawned on request; so are
// those whose scene was freed, never our own slot.
func TestMissingSpawns(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob"), player(2, "Cy")))
	evs := h.until(has(EventJoined))
	var spawns []int
	for _, e := range evs {
		if e.Kind == EventSpawn {
			spawns = append(spawns, e.Slot)
		}
	}
	require.Equal(t, []int{0, 2}, spawns)
	none := func(int) bool { return false }
	assert.Equal(t, []int{0, 2}, h.room.MissingSpawns(none), "no scene was made for them")
	assert.Equal(t, []int{2}, h.room.MissingSpawns(func(slot int) bool { return slot == 0 }))
	assert.Empty(t, h.room.MissingSpawns(func(int) bool { return true }))
	// A player who left is not missing.
	st := h.room.State()
	st.Players, st.Rev = []protocol.PlayerState{player(1, "Bob"), player(2, "Cy")}, st.Rev+1
	h.link.msg(&st)
	h.update()
	assert.Equal(t, []int{2}, h.room.MissingSpawns(none))
}

// TestSpawnSceneWithoutPredictor: a spawned scene may hold no NetPredictor
// (spawned and despawned everywhere, no states) or one, not two; the
// announcement goes out either way and the id stays taken until despawned.
func TestSpawnSceneWithoutPredictor(t *testing.T) {
	assert.NoError(t, CheckSpawnScene("res://pickup.tscn", 0))
	assert.NoError(t, CheckSpawnScene("res://rocket.tscn", 1))
	assert.ErrorIs(t, CheckSpawnScene("res://two.tscn", 2), ErrSpawnScene)

	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	id, err := h.room.FreeEntity()
	require.NoError(t, err)
	require.NoError(t, h.room.Spawn(id, "res://pickup.tscn", nil))
	next, err := h.room.FreeEntity()
	require.NoError(t, err)
	assert.NotEqual(t, id, next, "a spawn without states keeps its id")
	require.NoError(t, h.room.Despawn(id))
	h.link.mu.Lock()
	sent, states := append([]protocol.Message(nil), h.link.sent...), len(h.link.sentSt)
	h.link.mu.Unlock()
	assert.Contains(t, sent, protocol.Message(&protocol.Spawn{Entity: id, Scene: "res://pickup.tscn"}))
	assert.Contains(t, sent, protocol.Message(&protocol.Despawn{Entity: id}))
	assert.Zero(t, states, "no states")
}
