package netlab

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// delayed is the lab's slow network at each router's edge: 40 ms ± 10 ms
// each way, as a far player on Wi-Fi.
var delayed = Impairment{Delay: 40 * time.Millisecond, Jitter: 10 * time.Millisecond}

// lossy is delayed with 2 % loss each way.
var lossy = Impairment{Delay: 40 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.02}

// turnFlags run the server's embedded TURN relay, and nothing else: the
// relay finds the address players reach it at, and the server answers
// STUN on its own port by default.
var turnFlags = []string{"-turn-addr", "0.0.0.0:3478"}

// The goals the lab holds the code to (issue 29), with the measurements
// they were set against in README.md's "Networks" table.
const (
	// lanLinkUp bounds the time to direct on a LAN whose STUN and TURN
	// are unreachable (measured 0.1 s).
	lanLinkUp = time.Second
	// quickLinkUp bounds it across port-kept NATs without delay
	// (measured 0.1 s; 1.1 s before pion's waits were set for a game).
	quickLinkUp = time.Second
	// lossyLinkUp bounds the median link-up with 40 ± 10 ms and 2 % loss
	// at each player's edge, from the offer (measured 1.0-1.3 s; 2.3-3.6 s
	// before).
	lossyLinkUp = 1500 * time.Millisecond
	// minDelivery is the share of the other player's states that must
	// reach a player where nothing loses them for good (no loss on the
	// way; jitter alone must not make the direct link lose any).
	minDelivery = 0.99
	// maxBias bounds the direct link's median mapping error under
	// ± 10 ms of jitter at each edge (measured under 1 ms; 5-15 ms
	// early before each side reported its fastest trip).
	maxBias = 2 * time.Millisecond
	// simAgreement is how close the lag simulator's server-path state age
	// must be to the lab's real one, in the same setting.
	simAgreement = 0.25
	// maxAgeSpread bounds the server path's state age p95 against its p50
	// through the lossy network over datagrams. Issue 32 asked for 1.3
	// (2.3 over the WebSocket then, where a lost segment holds up every
	// later state): measured 1.19 and 1.28 in lab runs alone, 1.34 while
	// go test ./... ran the fault tests beside it; the bound leaves that
	// room, and the datagram path must beat the WebSocket's p95 as well.
	maxAgeSpread = 1.5
	// minDatagramShare is the share of frames the datagram path must be up
	// in where UDP passes (it comes up in the first round trips after the
	// welcome, before the other player is drawn).
	minDatagramShare = 0.95
	// minDatagramDelivery is the share of the other player's states that
	// must reach a player over the datagram path through the lossy
	// network: a loss there loses the state (2 % at each of the two edges
	// on its way), and the server drops a state that arrives behind a
	// newer one (± 10 ms at each edge reorders states 17 ms apart; the
	// room would refuse it as stale). Measured 92-95 % in lab runs alone,
	// 89 % for one player while go test ./... ran the fault tests beside.
	minDatagramDelivery = 0.85
	// maxLate is how late (p99) the test process's timers may fire while
	// a case runs for its figures to measure the network: a machine busy
	// enough to hold them back holds back the lab's delay stages and the
	// players too (a server-path state age p95 of 2 s instead of 0.2 s
	// with other test suites running beside at a load average of 20).
	maxLate = 20 * time.Millisecond
)

// check is a case's assertions on what its players recorded.
type check func(t *testing.T, o *Outcome, r Row)

// labCase is one case of TestNetworks.
type labCase struct {
	Case
	check check
}

func views(o *Outcome) [2]View { return o.Views() }

// linkedOver asserts that the direct link came up on both sides, over a
// pair whose types satisfy ok.
func linkedOver(what string, ok func(pair string) bool) check {
	return func(t *testing.T, o *Outcome, _ Row) {
		for i, v := range views(o) {
			if assert.NotEmpty(t, v.Pair, "player %d: the direct link never came up", i) {
				assert.True(t, ok(v.Pair), "player %d: link over %s, want %s", i, v.Pair, what)
			}
		}
	}
}

func directPair(pair string) bool { return !strings.Contains(pair, "relay") }
func relayed(pair string) bool    { return strings.Contains(pair, "relay") }

// hosts: a pair of host candidates. Host candidates go as mDNS names, so
// the player who resolves the other's name first checks first, and the
// other may learn that address from its checks before its own lookup
// returns: a peer-reflexive remote, the same LAN address (with STUN and
// TURN out of reach there is no other kind).
func hosts(pair string) bool { return pair == "host/host" || pair == "host/prflx" }

// linkedWithin asserts that both sides' links came up within limit of
// the other player's spawn.
func linkedWithin(limit time.Duration) check {
	return func(t *testing.T, o *Outcome, _ Row) {
		for i, v := range views(o) {
			assert.True(t, v.TimeToDirect >= 0 && v.TimeToDirect <= limit,
				"player %d: time to direct %v, want at most %v", i, v.TimeToDirect, limit)
		}
	}
}

// delivered asserts that at least minDelivery of each player's states
// reached the other (by either path; over the direct link too when
// directToo).
func delivered(directToo bool) check {
	return func(t *testing.T, o *Outcome, _ Row) {
		for i, v := range views(o) {
			assert.GreaterOrEqual(t, v.DeliveryAny, minDelivery, "player %d: share of states delivered by either path", i)
			if directToo {
				assert.Positive(t, v.DirectSent, "player %d: states sent over the direct link", i)
				assert.GreaterOrEqual(t, v.DeliveryDirect, minDelivery, "player %d: share of states the direct link delivered", i)
			}
		}
	}
}

// neverLinked asserts that no direct link came up.
func neverLinked(t *testing.T, o *Outcome, _ Row) {
	for i, v := range views(o) {
		assert.Empty(t, v.Pair, "player %d: a direct link came up", i)
	}
}

// mappedWithin asserts the direct link's median mapping error.
func mappedWithin(t *testing.T, o *Outcome, _ Row) {
	for i, v := range views(o) {
		if assert.Positive(t, v.BiasN[Direct], "player %d: direct states to judge", i) {
			assert.LessOrEqual(t, absDur(v.Bias[Direct]), maxBias, "player %d: median mapping error %v of the direct link", i, v.Bias[Direct])
		}
	}
}

// linkUpsWithin asserts the median time the creator's links took to come
// up (it offers each, after the last one was closed).
func linkUpsWithin(limit time.Duration) check {
	return func(t *testing.T, o *Outcome, _ Row) {
		took := linkUpTimes(o.Results[0])
		require.GreaterOrEqual(t, len(took), 3, "link-ups to time")
		assert.LessOrEqual(t, quantile(took, 0.5), limit, "median link-up of %v", took)
	}
}

// linkUpTimes returns how long each of r's links took to come up, sorted.
func linkUpTimes(r *Result) []time.Duration {
	var took []time.Duration
	for _, l := range r.LinkUps {
		took = append(took, l.Took)
	}
	slices.Sort(took)
	return took
}

func all(cs ...check) check {
	return func(t *testing.T, o *Outcome, r Row) {
		for _, c := range cs {
			c(t, o, r)
		}
	}
}

// The lab's cases. The server runs with its defaults unless a case says.
var (
	casePortKept = labCase{Case{Name: "port-kept NAT", Run: 5 * time.Second},
		all(linkedOver("a direct pair (STUN, not TURN)", directPair), linkedWithin(quickLinkUp), delivered(true))}
	caseSymmetric = labCase{Case{Name: "symmetric NAT", A: Side{NAT: Symmetric}, B: Side{NAT: Symmetric}, Server: turnFlags, Run: 5 * time.Second},
		all(linkedOver("a pair through the relay", relayed), delivered(true))}
	caseBlocked = labCase{Case{Name: "UDP blocked at one NAT", A: Side{NAT: UDPBlocked}, Server: turnFlags, Run: 5 * time.Second},
		all(neverLinked, delivered(false))}
	caseLAN = labCase{Case{Name: "one LAN, STUN/TURN unreachable", LAN: true, Server: turnFlags, Run: 5 * time.Second},
		all(linkedOver("host candidates", hosts), linkedWithin(lanLinkUp), delivered(true))}
	caseJitter = labCase{Case{Name: "port-kept NAT, 40±10 ms", A: Side{Impair: delayed}, B: Side{Impair: delayed}},
		all(linkedOver("a direct pair", directPair), delivered(true), mappedWithin)}
	caseLossy = labCase{Case{Name: "port-kept NAT, 40±10 ms, 2 % loss", A: Side{Impair: lossy}, B: Side{Impair: lossy}},
		linkedOver("a direct pair", directPair)}
	caseRelink = labCase{Case{Name: "port-kept NAT, 40±10 ms, 2 % loss, link closed after 1 s, again and again",
		A: Side{Impair: lossy}, B: Side{Impair: lossy}, Player: []string{"-relink"}, Run: 10 * time.Second},
		linkUpsWithin(lossyLinkUp)}
)

// maxFallBack bounds the gap in a player's states at the other while the
// server link falls back from the datagram path to the WebSocket, UDP cut
// at the player's router mid-game (issue 32).
const maxFallBack = 300 * time.Millisecond

// caseCut is the server path alone, datagrams up, until player A's router
// drops all UDP mid-game. Without delay the gap is the fall back's own
// (measured 150-165 ms); with 40±10 ms at each edge the cut player's
// incoming gap adds the states in flight and the WebSocket's trip
// (276 ms once), too close to the bound for a loaded machine.
var caseCut = labCase{Case{Name: "server path only, UDP cut at one NAT mid-game", NoDirect: true, CutUDP: 5 * time.Second}, fellBack}

// fellBack asserts that each player's states kept reaching the other
// through the cut: the longest gap between two arrivals around it within
// maxFallBack, none twice, the cut player's datagram path down after it.
func fellBack(t *testing.T, o *Outcome, _ Row) {
	require.NotZero(t, o.CutUnixNS, "the cut happened")
	for i, r := range o.Results {
		cut := time.Duration(o.CutUnixNS - r.OriginUnixNS) // on r's clock
		var arrivals []time.Duration
		seen := map[[2]int]bool{}
		for _, rc := range r.Recv {
			if rc.Slot != r.Peer {
				continue
			}
			k := [2]int{rc.Entity, rc.Seq}
			assert.False(t, seen[k], "player %d: state %d received twice", i, rc.Seq)
			seen[k] = true
			if rc.Arrival >= cut-time.Second && rc.Arrival <= cut+3*time.Second {
				arrivals = append(arrivals, rc.Arrival)
			}
		}
		slices.Sort(arrivals)
		gap, at := time.Duration(0), time.Duration(0)
		for j := 1; j < len(arrivals); j++ {
			if d := arrivals[j] - arrivals[j-1]; d > gap {
				gap, at = d, arrivals[j-1]-cut
			}
		}
		t.Logf("player %d: %d states of player %d from 1 s before the cut to 3 s after; the longest gap %v, from %v after the cut",
			i, len(arrivals), 1-i, gap.Round(time.Millisecond), at.Round(time.Millisecond))
		assert.Greater(t, len(arrivals), 200, "player %d: the other's states go on", i)
		assert.LessOrEqual(t, gap, maxFallBack, "player %d: the longest gap in the other's states around the cut", i)
	}
	a := o.Results[0]
	cut := time.Duration(o.CutUnixNS-a.OriginUnixNS) - a.Start // on a's frame times
	before, after := 0, 0
	for _, f := range a.Frames {
		switch {
		case f.T < cut && f.Datagram:
			before++
		case f.T > cut+time.Second && f.Datagram:
			after++
		}
	}
	assert.Positive(t, before, "the datagram path was up before the cut")
	assert.Zero(t, after, "and down after it")
}

// serverKind is one way the server path is measured.
type serverKind int

const (
	overDatagrams      serverKind = iota // the lab's lossy network, states as QUIC datagrams (the default)
	overWebSocket                        // the same network with UDP blocked at both NATs: states by the WebSocket
	simulated                            // the players' lag simulator on their server link, through a clean lab
	simulatedWebSocket                   // the same, datagrams off: the simulator's TCP-like WebSocket line
	directPath                           // the lab's lossy network with direct links: what the server path is held to
	serverKinds                          // how many kinds
)

// serverCase is the server path alone (no direct links) through the lab's
// lossy network, real or simulated, for seed.
func serverCase(kind serverKind, seed uint64) Case {
	c := Case{Name: "server path only, 40±10 ms, 2 % loss", NoDirect: true, Seed: seed}
	switch kind {
	case overDatagrams:
		c.A, c.B = Side{Impair: lossy}, Side{Impair: lossy}
	case overWebSocket:
		c.Name = "server path only, UDP blocked, 40±10 ms, 2 % loss"
		c.A, c.B = Side{NAT: UDPBlocked, Impair: lossy}, Side{NAT: UDPBlocked, Impair: lossy}
	case simulated:
		c.Name = "server path only, lag simulator 40±10 ms, 2 % loss"
		c.Lag = "30ms,20ms,0.02" // 30 ms plus up to 20: the lab's 40 ± 10
	case simulatedWebSocket:
		c.Name = "server path only, UDP blocked, lag simulator 40±10 ms, 2 % loss"
		c.Lag = "30ms,20ms,0.02"
		c.Player = []string{"-no-datagrams"}
	case directPath:
		// The name holds "server path" so that selecting the server path's
		// cases selects what it is compared with.
		c.Name = "direct path beside the server path, 40±10 ms, 2 % loss"
		c.NoDirect = false
		c.A, c.B = Side{Impair: lossy}, Side{Impair: lossy}
	}
	return c
}

// datagramShare returns the share of o's recorded frames (both players)
// during which the server link's datagram path was up.
func datagramShare(o *Outcome) float64 {
	n, up := 0, 0
	for _, r := range o.Results {
		for _, f := range r.Frames {
			n++
			if f.Datagram {
				up++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(up) / float64(n)
}

// serverSeeds returns the seeds the server-path comparison pools: 1 and 2,
// or NETLAB_SERVER_SEEDS (a count: 1 to N) for a longer comparison.
func serverSeeds() []uint64 {
	n, err := strconv.Atoi(os.Getenv("NETLAB_SERVER_SEEDS"))
	if err != nil || n < 1 {
		n = 2
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	return seeds
}

// TestNetworks runs the lab: two players through real NATs and a real
// delaying, lossy network (see the package documentation), case by case,
// each with its assertions, and logs README.md's "Networks" table.
// NETLAB_CASES (comma-separated substrings of case names) picks cases,
// NETLAB_SEED sets their seed, NETLAB_SERVER_SEEDS how many runs the
// server-path comparison pools, NETLAB_TABLE names a file for the table.
func TestNetworks(t *testing.T) {
	needLab(t)
	var rows []Row
	var server [serverKinds][]*Outcome // by serverKind
	var lossyRow *Row                  // caseLossy's, for the direct path's drawn error
	for _, c := range []labCase{casePortKept, caseSymmetric, caseBlocked, caseLAN, caseJitter, caseLossy, caseRelink, caseCut} {
		if !selected(c.Name) {
			continue
		}
		if seed, err := strconv.ParseUint(os.Getenv("NETLAB_SEED"), 10, 64); err == nil {
			c.Seed = seed
		}
		t.Run(c.Name, func(t *testing.T) {
			o := runCase(t, c.Case)
			r := RowOf(o)
			logOutcome(t, o, r)
			measurable(t, o)
			rows = append(rows, r)
			c.check(t, o, r)
			if c.Name == caseLossy.Name {
				lossyRow = &r
			}
		})
	}
	for kind := range server {
		for _, seed := range serverSeeds() {
			c := serverCase(serverKind(kind), seed)
			if !selected(c.Name) {
				continue
			}
			t.Run(fmt.Sprintf("%s, seed %d", c.Name, seed), func(t *testing.T) {
				o := runCase(t, c)
				logOutcome(t, o, RowOf(o))
				measurable(t, o)
				share := datagramShare(o)
				t.Logf("datagram path up in %.1f %% of the frames", 100*share)
				switch serverKind(kind) {
				case overDatagrams, simulated:
					assert.GreaterOrEqual(t, share, minDatagramShare, "states as datagrams")
					for i, v := range views(o) {
						assert.GreaterOrEqual(t, v.DeliveryAny, minDatagramDelivery, "player %d: share of states delivered", i)
					}
				case overWebSocket, simulatedWebSocket:
					assert.Zero(t, share, "UDP blocked: no datagram path")
					delivered(false)(t, o, Row{})
				case directPath:
					linkedOver("a direct pair", directPair)(t, o, Row{})
				}
				server[kind] = append(server[kind], o)
			})
		}
	}
	var pools [serverKinds]*Row
	for kind, outs := range server {
		if len(outs) > 0 {
			r := pooled(outs)
			rows = append(rows, r)
			pools[kind] = &r
		}
	}
	if dg := pools[overDatagrams]; dg != nil {
		t.Run("the server path's state age holds through loss", func(t *testing.T) {
			if ws := pools[overWebSocket]; ws != nil {
				t.Logf("state age p50 / p95 / max: datagrams %d / %d / %d ms, WebSocket %d / %d / %d ms",
					dg.AgeP50.Milliseconds(), dg.AgeP95.Milliseconds(), dg.AgeMx.Milliseconds(),
					ws.AgeP50.Milliseconds(), ws.AgeP95.Milliseconds(), ws.AgeMx.Milliseconds())
				t.Logf("drawn error p95 / p99 / max: datagrams %.1f / %.1f / %.1f cm, WebSocket %.1f / %.1f / %.1f cm",
					100*dg.ErrP95, 100*dg.ErrP99, 100*dg.ErrMax, 100*ws.ErrP95, 100*ws.ErrP99, 100*ws.ErrMax)
				assert.Less(t, dg.AgeP95, ws.AgeP95, "state age p95: datagrams against the WebSocket")
			}
			assert.LessOrEqual(t, dg.AgeP95.Seconds(), maxAgeSpread*dg.AgeP50.Seconds(),
				"state age p95 %v against p50 %v", dg.AgeP95, dg.AgeP50)
			if dp := pools[directPath]; dp != nil {
				t.Logf("drawn error p95 / p99 / max: server path over datagrams %.1f / %.1f / %.1f cm, direct path %.1f / %.1f / %.1f cm (%d runs each)",
					100*dg.ErrP95, 100*dg.ErrP99, 100*dg.ErrMax, 100*dp.ErrP95, 100*dp.ErrP99, 100*dp.ErrMax, len(server[directPath]))
			} else if lossyRow != nil {
				t.Logf("drawn error p95 / max: server path over datagrams %.1f / %.1f cm, direct path (%s) %.1f / %.1f cm",
					100*dg.ErrP95, 100*dg.ErrMax, lossyRow.Case, 100*lossyRow.ErrP95, 100*lossyRow.ErrMax)
			}
		})
		if sim := pools[simulated]; sim != nil && len(server[simulated]) == len(server[overDatagrams]) {
			t.Run("the lag simulator's server path is the lab's", func(t *testing.T) {
				simulatorAgrees(t, *dg, *sim)
			})
		}
	}
	if ws, sim := pools[overWebSocket], pools[simulatedWebSocket]; ws != nil && sim != nil && len(server[overWebSocket]) == len(server[simulatedWebSocket]) {
		t.Run("the lag simulator's WebSocket is the lab's TCP", func(t *testing.T) {
			simulatorAgrees(t, *ws, *sim)
		})
	}
	table := Table(rows)
	t.Logf("\n%s", table)
	if path := os.Getenv("NETLAB_TABLE"); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(table), 0o644))
	}
}

// simulatorAgrees asserts that the lag simulator delays the server path
// as the lab's real network does: the state age the players draw with
// (now minus the newest state's sample time), median and p95, within
// simAgreement of each other. The simulator that dropped states instead of
// delaying them gave an age p95 half the lab's.
//
// The drawn error is logged beside, not held: since the server path's
// mapping took the fastest trip each way and Auto left a mover's start
// unscored, the two p95s of four runs each agreed within 2-15 % in five of
// six comparisons, but one real run whose mapping ran 4 ms early for good
// put the datagram path's 42 % apart (3.1 against 1.8 cm), and two runs
// each (the default) spread more; the max is one frame (on the WebSocket,
// the one behind the longest retransmission). Over twenty runs of each
// the p95 and p99 agreed within 18 % on both paths; the WebSocket's max
// was 34 % apart, while the lab's own first and last ten runs were 24 %
// apart (README "Networks"). Before those fixes a run of
// either kind could be drawn 40 cm behind for seconds.
func simulatorAgrees(t *testing.T, real, sim Row) {
	t.Logf("state age p50 / p95 / max: lab %d / %d / %d ms, simulator %d / %d / %d ms",
		real.AgeP50.Milliseconds(), real.AgeP95.Milliseconds(), real.AgeMx.Milliseconds(),
		sim.AgeP50.Milliseconds(), sim.AgeP95.Milliseconds(), sim.AgeMx.Milliseconds())
	t.Logf("drawn error p95 / p99 / max: lab %.1f / %.1f / %.1f cm, simulator %.1f / %.1f / %.1f cm",
		100*real.ErrP95, 100*real.ErrP99, 100*real.ErrMax, 100*sim.ErrP95, 100*sim.ErrP99, 100*sim.ErrMax)
	assert.InEpsilon(t, real.AgeP50.Seconds(), sim.AgeP50.Seconds(), simAgreement, "state age p50: lab %v, simulator %v", real.AgeP50, sim.AgeP50)
	assert.InEpsilon(t, real.AgeP95.Seconds(), sim.AgeP95.Seconds(), simAgreement, "state age p95: lab %v, simulator %v", real.AgeP95, sim.AgeP95)
}

// measurable skips the rest of a case whose figures measure the machine
// rather than the network: its timers fired more than maxLate late.
func measurable(t *testing.T, o *Outcome) {
	t.Helper()
	if o.Late > maxLate {
		t.Skipf("netlab: %s: this machine was too busy to keep the lab's time (the test's 5 ms timers fired %v late, p99; the figures hold at most %v): not judged",
			o.Case.Name, o.Late.Round(time.Millisecond), maxLate)
	}
}

// pooled sums up outcomes of one case over seeds as one row.
func pooled(os []*Outcome) Row {
	return mergeRows(fmt.Sprintf("%s (%d runs)", os[0].Case.Name, len(os)), os)
}

func selected(name string) bool {
	sel := os.Getenv("NETLAB_CASES")
	if sel == "" {
		return true
	}
	for _, s := range strings.Split(sel, ",") {
		if s != "" && strings.Contains(name, s) {
			return true
		}
	}
	return false
}

func logOutcome(t *testing.T, o *Outcome, r Row) {
	t.Helper()
	t.Logf("%s in %v (timers %v late, p99)\n%s", o.Case.Name, o.Wall.Round(time.Millisecond), o.Late.Round(100*time.Microsecond), Table([]Row{r}))
	for i, v := range o.Views() {
		t.Logf("player %d: to direct %v, first direct frame %v, pair %s, direct frames %.0f %%, delivery %.3f/%.3f/%.3f of %d direct, bias %v (%d) / %v (%d), link-ups %v",
			i, v.TimeToDirect, v.FirstDirect, v.Pair, 100*v.DirectFrames, v.DeliveryDirect, v.DeliveryServer, v.DeliveryAny, v.DirectSent,
			v.Bias[Direct], v.BiasN[Direct], v.Bias[Server], v.BiasN[Server], linkUpTimes(o.Results[i]))
	}
}
