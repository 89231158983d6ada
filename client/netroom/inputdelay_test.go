package netroom

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// TestInputDelaySetting checks the host's side: the setting asked for
// before a room rides in the Create; in the lobby a host's change is sent
// with the room's other settings, a guest's refused; while seated the
// setting read is the room's.
func TestInputDelaySetting(t *testing.T) {
	h := newHarness(t, Config{})
	fixed := protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 100_000}
	require.Error(t, h.room.SetInputDelay(protocol.InputDelay{Mode: "later"}), "an unknown mode")
	require.NoError(t, h.room.SetInputDelay(fixed))
	assert.Equal(t, fixed, h.room.InputDelaySetting(), "the one a Create will ask for")
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	require.Eventually(t, func() bool { h.update(); return h.link.Creates() == 1 }, 5*time.Second, time.Millisecond)
	require.NotNil(t, h.link.CreateSettings())
	assert.Equal(t, &fixed, h.link.CreateSettings().InputDelay, "asked for by the create")

	joined := joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob"))
	joined.Room.Settings = protocol.Settings{RoundUS: 90_000_000}
	h.link.Msg(joined)
	h.until(has(EventJoined))
	assert.Equal(t, protocol.InputDelay{}, h.room.InputDelaySetting(), "the room's: none yet")
	adaptive := protocol.InputDelay{Mode: protocol.InputDelayAdaptive, CapUS: 150_000}
	h.link.TakeSent()
	require.NoError(t, h.room.SetInputDelay(adaptive))
	sent := h.link.TakeSent()
	require.Len(t, sent, 1)
	assert.Equal(t, &protocol.Settings{RoundUS: 90_000_000, InputDelay: &adaptive}, sent[0], "with the room's other settings")

	st := joined.Room
	st.Rev, st.Host = 2, 1
	h.link.Msg(&st)
	h.until(has(EventHostChanged))
	assert.ErrorIs(t, h.room.SetInputDelay(fixed), ErrNotHost)
	assert.Empty(t, h.link.TakeSent())
}

// TestInputDelayPlacesStates checks the receiving side: the delay in
// force follows the room state on the server clock (sliding), and every
// routed state is placed that far ahead of its mapped time.
func TestInputDelayPlacesStates(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	joined := joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob"))
	h.link.Msg(joined)
	h.until(has(EventJoined))
	rem := newDrawn(t)
	require.NoError(t, h.room.Bind(1, rem))

	h.link.SetOffset(time.Hour) // server clock = local + 1 h
	h.link.Push(serverlink.Event{Kind: serverlink.EventSynced})
	h.until(has(EventSynced))
	st := joined.Room
	st.Rev = 2
	st.InputDelay = &protocol.InputDelayState{InputDelay: protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 100_000},
		FromUS: 0, AtUS: protocol.US(time.Hour + 10*time.Second)}
	h.link.Msg(&st)
	h.clock.Add(10*time.Second - h.clock.Now())
	h.update()
	assert.Zero(t, h.room.InputDelay(), "the slide starts now")
	h.clock.Add(500 * time.Millisecond)
	h.update()
	assert.Equal(t, 50*time.Millisecond, h.room.InputDelay(), "half-way")
	h.clock.Add(1500 * time.Millisecond)
	h.update()
	assert.Equal(t, 100*time.Millisecond, h.room.InputDelay())

	// A state sampled at 11.9 s (mapped) draws at 12.0 s as where it was
	// then: it belongs at 12.0 s on the shared timeline.
	h.link.PushStates(serverlink.RemoteState{State: wire.State{Slot: 1, Seq: 1, Rot: geom.Identity, Pos: geom.Vec3{X: 3},
		Vel: geom.Vec3{X: 6}}, Local: 11900 * time.Millisecond, Arrival: 11950 * time.Millisecond})
	require.Equal(t, 1, h.room.Route())
	pose := rem.Frame(12 * time.Second)
	assert.InDelta(t, 3, pose.Pos.X, 1e-9, "not extrapolated: its time is now")
	assert.Equal(t, time.Duration(0), pose.Age)

	h.link.Msg(&protocol.Left{})
	h.until(has(EventLeft))
	h.update()
	assert.Zero(t, h.room.InputDelay(), "not seated: none")
}
