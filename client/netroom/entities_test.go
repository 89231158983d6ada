package netroom

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// joined returns a harness seated in slot with Bob (1) and Cy (2) beside
// Ann (0); host is the host's slot.
func joined(t *testing.T, slot, host int) *harness {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", slot, host, player(0, "Ann"), player(1, "Bob"), player(2, "Cy")))
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
	body := newDrawn(t)
	trailer := newDrawn(t)
	ball := newDrawn(t)
	require.NoError(t, h.room.BindEntity(Key{Slot: 1, Entity: 0}, body))
	require.NoError(t, h.room.BindEntity(Key{Slot: 1, Entity: 1}, trailer))
	require.NoError(t, h.room.BindEntity(KeyOf(7, SharedID(3)), ball))
	other := newDrawn(t)
	require.ErrorIs(t, h.room.BindEntity(Key{Slot: 1, Entity: 1}, other), ErrTaken)
	assert.Same(t, ball, h.room.BoundEntity(Key{Slot: -1, Entity: SharedID(3)}), "shared objects are keyed by id alone")

	h.link.PushStates(
		entityState(1, 0, 1, 1), entityState(1, 1, 1, 10), // Bob's body and trailer, same seq: their own streams
		entityState(1, uint8(SharedID(3)), 5, 100), entityState(2, uint8(SharedID(3)), 6, 101), // the ball, whoever sends it
		entityState(2, 1, 1, 20),                   // Cy's trailer: nobody bound
		entityState(0, uint8(SharedID(3)), 7, 102)) // our own: never drawn from the echo
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
	for _, m := range h.link.Sent() {
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
	h.link.Msg(&protocol.Spawn{Slot: 1, Entity: 4, Scene: "res://pet.tscn", Args: json.RawMessage(`["dog"]`)})
	h.link.Msg(&protocol.Spawn{Slot: 1, Entity: 4, Scene: "res://pet.tscn"})
	h.link.Msg(&protocol.Spawn{Slot: 2, Entity: 4, Scene: "res://pet.tscn"})
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

	h.link.Msg(&protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 0,
		Players: []protocol.PlayerState{player(0, "Ann"), player(2, "Cy")}})
	evs = h.until(has(EventEntityDespawned))
	assert.Equal(t, 1, count(evs, EventEntityDespawned), "Bob's pet goes with Bob")
	assert.Len(t, h.room.RemoteSpawns(), 1)
	require.NoError(t, h.room.Leave())
	h.link.Msg(&protocol.Left{})
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
	h.link.Msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob"), player(2, "Cy")))
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
	h.link.Msg(&st)
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
	h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	id, err := h.room.FreeEntity()
	require.NoError(t, err)
	require.NoError(t, h.room.Spawn(id, "res://pickup.tscn", nil))
	next, err := h.room.FreeEntity()
	require.NoError(t, err)
	assert.NotEqual(t, id, next, "a spawn without states keeps its id")
	require.NoError(t, h.room.Despawn(id))
	sent, states := h.link.Sent(), len(h.link.SentStates())
	assert.Contains(t, sent, protocol.Message(&protocol.Spawn{Entity: id, Scene: "res://pickup.tscn"}))
	assert.Contains(t, sent, protocol.Message(&protocol.Despawn{Entity: id}))
	assert.Zero(t, states, "no states")
}
