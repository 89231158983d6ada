package room

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// objReset sends a state of the object from p at pos flagged as a reset
// (wire.FlagTeleport).
func (c *claimRoom) objReset(p *MemPeer, pos geom.Vec3) {
	c.h.t.Helper()
	c.objSeq++
	c.h.r.HandleFrame(c.h.now, p, entFrameFlags(c.h.t, c.obj, c.objSeq, c.h.now+c.clock[p], pos, wire.FlagTeleport))
}

// TestSharedObjectReset: the host resets a shared object it owns (the
// ball back to the centre after a point) and everyone gets the flagged
// state, which they draw as one jump; before, it was refused as a
// teleport (4012) and the others saw the ball fly on, then snap. Another
// owner's reset is refused with the rule in the message, and resets spend
// the object's teleport budget.
func TestSharedObjectReset(t *testing.T) {
	c := newClaimRoom(t) // a owns the ball at the origin; the host is at x=100
	h := c.h
	c.h.send(c.host, &protocol.Claim{Entity: int(c.obj)})
	own, _, _ := h.r.Owner(c.obj)
	require.Equal(t, 0, own, "the host takes it from any distance")
	h.now += 50 * time.Millisecond
	c.objState(c.host, geom.Vec3{X: 0.5})
	c.takeAll()

	h.now += 50 * time.Millisecond
	c.objReset(c.host, geom.Vec3{X: 40})
	got := statesOf(c.a.Take(), c.obj)
	require.Len(t, got, 1, "the reset is relayed")
	assert.Equal(t, 40.0, got[0].Pos.X)
	assert.NotZero(t, got[0].Flags&wire.FlagTeleport, "flagged: receivers snap")
	assert.Empty(t, errorsIn(msgs(c.host)))
	assert.Zero(t, h.metrics.rejected[RejectTeleport])

	h.now += 100 * time.Millisecond
	c.objReset(c.host, geom.Vec3{X: -40})
	assert.Empty(t, statesOf(c.a.Take(), c.obj), "a second reset within TeleportEvery")
	errs := errorsIn(msgs(c.host))
	require.Len(t, errs, 1)
	assert.Equal(t, protocol.CodeImplausible, errs[0].Code)
	assert.Contains(t, errs[0].Message, "at most once per")

	// A player who owns it may not reset it under the default rule.
	h.advance(time.Second)
	c.move(c.a, geom.Vec3{X: 39.5})
	c.takeAll()
	require.Equal(t, 1, c.claim(c.a)[0].Slot)
	h.advance(2 * time.Second) // the budget refilled: only the rule refuses
	c.objState(c.a, geom.Vec3{X: 40})
	c.takeAll()
	h.now += 50 * time.Millisecond
	c.objReset(c.a, geom.Vec3{X: 0})
	assert.Empty(t, statesOf(c.b.Take(), c.obj), "not the host: refused")
	errs = errorsIn(msgs(c.a))
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Message, "only the host resets shared objects")
}

// TestSharedResetsByOwner: a room whose rules let any owner reset.
func TestSharedResetsByOwner(t *testing.T) {
	cfg := testConfig()
	cfg.Entities.SharedResets = ResetsByOwner
	h := newHarness(t, cfg)
	c := &claimRoom{h: h, seq: map[*MemPeer]int{}, clock: map[*MemPeer]time.Duration{}, obj: 200}
	c.host, _ = h.join("host")
	c.a, _ = h.join("a")
	c.b, _ = h.join("b")
	for _, p := range []*MemPeer{c.host, c.a, c.b} {
		c.move(p, geom.Vec3{})
	}
	h.send(c.a, &protocol.Claim{Entity: int(c.obj)})
	c.objState(c.a, geom.Vec3{})
	h.advance(time.Second)
	c.takeAll()
	c.objReset(c.a, geom.Vec3{X: 30})
	assert.Len(t, statesOf(c.b.Take(), c.obj), 1)
	assert.Empty(t, errorsIn(msgs(c.a)))

	cfg = testConfig()
	cfg.Entities.SharedResets = ResetsOff + 1
	_, err := New("ABCDEF", cfg, &Hooks{}, 0)
	assert.Error(t, err, "an unknown rule is a configuration error")
}
