package netroom

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/predict"
)

// TestFrameRoutesNothing: a NetPredictor's frame draws what the Room
// routed; routing is the NetRoom's, once per frame (Room.Route), not
// every drawn entity's again.
func TestFrameRoutesNothing(t *testing.T) {
	h := joined(t, 0, 0)
	p := NewPredictor()
	p.BindRemote(h.room, 1)
	p.Ready(h.room)
	h.link.mu.Lock()
	h.link.states = append(h.link.states, entityState(1, 0, 1, 1))
	h.link.mu.Unlock()

	p.Frame(20 * time.Millisecond)
	assert.Zero(t, h.room.Stats().Routed, "Frame routed")
	assert.Equal(t, 1, h.room.Route(), "the state waited for the Room's Route")
	p.Frame(21 * time.Millisecond)
	assert.Equal(t, uint64(1), p.remote.Added())
}

// TestRouteOnePath: a player's own entity (0) and its others are found
// by one key, (slot, entity), whichever way the state came, and each
// state is counted once.
func TestRouteOnePath(t *testing.T) {
	h := joined(t, 0, 0)
	body, _ := NewRemote(predict.Config{})
	trailer, _ := NewRemote(predict.Config{})
	other, _ := NewRemote(predict.Config{})
	require.NoError(t, h.room.BindEntity(KeyOf(1, 0), body))
	assert.Same(t, body, h.room.Bound(1), "entity 0 is slot 1's player")
	require.ErrorIs(t, h.room.Bind(1, other), ErrTaken, "one binding, whichever call made it")
	require.NoError(t, h.room.Bind(1, body))
	require.NoError(t, h.room.BindEntity(KeyOf(1, 1), trailer))
	require.ErrorIs(t, h.room.BindEntity(KeyOf(MaxSlots, 0), other), ErrSlot)

	h.link.mu.Lock()
	h.link.states = append(h.link.states,
		entityState(1, 0, 1, 1), entityState(1, 1, 1, 10), // routed
		entityState(2, 0, 1, 20), // nobody bound: unrouted
		entityState(0, 0, 1, 30)) // our own echo: unrouted
	h.link.mu.Unlock()
	assert.Equal(t, 2, h.room.Route())

	// A custom transport's direct states take the same path, counted as
	// direct.
	for _, rs := range [](struct {
		entity uint8
		want   bool
	}){{0, true}, {0, false}, {1, true}} { // the repeat is refused
		s := entityState(1, rs.entity, 2, 1.01)
		assert.Equal(t, rs.want, h.room.AddDirect(&s.State, s.Local, s.Arrival), "entity %d", rs.entity)
	}
	st := h.room.Stats()
	assert.Equal(t, uint64(4), st.Routed)
	assert.Equal(t, uint64(2), st.DirectRouted, "AddDirect counts what it routes as direct")
	assert.Equal(t, uint64(2), st.Unrouted)
	assert.Equal(t, uint64(1), st.Refused)
	assert.Equal(t, uint64(2), body.Added())
	assert.Equal(t, uint64(2), trailer.Added())

	h.room.Unbind(1, body)
	assert.Nil(t, h.room.BoundEntity(KeyOf(1, 0)))
	assert.Same(t, trailer, h.room.BoundEntity(KeyOf(1, 1)))
}
