package room

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/funnel"
)

// harness drives one Room on simulated time.
type harness struct {
	t       *testing.T
	r       *Room
	now     time.Duration
	events  []funnel.Event
	results []*protocol.Results
	renames map[string]string
	metrics *countMetrics
}

// countMetrics records what a room reports.
type countMetrics struct {
	in, relayed int
	skipped     int // StatesSkippedDirect (DirectMetrics)
	notOwner    int // StatesNotOwner (EntityMetrics)
	rejected    map[Reject]int
	kicked      map[protocol.Code]int
	offsets     int
	phases      map[protocol.Phase]int // rooms entering each phase
	measured    []time.Duration        // RoundTripMeasured (RoundTripMetrics)
	capped      int                    // RoundTripCapped
}

func newCountMetrics() *countMetrics {
	return &countMetrics{rejected: map[Reject]int{}, kicked: map[protocol.Code]int{}, phases: map[protocol.Phase]int{}}
}

func (m *countMetrics) StatesIn(n int)                    { m.in += n }
func (m *countMetrics) StatesRelayed(n int)               { m.relayed += n }
func (m *countMetrics) StatesSkippedDirect(n int)         { m.skipped += n }
func (m *countMetrics) StatesNotOwner(n int)              { m.notOwner += n }
func (m *countMetrics) Rejected(r Reject)                 { m.rejected[r]++ }
func (m *countMetrics) RestampAge(time.Duration)          { m.offsets++ }
func (m *countMetrics) PhaseChanged(_, to protocol.Phase) { m.phases[to]++ }
func (m *countMetrics) Kicked(c protocol.Code)            { m.kicked[c]++ }
func (m *countMetrics) RoundTripMeasured(d time.Duration) { m.measured = append(m.measured, d) }
func (m *countMetrics) RoundTripCapped()                  { m.capped++ }

// testConfig is a room with short, distinct durations.
func testConfig() *Config {
	return &Config{
		MaxPlayers:       4,
		SeatHold:         20 * time.Second,
		HandshakeTimeout: 10 * time.Second,
		Countdown:        3 * time.Second,
		RoundLimit:       60 * time.Second,
		TimeWarning:      5 * time.Second,
		ResultsFor:       8 * time.Second,
	}
}

func newHarness(t *testing.T, cfg *Config) *harness {
	t.Helper()
	h := &harness{t: t, now: time.Hour, renames: map[string]string{}, metrics: newCountMetrics()}
	r, err := New("ABCDEF", cfg, &Hooks{
		Metrics: h.metrics,
		Event:   func(e funnel.Event) { h.events = append(h.events, e) },
		Results: func(res *protocol.Results) { h.results = append(h.results, res) },
		Renamed: func(user, name string) { h.renames[user] = name },
	}, h.now)
	require.NoError(t, err)
	h.r = r
	return h
}

// join seats a new MemPeer as user.
func (h *harness) join(user string) (*MemPeer, int) {
	h.t.Helper()
	p := &MemPeer{}
	slot, err := h.r.Join(h.now, p, Member{User: user, Name: "name-" + user})
	require.NoError(h.t, err)
	return p, slot
}

// place sends p's first entity-0 state, at the origin: extra entities and
// shared objects pass only once a player's own entity has a position.
func (h *harness) place(p Peer) {
	h.t.Helper()
	h.r.HandleFrame(h.now, p, stateFrame(h.t, 1, h.now, geom.Vec3{}, geom.Vec3{}, 0))
}

// send feeds one control message from p.
func (h *harness) send(p *MemPeer, m protocol.Message) {
	h.t.Helper()
	h.r.HandleFrame(h.now, p, protocol.MustMarshal(m))
}

// advance moves time forward by d, ticking at every scheduled step on the way.
func (h *harness) advance(d time.Duration) {
	end := h.now + d
	for {
		at, ok := h.r.Next()
		if !ok || at > end {
			break
		}
		h.now = max(h.now, at)
		h.r.Tick(h.now)
	}
	h.now = end
	h.r.Tick(h.now)
}

// settle lets a room state held back by the SnapshotEvery window go out.
func (h *harness) settle() { h.advance(h.r.cfg.SnapshotEvery) }

// readyAll makes every connected player loaded and ready.
func (h *harness) readyAll(ps ...*MemPeer) {
	for _, p := range ps {
		h.send(p, &protocol.Loading{Progress: 1})
		h.send(p, &protocol.Ready{Ready: true})
	}
}

// newHitHarness is a room of up to 4 that decides hits (HitRules.On).
func newHitHarness(t *testing.T) *harness {
	t.Helper()
	return newHarness(t, &Config{MaxPlayers: 4, Hits: HitRules{On: true}})
}

// quiet lets the room state after the joins go out, then forgets what
// each of ps received, so a test sees only what follows.
func (h *harness) quiet(ps ...*MemPeer) {
	h.settle()
	for _, p := range ps {
		p.Take()
	}
}

// startRound readies ps, has ps[0] (the host) start, puts every one of
// them in position and lets the countdown run: the round is playing.
func (h *harness) startRound(ps ...*MemPeer) {
	h.t.Helper()
	h.readyAll(ps...)
	h.send(ps[0], &protocol.Start{})
	for _, p := range ps {
		h.send(p, &protocol.InPosition{})
	}
	h.advance(h.r.cfg.Countdown)
	require.Equal(h.t, protocol.PhasePlaying, h.r.Phase(), "the round plays after the countdown")
}

// standAt has p send n states at pos, 60 a second, seq 1 to n, ending at
// h.now.
func (h *harness) standAt(p *MemPeer, pos geom.Vec3, n int) {
	h.t.Helper()
	for i := range n {
		h.now += time.Second / 60
		h.r.HandleFrame(h.now, p, stateFrame(h.t, i+1, h.now, pos, geom.Vec3{}, 0))
	}
}

// msgs returns (and forgets) the control messages p received.
func msgs(p *MemPeer) []protocol.Message { return Messages(p.Take()) }

// lastRoom returns the newest room state among ms (from Room or Joined).
func lastRoom(ms []protocol.Message) (protocol.RoomState, bool) {
	var st protocol.RoomState
	ok := false
	for _, m := range ms {
		switch m := m.(type) {
		case *protocol.RoomState:
			st, ok = *m, true
		case *protocol.Joined:
			st, ok = m.Room, true
		}
	}
	return st, ok
}

// errorsIn returns the Error messages among ms.
func errorsIn(ms []protocol.Message) []*protocol.Error {
	var out []*protocol.Error
	for _, m := range ms {
		if e, ok := m.(*protocol.Error); ok {
			out = append(out, e)
		}
	}
	return out
}

func ofType[T protocol.Message](ms []protocol.Message) []T {
	var out []T
	for _, m := range ms {
		if v, ok := m.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// stateFrame encodes a 3D state.
func stateFrame(t *testing.T, seq int, stamp time.Duration, pos, vel geom.Vec3, flags wire.Flags) []byte {
	t.Helper()
	b, err := wire.AppendState(nil, &wire.State{Seq: wire.Seq(seq), Stamp: wire.StampOf(stamp), Pos: pos, Vel: vel,
		Rot: geom.Quat{W: 1}, Flags: flags, Slot: 99})
	require.NoError(t, err)
	return b
}

// stateFrame2D encodes a 2D state moving along x, in pixels.
func stateFrame2D(t *testing.T, seq int, stamp time.Duration, x, v float64, flags wire.Flags) []byte {
	t.Helper()
	b, err := wire.AppendState(nil, &wire.State{Dim2D: true, Seq: wire.Seq(seq), Stamp: wire.StampOf(stamp),
		Pos: geom.Vec3{X: x}, Vel: geom.Vec3{X: v}, Rot: geom.Quat{W: 1}, Flags: flags, Slot: 99})
	require.NoError(t, err)
	return b
}

// stepsOf returns the analytics steps emitted for user, in order.
func (h *harness) stepsOf(user string) []funnel.Step {
	var out []funnel.Step
	for _, e := range h.events {
		if e.User == user {
			out = append(out, e.Step)
		}
	}
	return out
}
