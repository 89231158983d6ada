package room

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// backlog is how a busy server reads its players: windows in which it
// reads nothing (everything waiting is read at the window's end, at once),
// and spans in which it reads at most one message per service time, so
// that a queue builds up and drains.
type backlog struct {
	name  string
	stops [][2]time.Duration // [from, to): nothing read
	slow  [][3]time.Duration // [from, to): one message read per [2]
	// lag [from, to): every message that arrives then is read [2] late
	// (a queue the server keeps that long), then it drains at once.
	lag [][3]time.Duration
}

// readAt returns when a message that arrived at arr is read, when the one
// before it on the same connection was read at prev.
func (b *backlog) readAt(arr, prev time.Duration) time.Duration {
	at := max(arr, prev)
	for _, l := range b.lag {
		if arr >= l[0] && arr < l[1] {
			at = max(at, arr+l[2])
		}
	}
	for _, s := range b.slow {
		if at >= s[0] && at < s[1] {
			at = max(at, prev+s[2])
		}
	}
	for _, w := range b.stops {
		if at >= w[0] && at < w[1] {
			at = w[1]
		}
	}
	return at
}

// delay is what the server measures of itself (Hooks.Behind) at t: how
// long it has stalled, or how long each read waits while it reads slowly,
// held for 5 s after as the server's measure holds it.
func (b *backlog) delay(t time.Duration) time.Duration {
	const held = 5 * time.Second
	var d time.Duration
	for _, w := range b.stops {
		if t >= w[0] && t < w[1]+held {
			d = max(d, min(t, w[1])-w[0])
		}
	}
	for _, s := range b.slow {
		if t >= s[0] && t < s[1]+held {
			d = max(d, s[2])
		}
	}
	for _, l := range b.lag {
		if t >= l[0] && t < l[1]+held {
			d = max(d, l[2])
		}
	}
	return d
}

// TestBusyServerRefusesNoHonestPlayer runs eight honest players through a
// server that falls behind its reading: a backlog when the round starts
// (every room's first states at once), stalls of up to 1.5 s, and
// saturated spells in which each connection is read at 40 or 20 messages a
// second while its player sends 60, so that states arrive late and then
// all at once. The players move at up to 0.95 of the speed limit, 60
// states a second, on networks with jitter, and ping every 2 s from 6 s
// before the round (clock sync); the room's limits are the defaults, and
// the server measures its own delay (Hooks.Behind) as it would: how long
// it stalled, or how long each read waits while it reads slowly. One case
// is behind from the players' first message (their connections began on
// a server already 1.8 s behind: a round on a starved server, players
// reconnecting) and drains later: the room never read them on time first.
//
// Within Config.BacklogCredit (2 s) not one state may be refused. Past it
// (a spell that falls 4 s behind) the states later than the credit may be
// refused, but only as late, without an Error or abuse score: nobody is
// kicked for the server's delays.
func TestBusyServerRefusesNoHonestPlayer(t *testing.T) {
	const (
		players = 8
		tick    = time.Second / 60
		dur     = 40 * time.Second
	)
	s := time.Second
	ms := time.Millisecond
	cases := []struct {
		backlog
		beyond bool // falls further behind than the credit
	}{
		{backlog: backlog{name: "backlog at the start", stops: [][2]time.Duration{{0, 1500 * ms}}}},
		{backlog: backlog{name: "stalls", stops: [][2]time.Duration{{3 * s, 3*s + 300*ms}, {6 * s, 7*s + 500*ms},
			{9 * s, 9*s + 100*ms}, {9*s + 400*ms, 10 * s}, {14 * s, 15 * s}, {22 * s, 22*s + 800*ms}}}},
		{backlog: backlog{name: "saturated", slow: [][3]time.Duration{{2 * s, 7 * s, s / 40}, {20 * s, 22*s + 500*ms, s / 20}}}},
		{backlog: backlog{name: "all of it", stops: [][2]time.Duration{{0, 1 * s}, {16 * s, 17 * s}, {30 * s, 31*s + 200*ms}},
			slow: [][3]time.Duration{{4 * s, 8 * s, s / 40}, {20 * s, 23 * s, s / 30}}}},
		{backlog: backlog{name: "4 s behind", slow: [][3]time.Duration{{2 * s, 14 * s, s / 40}}}, beyond: true},
		// Behind from the players' first message (a round started, or
		// players reconnected, on a server already behind), then it
		// catches up: the room never saw a message of theirs on time
		// before the backlog drains.
		{backlog: backlog{name: "behind from the start", lag: [][3]time.Duration{{-7 * s, 10 * s, 1800 * ms},
			{15 * s, 25 * s, 900 * ms}}, stops: [][2]time.Duration{{20 * s, 21 * s}}}},
	}
	limit := motion.DefaultSpeedFactor * motion.DefaultTopSpeed
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, &Config{MaxPlayers: players, SeatHold: time.Hour, RoundLimit: time.Hour})
			peers := make([]*MemPeer, players)
			for i := range peers {
				peers[i], _ = h.join(fmt.Sprint("p", i))
			}
			origin := h.now + 10*time.Second
			h.r.hooks.Behind = func() time.Duration { return tc.delay(h.now - origin) }
			type msg struct {
				at   time.Duration
				from int
				b    []byte
			}
			var all []msg
			states := 0
			rng := rand.New(rand.NewPCG(7, 35))
			for p := range players {
				speed := limit * (0.5 + 0.45*float64(p)/(players-1)) // the game's top speed up to 0.95 of the limit
				delay := time.Duration(10+5*p) * ms
				phase := time.Duration(rng.Int64N(int64(tick)))
				clock := origin - time.Hour // the player's clock reads an hour behind the server's
				prevRead := -time.Hour
				read := func(sent time.Duration) time.Duration { // one TCP stream: in order
					arr := sent + delay + time.Duration(rng.Int64N(int64(20*ms)))
					prevRead = tc.readAt(arr, prevRead)
					return origin + prevRead
				}
				nextPing := -6*s + phase
				for seq := 1; ; seq++ {
					sent := phase + time.Duration(seq)*tick
					if sent > dur {
						break
					}
					for ; nextPing < sent; nextPing += 2 * s {
						all = append(all, msg{at: read(nextPing), from: p,
							b: protocol.MustMarshal(&protocol.Ping{TUS: protocol.US(clock + nextPing)})})
					}
					// A circle, so that the direction changes too.
					a := sent.Seconds() * speed / 50
					pos := geom.Vec3{X: 50 * math.Cos(a), Z: 50 * math.Sin(a)}
					vel := geom.Vec3{X: -speed * math.Sin(a), Z: speed * math.Cos(a)}
					all = append(all, msg{at: read(sent), from: p, b: stateFrame(t, seq, clock+sent, pos, vel, 0)})
					states++
				}
			}
			// The server reads every connection it has data for, player
			// after player.
			slices.SortStableFunc(all, func(a, b msg) int { return cmp.Compare(a.at, b.at) })
			for i, m := range all {
				h.now = max(h.now, m.at)
				h.r.HandleFrame(h.now, peers[m.from], m.b)
				if i%512 == 0 {
					for _, p := range peers {
						p.Take()
					}
				}
			}
			rejected := nonZero(h.metrics.rejected)
			t.Logf("%d states; refused %v", states, rejected)
			if tc.beyond {
				assert.Positive(t, rejected[RejectLate], "the states later than the credit are refused")
				delete(rejected, RejectLate)
				assert.Empty(t, rejected, "as late, and for nothing else")
			} else {
				assert.Empty(t, rejected, "no honest state is refused")
				assert.Equal(t, states*(players-1), h.metrics.relayed, "every state relayed to every other player")
			}
			assert.Empty(t, h.metrics.kicked, "nobody is kicked")
			for i, p := range peers {
				assert.False(t, p.Closed, "player %d keeps its connection", i)
				assert.Empty(t, errorsIn(msgs(p)), "player %d is told of no refusal", i)
			}
		})
	}
}

// TestBackdatedStatesEarnNoCredit: a player cannot pass a burst off as the
// server's backlog. Its states are stamped 60 a second over the last
// 1.5 s and sent at once, then it jumps as far as those 1.5 s would allow
// at the speed limit. On a server that keeps up there is no credit at all;
// on a busy one (100 ms behind) whose reading keeps up with the other
// players, the credit is the server's own delay, not what the forger's
// stamps claim. Either way the burst meets the rate limit, the jump is
// refused as a teleport, and both count towards a kick.
func TestBackdatedStatesEarnNoCredit(t *testing.T) {
	const tick = time.Second / 60
	limit := motion.DefaultSpeedFactor * motion.DefaultTopSpeed
	for _, busy := range []bool{false, true} {
		t.Run(map[bool]string{false: "server keeps up", true: "server busy"}[busy], func(t *testing.T) {
			h := newHarness(t, &Config{MaxPlayers: 4, SeatHold: time.Hour})
			if busy {
				h.r.hooks.Behind = func() time.Duration { return 100 * time.Millisecond }
			}
			cheat, _ := h.join("cheat")
			honest, _ := h.join("honest")
			watch, _ := h.join("watch")
			clock := -time.Hour // the cheat's clock
			seq, hseq := 0, 0
			// Both ping (clock sync) and play on time for 3 s.
			h.send(cheat, &protocol.Ping{TUS: protocol.US(h.now + clock)})
			h.send(honest, &protocol.Ping{TUS: protocol.US(h.now)})
			for range 180 {
				h.now += tick
				seq++
				h.r.HandleFrame(h.now, cheat, stateFrame(t, seq, h.now+clock, geom.Vec3{}, geom.Vec3{}, 0))
				hseq++
				h.r.HandleFrame(h.now, honest, stateFrame(t, hseq, h.now, geom.Vec3{}, geom.Vec3{}, 0))
			}
			watch.Take()
			rejected := nonZero(h.metrics.rejected)
			require.Empty(t, rejected)
			// The cheat goes quiet for 1.5 s while the honest player keeps
			// up, then sends 90 states stamped over that time at once,
			// walking at the limit, and then jumps 1.5 s of the limit
			// further in one state.
			quietFrom := h.now
			for range 90 {
				h.now += tick
				hseq++
				h.r.HandleFrame(h.now, honest, stateFrame(t, hseq, h.now, geom.Vec3{}, geom.Vec3{}, 0))
			}
			x := 0.0
			for i := range 90 {
				seq++
				x = 0.9 * limit * (time.Duration(i+1) * tick).Seconds()
				h.r.HandleFrame(h.now, cheat, stateFrame(t, seq, quietFrom+time.Duration(i+1)*tick+clock,
					geom.Vec3{X: x}, geom.Vec3{X: 0.9 * limit}, 0))
			}
			h.now += tick
			seq++
			h.r.HandleFrame(h.now, cheat, stateFrame(t, seq, h.now+clock, geom.Vec3{X: x + 1.4*limit}, geom.Vec3{}, 0))
			rejected = nonZero(h.metrics.rejected)
			t.Logf("refused %v", rejected)
			assert.Positive(t, rejected[RejectRate], "the burst meets the rate limit")
			assert.Positive(t, rejected[RejectTeleport], "the jump is refused")
			assert.Zero(t, rejected[RejectLate], "none of it passes for the server's delay")
			assert.NotEmpty(t, errorsIn(msgs(cheat)), "and the cheat is told")
			if st := h.r.byPeer[cheat]; st != nil {
				assert.Positive(t, st.abuse, "and it counts towards a kick")
			} else {
				assert.True(t, cheat.Closed, "kicked")
			}
		})
	}
}
