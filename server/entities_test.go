package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// TestEntitiesOverTheSocket runs extra entities and a shared object
// through the real connection path: the largest state (every field and an
// entity byte, wire.MaxStateSize) keeps its entity byte, a shared state is
// renumbered by the server, and spawns and owners arrive as messages.
func TestEntitiesOverTheSocket(t *testing.T) {
	e := newEnv(t, nil)
	ann := e.dial("Ann", nil)
	bob := e.dial("Bob", nil)
	j, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	_, err = bob.Join(ctxT(t), j.Code)
	require.NoError(t, err)
	ann.waitSynced()
	bob.waitSynced()
	// Extra entities and shared objects pass once their player's own
	// entity has a position.
	require.NoError(t, ann.SendState(&wire.State{Seq: 1, Rot: geom.Quat{W: 1}}))
	require.NoError(t, bob.SendState(&wire.State{Seq: 1, Rot: geom.Quat{W: 1}}))
	waitStates(t, bob, 1)
	waitStates(t, ann, 1)

	require.NoError(t, ann.Send(&protocol.Spawn{Entity: 3, Scene: "res://trailer.tscn", Rot: [4]float64{0, 0, 0, 1}}))
	sp := waitMsg[*protocol.Spawn](bob, "Ann's spawn", nil)
	assert.Equal(t, 0, sp.Slot)
	assert.Equal(t, 3, sp.Entity)

	big := &wire.State{Entity: 3, Seq: 1, Fields: wire.HasAcc | wire.HasTurn | wire.HasExtras, Pos: geom.Vec3{X: 1},
		Rot: geom.Quat{W: 1}, Anim: 7, Input: 9}
	require.Equal(t, wire.MaxStateSize, big.Size())
	require.NoError(t, ann.SendState(big))
	got := waitStates(t, bob, 1)
	assert.Equal(t, uint8(3), got[0].State.Entity)
	assert.Equal(t, uint8(0), got[0].State.Slot)
	assert.Equal(t, uint8(7), got[0].State.Anim)

	require.NoError(t, bob.Send(&protocol.Claim{Entity: 200}))
	ow := waitMsg[*protocol.Owner](ann, "Bob owns the ball", nil)
	assert.Equal(t, protocol.Owner{Entity: 200, Slot: 1, Epoch: 1}, *ow)
	require.NoError(t, bob.SendState(&wire.State{Entity: 200, Seq: 500, Rot: geom.Quat{W: 1}}))
	var ball []serverlink.RemoteState
	eventually(t, "Ann gets the ball's state", func() ([]serverlink.RemoteState, bool) {
		ball = ann.PollStates(ball)
		return ball, len(ball) > 0
	})
	assert.Equal(t, uint8(200), ball[0].State.Entity)
	assert.Equal(t, wire.Seq(1), ball[0].State.Seq, "numbered by the server")

	require.NoError(t, ann.Leave(ctxT(t)))
	d := waitMsg[*protocol.Despawn](bob, "Ann's trailer goes with her", nil)
	assert.Equal(t, protocol.Despawn{Slot: 0, Entity: 3}, *d)
}
