package room

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// echoProbes answers, at h.now, every probe in the pongs p got.
func echoProbes(h *harness, p *MemPeer) int {
	h.t.Helper()
	n := 0
	for _, pong := range ofType[*protocol.Pong](msgs(p)) {
		if pong.Probe != 0 {
			h.send(p, &protocol.Echo{Probe: pong.Probe})
			n++
		}
	}
	return n
}

// dodgeTarget has the player b stand still at the origin for 1.7 s, then
// dodge along x at 32 m/s for 300 ms, 60 states a second, ending at h.now.
func dodgeTarget(t *testing.T, h *harness, b *MemPeer) {
	t.Helper()
	const v = 32.0
	start := h.now
	dodge := start + 1700*time.Millisecond
	for i := 1; i <= 120; i++ {
		h.now = start + time.Duration(i)*time.Second/60
		x, vel := 0.0, 0.0
		if h.now > dodge {
			x, vel = v*(h.now-dodge).Seconds(), v
		}
		h.r.HandleFrame(h.now, b, stateFrame(t, i, h.now, geom.Vec3{X: x}, geom.Vec3{X: vel}, 0))
	}
}

// TestMeasuredRoundTripCapsTheClaim replays issue 20's attack on hits: a
// shooter 2 ms from the server claims a round trip of 1 s in its pings and
// reports a shot fired 150 ms ago at where the target stood 300 ms ago.
// The room trusted the claim up to the report's age (150 ms of delivery
// delay), rebuilt the target from states "delivered" that late, found it
// still standing there, and accepted. The room now measures the round
// trip itself (the shooter must answer the probe in the pong, and cannot
// answer before it gets it): the claim is cut to 4 ms plus slack.
func TestMeasuredRoundTripCapsTheClaim(t *testing.T) {
	run := func(t *testing.T, answer bool) *protocol.HitResult {
		h := newHitHarness(t)
		cheat, _ := h.join("cheat")
		b, sb := h.join("target")
		h.send(cheat, &protocol.Ping{TUS: 1}) // the first ping: no claim yet
		h.now += 4 * time.Millisecond
		if answer {
			require.Equal(t, 1, echoProbes(h, cheat), "the pong carries a probe")
		}
		h.send(cheat, &protocol.Ping{TUS: 2, RTTUS: protocol.US(time.Second)})
		h.now += probeGrace // the attack comes later in the game
		dodgeTarget(t, h, b)
		cheat.Take()
		h.send(cheat, &protocol.Hit{Target: sb, FireUS: protocol.US(h.now - 150*time.Millisecond), Point: [3]float64{0, 0, 0}})
		res := ofType[*protocol.HitResult](msgs(cheat))
		require.Len(t, res, 1)
		if answer {
			assert.Equal(t, []time.Duration{4 * time.Millisecond}, h.metrics.measured)
			assert.Equal(t, 1, h.metrics.capped, "the claim was cut")
		}
		return res[0]
	}
	got := run(t, false)
	t.Logf("no probe answered for 2 s: accepted %v, miss %.2f m %s", got.Accepted, got.MissBy, got.Reason)
	assert.False(t, got.Accepted, "a shooter that ignores probes is trusted as if measured at 0")
	got = run(t, true)
	t.Logf("round trip measured 4 ms: accepted %v, miss %.2f m %s", got.Accepted, got.MissBy, got.Reason)
	assert.False(t, got.Accepted, "a claimed round trip beyond the measured one does not rewind the target")
	assert.Contains(t, got.Reason, "measured", "nor does a fire time older than the measured delay")
}

// TestMeasuredRoundTripCapsRestamping: the claimed round trip also sets
// how the room re-stamps a player's states (half of it is taken for the
// one-way delay). A player 2 ms away claiming 1 s had its states relayed
// stamped 500 ms in the past; measured, they are stamped within the slack.
func TestMeasuredRoundTripCapsRestamping(t *testing.T) {
	h := newHarness(t, &Config{MaxPlayers: 4})
	cheat, _ := h.join("cheat")
	other, _ := h.join("other")
	h.send(cheat, &protocol.Ping{TUS: 1})
	h.now += 4 * time.Millisecond
	require.Equal(t, 1, echoProbes(h, cheat))
	h.send(cheat, &protocol.Ping{TUS: 2, RTTUS: protocol.US(time.Second)})
	other.Take()
	var lag time.Duration
	for i := 1; i <= 30; i++ {
		h.now += time.Second / 60
		// Stamped on the server clock, as after clock sync, sent 2 ms ago.
		h.r.HandleFrame(h.now, cheat, stateFrame(t, i, h.now-2*time.Millisecond, geom.Vec3{}, geom.Vec3{}, 0))
		for _, st := range States(other.Take()) {
			lag = h.now - st.Stamp.Near(h.now)
		}
	}
	t.Logf("relayed states stamped %v before they arrived (claimed round trip 1 s, measured 4 ms)", lag)
	assert.Less(t, lag, 4*time.Millisecond/2+rttSlack, "a claim beyond the measured round trip does not age the states")
	assert.GreaterOrEqual(t, lag, 0*time.Millisecond)
}

// TestHonestShooterIsNotCapped runs TestHitsDecidedByTheServer's honest
// play with a shooter that answers the probes over its network (the
// client does): the room measures exactly the round trip the shooter
// claims, cuts no claim, and accepts the honest hits. A shooter that
// ignores the probes has its claims cut once probeGrace has passed.
func TestHonestShooterIsNotCapped(t *testing.T) {
	for _, ow := range []time.Duration{50 * time.Millisecond, 150 * time.Millisecond} {
		t.Run(ow.String(), func(t *testing.T) {
			probed := simulateHitsProbed(t, ow, 7, true)
			deaf := simulateHitsProbed(t, ow, 7, false)
			t.Logf("one way %v: %d round trips measured (smallest %v), %d claims cut; honest accepted %.1f%% of %d, largest miss %.3f m (probes ignored: %d claims cut, honest accepted %.1f%%)",
				ow, len(probed.measured), minOf(probed.measured), probed.capped, probed.pct(shotHonest), probed.kind[shotHonest].total,
				probed.kind[shotHonest].maxMiss, deaf.capped, deaf.pct(shotHonest))
			require.GreaterOrEqual(t, len(probed.measured), 9, "a probe in every pong, every 2 s for 20 s")
			assert.Equal(t, 2*ow, minOf(probed.measured))
			assert.Zero(t, probed.capped, "an honest claim is never cut")
			assert.GreaterOrEqual(t, probed.pct(shotHonest), 99.0)
			assert.Empty(t, deaf.measured, "a shooter that ignores probes is not measured")
			assert.Positive(t, deaf.capped, "and its claims are cut after the grace")
		})
	}
}

func minOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	m := ds[0]
	for _, d := range ds[1:] {
		m = min(m, d)
	}
	return m
}

// TestRoundTripProbes: only an awaited probe measures (one answer each,
// none for an id never sent), probes awaited at once are bounded, the
// smallest of the recent samples counts, and a new connection starts over.
func TestRoundTripProbes(t *testing.T) {
	var rt roundTrip
	_, ok := rt.answer(1, time.Second)
	assert.False(t, ok, "no probe sent")
	id := rt.probe(0)
	d, ok := rt.answer(id, 30*time.Millisecond)
	require.True(t, ok)
	assert.Equal(t, 30*time.Millisecond, d)
	_, ok = rt.answer(id, 40*time.Millisecond)
	assert.False(t, ok, "answered already")
	_, ok = rt.answer(0, 40*time.Millisecond)
	assert.False(t, ok, "0 is no probe")

	first := rt.probe(time.Second)
	for range probeKeep {
		rt.probe(time.Second)
	}
	_, ok = rt.answer(first, 2*time.Second)
	assert.False(t, ok, "pushed out by newer probes")

	for i := range rttKeep {
		rt.answer(rt.probe(10*time.Second), 10*time.Second+time.Duration(50+i)*time.Millisecond)
	}
	m, ok := rt.measured()
	require.True(t, ok)
	assert.Equal(t, 50*time.Millisecond, m, "the 30 ms sample is no longer among the last ones")

	rt.claimed = 60 * time.Millisecond
	got, capped := rt.trusted(11 * time.Second)
	assert.Equal(t, 60*time.Millisecond, got)
	assert.False(t, capped)
	rt.claimed = time.Second
	got, capped = rt.trusted(11 * time.Second)
	assert.Equal(t, 50*time.Millisecond+50*time.Millisecond/8+rttSlack, got)
	assert.True(t, capped)

	rt.reset()
	_, ok = rt.measured()
	assert.False(t, ok)
	got, _ = rt.trusted(20 * time.Second)
	assert.Zero(t, got)

	// A player that answers no probe keeps its claim for probeGrace after
	// the first, then is trusted as if measured at 0.
	rt.claimed = time.Second
	rt.probe(30 * time.Second)
	rt.probe(31 * time.Second)
	got, capped = rt.trusted(30*time.Second + probeGrace)
	assert.Equal(t, unmeasuredRTT, got, "within the grace: no more than a small default")
	assert.True(t, capped)
	got, capped = rt.trusted(30*time.Second + probeGrace + time.Millisecond)
	assert.Equal(t, rttSlack, got, "probes ignored")
	assert.True(t, capped)
}
