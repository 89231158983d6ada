package room

import (
	"errors"
	"time"

	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/protocol"
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
// The checks (rate limits, motion) judge a state at its time on the
// sender's timeline (timeline.go), at, which trails its arrival, now, by
// no more than the room's own backlog.
func (r *Room) handleState(now time.Duration, s *seat, frame []byte) {
	r.m.StatesIn(1)
	at := now
	if stamp, ok := wire.FrameStamp(frame); ok {
		at, r.late = r.stateTime(now, s, stamp)
		defer func() { r.late = false }()
	}
	switch e := wire.FrameEntity(frame); {
	case e == 0:
		r.playerState(now, at, s, frame)
	case wire.Shared(e):
		r.objectState(now, at, s, e, frame)
	default:
		r.entityState(now, at, s, e, frame)
	}
}

// playerState is the relay path of a player's own entity (0), arrived at
// now and judged at at.
func (r *Room) playerState(now, at time.Duration, s *seat, frame []byte) {
	if !s.states.Take(at, r.cfg.SendRate*r.cfg.RateFactor, r.cfg.RateBurst) {
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
	first := !s.mo.OK && !r.cfg.NoMotionChecks
	if first {
		if err := r.spawnRefused(s, &st); err != nil { // entities.go
			r.reject(now, s, RejectSpawn, err)
			return
		}
	}
	if !r.admit(now, at, s, &st, &s.mo, false) {
		return
	}
	switch {
	case first:
		r.noteBeside(s, &st)
	case s.beside != [2]uint64{}:
		r.clearBeside(s, &st)
	}
	s.n = copy(s.buf[:], frame)
	out := s.buf[:s.n]
	sampled := r.restamp(now, s, &st, out)
	s.last, s.lastArrival, s.has = st, now, true

	var hit *wire.State // lag compensation notes each recipient (hits.go)
	if r.cfg.Hits.On {
		hit = &st
	}
	r.fanOut(now, s, out, fanSkipDirect, hit, sampled)
}

// fanMode says which recipients a fanned-out state skips.
type fanMode uint8

const (
	// fanAll: every other connected player (shared objects, which clients
	// send through the server only).
	fanAll fanMode = iota
	// fanSkipDirect: every other connected player but those with a direct
	// link up with the sender both ways, who got the state directly
	// (a player's own entities).
	fanSkipDirect
)

// fanOut is the one fan-out of a relayed state: out, s's state, goes to
// every other connected player, but for those mode skips; it counts what
// it relayed and skipped. With hit (the state, sampled at at on the
// server clock) each recipient notes it for lag compensation (hits.go),
// relayed or got directly. It does not allocate.
func (r *Room) fanOut(now time.Duration, s *seat, out []byte, mode fanMode, hit *wire.State, at time.Duration) {
	n, skipped := 0, 0
	for _, o := range r.seats {
		if o == nil || o == s || o.peer == nil {
			continue
		}
		if mode == fanSkipDirect && direct(s, o) {
			if hit != nil {
				r.noteDirect(now, o, s.slot, hit, at)
			}
			skipped++
			continue
		}
		o.peer.Send(out, false)
		if hit != nil {
			r.noteRelayed(now, o, s.slot, hit, at)
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
// motion checks against mo, on the sender's timeline (at), which it then
// moves on to st. It reports whether st passed; a refusal is already
// counted and answered.
//
// jumps allows a shared object's flagged state to jump (a reset the room's
// rules allow this sender: sharedJumps).
func (r *Room) admit(now, at time.Duration, s *seat, st *wire.State, mo *track, jumps bool) bool {
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
	lim := r.limits
	lim.SharedJumps = jumps
	v := motion.Verdict{At: at}
	if !r.cfg.NoMotionChecks {
		var why motion.Reason
		if why, v = mo.Check(at, &lim, st); why != motion.Pass {
			var err error
			switch {
			case why == motion.TooFar:
				err = errTooFar
			case why == motion.Teleport && wire.Shared(st.Entity) && st.Flags&wire.FlagTeleport != 0:
				err = r.sharedResetRule(jumps)
			}
			r.reject(now, s, rejectOf(why), err)
			return false
		}
	}
	if !r.dimSet && s.slot == r.host {
		r.dimSet, r.dim2D = true, st.Dim2D
	}
	mo.Accept(at, &lim, st, v)
	if v.Jumped && r.tm != nil {
		r.tm.Teleported()
	}
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
	lim := r.limits
	return lim.OutOfBounds(st)
}

// rejectOf is the Reject for a motion check's failure.
func rejectOf(why motion.Reason) Reject {
	switch why {
	case motion.Speed:
		return RejectSpeed
	case motion.Bounds:
		return RejectBounds
	default:
		return RejectTeleport
	}
}

// reject counts a refused frame, tells the player (at most every
// errorEvery for states), and disconnects them once their abuse score
// passes AbuseLimit.
func (r *Room) reject(now time.Duration, s *seat, why Reject, err error) {
	if r.late && (why == RejectRate || why == RejectTeleport) {
		why = RejectLate // the room's delay, not the player's: no Error, no abuse score
	}
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
	case RejectRate, RejectMalformed, RejectStale, RejectSpeed, RejectTeleport, RejectBounds, RejectEntities, RejectSpawn:
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
	errBatch  = errors.New("message does not split into whole state frames")
	errDim3D  = errors.New("the room carries 3D states (the host's)")
	errDim2D  = errors.New("the room carries 2D states (the host's)")
	errTooFar = errors.New("a teleport longer than the room's MaxTeleport")
)
