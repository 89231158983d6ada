package room

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// signalBytes sums the Data of the Signal messages among fs.
func signalBytes(fs []Frame) (n, bytes int) {
	for _, m := range ofType[*protocol.Signal](Messages(fs)) {
		n++
		bytes += len(m.Data)
	}
	return n, bytes
}

// TestSignalFloodClosesTheSender replays the flood that delayed a victim's
// states by 5.7 s: three players send the victim 8 KB signals at 19 a
// second. Each sender→recipient pair has a budget; a sender that keeps
// exceeding it is closed with CodeRateLimited, and the victim, and an
// honest player setting up a direct link with it at the same time, are
// unaffected.
func TestSignalFloodClosesTheSender(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPlayers = 8
	h := newHarness(t, cfg)
	victim, vslot := h.join("victim")
	honest, _ := h.join("honest")
	var attackers []*MemPeer
	for _, u := range []string{"x", "y", "z"} {
		p, _ := h.join(u)
		attackers = append(attackers, p)
	}
	victim.Take()
	big := strings.Repeat("v=0 ", protocol.MaxSignalData/4)
	const secs = 5
	got := 0
	honestSent := 0
	for i := 0; i < secs*19; i++ {
		h.now += time.Second / 19
		for _, p := range attackers {
			if !p.Closed {
				h.send(p, &protocol.Signal{To: vslot, Kind: protocol.SignalOffer, Data: big})
			}
		}
		// The honest player: an offer, then 20 candidates, in the first second.
		switch {
		case i == 0:
			h.send(honest, &protocol.Signal{To: vslot, Kind: protocol.SignalOffer, Data: big})
			honestSent++
		case i <= 10:
			for range 2 {
				h.send(honest, &protocol.Signal{To: vslot, Kind: protocol.SignalCandidate, Data: "candidate:1 1 udp 2122260223 192.0.2.1 54321 typ host"})
				honestSent++
			}
		}
		n, _ := signalBytes(victim.Frames)
		got += n
		victim.Take()
	}
	for i, p := range attackers {
		assert.True(t, p.Closed, "attacker %d is closed", i)
		assert.Equal(t, protocol.CodeRateLimited, p.CloseCode, "attacker %d", i)
	}
	assert.False(t, victim.Closed, "never the victim")
	assert.False(t, honest.Closed)
	assert.Empty(t, errorsIn(msgs(honest)), "honest signalling is within the budget")
	// Without a budget the victim got 3 x 19 x 5 = 285 offers of 8 KB
	// (2.3 MB) plus the honest ones.
	maxPerSender := cfg.withDefaults().SignalBytesBurst/float64(protocol.MaxSignalData) + secs*cfg.withDefaults().SignalBytes/float64(protocol.MaxSignalData)
	assert.LessOrEqual(t, float64(got), float64(honestSent)+3*maxPerSender, "what reaches the victim is bounded by the budget")
}

// TestRoomStateIsCoalesced replays the ready-toggle flood: 13 players
// toggling ready as fast as the control limit lets them made every player
// receive 245 room states a second. Changes within SnapshotEvery are
// merged into one room state sent at the end of the window, and the last
// state of the room always arrives.
func TestRoomStateIsCoalesced(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPlayers = 16
	h := newHarness(t, cfg)
	var ps []*MemPeer
	for i := range 13 {
		p, _ := h.join(string(rune('a' + i)))
		ps = append(ps, p)
	}
	obs, _ := h.join("observer")
	h.advance(time.Second)
	obs.Take()
	const secs = 3
	rooms := 0
	for i := 0; i < secs*19; i++ {
		for j, p := range ps { // spread over the 1/19 s
			h.advance(time.Second / 19 / 13)
			h.send(p, &protocol.Ready{Ready: (i+j)%2 == 0})
		}
		rooms += len(ofType[*protocol.RoomState](Messages(obs.Frames)))
		obs.Take()
	}
	perSec := float64(rooms) / secs
	t.Logf("room states per second to each player: %.1f", perSec)
	assert.LessOrEqual(t, perSec, 1/DefaultSnapshotEvery.Seconds()+1, "at most one room state per SnapshotEvery")

	// Nothing is lost: once the flood stops, the last state arrives.
	h.advance(time.Second)
	st, ok := lastRoom(msgs(obs))
	require.True(t, ok)
	want := h.r.Snapshot()
	assert.Equal(t, want.Rev, st.Rev)
	assert.Equal(t, want.Players, st.Players)
	_, pending := h.r.Next()
	assert.False(t, pending, "nothing left to send")
}
