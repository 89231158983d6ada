package room

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

func FuzzHandleFrame(f *testing.F) {
	for _, m := range []protocol.Message{&protocol.Ready{Ready: true}, &protocol.Start{}, &protocol.Ping{TUS: 1},
		&protocol.Signal{To: 1, Kind: protocol.SignalOffer}, &protocol.Settings{RoundUS: 1}, &protocol.Leave{},
		&protocol.Spawn{Entity: 1, Scene: "s", Args: []byte("[1]")}, &protocol.Spawn{Entity: 200, Scene: "s"},
		&protocol.Despawn{Entity: 1}, &protocol.Claim{Entity: 200}} {
		f.Add(protocol.MustMarshal(m), uint16(10))
	}
	for _, e := range []uint8{0, 1, 127, 128, 255} {
		b, _ := wire.AppendState(nil, &wire.State{Entity: e, Seq: 1, Rot: geom.Quat{W: 1}})
		f.Add(b, uint16(16))
	}
	f.Add([]byte{0x40, 0, 0, 0}, uint16(0))
	f.Fuzz(func(t *testing.T, frame []byte, dt uint16) {
		h := newHarness(t, testConfig())
		a, _ := h.join("a")
		b, _ := h.join("b")
		for i := 0; i < 3; i++ {
			h.now += time.Duration(dt) * time.Millisecond
			h.r.HandleFrame(h.now, a, frame)
			h.r.Tick(h.now)
		}
		h.send(b, &protocol.Ping{TUS: 5})
		assert.Len(t, ofType[*protocol.Pong](msgs(b)), 1, "the other player is unaffected")
	})
}

// TestRandomOperations applies a seeded random mix of joins, leaves,
// disconnects, frames and ticks, and checks the room's invariants after
// every step.
func TestRandomOperations(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		h := newHarness(t, testConfig())
		peers := map[string]*MemPeer{}
		users := []string{"a", "b", "c", "d", "e", "f"}
		seq := map[string]int{}
		for step := 0; step < 400; step++ {
			u := users[rng.IntN(len(users))]
			p := peers[u]
			switch op := rng.IntN(10); {
			case op == 0 || p == nil:
				np := &MemPeer{}
				if _, err := h.r.Join(h.now, np, Member{User: u, Name: u}); err == nil {
					peers[u] = np
				}
			case op == 1:
				h.r.Leave(h.now, p)
				delete(peers, u)
			case op == 2:
				h.r.Disconnect(h.now, p)
				delete(peers, u)
			case op <= 6:
				msgs := []protocol.Message{&protocol.Loading{Progress: 1}, &protocol.Ready{Ready: true}, &protocol.Start{},
					&protocol.InPosition{}, &protocol.Finish{}, &protocol.Vote{Restart: rng.IntN(2) == 0},
					&protocol.DirectLink{Slot: rng.IntN(4), Up: true}}
				h.r.HandleFrame(h.now, p, protocol.MustMarshal(msgs[rng.IntN(len(msgs))]))
			default:
				seq[u]++
				h.r.HandleFrame(h.now, p, stateFrame(t, seq[u], h.now, geom.Vec3{X: rng.Float64()}, geom.Vec3{}, 0))
			}
			h.advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
			if h.r.Closed() {
				break
			}
			checkInvariants(t, h.r, h.now, seed, step)
		}
		if h.r.Closed() {
			continue
		}
		// Nothing is lost to coalescing: everyone's last room state is the room's.
		h.advance(time.Second)
		want := h.r.Snapshot()
		for u, p := range peers {
			got, ok := lastRoom(Messages(p.Frames))
			require.True(t, ok, "seed %d: %s got a room state", seed, u)
			assert.Equal(t, want, got, "seed %d: %s has the room's last state", seed, u)
		}
	}
}

func checkInvariants(t *testing.T, r *Room, now time.Duration, seed uint64, step int) {
	t.Helper()
	n := 0
	host := -1
	var hostAt time.Duration
	for i, s := range r.seats {
		if s == nil {
			continue
		}
		n++
		require.Equal(t, i, s.slot, "seed %d step %d", seed, step)
		require.Same(t, s, r.byUser[s.user], "seed %d step %d", seed, step)
		if s.peer != nil {
			require.Same(t, s, r.byPeer[s.peer], "seed %d step %d", seed, step)
		}
		if host < 0 || s.joinedAt < hostAt {
			host, hostAt = i, s.joinedAt
		}
	}
	require.Equal(t, n, r.count, "seed %d step %d", seed, step)
	for _, s := range r.seats {
		if s == nil {
			continue
		}
		live := 0
		for _, e := range s.ents.tracks {
			if e != nil {
				live++
			}
		}
		require.Equal(t, live, s.ents.live, "seed %d step %d: live entities of slot %d", seed, step, s.slot)
		require.LessOrEqual(t, live, r.cfg.Entities.MaxPerPlayer, "seed %d step %d", seed, step)
	}
	for _, o := range r.objs {
		if o == nil || o.owner == protocol.NoOwner {
			continue
		}
		s := r.seatAt(o.owner)
		require.True(t, s != nil && s.peer != nil, "seed %d step %d: object %d owned by slot %d, not connected", seed, step, o.id, o.owner)
	}
	require.Len(t, r.byUser, n, "seed %d step %d", seed, step)
	require.Equal(t, host, r.host, "seed %d step %d: host is the longest present", seed, step)
	if r.Busy() {
		require.NotEmpty(t, r.entrants, "seed %d step %d: a round has participants", seed, step)
	}
	if at, ok := r.Next(); ok {
		require.Greater(t, at, now, "seed %d step %d: nothing overdue after a tick", seed, step)
	}
}
