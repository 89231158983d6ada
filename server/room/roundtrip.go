package room

import (
	"slices"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// The round trip the server measures itself: every Pong carries a probe
// (Pong.Probe) that the client answers at once with an Echo through its
// normal send queue, so the answer takes the path states take (a lag
// simulator, a backed-up writer). A WebSocket ping, which client libraries
// answer below the game's queues, missed both and capped honest claims.
const (
	// probeKeep is how many probes may await their Echo at once: a
	// round trip longer than the ping interval still completes.
	probeKeep = 4
	// rttKeep is how many measured round trips are kept; the smallest
	// counts (queueing only ever adds to a sample).
	rttKeep = 8
	// rttSlack is what a claimed round trip may exceed the measured one
	// by, beside the measured jitter (or an eighth of the round trip, if
	// more): the client's best sample and the server's come from
	// different messages, and the client keeps its best over a longer
	// window.
	rttSlack = 20 * time.Millisecond
	// probeGrace is how long a probe may go unanswered before a player
	// never measured counts as one that ignores probes: every client of
	// this protocol answers them, so its claim is then trusted no further
	// than rttSlack (as if measured at 0).
	probeGrace = 2 * time.Second
	// unmeasuredRTT is the most round trip trusted before the first
	// measurement: a claim above it waits for one (the re-stamper is not
	// fed it at all), and hits count at most this much delay.
	unmeasuredRTT = 100 * time.Millisecond
	// flagAfter is how many claims in a row a measurement must cut before
	// the player is flagged: from then on its claims are trusted no
	// further than the measured round trip itself (no slack).
	flagAfter = 3
)

// roundTrip is what the room knows of one player's round trip: the one it
// claims (Ping.RTTUS) and the ones the room measured (Echo). Reset with
// the connection (resetRelay).
type roundTrip struct {
	claimed time.Duration // the latest Ping.RTTUS; 0 before one
	last    uint32        // the last probe sent; 0 before one
	pending [probeKeep]struct {
		id uint32 // 0: none
		at time.Duration
	}
	samples [rttKeep]time.Duration
	spread  time.Duration // jitter of samples, kept as they come
	taken   int           // samples measured since the reset
	first   time.Duration // when the first probe since the reset was sent
	probed  bool          // whether first is set
	over    int           // claims cut by a measurement in a row
	flagged bool          // over reached flagAfter on this connection
}

// probe returns the id of a new probe sent at now.
func (t *roundTrip) probe(now time.Duration) uint32 {
	t.last++
	if t.last == 0 {
		t.last = 1 // 0 means no probe
	}
	p := &t.pending[t.last%probeKeep]
	p.id, p.at = t.last, now
	if !t.probed {
		t.first, t.probed = now, true
	}
	return t.last
}

// answer takes the Echo of probe id, arrived at now, and returns the
// round trip it measured; false for an id not awaited (unknown, answered
// already, or pushed out by newer probes).
func (t *roundTrip) answer(id uint32, now time.Duration) (time.Duration, bool) {
	p := &t.pending[id%probeKeep]
	if id == 0 || p.id != id {
		return 0, false
	}
	d := max(0, now-p.at)
	p.id = 0
	t.samples[t.taken%rttKeep] = d
	t.taken++
	if n := min(t.taken, rttKeep); n >= 2 {
		s := t.samples
		slices.Sort(s[:n])
		t.spread = s[n/2] - s[0]
	}
	return d, true
}

// jitter is how far the measured round trips spread above the smallest:
// the median of the last rttKeep less their minimum, so that a few held
// echoes do not widen it; 0 before two.
func (t *roundTrip) jitter() time.Duration { return t.spread }

// waiting reports, at now, whether the player is waiting for its first
// measurement: none yet, and its first probe (if any) younger than
// probeGrace.
func (t *roundTrip) waiting(now time.Duration) bool {
	_, ok := t.measured()
	return !ok && (!t.probed || now-t.first <= probeGrace)
}

// bound returns, at now, the most round trip the room believes of the
// player: the measured one (the smallest recent sample) and its jitter;
// unmeasuredRTT while it waits for a first measurement; 0 for a player that
// ignores probes.
func (t *roundTrip) bound(now time.Duration) (rtt, jitter time.Duration) {
	if m, ok := t.measured(); ok {
		return m, t.jitter()
	}
	if t.waiting(now) {
		return unmeasuredRTT, 0
	}
	return 0, 0
}

// measured returns the smallest of the last rttKeep measured round trips;
// false before the first.
func (t *roundTrip) measured() (time.Duration, bool) {
	n := min(t.taken, rttKeep)
	if n == 0 {
		return 0, false
	}
	best := t.samples[0]
	for _, d := range t.samples[1:n] {
		best = min(best, d)
	}
	return best, true
}

// trusted returns, at now, the claimed round trip as far as the
// measurements bear it out, and whether that cut it: at most the measured
// round trip plus its jitter (or an eighth of it, if more) and rttSlack;
// for a flagged player at most the measured round trip. A player waiting
// for its first measurement is trusted up to unmeasuredRTT; one
// that ignores probes as if measured at 0.
func (t *roundTrip) trusted(now time.Duration) (rtt time.Duration, capped bool) {
	limit := unmeasuredRTT
	if !t.waiting(now) {
		m, _ := t.measured() // 0 for a player that ignores probes
		limit = m + max(t.jitter(), m/8) + rttSlack
		if t.flagged {
			limit = m
		}
	}
	if t.claimed > limit {
		return limit, true
	}
	return t.claimed, false
}

// reset forgets the connection's round trips (a new connection).
func (t *roundTrip) reset() { *t = roundTrip{} }

// pong answers a Ping at now, with a probe: the claim it carries, or the
// last one, is fed, as far as it is trusted now, to the re-stamp
// estimator and to hits. A claim a measurement cuts is counted; flagAfter
// of them in a row flag the player.
func (r *Room) pong(now time.Duration, s *seat, m *protocol.Ping) {
	// The ping's time is the player's clock, as its states' stamps are:
	// the room learns the clock before the first state (timeline.go).
	s.clk.observe(now, wire.StampOf(protocol.DurationUS(m.TUS)), r.serverDelay())
	if m.GapUS != nil {
		// The player's fastest pong down (less the clock offset): with the
		// re-stamper's fastest state up, a round trip of the fastest trip
		// each way, taken where it is below the claimed one. A player can
		// make it small, as it can its claim: its states then look newer
		// by up to half a round trip, and no check trusts either more.
		s.rs.ObservePeerGap(protocol.DurationUS(*m.GapUS), now)
	}
	claim := m.RTTUS > 0
	if claim {
		s.rt.claimed = protocol.DurationUS(m.RTTUS)
	}
	if s.rt.claimed > 0 {
		capped := r.trustRTT(now, s)
		if claim && !s.rt.waiting(now) {
			r.judgeClaim(s, capped)
		}
	}
	r.send(s.peer, &protocol.Pong{TUS: m.TUS, ServerUS: protocol.US(now), Probe: s.rt.probe(now)})
}

// judgeClaim counts a claim a measurement cut (or let through), and flags
// the player whose claims keep exceeding its measurements.
func (r *Room) judgeClaim(s *seat, capped bool) {
	if !capped {
		s.rt.over = 0
		return
	}
	s.rt.over++
	if r.rtm != nil {
		r.rtm.RoundTripCapped()
	}
	meas, _ := s.rt.measured()
	r.hooks.Log.Debug("claimed round trip capped by the measured one", "slot", s.slot, "user", s.user,
		"claimed", s.rt.claimed, "measured", meas)
	if s.rt.over >= flagAfter && !s.rt.flagged {
		s.rt.flagged = true
		if f, ok := r.m.(RoundTripFlags); ok {
			f.RoundTripFlagged()
		}
		r.hooks.Log.Warn("round-trip claims keep exceeding the measured round trip: trusted no further than it",
			"slot", s.slot, "user", s.user, "claimed", s.rt.claimed, "measured", meas, "jitter", s.rt.jitter())
	}
}

// echo takes a probe's answer: a measured round trip, which cuts the
// claim in force anew.
func (r *Room) echo(now time.Duration, s *seat, m *protocol.Echo) {
	d, ok := s.rt.answer(m.Probe, now)
	if !ok {
		return // late or unknown: nothing to measure, nothing to punish
	}
	if r.rtm != nil {
		r.rtm.RoundTripMeasured(d)
	}
	if s.rt.claimed > 0 {
		r.trustRTT(now, s)
	}
	r.adaptInputDelay(now)
}

// trustRTT applies the player's claimed round trip as far as it is trusted
// and reports whether that cut it. A claim over unmeasuredRTT before the
// first measurement is not applied at all: the re-stamper keeps its
// smallest round trip for a minute, and a cut claim would stand in for an
// honest player's longer one until then.
func (r *Room) trustRTT(now time.Duration, s *seat) bool {
	rtt, capped := s.rt.trusted(now)
	if !capped || !s.rt.waiting(now) {
		s.rs.ObserveRTT(rtt, now)
	}
	return capped
}
