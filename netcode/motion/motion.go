// Package motion is the per-entity motion rule set: whether a state's
// position and speed are plausible after the last accepted one on the same
// track. One rule set serves the room server (every relayed state) and
// each client (the states its direct peers send it, which skip the server).
//
// A Track is stepped by (now, state): Check says whether the state passes
// and refills the track's budgets, Accept moves the track on to it. Time is
// a time.Duration on the checker's own clock (the server's, or the
// receiving client's); stamps are the sender's and are only compared with
// each other. now is the state's arrival, or a time the checker places it
// at that never runs ahead of its arrival nor goes back from one state to
// the next (the room server judges states on the sender's timeline when
// its own reading falls behind: server/room's timeline.go).
//
// The rules, with Limits' defaults:
//
//   - Speed: the reported velocity may not exceed SpeedFactor x TopSpeed
//     (TopSpeed2D for 2D states).
//   - Distance: the move from the last accepted position may not exceed
//     that speed times the gap, plus what is left of the track's MoveSlack
//     budget (MoveSlack2D), refilled over MoveSlackRefill. The gap is the
//     sender's stamp gap, but the stamps may run at most StampGapAllowance
//     ahead of real (arrival) time: states bunched by a stall pass, forged
//     stamps buy the allowance once rather than per state. A track whose
//     stamps are not comparable (a new connection) counts the time since
//     the last accepted state plus the allowance.
//   - Teleports: a state flagged wire.FlagTeleport may jump up to
//     MaxTeleport (MaxTeleport2D), at most once per TeleportEvery and
//     TeleportsPerMinute times a minute (a token bucket); one that moves no
//     farther than allowed does not count. A shared object (wire.Shared)
//     never jumps.
//   - Bounds: with WorldBounds (WorldBounds2D) set, no coordinate may
//     exceed it, even on the first state or a teleport.
package motion

import (
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Defaults, the room server's since the checks were first written.
const (
	DefaultTopSpeed          = 100.0
	DefaultSpeedFactor       = 2.0
	DefaultMoveSlack         = 1.0
	DefaultTopSpeed2D        = 2000.0 // pixels: a 1920-px screen in a second is fast but not absurd
	DefaultMoveSlack2D       = 32.0
	DefaultMoveSlackRefill   = time.Second
	DefaultStampGapAllowance = 250 * time.Millisecond
	DefaultTeleportEvery     = time.Second
	// DefaultTeleportsPerMinute lets a player respawn every 5 s for a
	// minute on end; a hop every TeleportEvery would be 60.
	DefaultTeleportsPerMinute = 12
	// DefaultMaxTeleport bounds a jump to a level's span rather than a
	// world's: 2 km, or 20 s at the default top speed.
	DefaultMaxTeleport   = 2000.0
	DefaultMaxTeleport2D = 40000.0 // pixels: 20 s at the default 2D top speed
)

// Limits are the motion rules' parameters (see the package comment). The
// zero value of a field means its default (SetDefaults), but for the
// world bounds, whose zero means none.
type Limits struct {
	// TopSpeed is the game's top speed in units (metres) per second, for
	// 3D states. Default 100.
	TopSpeed float64
	// TopSpeed2D is the top speed for 2D states, in pixels per second: the
	// state's kind says which units it uses. Default 2000.
	TopSpeed2D float64
	// SpeedFactor times TopSpeed is the fastest plausible speed: a state
	// reporting more is rejected, and so is a move longer than this speed
	// allows over the gap between two states. Default 2.
	SpeedFactor float64
	// MoveSlack is the distance in units a 3D track may move beyond what
	// the speed limit allows: a budget per track (a player's entity, an
	// extra entity, a shared object) that moves longer than the limit
	// spend, refilled over MoveSlackRefill. Granted per state instead, it
	// bought 90 units per second at the room's state rate limit. Default 1.
	MoveSlack float64
	// MoveSlack2D is MoveSlack for 2D states, in pixels. Default 32.
	MoveSlack2D float64
	// MoveSlackRefill is how long a spent MoveSlack takes to refill.
	// Default 1 s.
	MoveSlackRefill time.Duration
	// StampGapAllowance is how far a sender's stamps may run ahead of real
	// (arrival) time in the move check: one bucket per track, refilled by
	// real time and drained by stamp gaps, so states bunched by a network
	// stall pass while forged stamps buy at most this, once. Default 250 ms.
	StampGapAllowance time.Duration
	// TeleportEvery is the shortest time between two states flagged
	// wire.FlagTeleport (respawns skip the move check). Default 1 s.
	TeleportEvery time.Duration
	// TeleportsPerMinute is how many FlagTeleport jumps one track may make
	// per minute, all at once at most (a token bucket): one over it fails
	// as a teleport. Without it, a jump of any length every TeleportEvery
	// moved a player 5 km/s. Default 12.
	TeleportsPerMinute float64
	// WorldBounds, when positive, is the largest absolute value of each
	// coordinate of a 3D state, in units: a state outside fails, even the
	// first on a track and even one flagged as a teleport. Default 0: no
	// bounds.
	WorldBounds float64
	// WorldBounds2D is WorldBounds for 2D states, in pixels. Default 0: no
	// bounds.
	WorldBounds2D float64
	// MaxTeleport is the longest jump a FlagTeleport state may make, in
	// units (3D): a respawn lands somewhere in the level, not across the
	// world. Default 2000; negative means no bound. Without it, 12 hops a
	// minute of any length moved a player 10^6 m at a time.
	MaxTeleport float64
	// MaxTeleport2D is MaxTeleport for 2D states, in pixels. Default
	// 40000; negative means no bound.
	MaxTeleport2D float64
}

// Defaults returns the default limits.
func Defaults() Limits {
	var l Limits
	l.SetDefaults()
	return l
}

// SetDefaults gives every zero field but the world bounds its default.
func (l *Limits) SetDefaults() {
	set := func(p *float64, d float64) {
		if *p == 0 {
			*p = d
		}
	}
	setD := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	set(&l.TopSpeed, DefaultTopSpeed)
	set(&l.TopSpeed2D, DefaultTopSpeed2D)
	set(&l.SpeedFactor, DefaultSpeedFactor)
	set(&l.MoveSlack, DefaultMoveSlack)
	set(&l.MoveSlack2D, DefaultMoveSlack2D)
	setD(&l.MoveSlackRefill, DefaultMoveSlackRefill)
	setD(&l.StampGapAllowance, DefaultStampGapAllowance)
	setD(&l.TeleportEvery, DefaultTeleportEvery)
	set(&l.TeleportsPerMinute, DefaultTeleportsPerMinute)
	set(&l.MaxTeleport, DefaultMaxTeleport)
	set(&l.MaxTeleport2D, DefaultMaxTeleport2D)
}

// maxJumpOf is MaxTeleport for st's kind of state; 0 for no bound.
func (l *Limits) maxJumpOf(st *wire.State) float64 {
	j := l.MaxTeleport
	if st.Dim2D {
		j = l.MaxTeleport2D
	}
	return max(0, j)
}

// OutOfBounds reports whether st lies outside WorldBounds (WorldBounds2D
// for 2D states), when set.
func (l *Limits) OutOfBounds(st *wire.State) bool {
	b := l.WorldBounds
	if st.Dim2D {
		b = l.WorldBounds2D
	}
	return b > 0 && (math.Abs(st.Pos.X) > b || math.Abs(st.Pos.Y) > b || math.Abs(st.Pos.Z) > b)
}

// slackOf is MoveSlack for st's kind of state.
func (l *Limits) slackOf(st *wire.State) float64 {
	if st.Dim2D {
		return l.MoveSlack2D
	}
	return l.MoveSlack
}

// Reason is why a state failed the checks.
type Reason uint8

// Reasons.
const (
	Pass     Reason = iota // no failure
	Speed                  // reported speed above SpeedFactor x TopSpeed
	Teleport               // moved farther than allowed without an allowed jump
	Bounds                 // outside the world bounds
	TooFar                 // a FlagTeleport jump longer than MaxTeleport
)

var reasonNames = [...]string{"pass", "speed", "teleport", "bounds", "teleport_far"}

// String names the reason.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unknown"
}

// Track is one entity's motion history: its last accepted state and its
// budgets. The zero value is a track with nothing accepted yet; the
// fields are exported for the room server, which also reads them for
// claims and hits and clears Stamped on a new connection.
type Track struct {
	OK  bool      // a state was accepted: Pos and At are set
	Pos geom.Vec3 // its position
	// Since is when the first state was accepted: the entity appeared
	// then (the room holds claims back for a while after).
	Since time.Duration
	// At is its sample time on the checker's clock as the checks count it:
	// the previous one's plus the stamp gap, but never more than
	// StampGapAllowance ahead of its arrival. The headroom now +
	// StampGapAllowance - At is the stamp allowance bucket: real time
	// refills it, stamp gaps drain it.
	At         time.Duration
	Arrival    time.Duration    // when it arrived
	Stamp      wire.Stamp       // its stamp as sent
	Stamped    bool             // Stamp is on the sender's current clock
	TeleportAt time.Duration    // last accepted FlagTeleport jump
	Teleported bool             // TeleportAt is set
	From       geom.Vec3        // the position before that jump
	Slack      ratelimit.Bucket // MoveSlack left (set with the first state)
	Teleports  ratelimit.Bucket // TeleportsPerMinute left (set with the first state)
}

// Verdict is what Check found about a passing state, for Accept.
type Verdict struct {
	At     time.Duration // the time the checks count it at (Track.At)
	Jumped bool          // an allowed FlagTeleport jump
	Spent  float64       // slack the move spends
}

// Check returns why st, arriving at now, is implausible after the last
// state accepted on t (Pass when it is fine) and, when it passes, the
// verdict for Accept. It does not check the bounds (OutOfBounds) and only
// refills t's budgets; Accept spends them.
func (t *Track) Check(now time.Duration, l *Limits, st *wire.State) (Reason, Verdict) {
	top := l.TopSpeed
	if st.Dim2D {
		top = l.TopSpeed2D
	}
	limit := l.SpeedFactor * top
	if v := st.Vel; v.Dot(v) > limit*limit {
		return Speed, Verdict{}
	}
	if !t.OK {
		return Pass, Verdict{At: now} // the first state: nothing to compare with
	}
	headroom := now + l.StampGapAllowance - t.At // >= 0: At is at most the allowance past its arrival
	gap, at := headroom, now
	if t.Stamped {
		gap = min(max(0, st.Stamp.Sub(t.Stamp)), headroom)
		at = t.At + gap
	}
	full := l.slackOf(st)
	t.Slack.Refill(now, full/l.MoveSlackRefill.Seconds(), full) // MoveSlackRefill > 0 after defaults
	free := limit * gap.Seconds()
	d := st.Pos.Sub(t.Pos).Len()
	if d <= free+max(0, t.Slack.Tokens) {
		return Pass, Verdict{At: at, Spent: max(0, d-free)}
	}
	t.Teleports.Refill(now, l.TeleportsPerMinute/60, l.TeleportsPerMinute)
	if st.Flags&wire.FlagTeleport == 0 || wire.Shared(st.Entity) || (t.Teleported && now-t.TeleportAt < l.TeleportEvery) ||
		t.Teleports.Tokens < 1 {
		return Teleport, Verdict{}
	}
	if j := l.maxJumpOf(st); j > 0 && d > j {
		return TooFar, Verdict{}
	}
	return Pass, Verdict{At: at, Jumped: true}
}

// Accept moves t on to st, arriving at now, which passed with verdict v
// (Verdict{At: now} when the checks are off).
func (t *Track) Accept(now time.Duration, l *Limits, st *wire.State, v Verdict) {
	if !t.OK {
		t.Slack = ratelimit.Full(now, l.slackOf(st))
		t.Teleports = ratelimit.Full(now, l.TeleportsPerMinute)
		t.Since = now
	}
	t.Slack.Tokens -= v.Spent
	if v.Jumped {
		t.Teleports.Tokens--
		t.TeleportAt, t.Teleported, t.From = now, true, t.Pos
	}
	t.OK, t.Pos, t.At, t.Arrival, t.Stamp, t.Stamped = true, st.Pos, v.At, now, st.Stamp, true
}

// Step runs every check on st, arriving at now (bounds, then Check) and
// accepts it when it passes: the whole rule set for a checker that has no
// other checks between.
func (t *Track) Step(now time.Duration, l *Limits, st *wire.State) Reason {
	if l.OutOfBounds(st) {
		return Bounds
	}
	why, v := t.Check(now, l, st)
	if why == Pass {
		t.Accept(now, l, st, v)
	}
	return why
}

// FromProtocol returns the limits a server announced (protocol.Limits.Motion),
// defaults for what it left out (nil: a server from before it), and
// whether it checks motion at all.
func FromProtocol(m *protocol.Motion) (l Limits, on bool) {
	if m != nil {
		l = Limits{
			TopSpeed: m.TopSpeed, TopSpeed2D: m.TopSpeed2D, SpeedFactor: m.SpeedFactor,
			MoveSlack: m.MoveSlack, MoveSlack2D: m.MoveSlack2D,
			MoveSlackRefill:    protocol.DurationUS(m.MoveSlackRefillUS),
			StampGapAllowance:  protocol.DurationUS(m.StampGapAllowanceUS),
			TeleportEvery:      protocol.DurationUS(m.TeleportEveryUS),
			TeleportsPerMinute: m.TeleportsPerMinute,
			WorldBounds:        m.WorldBounds, WorldBounds2D: m.WorldBounds2D,
			MaxTeleport: m.MaxTeleport, MaxTeleport2D: m.MaxTeleport2D,
		}
	}
	// A negative or absurd figure from the wire must not make every state
	// fail (or pass): such a field takes its default.
	for _, p := range []*float64{&l.TopSpeed, &l.TopSpeed2D, &l.MoveSlack, &l.MoveSlack2D, &l.TeleportsPerMinute} {
		if !(*p > 0) || math.IsInf(*p, 0) {
			*p = 0
		}
	}
	if !(l.SpeedFactor >= 1) || math.IsInf(l.SpeedFactor, 0) {
		l.SpeedFactor = 0
	}
	for _, p := range []*float64{&l.WorldBounds, &l.WorldBounds2D} {
		if !(*p > 0) || math.IsInf(*p, 0) {
			*p = 0
		}
	}
	for _, p := range []*float64{&l.MaxTeleport, &l.MaxTeleport2D} {
		switch {
		case *p < 0 || math.IsInf(*p, 1):
			*p = -1 // no bound
		case !(*p > 0):
			*p = 0 // NaN or absent: the default
		}
	}
	for _, p := range []*time.Duration{&l.MoveSlackRefill, &l.StampGapAllowance, &l.TeleportEvery} {
		*p = max(0, *p)
	}
	l.SetDefaults()
	return l, m == nil || !m.Off
}

// Protocol is l as a server announces it (protocol.Limits.Motion); off
// says the server checks no motion.
func (l Limits) Protocol(off bool) *protocol.Motion {
	return &protocol.Motion{
		Off: off, TopSpeed: l.TopSpeed, TopSpeed2D: l.TopSpeed2D, SpeedFactor: l.SpeedFactor,
		MoveSlack: l.MoveSlack, MoveSlack2D: l.MoveSlack2D,
		MoveSlackRefillUS:   protocol.US(l.MoveSlackRefill),
		StampGapAllowanceUS: protocol.US(l.StampGapAllowance),
		TeleportEveryUS:     protocol.US(l.TeleportEvery),
		TeleportsPerMinute:  l.TeleportsPerMinute,
		WorldBounds:         l.WorldBounds, WorldBounds2D: l.WorldBounds2D,
		MaxTeleport: l.MaxTeleport, MaxTeleport2D: l.MaxTeleport2D,
	}
}
