package room

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// TestFanOut pins the one fan-out every relayed state takes (a player's
// own entity, its other entities, shared objects): never back to the
// sender, past a direct pair only for shared objects, counted once.
func TestFanOut(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, slotB := h.join("b")
	c, _ := h.join("c")
	h.send(a, &protocol.DirectLink{Slot: slotB, Up: true})
	h.send(b, &protocol.DirectLink{Slot: 0, Up: true})
	for _, p := range []*MemPeer{a, b, c} {
		p.Take()
	}
	sa := h.r.byPeer[a]
	out := stateFrame(t, 1, h.now, geom.Vec3{}, geom.Vec3{}, 0)
	count := func(p *MemPeer) int { return len(States(p.Take())) }

	relayed, skipped := h.metrics.relayed, h.metrics.skipped
	h.r.fanOut(h.now, sa, out, fanSkipDirect, nil, 0)
	assert.Equal(t, 0, count(a), "never back to the sender")
	assert.Equal(t, 0, count(b), "b has it directly")
	assert.Equal(t, 1, count(c))
	assert.Equal(t, 1, h.metrics.relayed-relayed)
	assert.Equal(t, 1, h.metrics.skipped-skipped)

	relayed, skipped = h.metrics.relayed, h.metrics.skipped
	h.r.fanOut(h.now, sa, out, fanAll, nil, 0)
	assert.Equal(t, 0, count(a))
	assert.Equal(t, 1, count(b), "shared objects go by the server, direct link or not")
	assert.Equal(t, 1, count(c))
	assert.Equal(t, 2, h.metrics.relayed-relayed)
	assert.Equal(t, 0, h.metrics.skipped-skipped)
}
