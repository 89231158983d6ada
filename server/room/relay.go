package room

import (
	"errors"
	"time"

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
				r.flush()
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
	r.flush()
}

// handleState is the relay path: check, re-stamp, keep a copy, fan out.
// It does not allocate.
func (r *Room) handleState(now time.Duration, s *seat, frame []byte) {
	r.m.StatesIn(1)
	if !s.states.take(now, r.cfg.SendRate*r.cfg.RateFactor, r.cfg.RateBurst) {
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
	if !r.cfg.NoMotionChecks {
		if why := r.checkMotion(now, s, &st); why != numRejects {
			r.reject(now, s, why, nil)
			return
		}
	}

	at := s.rs.Restamp(st.Stamp, now)
	stamp := wire.StampOf(at)
	s.n = copy(s.buf[:], frame)
	out := s.buf[:s.n]
	_ = wire.PatchState(out, uint8(s.slot), stamp) // cannot fail: out decoded above
	s.lastStamp = st.Stamp
	st.Stamp, st.Slot = stamp, uint8(s.slot)
	if st.Flags&wire.FlagTeleport != 0 {
		s.teleportAt, s.teleported = now, true
	}
	s.last, s.lastArrival, s.has = st, now, true
	s.accepted++
	if s.accepted%offsetSampleEvery == 1 {
		r.m.RestampAge(now - at)
	}

	n := 0
	for _, o := range r.seats {
		if o == nil || o == s || o.peer == nil || direct(s, o) {
			continue
		}
		o.peer.Send(out, false)
		n++
	}
	r.m.StatesRelayed(n)
}

// checkMotion returns why st is implausible after s's last state, or
// numRejects when it is fine. Speed: the reported velocity may not exceed
// SpeedFactor x TopSpeed (TopSpeed2D for 2D states). Teleport: the distance
// from the last accepted position may not exceed that speed times the gap,
// plus MoveSlack (MoveSlack2D); the gap
// is the arrival gap, or the sender's stamp gap when longer (states
// bunched by a stall) but by at most StampGapAllowance more. A state flagged
// wire.FlagTeleport skips the distance test, once per TeleportEvery.
func (r *Room) checkMotion(now time.Duration, s *seat, st *wire.State) Reject {
	top, slack := r.cfg.TopSpeed, r.cfg.MoveSlack
	if st.Dim2D {
		top, slack = r.cfg.TopSpeed2D, r.cfg.MoveSlack2D
	}
	limit := r.cfg.SpeedFactor * top
	if v := st.Vel; v.Dot(v) > limit*limit {
		return RejectSpeed
	}
	if st.Flags&wire.FlagTeleport != 0 {
		if s.teleported && now-s.teleportAt < r.cfg.TeleportEvery {
			return RejectTeleport
		}
		return numRejects
	}
	if !s.has {
		return numRejects
	}
	arrival := now - s.lastArrival
	gap := max(arrival, min(st.Stamp.Sub(s.lastStamp), arrival+r.cfg.StampGapAllowance))
	allowed := limit*gap.Seconds() + slack
	if d := st.Pos.Sub(s.last.Pos); d.Dot(d) > allowed*allowed {
		return RejectTeleport
	}
	return numRejects
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
	case RejectRate, RejectMalformed, RejectStale, RejectSpeed, RejectTeleport:
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

var errBatch = errors.New("message does not split into whole state frames")
