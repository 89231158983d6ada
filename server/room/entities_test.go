package room

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// entFrame encodes a 3D state of entity e, at rest at pos.
func entFrame(t *testing.T, e uint8, seq int, stamp time.Duration, pos geom.Vec3) []byte {
	t.Helper()
	b, err := wire.AppendState(nil, &wire.State{Entity: e, Seq: wire.Seq(seq), Stamp: wire.StampOf(stamp), Pos: pos,
		Rot: geom.Quat{W: 1}, Slot: 99})
	require.NoError(t, err)
	return b
}

// statesOf returns the states of entity e among fs.
func statesOf(fs []Frame, e uint8) []wire.State {
	var out []wire.State
	for _, s := range States(fs) {
		if s.Entity == e {
			out = append(out, s)
		}
	}
	return out
}

// codes returns the codes of the Error messages among ms.
func codes(ms []protocol.Message) []protocol.Code {
	var out []protocol.Code
	for _, e := range errorsIn(ms) {
		out = append(out, e.Code)
	}
	return out
}

func trailer(e int) *protocol.Spawn {
	return &protocol.Spawn{Entity: e, Scene: "res://trailer.tscn", Args: json.RawMessage(`[1,"red"]`), Pos: [3]float64{1, 2, 3},
		Rot: [4]float64{0, 0, 0, 1}}
}

// TestSpawnRelayedAndReplayed checks that a Spawn reaches the others with
// the sender's slot, that the entity's states follow with their entity
// byte, and that a player who joins later gets the Spawn after Joined,
// then the entity's last state.
func TestSpawnRelayedAndReplayed(t *testing.T) {
	h := newHarness(t, testConfig())
	a, slotA := h.join("a")
	b, _ := h.join("b")
	h.place(a)
	a.Take()
	b.Take()
	h.send(a, trailer(5))
	got := ofType[*protocol.Spawn](msgs(b))
	require.Len(t, got, 1)
	want := trailer(5)
	want.Slot = slotA
	assert.Equal(t, want, got[0], "relayed with the sender's slot")
	assert.Empty(t, msgs(a), "not echoed to the sender")

	h.now += 10 * time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 5, 1, h.now, geom.Vec3{X: 1}))
	st := statesOf(b.Take(), 5)
	require.Len(t, st, 1, "the entity's state is relayed, entity byte kept")
	assert.Equal(t, uint8(slotA), st[0].Slot)
	assert.Equal(t, 1.0, st[0].Pos.X)

	c := &MemPeer{}
	_, err := h.r.Join(h.now, c, Member{User: "c"})
	require.NoError(t, err)
	fs := c.Take()
	ms := Messages(fs)
	require.IsType(t, &protocol.Joined{}, ms[0], "Joined comes first")
	sp := ofType[*protocol.Spawn](ms)
	require.Len(t, sp, 1, "the late joiner gets the spawn")
	assert.Equal(t, want, sp[0])
	assert.Len(t, statesOf(fs, 5), 1, "and the entity's last state")
	iSpawn, iState := -1, -1
	for i, f := range fs {
		switch {
		case f.Reliable && iSpawn < 0:
			if _, ok := Messages([]Frame{f})[0].(*protocol.Spawn); ok {
				iSpawn = i
			}
		case !f.Reliable && len(statesOf([]Frame{f}, 5)) > 0:
			iState = i
		}
	}
	assert.Less(t, iSpawn, iState, "the spawn goes before the entity's state")
}

// TestSpawnRefusals covers the limits: live count, rate, ids.
func TestSpawnRefusals(t *testing.T) {
	t.Run("count", func(t *testing.T) {
		cfg := testConfig()
		cfg.Entities.MaxPerPlayer = 3
		h := newHarness(t, cfg)
		a, _ := h.join("a")
		b, _ := h.join("b")
		h.place(a)
		a.Take()
		b.Take()
		for e := 1; e <= 3; e++ {
			h.send(a, trailer(e))
		}
		h.send(a, trailer(4))
		assert.Equal(t, []protocol.Code{protocol.CodeTooMany}, codes(msgs(a)))
		assert.Len(t, ofType[*protocol.Spawn](msgs(b)), 3, "the fourth is not relayed")

		// A state of a new entity counts too; one of a live entity passes.
		h.now += 10 * time.Millisecond
		h.r.HandleFrame(h.now, a, entFrame(t, 9, 1, h.now, geom.Vec3{}))
		assert.Equal(t, 1, h.metrics.rejected[RejectEntities])
		assert.Equal(t, []protocol.Code{protocol.CodeTooMany}, codes(msgs(a)))
		h.r.HandleFrame(h.now, a, entFrame(t, 2, 1, h.now, geom.Vec3{}))
		fs := b.Take()
		assert.Empty(t, statesOf(fs, 9))
		assert.Len(t, statesOf(fs, 2), 1)

		// A despawn frees a place.
		h.send(a, &protocol.Despawn{Entity: 1})
		h.send(a, trailer(4))
		assert.Empty(t, codes(msgs(a)))
	})
	t.Run("rate", func(t *testing.T) {
		cfg := testConfig()
		cfg.Entities.MaxPerPlayer = 100
		h := newHarness(t, cfg)
		a, _ := h.join("a")
		b, _ := h.join("b")
		a.Take()
		b.Take()
		for e := 1; e <= int(DefaultSpawnBurst); e++ {
			h.send(a, trailer(e))
		}
		assert.Empty(t, codes(msgs(a)), "the burst passes")
		h.send(a, trailer(50))
		assert.Equal(t, []protocol.Code{protocol.CodeRateLimited}, codes(msgs(a)))
		assert.Len(t, ofType[*protocol.Spawn](msgs(b)), int(DefaultSpawnBurst), "the one over the rate is not relayed")
		h.now += time.Second / DefaultSpawnRate
		h.send(a, trailer(50))
		assert.Empty(t, codes(msgs(a)), "a token later it passes")
		assert.Len(t, ofType[*protocol.Spawn](msgs(b)), 1)
	})
	t.Run("ids", func(t *testing.T) {
		h := newHarness(t, testConfig())
		host, _ := h.join("host")
		a, _ := h.join("a")
		h.send(a, trailer(1))
		host.Take()
		a.Take()
		cases := []struct {
			from *MemPeer
			m    protocol.Message
			code protocol.Code
		}{
			{a, trailer(1), protocol.CodeBadRequest},             // already spawned
			{a, trailer(0), protocol.CodeBadRequest},             // 0 is the player's own
			{a, trailer(wire.FirstShared), protocol.CodeNotHost}, // shared: the host's
			{a, &protocol.Despawn{Entity: 2}, protocol.CodeBadRequest},
			{host, &protocol.Despawn{Entity: 1}, protocol.CodeBadRequest}, // a's, not the host's
			{a, &protocol.Despawn{Entity: 300}, protocol.CodeBadRequest},
			{a, &protocol.Claim{Entity: 5}, protocol.CodeBadRequest}, // not a shared id
			{a, &protocol.Owner{Entity: 200}, protocol.CodeBadRequest},
		}
		for i, tc := range cases {
			h.send(tc.from, tc.m)
			assert.Equal(t, []protocol.Code{tc.code}, codes(msgs(tc.from)), "case %d", i)
		}
		assert.Empty(t, msgs(host), "nothing relayed")
	})
}

// TestDespawn checks that a Despawn is relayed and forgotten, and that a
// freed seat's spawned entities (not those it only sent states of) get a
// Despawn, however the seat was freed.
func TestDespawn(t *testing.T) {
	h := newHarness(t, testConfig())
	a, slotA := h.join("a")
	b, _ := h.join("b")
	h.send(a, trailer(1))
	h.send(a, &protocol.Despawn{Entity: 1})
	b.Take()
	h.send(a, trailer(1))
	h.send(a, &protocol.Despawn{Entity: 1})
	ms := msgs(b)
	require.Len(t, ofType[*protocol.Despawn](ms), 1)
	assert.Equal(t, &protocol.Despawn{Slot: slotA, Entity: 1}, ofType[*protocol.Despawn](ms)[0])
	c, _ := h.join("c")
	assert.Empty(t, ofType[*protocol.Spawn](msgs(c)), "a despawned entity is not replayed")

	for _, how := range []string{"leave", "seat hold expired", "kicked by the host"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, testConfig())
			host, _ := h.join("host")
			a, slotA := h.join("a")
			h.send(a, trailer(1))
			h.send(a, trailer(7))
			h.r.HandleFrame(h.now, a, entFrame(t, 3, 1, h.now, geom.Vec3{})) // in a's scene: never spawned
			host.Take()
			switch how {
			case "leave":
				h.r.Leave(h.now, a)
			case "seat hold expired":
				h.r.Disconnect(h.now, a)
				h.advance(h.r.cfg.SeatHold - time.Millisecond)
				assert.Empty(t, ofType[*protocol.Despawn](msgs(host)), "held: the entities stay")
				h.advance(time.Millisecond)
			case "kicked by the host":
				h.send(host, &protocol.Kick{Slot: slotA})
			}
			got := ofType[*protocol.Despawn](msgs(host))
			assert.Equal(t, []*protocol.Despawn{{Slot: slotA, Entity: 1}, {Slot: slotA, Entity: 7}}, got)
			d, _ := h.join("d")
			assert.Empty(t, ofType[*protocol.Spawn](msgs(d)))
		})
	}
}

// TestEntityHasItsOwnTrack checks that a second entity's states are
// checked on their own: entity 3 teleporting is refused while entity 0
// goes on, and entity 3's sequence does not disturb entity 0's.
func TestEntityHasItsOwnTrack(t *testing.T) {
	const tick = time.Second / 60
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	for i := range 10 {
		h.now += tick
		// Entity 0 counts from 1000, entity 3 from 0: one sequence each.
		h.r.HandleFrame(h.now, a, stateFrame(t, 1000+i, h.now, geom.Vec3{X: float64(i)}, geom.Vec3{}, 0))
		h.r.HandleFrame(h.now, a, entFrame(t, 3, i, h.now, geom.Vec3{Z: float64(i)}))
	}
	fs := b.Take()
	assert.Len(t, statesOf(fs, 0), 10)
	assert.Len(t, statesOf(fs, 3), 10)
	assert.Empty(t, nonZero(h.metrics.rejected), "neither sequence is stale for the other")

	h.now += tick
	h.r.HandleFrame(h.now, a, stateFrame(t, 1010, h.now, geom.Vec3{X: 10}, geom.Vec3{}, 0))
	h.r.HandleFrame(h.now, a, entFrame(t, 3, 10, h.now, geom.Vec3{Z: 1e4}))
	assert.Equal(t, 1, h.metrics.rejected[RejectTeleport], "entity 3's jump is refused")
	fs = b.Take()
	assert.Len(t, statesOf(fs, 0), 1, "entity 0 is fine")
	assert.Empty(t, statesOf(fs, 3))
	// Entity 3 is checked from its own last position (Z 9), not entity 0's.
	h.now += tick
	h.r.HandleFrame(h.now, a, entFrame(t, 3, 11, h.now, geom.Vec3{Z: 10}))
	assert.Len(t, statesOf(b.Take(), 3), 1)
	assert.Equal(t, 1, h.metrics.rejected[RejectTeleport])
	st, _, ok := h.r.LastState(0)
	require.True(t, ok)
	assert.Equal(t, 10.0, st.Pos.X, "LastState is entity 0's")
}

// claimRoom is a room with a host (slot 0) and players a and b, all at the
// origin, and shared object 200 owned by a at the origin.
type claimRoom struct {
	h           *harness
	host, a, b  *MemPeer
	seq         map[*MemPeer]int
	clock       map[*MemPeer]time.Duration // each sender's clock minus the server's
	objSeq      int
	obj         uint8
	pa, pb, pos geom.Vec3
}

func newClaimRoom(t *testing.T) *claimRoom { return newClaimRoomCfg(t, testConfig()) }

// newClaimRoomCfg is newClaimRoom with the room's config cfg.
func newClaimRoomCfg(t *testing.T, cfg *Config) *claimRoom {
	h := newHarness(t, cfg)
	c := &claimRoom{h: h, seq: map[*MemPeer]int{}, clock: map[*MemPeer]time.Duration{}, obj: 200}
	c.host, _ = h.join("host")
	c.clock[c.host] = -time.Hour // the host's clock reads otherwise
	c.a, _ = h.join("a")
	c.b, _ = h.join("b")
	c.move(c.host, geom.Vec3{X: 100})
	c.move(c.a, geom.Vec3{})
	c.move(c.b, geom.Vec3{})
	h.send(c.a, &protocol.Claim{Entity: int(c.obj)})
	c.objState(c.a, geom.Vec3{})
	c.h.advance(DefaultClaimAfterSpawn) // past ClaimHold and ClaimAfterSpawn
	c.takeAll()
	return c
}

// move sends p's entity-0 state at pos.
func (c *claimRoom) move(p *MemPeer, pos geom.Vec3) {
	c.h.t.Helper()
	c.seq[p]++
	c.h.r.HandleFrame(c.h.now, p, stateFrame(c.h.t, c.seq[p], c.h.now+c.clock[p], pos, geom.Vec3{}, 0))
}

// objState sends a state of the object from p.
func (c *claimRoom) objState(p *MemPeer, pos geom.Vec3) {
	c.h.t.Helper()
	c.objSeq++
	c.h.r.HandleFrame(c.h.now, p, entFrame(c.h.t, c.obj, c.objSeq, c.h.now+c.clock[p], pos))
}

func (c *claimRoom) takeAll() {
	for _, p := range []*MemPeer{c.host, c.a, c.b} {
		p.Take()
	}
}

// claim sends a Claim from p and returns the Owner messages p got.
func (c *claimRoom) claim(p *MemPeer) []*protocol.Owner {
	c.h.send(p, &protocol.Claim{Entity: int(c.obj)})
	return ofType[*protocol.Owner](msgs(p))
}

// TestClaimRules checks each rule of a claim.
func TestClaimRules(t *testing.T) {
	t.Run("first claim of an unknown object", func(t *testing.T) {
		h := newHarness(t, testConfig())
		host, _ := h.join("host")
		a, slotA := h.join("a")
		host.Take()
		a.Take()
		h.send(a, &protocol.Claim{Entity: 250})
		want := []*protocol.Owner{{Entity: 250, Slot: slotA, Epoch: 1}}
		assert.Equal(t, want, ofType[*protocol.Owner](msgs(a)))
		assert.Equal(t, want, ofType[*protocol.Owner](msgs(host)), "every player hears of it")
		slot, epoch, ok := h.r.Owner(250)
		assert.Equal(t, []any{slotA, uint32(1), true}, []any{slot, epoch, ok})
	})
	t.Run("own object: no change", func(t *testing.T) {
		c := newClaimRoom(t)
		got := c.claim(c.a)
		require.Len(t, got, 1)
		assert.Equal(t, 1, got[0].Slot)
		assert.Equal(t, uint32(1), got[0].Epoch, "no new epoch")
		assert.Empty(t, ofType[*protocol.Owner](msgs(c.b)), "told to the claimant only")
	})
	t.Run("beyond the radius", func(t *testing.T) {
		c := newClaimRoom(t)
		c.move(c.a, geom.Vec3{X: 20}) // the owner walks away, b stays beyond the radius
		c.move(c.b, geom.Vec3{X: DefaultClaimRadius + 0.5})
		got := c.claim(c.b)
		require.Len(t, got, 1)
		assert.Equal(t, 1, got[0].Slot, "refused: a keeps it")
		assert.Contains(t, got[0].Reason, "radius")
		assert.Empty(t, ofType[*protocol.Owner](msgs(c.a)))
		c.move(c.b, geom.Vec3{X: DefaultClaimRadius - 0.5})
		got = c.claim(c.b)
		require.Len(t, got, 1)
		assert.Equal(t, 2, got[0].Slot, "within the radius and nearer: granted")
		assert.Equal(t, uint32(2), got[0].Epoch)
		assert.True(t, got[0].Known)
	})
	t.Run("owner nearer", func(t *testing.T) {
		c := newClaimRoom(t)
		c.move(c.a, geom.Vec3{X: 1})
		c.move(c.b, geom.Vec3{X: -1}) // as near: the owner keeps it
		got := c.claim(c.b)
		require.Len(t, got, 1)
		assert.Equal(t, 1, got[0].Slot)
		assert.Contains(t, got[0].Reason, "near")
		c.move(c.b, geom.Vec3{X: -0.9})
		assert.Equal(t, 2, c.claim(c.b)[0].Slot)
	})
	t.Run("hold after a handover", func(t *testing.T) {
		c := newClaimRoom(t)
		c.move(c.a, geom.Vec3{X: 2})
		c.move(c.b, geom.Vec3{X: 1})
		require.Equal(t, 2, c.claim(c.b)[0].Slot)
		c.takeAll()
		c.h.now += time.Millisecond
		c.move(c.b, geom.Vec3{X: 2})
		c.move(c.a, geom.Vec3{X: 1})
		c.h.now += DefaultClaimHold - 2*time.Millisecond
		got := c.claim(c.a)
		assert.Equal(t, 2, got[0].Slot, "too soon after the last handover")
		assert.Contains(t, got[0].Reason, "changed hands")
		c.h.now += time.Millisecond
		assert.Equal(t, 1, c.claim(c.a)[0].Slot, "ClaimHold later it goes back")
	})
	t.Run("host anywhere", func(t *testing.T) {
		c := newClaimRoom(t)
		got := c.claim(c.host)
		require.Len(t, got, 1)
		assert.Equal(t, 0, got[0].Slot, "the host at 100 m takes it")
		assert.Len(t, ofType[*protocol.Owner](msgs(c.a)), 1, "the old owner hears of it")
	})
	t.Run("owner gone", func(t *testing.T) {
		c := newClaimRoom(t)
		c.h.r.Disconnect(c.h.now, c.host) // no connected host to inherit
		c.h.r.Disconnect(c.h.now, c.a)
		ms := msgs(c.b)
		require.Len(t, ofType[*protocol.Owner](ms), 1)
		assert.Equal(t, protocol.NoOwner, ofType[*protocol.Owner](ms)[0].Slot, "nobody owns it now")
		c.move(c.b, geom.Vec3{X: 1000}) // far away: free objects need no radius
		assert.Equal(t, 2, c.claim(c.b)[0].Slot)
	})
	t.Run("owner disconnects: the host inherits", func(t *testing.T) {
		c := newClaimRoom(t)
		c.h.r.Disconnect(c.h.now, c.a)
		got := ofType[*protocol.Owner](msgs(c.b))
		require.Len(t, got, 1)
		assert.Equal(t, 0, got[0].Slot)
		assert.Equal(t, uint32(2), got[0].Epoch)
		a2 := &MemPeer{}
		_, err := c.h.r.Join(c.h.now, a2, Member{User: "a"})
		require.NoError(t, err)
		got = ofType[*protocol.Owner](msgs(a2))
		require.Len(t, got, 1, "back: one Owner per owned object")
		assert.Equal(t, 0, got[0].Slot)
	})
	t.Run("rate", func(t *testing.T) {
		c := newClaimRoom(t)
		for range int(DefaultClaimBurst) {
			c.claim(c.b)
		}
		c.h.send(c.b, &protocol.Claim{Entity: int(c.obj)})
		assert.Equal(t, []protocol.Code{protocol.CodeRateLimited}, codes(msgs(c.b)))
	})
}

// TestHostSpawnsSharedObject checks a host-spawned object: owned by the
// host, replayed to late joiners, forgotten on despawn; and that it stays
// (passing to the new host) when the host leaves.
func TestHostSpawnsSharedObject(t *testing.T) {
	h := newHarness(t, testConfig())
	host, _ := h.join("host")
	a, slotA := h.join("a")
	a.Take()
	ball := &protocol.Spawn{Entity: 130, Scene: "res://ball.tscn", Pos: [3]float64{5, 0, 0}, Rot: [4]float64{0, 0, 0, 1}}
	h.send(host, ball)
	ms := msgs(a)
	require.Len(t, ofType[*protocol.Spawn](ms), 1)
	assert.Equal(t, []*protocol.Owner{{Entity: 130, Slot: 0, Epoch: 1}}, ofType[*protocol.Owner](ms))
	h.send(host, ball)
	assert.Equal(t, []protocol.Code{protocol.CodeBadRequest}, codes(msgs(host)), "it exists")

	c, _ := h.join("c")
	ms = msgs(c)
	assert.Len(t, ofType[*protocol.Spawn](ms), 1)
	assert.Len(t, ofType[*protocol.Owner](ms), 1)

	h.r.Leave(h.now, host)
	got := ofType[*protocol.Owner](msgs(a))
	require.Len(t, got, 1, "the object stays, with the new host")
	assert.Equal(t, slotA, got[0].Slot)
	assert.Empty(t, ofType[*protocol.Despawn](msgs(c)))

	h.send(c, &protocol.Despawn{Entity: 130})
	assert.Equal(t, []protocol.Code{protocol.CodeNotHost}, codes(msgs(c)))
	h.send(a, &protocol.Despawn{Entity: 130})
	assert.Equal(t, []*protocol.Despawn{{Slot: slotA, Entity: 130}}, ofType[*protocol.Despawn](msgs(c)))
	_, _, ok := h.r.Owner(130)
	assert.False(t, ok, "forgotten")

	// Spawned again, it counts its epochs on: an id's epochs never repeat.
	h.send(a, ball)
	got = ofType[*protocol.Owner](msgs(c))
	require.Len(t, got, 1)
	assert.Equal(t, uint32(3), got[0].Epoch)
	// A late joiner hears of every object, owned or not.
	h.r.Disconnect(h.now, a)
	_, _ = h.join("d")
	d2, _ := h.join("e")
	got = ofType[*protocol.Owner](msgs(d2))
	require.Len(t, got, 1)
	assert.Equal(t, protocol.NoOwner, got[0].Slot)
}

// TestSharedStatesFromOwnerOnly checks that a non-owner's states of a
// shared object are dropped without a word, and that those of the owner
// go to everyone, direct links or not.
func TestSharedStatesFromOwnerOnly(t *testing.T) {
	c := newClaimRoom(t)
	h := c.h
	h.send(c.a, &protocol.DirectLink{Slot: 2, Up: true})
	h.send(c.b, &protocol.DirectLink{Slot: 1, Up: true})
	h.now += 10 * time.Millisecond
	c.objState(c.b, geom.Vec3{X: 1})
	assert.Equal(t, 1, h.metrics.notOwner, "counted in the metrics")
	assert.Empty(t, nonZero(h.metrics.rejected), "no rejection, no abuse score")
	for _, p := range []*MemPeer{c.host, c.a, c.b} {
		assert.Empty(t, p.Take(), "nothing relayed, nothing answered")
	}
	c.objState(c.a, geom.Vec3{X: 1})
	assert.Len(t, statesOf(c.b.Take(), c.obj), 1, "relayed to b despite the direct link")
	assert.Len(t, statesOf(c.host.Take(), c.obj), 1)
	assert.Empty(t, c.a.Take(), "not to the sender")
}

// TestSharedSequenceAcrossHandover checks that receivers see one
// increasing sequence and one timeline across owners whose own sequences
// and clocks differ, and that the new owner's first state is checked from
// the object's last position with the time since it as the gap.
func TestSharedSequenceAcrossHandover(t *testing.T) {
	const tick = time.Second / 60
	c := newClaimRoom(t)
	h := c.h
	var got []wire.State
	for i := range 5 {
		h.now += tick
		h.r.HandleFrame(h.now, c.a, entFrame(t, c.obj, 2+i, h.now, geom.Vec3{X: float64(i)}))
	}
	got = append(got, statesOf(c.b.Take(), c.obj)...)
	require.Equal(t, 0, c.claim(c.host)[0].Slot)
	h.now += tick
	h.r.HandleFrame(h.now, c.a, entFrame(t, c.obj, 7, h.now, geom.Vec3{X: 5})) // in flight: dropped
	hostClock := -time.Hour                                                    // the host's clock reads otherwise
	h.now += 100 * time.Millisecond
	h.r.HandleFrame(h.now, c.host, entFrame(t, c.obj, 3, h.now+hostClock, geom.Vec3{X: 1000}))
	assert.Equal(t, 1, h.metrics.rejected[RejectTeleport], "the new owner's first state is checked on the object's track")
	h.r.HandleFrame(h.now, c.host, entFrame(t, c.obj, 4, h.now+hostClock, geom.Vec3{X: 30}))
	for i := range 5 {
		h.now += tick
		h.r.HandleFrame(h.now, c.host, entFrame(t, c.obj, 5+i, h.now+hostClock, geom.Vec3{X: 31 + float64(i)}))
	}
	got = append(got, statesOf(c.b.Take(), c.obj)...)
	require.Len(t, got, 11)
	assert.Equal(t, 1, h.metrics.notOwner)
	for i := 1; i < len(got); i++ {
		assert.True(t, got[i].Seq.Newer(got[i-1].Seq), "seq %d then %d", got[i-1].Seq, got[i].Seq)
		assert.Equal(t, got[i-1].Seq+1, got[i].Seq)
		assert.Positive(t, got[i].Stamp.Sub(got[i-1].Stamp), "one timeline: stamps go forward (%d)", i)
	}
	assert.Equal(t, uint8(0), got[len(got)-1].Slot, "slot is the sender's")
}

// TestOwnersRandomized applies a seeded random mix of claims, spawns,
// despawns, states, joins, leaves and disconnects, and checks after every
// step that each object has one connected owner or none, and that every
// connected player's view of the owners and of the others' spawned
// entities, built from the Owner, Spawn and Despawn messages it got, is
// the room's.
func TestOwnersRandomized(t *testing.T) {
	users := []string{"a", "b", "c", "d", "e"}
	objs := []uint8{128, 129, 200, 255}
	ids := append([]uint8{1, 2, 127}, objs...)
	handovers, relayed, spawns := 0, 0, 0 // the mix must exercise what it checks
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		h := newHarness(t, testConfig())
		peers := map[string]*MemPeer{}
		views := map[*MemPeer]map[int]int{}       // object -> owner
		spawned := map[*MemPeer]map[[2]int]bool{} // (slot, entity) of the others' entities
		seq := map[string]int{}
		pos := map[string]geom.Vec3{}
		for step := 0; step < 300 && !h.r.Closed(); step++ {
			u := users[rng.IntN(len(users))]
			p := peers[u]
			e := objs[rng.IntN(len(objs))]
			op := rng.IntN(14)
			if op >= 7 && op <= 9 {
				e = ids[rng.IntN(len(ids))]
			}
			switch {
			case p == nil || op == 0:
				np := &MemPeer{}
				if _, err := h.r.Join(h.now, np, Member{User: u}); err == nil {
					peers[u] = np
					views[np] = map[int]int{}
					spawned[np] = map[[2]int]bool{}
				}
			case op == 1:
				h.r.Leave(h.now, p)
				delete(peers, u)
			case op == 2:
				h.r.Disconnect(h.now, p)
				delete(peers, u)
			case op <= 6:
				h.send(p, &protocol.Claim{Entity: int(e)})
			case op == 7:
				h.send(p, &protocol.Spawn{Entity: int(e), Scene: "ball", Rot: [4]float64{0, 0, 0, 1}})
			case op == 8:
				h.send(p, &protocol.Despawn{Entity: int(e)})
				if _, _, ok := h.r.Owner(e); !ok {
					delete(views[p], int(e)) // the sender knows what it despawned
				}
			case op <= 10:
				seq[u]++
				h.r.HandleFrame(h.now, p, entFrame(t, e, seq[u], h.now, geom.Vec3{X: rng.Float64()}))
			default:
				seq[u]++
				pos[u] = pos[u].Add(geom.Vec3{X: rng.Float64()*4 - 2, Y: rng.Float64()*4 - 2})
				h.r.HandleFrame(h.now, p, stateFrame(t, seq[u], h.now, pos[u], geom.Vec3{}, 0))
			}
			h.advance(time.Duration(rng.IntN(500)) * time.Millisecond)
			if h.r.Closed() {
				break
			}
			checkInvariants(t, h.r, h.now, seed, step)
			for u, p := range peers {
				v := views[p]
				fs := p.Take()
				for _, st := range States(fs) {
					if wire.Shared(st.Entity) {
						relayed++
					}
				}
				for _, m := range Messages(fs) {
					switch m := m.(type) {
					case *protocol.Owner:
						if m.Reason == "" && v[m.Entity] != m.Slot {
							handovers++
						}
						v[m.Entity] = m.Slot
					case *protocol.Spawn:
						if !wire.Shared(uint8(m.Entity)) {
							require.False(t, spawned[p][[2]int{m.Slot, m.Entity}], "seed %d step %d: spawned twice", seed, step)
							spawned[p][[2]int{m.Slot, m.Entity}] = true
							spawns++
						}
					case *protocol.Despawn:
						if wire.Shared(uint8(m.Entity)) {
							delete(v, m.Entity)
						} else {
							delete(spawned[p], [2]int{m.Slot, m.Entity})
						}
					}
				}
				want := map[[2]int]bool{}
				for _, o := range h.r.seats {
					if o == nil || o.peer == p {
						continue
					}
					for e, t := range o.ents.tracks {
						if t != nil && t.spawn != nil {
							want[[2]int{o.slot, e}] = true
						}
					}
				}
				require.Equal(t, want, spawned[p], "seed %d step %d: %s's view of the others' entities", seed, step, u)
				for _, e := range objs {
					want, _, _ := h.r.Owner(e)
					got, ok := v[int(e)]
					if !ok {
						got = protocol.NoOwner
					}
					require.Equal(t, want, got, "seed %d step %d: %s's view of object %d", seed, step, u, e)
				}
			}
		}
	}
	t.Logf("%d handovers seen, %d shared states relayed, %d spawns seen", handovers, relayed, spawns)
	assert.Greater(t, handovers, 300)
	assert.Greater(t, relayed, 100)
	assert.Greater(t, spawns, 100)
}

// TestEntityLimitsValidate checks the config's entity limits.
func TestEntityLimitsValidate(t *testing.T) {
	for _, l := range []EntityLimits{{MaxPerPlayer: 128}, {MaxPerPlayer: -1}, {SpawnRate: -1}, {ClaimBurst: 0.5},
		{ClaimRadius: -1}, {ClaimHold: -time.Second}} {
		assert.ErrorIs(t, (&Config{Entities: l}).Validate(), ErrInvalidConfig, fmt.Sprintf("%+v", l))
	}
	assert.NoError(t, (&Config{Entities: EntityLimits{MaxPerPlayer: wire.MaxPlayerEntity}}).Validate())
}

// TestExtraStatesShareABudget checks that a player's extra entities, each
// within its own rate, share one budget of StateShare players' worth: 4
// entities at 60 Hz pass; 20 are refused past the shared rate, and the
// player, flooding, is closed like any state flooder.
func TestExtraStatesShareABudget(t *testing.T) {
	const tick = time.Second / 60
	for _, n := range []int{4, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := newHarness(t, testConfig())
			a, _ := h.join("a")
			b, _ := h.join("b")
			h.place(a)
			b.Take()
			relayed := 0
			const frames = 3 * 60
			for i := 0; i < frames && !a.Closed; i++ {
				h.now += tick
				for e := 1; e <= n; e++ {
					h.r.HandleFrame(h.now, a, entFrame(t, uint8(e), i, h.now, geom.Vec3{X: float64(e)}))
				}
				relayed += len(States(b.Take()))
			}
			c := h.r.cfg
			share := c.Entities.StateShare
			if n == 4 {
				assert.Empty(t, nonZero(h.metrics.rejected))
				assert.Equal(t, n*frames, relayed)
				return
			}
			assert.Positive(t, h.metrics.rejected[RejectRate])
			assert.True(t, a.Closed)
			assert.Equal(t, protocol.CodeRateLimited, a.CloseCode)
			limit := share*c.SendRate*c.RateFactor*(h.now-time.Hour).Seconds() + share*c.RateBurst
			assert.LessOrEqual(t, float64(relayed), limit, "at most the shared rate plus its burst")
		})
	}
}

// TestEntityRelayDoesNotAllocate checks that states of a known extra
// entity and of an owned shared object are relayed without allocating,
// like entity 0's.
func TestEntityRelayDoesNotAllocate(t *testing.T) {
	const tick = time.Second / 60
	h := newHarness(t, testConfig())
	a, b := &CountPeer{}, &CountPeer{}
	_, err := h.r.Join(h.now, a, Member{User: "a"})
	require.NoError(t, err)
	_, err = h.r.Join(h.now, b, Member{User: "b"})
	require.NoError(t, err)
	h.place(a)
	b.States = 0
	h.r.HandleFrame(h.now, a, protocol.MustMarshal(&protocol.Claim{Entity: 200}))
	const runs = 100
	var frames [][]byte
	for i := range runs + 2 {
		at := h.now + time.Duration(i)*tick
		frames = append(frames, entFrame(t, 3, i, at, geom.Vec3{}), entFrame(t, 200, i, at, geom.Vec3{}))
	}
	i := 0
	allocs := testing.AllocsPerRun(runs, func() {
		h.now += tick
		h.r.HandleFrame(h.now, a, frames[i])
		h.r.HandleFrame(h.now, a, frames[i+1])
		i += 2
	})
	assert.Zero(t, allocs)
	assert.Equal(t, 2*(runs+1), b.States, "every state relayed")
	assert.Empty(t, nonZero(h.metrics.rejected))
}

// TestJoinReplayFits fills a room to the limits and counts what a late
// joiner gets at once.
func TestJoinReplayFits(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPlayers = MaxSlots
	cfg.Entities.SpawnBurst = 200
	h := newHarness(t, cfg)
	for i := range MaxSlots - 1 {
		p, _ := h.join(fmt.Sprint("p", i))
		for k := range DefaultPropKeys {
			h.send(p, &protocol.Prop{Key: fmt.Sprint("k", k), Value: json.RawMessage("1")})
		}
		for e := 1; e <= DefaultMaxEntities; e++ {
			h.send(p, trailer(e))
		}
		if i == 0 {
			for e := wire.FirstShared; e <= 255; e++ {
				h.send(p, &protocol.Spawn{Entity: e, Scene: "ball", Rot: [4]float64{0, 0, 0, 1}})
			}
		}
		require.Empty(t, codes(msgs(p)))
	}
	late := &MemPeer{}
	_, err := h.r.Join(h.now, late, Member{User: "late"})
	require.NoError(t, err)
	n := 0
	for _, f := range late.Take() {
		if f.Reliable {
			n++
		}
	}
	assert.Equal(t, cfg.JoinBurst()-1, n, "everything but a room state, which waits for the window")
}

// TestFirstStateNearBody checks that an entity's first state must lie
// within SpawnRadius of its player's own entity: a new extra entity, and a
// level object's first state after its first claim. Before, either could
// appear anywhere inside the world bounds.
func TestFirstStateNearBody(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.now += 10 * time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 0, 1, h.now, geom.Vec3{X: 100}))
	a.Take()
	b.Take()

	h.now += 10 * time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 5, 1, h.now, geom.Vec3{X: 100 + DefaultSpawnRadius + 1}))
	assert.Empty(t, statesOf(b.Take(), 5), "a new entity far from its player is refused")
	assert.NotEmpty(t, errorsIn(msgs(a)), "and the sender told")
	h.now += 10 * time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 6, 1, h.now, geom.Vec3{X: 100 + DefaultSpawnRadius - 1}))
	assert.Len(t, statesOf(b.Take(), 6), 1, "one near it passes")

	h.send(a, &protocol.Claim{Entity: 140})
	a.Take()
	b.Take()
	h.now += 10 * time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 140, 1, h.now, geom.Vec3{X: -5000}))
	assert.Empty(t, statesOf(b.Take(), 140), "a level object's first state far from its claimant is refused")
	h.now += 10 * time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 140, 2, h.now, geom.Vec3{X: 103}))
	assert.Len(t, statesOf(b.Take(), 140), 1)
}

// TestLateStateAfterDespawn checks that a state of an entity sent before
// its Despawn but arriving after it (states and control messages travel in
// separate queues) is dropped quietly: before, it made a new track the
// player never despawned, and far from its player it now reads as a
// teleport and counts against the abuse score.
func TestLateStateAfterDespawn(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.now += 10 * time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 0, 1, h.now, geom.Vec3{}))
	h.send(a, trailer(9))
	for i := 1; i <= 5; i++ {
		h.now += 16 * time.Millisecond
		h.r.HandleFrame(h.now, a, entFrame(t, 9, i, h.now, geom.Vec3{X: float64(i)}))
	}
	h.send(a, &protocol.Despawn{Entity: 9})
	a.Take()
	b.Take()
	h.now += 5 * time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 9, 6, h.now, geom.Vec3{X: DefaultSpawnRadius + 50}))
	assert.Empty(t, statesOf(b.Take(), 9), "the late state is not relayed")
	assert.Empty(t, msgs(a), "nor answered")
	assert.Equal(t, 0, h.r.byPeer[a].ents.live, "and makes no track")

	h.now += 2 * time.Second // long after: a state of id 9 is a new entity again
	h.r.HandleFrame(h.now, a, entFrame(t, 9, 1, h.now, geom.Vec3{X: 1}))
	assert.Len(t, statesOf(b.Take(), 9), 1)
}

// TestTeleportCannotStealSharedObject replays the theft by teleport: a
// player 1000 m from the ball, refused a claim, sends one state flagged
// wire.FlagTeleport that lands on the ball and claims again. Before, the
// claim was granted and the thief then teleported the ball to x=5000.
// Now a claim soon after a teleport is also measured from where the
// claimant was before it, and a shared object's states never jump.
func TestTeleportCannotStealSharedObject(t *testing.T) {
	c := newClaimRoom(t)
	h := c.h
	c.move(c.a, geom.Vec3{X: 2}) // the owner stands 2 m from the ball
	h.now += 6 * time.Second     // time to walk 1000 m at the speed limit
	c.move(c.b, geom.Vec3{X: 1000})
	got := c.claim(c.b)
	require.Len(t, got, 1)
	require.Equal(t, 1, got[0].Slot, "a claim from 1000 m is refused")

	h.now += 100 * time.Millisecond
	c.seq[c.b]++
	h.r.HandleFrame(h.now, c.b, stateFrame(t, c.seq[c.b], h.now, geom.Vec3{X: 0.5}, geom.Vec3{}, wire.FlagTeleport))
	require.Empty(t, nonZero(h.metrics.rejected), "the teleport itself passes (a respawn)")
	got = c.claim(c.b)
	require.Len(t, got, 1)
	assert.Equal(t, 1, got[0].Slot, "a claim right after a teleport onto the ball is refused")
	assert.Contains(t, got[0].Reason, "teleport")
	own, _, _ := h.r.Owner(c.obj)
	assert.Equal(t, 1, own, "a keeps the ball")

	// Once the claimant has stayed put for ClaimAfterTeleport, its
	// position counts as any other.
	h.now += 3 * time.Second // DefaultClaimAfterTeleport
	c.move(c.b, geom.Vec3{X: 0.5})
	assert.Equal(t, 2, c.claim(c.b)[0].Slot, "a respawn near the ball may claim it later")

	// The owner's teleport of the ball is judged like any other move.
	c.takeAll()
	h.now += 100 * time.Millisecond
	c.objSeq++
	h.r.HandleFrame(h.now, c.b, entFrameFlags(t, c.obj, c.objSeq, h.now, geom.Vec3{X: 5000}, wire.FlagTeleport))
	assert.Empty(t, statesOf(c.a.Take(), c.obj), "a teleport does not move a shared object")
	assert.Equal(t, 1, h.metrics.rejected[RejectTeleport])
	h.now += 10 * time.Millisecond
	c.objState(c.b, geom.Vec3{X: 1})
	assert.Len(t, statesOf(c.a.Take(), c.obj), 1, "an ordinary move of it passes")
}

// entFrameFlags is entFrame with flags.
func entFrameFlags(t *testing.T, e uint8, seq int, stamp time.Duration, pos geom.Vec3, flags wire.Flags) []byte {
	t.Helper()
	b, err := wire.AppendState(nil, &wire.State{Entity: e, Seq: wire.Seq(seq), Stamp: wire.StampOf(stamp), Pos: pos,
		Rot: geom.Quat{W: 1}, Flags: flags, Slot: 99})
	require.NoError(t, err)
	return b
}

// TestNoEntityBeforeBody replays the spawn-radius bypass: before a
// player's own entity had a position, the first state of each extra
// entity and of a level object was measured against nothing, so 32
// entities and a shared object appeared at x = 3.2e6. Such states are now
// dropped until the player's own entity has an accepted position.
func TestNoEntityBeforeBody(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	far := geom.Vec3{X: 3.2e6}
	h.send(a, &protocol.Claim{Entity: 140}) // a level object: the first claim takes it
	a.Take()
	b.Take()
	relayed := 0
	for e := 1; e <= DefaultMaxEntities; e++ {
		h.now += time.Millisecond
		h.r.HandleFrame(h.now, a, entFrame(t, uint8(e), 1, h.now, far))
		relayed += len(States(b.Take()))
	}
	h.now += time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 140, 1, h.now, far))
	relayed += len(States(b.Take()))
	assert.Zero(t, relayed, "no extra entity or shared object before the player's own entity")
	assert.Zero(t, h.r.byPeer[a].ents.live, "and no track kept")
	assert.Empty(t, msgs(a), "dropped without an error: a client may send them in its first frame")

	h.now += time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 0, 1, h.now, geom.Vec3{}))
	b.Take()
	h.now += time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 5, 2, h.now, geom.Vec3{X: 1}))
	h.r.HandleFrame(h.now, a, entFrame(t, 140, 2, h.now, geom.Vec3{X: 2}))
	assert.Len(t, States(b.Take()), 2, "once it has a position, near ones pass")
	h.now += time.Millisecond
	h.r.HandleFrame(h.now, a, entFrame(t, 6, 1, h.now, far))
	assert.Empty(t, States(b.Take()), "and far ones are refused")
}
