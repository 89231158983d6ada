package room

import (
	"errors"
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/wire"
)

// offsetSampleEvery is how often (in accepted states per player) the
// re-stamp offset is sampled for metrics.
const offsetSampleEvery = 64

// errorEvery is the least time between two Error messages about rejected
// states to one player, so a flood does not become a flood back.
const errorEvery = 250 * time.Millisecond

// HandleFrame handles one binary message from p received at time now: a
// batch of states (checked, re-stamped, kept and relayed) or one control
// frame. Frames from a peer without a seat are ignored. It never panics on
// any input.
func (r *Room) HandleFrame(now time.Duration, p Peer, msg []byte) {
	s := r.byPeer[p]
	if s == nil {
		return
	}
	switch wire.KindOf(msg) {
	case wire.KindState3D, wire.KindState2D:
		// A message that does not split exactly into states is refused
		// whole: one bad byte must not let a prefix through.
		for rest := msg; len(rest) > 0; {
			var ok bool
			if _, rest, ok = protocol.NextState(rest); !ok {
				r.m.StatesIn(1)
				r.reject(now, s, RejectMalformed, errBatch)
				r.flush(now)
				return
			}
		}
		for len(msg) > 0 && s.peer != nil {
			frame, rest, _ := protocol.NextState(msg)
			r.handleState(now, s, frame)
			msg = rest
		}
	case wire.KindControl:
		r.handleControl(now, s, msg)
	default:
		r.reject(now, s, RejectMalformed, wire.ErrKind)
	}
	r.flush(now)
}

// handleState is the relay path: check, re-stamp, keep a copy, fan out.
// Entity 0 (the player's own) is handled here; extra entities and shared
// objects in entities.go. It does not allocate, but for a player's first
// state of an extra entity.
func (r *Room) handleState(now time.Duration, s *seat, frame []byte) {
	r.m.StatesIn(1)
	switch e := wire.FrameEntity(frame); {
	case e == 0:
		r.playerState(now, s, frame)
	case wire.Shared(e):
		r.objectState(now, s, e, frame)
	default:
		r.entityState(now, s, e, frame)
	}
}

// playerState is the relay path of a player's own entity (0).
func (r *Room) playerState(now time.Duration, s *seat, frame []byte) {
	if !s.states.Take(now, r.cfg.SendRate*r.cfg.RateFactor, r.cfg.RateBurst) {
		r.reject(now, s, RejectRate, nil)
		return
	}
	var st wire.State
	if err := wire.DecodeState(frame, &st); err != nil {
		r.reject(now, s, RejectMalformed, err)
		return
	}
	if s.has && !st.Seq.Newer(s.last.Seq) {
		r.reject(now, s, RejectStale, nil)
		return
	}
	if !r.admit(now, s, &st, &s.mo) {
		return
	}
	s.n = copy(s.buf[:], frame)
	out := s.buf[:s.n]
	at := r.restamp(now, s, &st, out)
	s.last, s.lastArrival, s.has = st, now, true

	n, skipped := 0, 0
	for _, o := range r.seats {
		if o == nil || o == s || o.peer == nil {
			continue
		}
		if direct(s, o) {
			if r.cfg.Hits.On {
				r.noteDirect(now, o, s.slot, &st, at) // hits.go
			}
			skipped++
			continue
		}
		o.peer.Send(out, false)
		if r.cfg.Hits.On {
			r.noteRelayed(now, o, s.slot, &st, at) // hits.go
		}
		n++
	}
	r.m.StatesRelayed(n)
	if r.dm != nil && skipped > 0 {
		r.dm.StatesSkippedDirect(skipped)
	}
}

// admit runs the checks every entity's states pass after the rate limit,
// decoding and the sequence: the room's dimension, world bounds, and the
// motion checks against mo, which it then moves on to st. It reports
// whether st passed; a refusal is already counted and answered.
func (r *Room) admit(now time.Duration, s *seat, st *wire.State, mo *track) bool {
	// One game, one dimension: the host's first state sets it, so nobody
	// can have a 3D world's moves judged in pixels (or the reverse).
	if r.dimSet && st.Dim2D != r.dim2D {
		err := errDim3D
		if r.dim2D {
			err = errDim2D
		}
		r.reject(now, s, RejectMalformed, err)
		return false
	}
	if r.outOfBounds(st) {
		r.reject(now, s, RejectBounds, nil)
		return false
	}
	checkedAt, jumped, slack := now, false, 0.0
	if !r.cfg.NoMotionChecks {
		var why Reject
		if why, checkedAt, jumped, slack = r.checkMotion(now, mo, st); why != numRejects {
			r.reject(now, s, why, nil)
			return false
		}
	}
	if !r.dimSet && s.slot == r.host {
		r.dimSet, r.dim2D = true, st.Dim2D
	}
	if !mo.ok {
		mo.slack = ratelimit.Full(now, r.slackOf(st))
		mo.teleports = ratelimit.Full(now, r.cfg.TeleportsPerMinute)
	}
	mo.slack.Tokens -= slack
	if jumped {
		mo.teleports.Tokens--
		mo.teleportAt, mo.teleported, mo.from = now, true, mo.pos
	}
	mo.ok, mo.pos, mo.at, mo.arrival, mo.stamp, mo.stamped = true, st.Pos, checkedAt, now, st.Stamp, true
	return true
}

// restamp moves st, and out (its encoding), onto the server clock with
// s's re-stamper (one sender clock for all its entities) and s's slot. It
// returns the sample time on the server clock.
func (r *Room) restamp(now time.Duration, s *seat, st *wire.State, out []byte) time.Duration {
	at := s.rs.Restamp(st.Stamp, now)
	stamp := wire.StampOf(at)
	_ = wire.PatchState(out, uint8(s.slot), stamp) // cannot fail: out decoded by the caller
	st.Stamp, st.Slot = stamp, uint8(s.slot)
	s.accepted++
	if s.accepted%offsetSampleEvery == 1 {
		r.m.RestampAge(now - at)
	}
	return at
}

// outOfBounds reports whether st lies outside Config.WorldBounds (or
// WorldBounds2D), when set.
func (r *Room) outOfBounds(st *wire.State) bool {
	b := r.cfg.WorldBounds
	if st.Dim2D {
		b = r.cfg.WorldBounds2D
	}
	return b > 0 && (math.Abs(st.Pos.X) > b || math.Abs(st.Pos.Y) > b || math.Abs(st.Pos.Z) > b)
}

// slackOf is MoveSlack for st's kind of state.
func (r *Room) slackOf(st *wire.State) float64 {
	if st.Dim2D {
		return r.cfg.MoveSlack2D
	}
	return r.cfg.MoveSlack
}

// checkMotion returns why st is implausible after the last state accepted
// on track mo (a player's entity, or a shared object across owners)
// (numRejects when it is fine), the time the checks count it at (track.at),
// whether it is an allowed FlagTeleport jump, and how much of the track's
// slack the move spends. It only refills the track's budgets; admit
// spends them.
//
// Speed: the reported velocity may not exceed SpeedFactor x TopSpeed
// (TopSpeed2D for 2D states). Distance: the move from the last accepted
// position, kept across reconnects, may not exceed that speed times the
// gap, plus what is left of the track's MoveSlack (MoveSlack2D) budget,
// refilled over MoveSlackRefill. The gap is the sender's stamp gap,
// drawn from one allowance bucket per player: the stamps may run at most
// StampGapAllowance ahead of real (arrival) time, so states bunched by a
// stall pass (their stamps catch up with the time the stall took), while
// forged stamps buy StampGapAllowance once rather than per state. The first
// state on a new connection has no comparable stamp: its gap is the time
// since the last accepted state plus the allowance. A state flagged
// wire.FlagTeleport may move any distance, once per TeleportEvery and
// TeleportsPerMinute times a minute; one that moves no farther than allowed
// (a heartbeat of the respawn) does not count.
// A shared object never jumps: its owner changes hands by claims measured
// from its position, so a jump would carry it anywhere (the flag is
// ignored; to put one back, the host despawns and spawns it again).
func (r *Room) checkMotion(now time.Duration, mo *track, st *wire.State) (why Reject, at time.Duration, jumped bool, spent float64) {
	top := r.cfg.TopSpeed
	if st.Dim2D {
		top = r.cfg.TopSpeed2D
	}
	limit := r.cfg.SpeedFactor * top
	if v := st.Vel; v.Dot(v) > limit*limit {
		return RejectSpeed, 0, false, 0
	}
	if !mo.ok {
		return numRejects, now, false, 0 // the first state in this room: nothing to compare with
	}
	headroom := now + r.cfg.StampGapAllowance - mo.at // >= 0: mo.at is at most the allowance past its arrival
	gap, at := headroom, now
	if mo.stamped {
		gap = min(max(0, st.Stamp.Sub(mo.stamp)), headroom)
		at = mo.at + gap
	}
	full := r.slackOf(st)
	mo.slack.Refill(now, full/r.cfg.MoveSlackRefill.Seconds(), full) // MoveSlackRefill > 0 after defaults
	free := limit * gap.Seconds()
	d := st.Pos.Sub(mo.pos).Len()
	if d <= free+max(0, mo.slack.Tokens) {
		return numRejects, at, false, max(0, d-free)
	}
	mo.teleports.Refill(now, r.cfg.TeleportsPerMinute/60, r.cfg.TeleportsPerMinute)
	if st.Flags&wire.FlagTeleport == 0 || wire.Shared(st.Entity) || (mo.teleported && now-mo.teleportAt < r.cfg.TeleportEvery) ||
		mo.teleports.Tokens < 1 {
		return RejectTeleport, 0, false, 0
	}
	return numRejects, at, true, 0
}

// reject counts a refused frame, tells the player (at most every
// errorEvery for states), and disconnects them once their abuse score
// passes AbuseLimit.
func (r *Room) reject(now time.Duration, s *seat, why Reject, err error) {
	r.m.Rejected(why)
	if now > s.abuseAt {
		s.abuse = max(0, s.abuse-r.cfg.AbuseDecay*(now-s.abuseAt).Seconds())
		s.abuseAt = now
	}
	s.abuse += why.weight()
	if s.abuse > r.cfg.AbuseLimit {
		r.kick(now, s, why.code(), "repeated "+why.String()+" violations")
		return
	}
	switch why {
	case RejectRate, RejectMalformed, RejectStale, RejectSpeed, RejectTeleport, RejectBounds, RejectEntities:
		if s.errAt != 0 && now-s.errAt < errorEvery {
			return
		}
		s.errAt = now
		msg := "state rejected: " + why.String()
		if err != nil {
			msg += ": " + err.Error()
		}
		r.sendError(s, &protocol.Error{Code: why.code(), Name: why.code().String(), Message: msg})
	}
}

// kick disconnects a player for abuse and frees the seat.
func (r *Room) kick(now time.Duration, s *seat, code protocol.Code, reason string) {
	r.m.Kicked(code)
	r.hooks.Log.Info("player disconnected for abuse", "slot", s.slot, "user", s.user, "code", code, "reason", reason)
	if p := s.peer; p != nil {
		r.send(p, &protocol.Error{Code: code, Name: code.String(), Message: reason})
		p.Close(code, reason)
	}
	r.free(now, s, "kicked: "+reason)
}

// rejectControl answers a refused control message with an Error.
func (r *Room) rejectControl(now time.Duration, s *seat, why Reject, e *protocol.Error) {
	r.sendError(s, e)
	r.reject(now, s, why, nil)
}

var (
	errBatch = errors.New("message does not split into whole state frames")
	errDim3D = errors.New("the room carries 3D states (the host's)")
	errDim2D = errors.New("the room carries 2D states (the host's)")
)
