package room

import (
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
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
	// by, beside a quarter of it: the client's best sample and the
	// server's come from different messages (jitter), and the client
	// keeps its best over a longer window.
	rttSlack = 20 * time.Millisecond
	// probeGrace is how long a probe may go unanswered before a player
	// never measured counts as one that ignores probes: every client of
	// this protocol answers them, so its claim is then trusted no further
	// than rttSlack (as if measured at 0).
	probeGrace = 2 * time.Second
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
	taken   int           // samples measured since the reset
	first   time.Duration // when the first probe since the reset was sent
	probed  bool          // whether first is set
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
	return d, true
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

// trusted returns, at now, the claimed round trip as far as the measured
// one bears it out (a quarter and rttSlack above it at most), and whether
// that cut it. A player not measured yet keeps its claim while its first
// probe is younger than probeGrace (hits still bound it by the report's
// age, hits.go); after that it ignores probes, and is trusted as if
// measured at 0.
func (t *roundTrip) trusted(now time.Duration) (rtt time.Duration, capped bool) {
	m, ok := t.measured()
	if !ok {
		if !t.probed || now-t.first <= probeGrace {
			return t.claimed, false
		}
		m = 0
	}
	limit := m + m/4 + rttSlack
	if t.claimed > limit {
		return limit, true
	}
	return t.claimed, false
}

// reset forgets the connection's round trips (a new connection).
func (t *roundTrip) reset() { *t = roundTrip{} }

// pong answers a Ping at now, with a probe: the claim it carries is fed,
// as far as it is trusted, to the re-stamp estimator and to hits.
func (r *Room) pong(now time.Duration, s *seat, m *protocol.Ping) {
	if m.RTTUS > 0 {
		s.rt.claimed = protocol.DurationUS(m.RTTUS)
		if r.trustRTT(now, s) {
			if r.rtm != nil {
				r.rtm.RoundTripCapped()
			}
			meas, _ := s.rt.measured()
			r.hooks.Log.Debug("claimed round trip capped by the measured one", "slot", s.slot, "user", s.user,
				"claimed", s.rt.claimed, "measured", meas)
		}
	}
	r.send(s.peer, &protocol.Pong{TUS: m.TUS, ServerUS: protocol.US(now), Probe: s.rt.probe(now)})
}

// echo takes a probe's answer: a measured round trip, which may cut the
// claim in force.
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
// and reports whether the measurement cut it.
func (r *Room) trustRTT(now time.Duration, s *seat) bool {
	rtt, capped := s.rt.trusted(now)
	s.rs.ObserveRTT(rtt, now)
	return capped
}
