package sender

import (
	"fmt"
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// maxF16 is the largest finite half float: the range of velocity,
// acceleration and turn rate on the wire.
const maxF16 = 65504

// never is what NextDue returns before the first sample.
const never = time.Duration(math.MaxInt64)

// Stats counts what a Sender did, for debug figures and the bench.
type Stats struct {
	// Samples is the number of samples accepted.
	Samples uint64
	// Stale is the number of samples dropped because their time was not
	// after the newest sample's (dt <= 0, or the same 10 µs stamp).
	Stale uint64
	// Invalid is the number of samples dropped for a NaN or infinite
	// number, a position beyond float32 range or a zero quaternion.
	Invalid uint64
	// Clamped is the number of accepted samples whose velocity,
	// acceleration or turn rate was scaled down to the half-float range.
	Clamped uint64
	// Sent is the number of states PollState handed out, heartbeats
	// included.
	Sent uint64
	// Heartbeats is the number of those that resent an already sent
	// sample because nothing newer existed when the schedule was due.
	Heartbeats uint64
}

// sample is the newest accepted sample, ready to encode.
type sample struct {
	t        time.Duration
	pos      geom.Vec3
	rot      geom.Quat
	vel, acc geom.Vec3
	turn     float64
	teleport bool // carries wire.FlagTeleport
	sent     bool // handed out by PollState at least once
}

// Sender is the owning side of one networked entity: it records the
// entity's samples, derives what the receivers' motion model needs, and
// says when to send which state. It is not safe for concurrent use (one
// owner: the physics loop). Sample and PollState never allocate.
type Sender struct {
	cfg      Config  // read-only after New, defaults filled in
	interval float64 // ns between sends, 1e9/Rate
	d        deriver

	has      bool   // cur holds a sample
	cur      sample // the newest sample
	teleport bool   // Teleport was called; applies to the next accepted sample

	fields    wire.Fields
	anim      uint8
	input     uint8
	gameFlags wire.Flags
	seq       wire.Seq // the Seq of the next state sent
	slot      uint8    // the slot of the last send, for Latest

	// The schedule: the next send is due at base + round(k·interval).
	// Before the first send base is the first sample's time and k is 0;
	// a restart after a stall sets base to now and k to 1.
	base time.Duration
	k    int64
	// lastPoll is the time of the previous PollState, if polled: a send
	// may go early by half the gap since then (see PollState).
	lastPoll time.Duration
	polled   bool

	stats Stats
}

// New returns a sender for cfg (zero fields take their defaults).
func New(cfg Config) (*Sender, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sender.New: %w", err)
	}
	up := geom.Up3D
	if cfg.Dim2D {
		up = geom.Up2D
	}
	return &Sender{
		cfg:      cfg,
		interval: float64(time.Second) / cfg.Rate,
		d: deriver{
			up:           up,
			minTurnSpeed: cfg.MinTurnSpeed,
			accTau:       cfg.AccSmoothing.Seconds(),
			turnTau:      cfg.TurnSmoothing.Seconds(),
			impulseAcc:   cfg.ImpulseAcc,
		},
		fields: cfg.sentFields(),
	}, nil
}

// Config returns the sender's configuration with defaults filled in.
func (s *Sender) Config() Config { return s.cfg }

// Stats returns the counters so far.
func (s *Sender) Stats() Stats { return s.stats }

// Sample records the entity at the end of a physics frame. t is the frame's
// own time on the sender's clock (not the send time); it becomes the
// state's stamp. The velocity is derived from positions (see the package
// doc for the lag that adds). A sample whose time is not after the newest
// one's is dropped (Stats.Stale), and so is one with a NaN or infinite
// number, a position beyond float32 range or a zero quaternion
// (Stats.Invalid): the sender keeps sending the newest good sample.
func (s *Sender) Sample(t time.Duration, pos geom.Vec3, rot geom.Quat) {
	s.add(t, pos, rot, geom.Vec3{}, false)
}

// SampleWithVelocity is Sample with a known velocity (m/s, px/s in 2D),
// such as CharacterBody3D.velocity: it is sent as given (clamped to the
// half-float range) and replaces the backward difference in the derivation
// of acceleration and turn rate.
func (s *Sender) SampleWithVelocity(t time.Duration, pos geom.Vec3, rot geom.Quat, vel geom.Vec3) {
	s.add(t, pos, rot, vel, true)
}

func (s *Sender) add(t time.Duration, pos geom.Vec3, rot geom.Quat, vel geom.Vec3, hasVel bool) {
	if !inF32(pos) || !rot.Finite() || rot.Len() == 0 || (hasVel && !vel.Finite()) {
		s.stats.Invalid++
		return
	}
	// Equal stamps would make receivers take the second state for a
	// duplicate, so a sample must advance the stamp too.
	if s.has && (t <= s.cur.t || (t-s.cur.t < wire.StampUnit && wire.StampOf(t) == wire.StampOf(s.cur.t))) {
		s.stats.Stale++
		return
	}
	if s.cfg.Dim2D {
		pos.Z, vel.Z = 0, 0
	}
	v, a, turn := s.d.add(t, pos, vel, hasVel)
	clamped := false
	v, clamped = clampVec(v, clamped)
	a, clamped = clampVec(a, clamped)
	if math.Abs(turn) > maxF16 {
		turn, clamped = math.Copysign(maxF16, turn), true
	}
	if clamped {
		s.stats.Clamped++
	}
	// A teleport flag whose sample was never sent moves on to the next
	// sample, so receivers see it even when the frame rate beats the rate.
	tele := s.teleport || (s.has && s.cur.teleport && !s.cur.sent)
	if !s.has {
		s.base, s.k = t, 0 // the first send is due at the first sample
	}
	s.cur = sample{t: t, pos: pos, rot: rot.Normalized(), vel: v, acc: a, turn: turn, teleport: tele}
	s.has, s.teleport = true, false
	s.stats.Samples++
}

// SetExtras sets the animation state and input bits sent with every state
// from now on, and adds wire.HasExtras to the fields sent.
func (s *Sender) SetExtras(anim, input uint8) {
	s.anim, s.input = anim, input
	s.fields |= wire.HasExtras
}

// SetGameFlags sets the game-defined flags sent with every state from now
// on. Only wire.FlagGame0 and wire.FlagGame1 are kept; other bits are
// ignored (use Teleport for wire.FlagTeleport).
func (s *Sender) SetGameFlags(f wire.Flags) { s.gameFlags = f & (wire.FlagGame0 | wire.FlagGame1) }

// Teleport marks a discontinuous move (respawn, portal): the next accepted
// sample carries wire.FlagTeleport, and so does every resend of it; if a
// newer sample replaces it before it is sent, the flag moves to that one.
// Derivation restarts at that sample, so the jump does not show up as
// velocity: it is sent as still unless its velocity is given.
func (s *Sender) Teleport() {
	s.teleport = true
	s.d.reset()
}

// NextDue returns when the next state is due on the fixed schedule: the
// first sample's time at first, then every 1/Rate. The poll nearest to it
// sends (see PollState). Before the first sample it returns the largest
// time.Duration (never).
func (s *Sender) NextDue() time.Duration {
	if !s.has {
		return never
	}
	return s.base + time.Duration(math.Round(float64(s.k)*s.interval))
}

// PollState sends if a state is due at now: it returns the newest
// sample's state (stamped with the sample's time, flagged, with the next
// Seq, from slot) and true, otherwise false. The state is handed out
// unencoded, for the one stage that encodes it (client/core's queue, at
// the socket write, which also carries it forward to the write: the send
// lead). Acc and Turn hold the derived motion whether or not Fields sends
// them (an encoder writes only Fields), so that a carry starts from it.
//
// The schedule keeps a fixed phase: each send is due 1/Rate after the
// previous one was due (not after it happened), so sends do not drift late
// with frame jitter. The poll nearest each due time sends it: a poll sends
// once now >= NextDue() - early, where early is half the time since the
// previous poll, at most half an interval (zero on the first poll). So when
// polls come at about the rate or a multiple of it (60 Hz physics and 60 Hz
// sends, or 120 Hz and 60 Hz), due times that fall on frames do not make
// sends wait a frame, or at equal rates skip one, whenever a frame comes a
// hair early. When a poll comes so late that the following send would be
// due at once too (a stall of about an interval or more), the schedule
// restarts from now instead of bursting to catch up: at most one state per
// poll, and NextDue is after now once a poll has sent.
//
// A sample is sent at most once, except that when a send is due and
// nothing newer exists the newest is sent again, with a new Seq and the
// same stamp: a heartbeat. So an entity that samples slower than Rate, or
// not at all, still sends at the rate; receivers drop the copy by its stamp
// (predict refuses a second sample with the same time) unless the first
// was lost. While a receiver's clock mapping slides (clock.Restamper,
// clock.Sync), the copy maps to a time up to SlewRate times the send
// interval away (tens of µs) and is kept, as a sample of the same pose.
func (s *Sender) PollState(now time.Duration, slot uint8) (wire.State, bool) {
	// The gap since the last poll predicts the gap to the next one.
	var early time.Duration
	if s.polled && now > s.lastPoll {
		early = min(now-s.lastPoll, time.Duration(s.interval)) / 2
	}
	s.lastPoll, s.polled = now, true
	if !s.has || now < s.NextDue()-early {
		return wire.State{}, false
	}
	s.k++
	if s.NextDue()-early <= now {
		s.base, s.k = now, 1 // stalled: resume from now
	}
	s.slot = slot
	st := s.state()
	st.Acc, st.Turn = s.cur.acc, s.cur.turn
	if s.cur.sent {
		s.stats.Heartbeats++
	}
	s.cur.sent = true
	s.seq++
	s.stats.Sent++
	return st, true
}

// Latest returns the newest state as the next PollState would send it
// (with the slot of the last send), and false before the first sample. Fields not
// sent are zero, as a receiver decodes them.
func (s *Sender) Latest() (wire.State, bool) {
	if !s.has {
		return wire.State{}, false
	}
	return s.state(), true
}

// Reset forgets the samples, the derivation, the schedule, the extras and
// the game flags. The Seq carries on, so receivers that still hold earlier
// states do not take new ones for duplicates, and the first state after a
// Reset carries wire.FlagTeleport, since nothing joins it to the earlier
// ones. Stats are kept.
func (s *Sender) Reset() {
	*s = Sender{
		cfg:      s.cfg,
		interval: s.interval,
		d:        s.d,
		fields:   s.cfg.sentFields(),
		seq:      s.seq,
		teleport: true,
		stats:    s.stats,
	}
	s.d.reset()
}

// Restart is Reset without the teleport flag: for a sender that takes
// over an entity its receivers already draw from another sender's states
// (a shared object's new owner starts where the old one left it), so they
// smooth the join instead of snapping to it.
func (s *Sender) Restart() {
	s.Reset()
	s.teleport = false
}

// state returns the newest sample's state as PollState hands it out
// (without the derived motion Fields leaves out).
func (s *Sender) state() wire.State {
	st := wire.State{
		Dim2D:  s.cfg.Dim2D,
		Fields: s.fields,
		Flags:  s.gameFlags,
		Slot:   s.slot,
		Seq:    s.seq,
		Stamp:  wire.StampOf(s.cur.t),
		Pos:    s.cur.pos,
		Vel:    s.cur.vel,
		Rot:    s.cur.rot,
	}
	if s.cur.teleport {
		st.Flags |= wire.FlagTeleport
	}
	if st.Fields&wire.HasAcc != 0 {
		st.Acc = s.cur.acc
	}
	if st.Fields&wire.HasTurn != 0 {
		st.Turn = s.cur.turn
	}
	if st.Fields&wire.HasExtras != 0 {
		st.Anim, st.Input = s.anim, s.input
	}
	return st
}

// Carry carries st forward by h along its own motion and moves its stamp
// by h: p + v h + a h²/2, v + a h, the orientation turned by turn·h about
// the up axis (+Y, or +Z in 2D). Over a send queue's wait (a few ms) the
// terms this leaves out are micrometres. It is what client/core's send
// lead does to a state between its sample and its write. h is rounded down to whole stamp units (wire.StampUnit). It
// reports false, and leaves st alone, when that is not positive or the
// carried position would leave float32 range.
func Carry(st *wire.State, h time.Duration) bool {
	units := h / wire.StampUnit // the stamp moves in whole units: so does the motion
	if units <= 0 {
		return false
	}
	c := *st
	if !carry(&c, units*wire.StampUnit) {
		return false
	}
	c.Stamp = st.Stamp + wire.Stamp(units)
	*st = c
	return true
}

// carry moves st's motion (not its stamp) forward by h > 0.
func carry(st *wire.State, h time.Duration) bool {
	hs := h.Seconds()
	pos := st.Pos.Add(st.Vel.Scale(hs)).Add(st.Acc.Scale(hs * hs / 2))
	if !inF32(pos) {
		return false
	}
	st.Pos = pos
	vel := st.Vel.Add(st.Acc.Scale(hs))
	if v, _ := clampVec(vel, false); v.Finite() {
		st.Vel = v
	}
	if st.Turn != 0 {
		up := geom.Up3D
		if st.Dim2D {
			up = geom.Up2D
		}
		st.Rot = geom.AxisAngle(up, st.Turn*hs).Mul(st.Rot).Normalized()
	}
	return true
}

// inF32 reports whether every component of v is finite and fits a float32.
func inF32(v geom.Vec3) bool {
	return math.Abs(v.X) <= math.MaxFloat32 && math.Abs(v.Y) <= math.MaxFloat32 &&
		math.Abs(v.Z) <= math.MaxFloat32
}

// clampVec scales v down so no component exceeds the half-float range,
// keeping its direction, and reports in clamped whether it did (or
// already had).
func clampVec(v geom.Vec3, clamped bool) (geom.Vec3, bool) {
	m := max(math.Abs(v.X), math.Abs(v.Y), math.Abs(v.Z))
	if m <= maxF16 {
		return v, clamped
	}
	// |c|/m is at most 1 after rounding, and exactly 1 for the largest.
	v = geom.Vec3{X: v.X / m * maxF16, Y: v.Y / m * maxF16, Z: v.Z / m * maxF16}
	return v, true
}
