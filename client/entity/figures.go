package entity

import (
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// This file holds what a game shows beside the drawn entity, to compare
// and debug: where simpler replication would draw it (the markers), and
// the link's figures.
//
//	newest state   snap on arrival, as Godot's MultiplayerSynchronizer
//	               draws: the newest state received, as it was
//	interpolated   a classic interpolation buffer: the received states
//	               interpolated at now minus a fixed delay
//
// Both come from the states the Remote's predictor took, so the three
// drawings differ only by method.

// markerCap is how many received states a Remote keeps for the markers:
// 2 s at 60 Hz, more than any interpolation delay worth showing.
const markerCap = 128

// markerState is one received state: its time on the local clock, its
// sequence number and position.
type markerState struct {
	t   time.Duration
	seq wire.Seq
	pos geom.Vec3
}

// markerRing keeps the most recent received states in time order, one per
// sequence number (a state that came on both paths counts once). It never
// allocates.
type markerRing struct {
	s [markerCap]markerState
	n int
}

// add inserts a state in time order; when full, the oldest goes (or the
// new one, if it is older than every state kept). It reports false for a
// state it holds already (the same state on the other path).
func (m *markerRing) add(t time.Duration, seq wire.Seq, pos geom.Vec3) bool {
	// Sequence numbers wrap every 65536 states, far beyond markerCap: an
	// equal one is the same state.
	for i := m.n - 1; i >= 0; i-- {
		if m.s[i].seq == seq {
			return false
		}
	}
	i := m.n
	for i > 0 && m.s[i-1].t > t {
		i--
	}
	st := markerState{t: t, seq: seq, pos: pos}
	if m.n == markerCap {
		if i == 0 {
			return true
		}
		copy(m.s[:i-1], m.s[1:i])
		m.s[i-1] = st
		return true
	}
	copy(m.s[i+1:m.n+1], m.s[i:m.n])
	m.s[i] = st
	m.n++
	return true
}

// newest returns the position of the newest state.
func (m *markerRing) newest() (geom.Vec3, bool) {
	if m.n == 0 {
		return geom.Vec3{}, false
	}
	return m.s[m.n-1].pos, true
}

// at returns the position interpolated linearly between the two states
// around t, clamped to the oldest and newest.
func (m *markerRing) at(t time.Duration) (geom.Vec3, bool) {
	if m.n == 0 {
		return geom.Vec3{}, false
	}
	if t <= m.s[0].t {
		return m.s[0].pos, true
	}
	for i := 1; i < m.n; i++ {
		b := &m.s[i]
		if t >= b.t {
			continue
		}
		a := &m.s[i-1]
		return a.pos.Lerp(b.pos, float64(t-a.t)/float64(b.t-a.t)), true // b.t > t > a.t
	}
	return m.s[m.n-1].pos, true
}

// lossDecay weighs the loss estimate: each newer state ages the ones
// before by this factor, a window of about 100 states.
const lossDecay = 0.99

// lossReset is a jump in sequence numbers taken for a new sender (a
// reconnect, a respawned entity) rather than losses.
const lossReset = 1000

// lossEstimate estimates the share of states lost from the gaps in their
// sequence numbers, over roughly the last hundred. A state arriving late
// fills the gap it left.
type lossEstimate struct {
	has                bool
	newest             wire.Seq
	expected, received float64
}

func (l *lossEstimate) add(seq wire.Seq) {
	d := seq.Diff(l.newest)
	switch {
	case !l.has || d > lossReset || d < -lossReset:
		*l = lossEstimate{has: true, newest: seq, expected: 1, received: 1}
	case d > 0:
		k := math.Pow(lossDecay, float64(d))
		l.expected = l.expected*k + float64(d)
		l.received = l.received*k + 1
		l.newest = seq
	case d < 0: // late: counted lost when the gap opened
		l.received = min(l.received+1, l.expected)
	}
}

// value returns the estimated loss, 0 to 1, and whether any state came.
func (l *lossEstimate) value() (float64, bool) {
	if !l.has || l.expected <= 0 {
		return 0, false
	}
	return min(max(1-l.received/l.expected, 0), 1), true
}

// NewestState returns the position of the newest state received (by its
// time), where snap-on-arrival replication such as Godot's
// MultiplayerSynchronizer draws the entity; ok is false before any.
func (r *Remote) NewestState() (pos geom.Vec3, ok bool) { return r.received.newest() }

// Interpolated returns where a classic interpolation buffer draws the
// entity at local time t (now minus its delay): the received states
// interpolated linearly around t, clamped to the oldest and newest kept
// (about the last 2 s); ok is false before any state.
func (r *Remote) Interpolated(t time.Duration) (pos geom.Vec3, ok bool) { return r.received.at(t) }

// Loss returns the estimated share of this entity's states that reached
// us on no path (server relay or direct link), 0 to 1, over about the
// last hundred; ok is false before any state. Counting one path alone
// would read near 100% while a direct link carries the states and the
// server stops relaying them.
func (r *Remote) Loss() (loss float64, ok bool) { return r.loss.value() }

// NewestStatePosition returns the newest received state's position
// (Remote.NewestState); ok is false when the entity is not drawn from
// received states or none came yet.
func (p *Predictor) NewestStatePosition() (pos geom.Vec3, ok bool) {
	if p.remote == nil || !p.Draws() {
		return geom.Vec3{}, false
	}
	return p.remote.NewestState()
}

// InterpolatedPosition returns where an interpolation buffer with delay
// draws the entity at now (Remote.Interpolated); ok as for
// NewestStatePosition.
func (p *Predictor) InterpolatedPosition(now, delay time.Duration) (pos geom.Vec3, ok bool) {
	if p.remote == nil || !p.Draws() {
		return geom.Vec3{}, false
	}
	return p.remote.Interpolated(now - delay)
}

// PredictionDistance returns how far the last frame drew the entity from
// its newest received state: how far prediction carried it. 0 before
// both exist.
func (p *Predictor) PredictionDistance() float64 {
	pos, ok := p.NewestStatePosition()
	pose := p.Pose()
	if !ok || !pose.Valid {
		return 0
	}
	return pose.Pos.Sub(pos).Len()
}

// DirectPair returns the candidate types of the direct link this remote
// entity's states come over, "local/remote" ("host", "srflx", "prflx" or
// "relay" each: a relay goes through a TURN server, the others straight
// between the players), or "" when it has none up (Room.DirectLinkStats
// has the link's other figures).
func (p *Predictor) DirectPair() string {
	if p.room == nil || !p.Draws() || p.IsLocal() {
		return ""
	}
	ls, ok := p.room.DirectLinkStats(p.Slot())
	if !ok || !ls.Open {
		return ""
	}
	return ls.Local + "/" + ls.Remote
}

// RenderLag returns how far behind now a drawn entity's predictor draws
// it (predict.Predictor.AutoSettings: Auto's chosen render lag; 0 without
// Auto or before the first frame): a debug figure.
func (p *Predictor) RenderLag() time.Duration {
	if p.remote == nil || !p.Draws() {
		return 0
	}
	return p.remote.RenderLag()
}

// RenderLag returns how far behind now the predictor draws (Auto's render
// lag; 0 without Auto): a debug figure.
func (r *Remote) RenderLag() time.Duration {
	lag, _ := r.pred.AutoSettings()
	return lag
}
