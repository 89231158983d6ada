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
)

// TestLocalDrawnInputDelayLate checks our own entity under the room's
// input delay: drawn where it was simulated the delay before (between
// physics frames), not drawn late without a delay, and remote entities'
// states placed that far ahead by the room (netroom) so that both are on
// one timeline.
func TestLocalDrawnInputDelayLate(t *testing.T) {
	h := joined(t, 0, 0)
	p := NewPredictor()
	p.SetDim(Dim3D)
	p.Ready(h.room)
	require.Equal(t, ModeLocal, p.Mode())
	// A runner at 6 m/s along X, sampled every physics frame (60 Hz).
	const step = time.Second / 60
	sample := func(from, to int) {
		for i := from; i < to; i++ {
			at := time.Duration(i) * step
			h.clock.Add(at - h.clock.Now())
			p.Sample(at, geom.Vec3{X: 6 * at.Seconds()}, geom.Identity, geom.Vec3{X: 6}, true)
		}
	}
	sample(0, 60)
	_, _, _, ok := p.Delayed(h.clock.Now())
	assert.False(t, ok, "no input delay: drawn where simulated")
	assert.Zero(t, p.InputDelay())

	h.link.Push(serverlink.Event{Kind: serverlink.EventSynced})
	h.until(has(netroom.EventSynced))
	st := protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 0,
		Players:    []protocol.PlayerState{player(0, "Ann"), player(1, "Bob"), player(2, "Cy")},
		InputDelay: &protocol.InputDelayState{InputDelay: protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 100_000}}}
	h.link.Msg(&st)
	sample(60, 120)
	h.update()
	require.Equal(t, 100*time.Millisecond, p.InputDelay())
	now := h.clock.Now() + 5*time.Millisecond // a rendered frame between physics frames
	pos, _, d, ok := p.Delayed(now)
	require.True(t, ok)
	assert.Equal(t, 100*time.Millisecond, d)
	assert.InDelta(t, 6*(now-100*time.Millisecond).Seconds(), pos.X, 1e-9, "the simulated pose 100 ms before")
}
