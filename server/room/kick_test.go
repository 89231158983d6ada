package room

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// joinFrom seats a new MemPeer as user from address addr.
func (h *harness) joinFrom(user, addr string) (*MemPeer, int) {
	h.t.Helper()
	p := &MemPeer{}
	slot, err := h.r.Join(h.now, p, Member{User: user, Name: user, Addr: addr})
	require.NoError(h.t, err)
	return p, slot
}

// A kick bans the address for new seats; a player already seated from it
// may come back, and the ban ends with KickBan. A kick of a player at the
// host's own address bans the user alone.
func TestKickBansAddressForNewSeats(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPlayers = 8
	h := newHarness(t, cfg)
	host, _ := h.joinFrom("host", "10.0.0.1")
	_, gslot := h.joinFrom("griefer", "10.0.0.2")
	mate, _ := h.joinFrom("mate", "10.0.0.2") // seated before the kick
	h.send(host, &protocol.Kick{Slot: gslot})

	_, err := h.r.Join(h.now, &MemPeer{}, Member{User: "fresh", Addr: "10.0.0.2"})
	assert.Equal(t, protocol.CodeKicked, protocol.CodeOf(err), "a new identity from the kicked address")
	h.r.Disconnect(h.now, mate)
	_, err = h.r.Join(h.now, &MemPeer{}, Member{User: "mate", Addr: "10.0.0.2"})
	assert.NoError(t, err, "a player seated before the kick reconnects")
	_, err = h.r.Join(h.now, &MemPeer{}, Member{User: "other", Addr: "10.0.0.3"})
	assert.NoError(t, err, "other addresses join")

	h.advance(DefaultKickBan)
	_, err = h.r.Join(h.now, &MemPeer{}, Member{User: "fresh", Addr: "10.0.0.2"})
	assert.NoError(t, err, "after KickBan the address may join again")

	_, lslot := h.joinFrom("lan", "10.0.0.1")
	h.send(host, &protocol.Kick{Slot: lslot})
	_, err = h.r.Join(h.now, &MemPeer{}, Member{User: "lan2", Addr: "10.0.0.1"})
	assert.NoError(t, err, "the host's own address is never banned")
}
