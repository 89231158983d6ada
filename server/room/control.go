package room

import (
	"errors"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/funnel"
)

// handleControl decodes and dispatches one control frame from a seated player.
func (r *Room) handleControl(now time.Duration, s *seat, frame []byte) {
	if !ownBudget(frame) && !s.controls.Take(now, r.cfg.ControlRate, r.cfg.ControlBurst) {
		r.rejectControl(now, s, RejectControlRate,
			protocol.Errorf(protocol.CodeRateLimited, "more than %.0f messages per second", r.cfg.ControlRate))
		return
	}
	m, err := protocol.Decode(frame)
	if err != nil {
		var req wire.ControlType
		if len(frame) >= wire.ControlHeaderSize {
			req = wire.ControlType(frame[3])
		}
		switch {
		case errors.Is(err, wire.ErrUpdateRequired):
			e := protocol.Errorf(protocol.CodeUpdateRequired, "%v", err)
			r.send(s.peer, e)
			r.m.Rejected(RejectVersion)
			s.peer.Close(protocol.CodeUpdateRequired, "update required")
			r.free(now, s, "update required")
		case errors.Is(err, protocol.ErrUnknownType):
			e := protocol.Errorf(protocol.CodeUnknownType, "unknown message type %d", req)
			e.Request = req
			r.rejectControl(now, s, RejectUnknownType, e)
		default:
			e := protocol.Errorf(protocol.CodeBadRequest, "%v", err)
			e.Request = req
			r.rejectControl(now, s, RejectBadRequest, e)
		}
		return
	}
	if e := r.dispatch(now, s, m); e != nil {
		e.Request = m.Type()
		r.sendError(s, e)
	}
}

// dispatch applies one decoded message; a non-nil result is sent back.
func (r *Room) dispatch(now time.Duration, s *seat, m protocol.Message) *protocol.Error {
	switch m := m.(type) {
	case *protocol.Ping:
		r.pong(now, s, m) // roundtrip.go
	case *protocol.Echo:
		r.echo(now, s, m)
	case *protocol.SetName:
		name, err := protocol.NormalizeName(m.Name)
		if err != nil {
			return protocol.Errorf(protocol.CodeBadName, "%v", err)
		}
		if o := r.nameHolder(protocol.NameKey(name), s); o != nil {
			return protocol.Errorf(protocol.CodeBadName, "%q is too like the name of the player in slot %d (%q)", name, o.slot, o.name)
		}
		if name != s.name {
			s.setName(name)
			r.dirty = true
			if r.hooks.Renamed != nil {
				r.hooks.Renamed(s.user, name)
			}
		}
	case *protocol.Loading:
		if m.Progress != s.loaded {
			s.loaded = m.Progress
			r.dirty = true
		}
		if s.loaded >= 1 {
			r.emit(now, s, funnel.StepLoaded, "")
		}
	case *protocol.Ready:
		if r.phase != protocol.PhaseLobby {
			return protocol.Errorf(protocol.CodeWrongPhase, "ready only in the lobby, not in %s", r.phase)
		}
		if m.Ready != s.ready {
			s.ready = m.Ready
			r.dirty = true
		}
		if s.ready {
			r.emit(now, s, funnel.StepReady, "")
		}
	case *protocol.Settings:
		return r.setSettings(now, s, m)
	case *protocol.Start:
		return r.start(now, s)
	case *protocol.InPosition:
		if r.phase != protocol.PhaseHandshake || s.ent == nil {
			return protocol.Errorf(protocol.CodeWrongPhase, "in position only during the start handshake of a round you play")
		}
		if !s.ent.inPosition {
			s.ent.inPosition = true
			r.dirty = true
			r.emit(now, s, funnel.StepHandshakeDone, "")
			r.progress(now)
		}
	case *protocol.Finish:
		if r.phase != protocol.PhasePlaying || s.ent == nil {
			return protocol.Errorf(protocol.CodeWrongPhase, "finish only while playing a round you are in")
		}
		if !s.ent.finished {
			s.ent.finished, s.ent.finishAt, s.ent.score = true, now, m.Score
			r.dirty = true
			r.progress(now)
		}
	case *protocol.Vote:
		return r.vote(now, s, m.Restart)
	case *protocol.DirectLink:
		o := r.seatAt(m.Slot)
		if o == nil {
			// The player left while the report was on its way (a link
			// reported down after the peer went silent): nothing to do.
			return nil
		}
		if o == s {
			return protocol.Errorf(protocol.CodeBadRequest, "a direct link to yourself (slot %d)", m.Slot)
		}
		if !m.Up && m.Reason == protocol.DirectCheat {
			// The reporter's own motion checks failed o's direct states:
			// the pair is relayed again (below), so o's states to s pass
			// this room's checks from now on. Counted and logged, not
			// punished: a report alone proves nothing.
			if r.drm != nil {
				r.drm.DirectCheatReported()
			}
			r.hooks.Log.Warn("direct peer failed motion checks", "reporter", s.slot, "slot", o.slot, "user", o.user)
		}
		bit := uint64(1) << (m.Slot % 64)
		if m.Up {
			s.direct[m.Slot/64] |= bit
		} else {
			s.direct[m.Slot/64] &^= bit
		}
	case *protocol.Signal:
		o := r.seatAt(m.To)
		if o == nil || o == s || o.peer == nil {
			return protocol.Errorf(protocol.CodeBadRequest, "no connected player in slot %d", m.To)
		}
		pb := &s.signals[m.To]
		if !pb.take(now, &r.cfg, len(m.Data)) {
			// The sender pays, never the recipient: refused, and past the
			// abuse limit closed with CodeRateLimited.
			r.rejectControl(now, s, RejectSignalRate, protocol.Errorf(protocol.CodeRateLimited,
				"signals to slot %d over %.0f per second or %.0f bytes per second", m.To, r.cfg.SignalRate, r.cfg.SignalBytes))
			return nil
		}
		switch m.Kind {
		case protocol.SignalOffer, protocol.SignalAnswer:
			pb.cands = 0
		case protocol.SignalCandidate:
			// Each relayed candidate is connectivity checks the recipient
			// sends to an address of the sender's choosing.
			if pb.cands++; pb.cands > r.cfg.SignalCandidates {
				r.rejectControl(now, s, RejectSignalRate, protocol.Errorf(protocol.CodeRateLimited,
					"more than %d candidates to slot %d for one offer or answer", r.cfg.SignalCandidates, m.To))
				return nil
			}
		}
		r.send(o.peer, &protocol.Signal{To: m.To, From: s.slot, Kind: m.Kind, Data: m.Data})
	case *protocol.Kick:
		return r.hostKick(now, s, m.Slot)
	case *protocol.Event:
		return r.relayEvent(now, s, m)
	case *protocol.Chat:
		return r.relayChat(now, s, m)
	case *protocol.Prop:
		return r.setProp(now, s, m)
	case *protocol.Hit:
		return r.hit(now, s, m) // hits.go
	case *protocol.Spawn:
		return r.spawn(now, s, m) // entities.go
	case *protocol.Despawn:
		return r.despawn(now, s, m)
	case *protocol.Claim:
		return r.claim(now, s, m)
	case *protocol.Invite:
		r.emit(now, s, funnel.StepInviteShared, m.Channel)
	case *protocol.Leave:
		p := s.peer
		r.send(p, &protocol.Left{Reason: "left the room"})
		r.free(now, s, "left")
	case *protocol.Hello, *protocol.Create, *protocol.Join:
		return protocol.Errorf(protocol.CodeAlreadyInRoom, "already in room %s; leave first", r.code)
	default:
		return protocol.Errorf(protocol.CodeBadRequest, "%s is a server-to-client message", protocol.TypeName(m.Type()))
	}
	return nil
}

func (r *Room) seatAt(slot int) *seat {
	if slot < 0 || slot >= len(r.seats) {
		return nil
	}
	return r.seats[slot]
}

func (r *Room) setSettings(now time.Duration, s *seat, m *protocol.Settings) *protocol.Error {
	if s.slot != r.host {
		return protocol.Errorf(protocol.CodeNotHost, "only the host changes settings")
	}
	if r.phase != protocol.PhaseLobby {
		return protocol.Errorf(protocol.CodeWrongPhase, "settings change only in the lobby")
	}
	round := protocol.DurationUS(m.RoundUS)
	if round == 0 {
		round = r.cfg.RoundLimit
	}
	if round < r.cfg.MinRoundLimit || round > r.cfg.MaxRoundLimit {
		return protocol.Errorf(protocol.CodeBadRequest, "round time %v outside %v..%v", round, r.cfg.MinRoundLimit, r.cfg.MaxRoundLimit)
	}
	var delay protocol.InputDelay // none unless asked for
	if m.InputDelay != nil {
		delay = *m.InputDelay
	}
	if forced := r.cfg.InputDelay; forced.Mode != protocol.InputDelayOff {
		if m.InputDelay != nil && !sameDelay(delay, forced) {
			return protocol.Errorf(protocol.CodeBadRequest, "the server sets the input delay (%s)", describeDelay(forced))
		}
		delay = r.delay.set
	}
	r.settings = protocol.Settings{RoundUS: protocol.US(round), Game: append([]byte(nil), m.Game...)}
	if !sameDelay(delay, r.delay.set) {
		r.setInputDelay(now, delay)
	}
	if r.delay.set.Mode != protocol.InputDelayOff {
		set := r.delay.set
		r.settings.InputDelay = &set
	}
	for _, o := range r.seats {
		if o != nil {
			o.ready = false
		}
	}
	r.dirty = true
	return nil
}

// hostKick is the host removing another player (connected or held), so one
// who never readies cannot block every start. Not during a round: a
// running round has its own exits (time limit, restart vote). The player
// is closed with CodeKicked and may not rejoin for KickBan, nor may a new
// seat from its address or its network; on the host's own address or
// network, which the host's other players share, only identities made
// after the kick are refused.
func (r *Room) hostKick(now time.Duration, s *seat, slot int) *protocol.Error {
	if s.slot != r.host {
		return protocol.Errorf(protocol.CodeNotHost, "only the host kicks")
	}
	if r.Busy() {
		return protocol.Errorf(protocol.CodeWrongPhase, "no kicks during a round (%s)", r.phase)
	}
	o := r.seatAt(slot)
	if o == nil || o == s {
		return protocol.Errorf(protocol.CodeBadRequest, "no other player in slot %d", slot)
	}
	for u, until := range r.banned { // keep the list to bans in force
		if until <= now {
			delete(r.banned, u)
		}
	}
	for a, until := range r.bannedA {
		if until <= now {
			delete(r.bannedA, a)
		}
	}
	for n, b := range r.bannedN {
		if b.until <= now {
			delete(r.bannedN, n)
		}
	}
	r.banned[o.user] = now + r.cfg.KickBan
	// The address and the network too, or the kicked player rejoins at
	// once as a new identity (from the next address of its /24); never
	// all of the host's own, which would lock its friends out: there, new
	// identities alone.
	if o.addr != "" && o.addr != s.addr {
		r.bannedA[o.addr] = now + r.cfg.KickBan
	}
	if o.net != "" {
		b, ok := r.bannedN[o.net]
		if !ok {
			b = netBan{fresh: true, at: now}
		}
		b.until = now + r.cfg.KickBan
		b.fresh = b.fresh && o.net == s.net
		r.bannedN[o.net] = b
	}
	r.m.Kicked(protocol.CodeKicked)
	r.hooks.Log.Info("player kicked by the host", "slot", o.slot, "user", o.user, "host", s.user)
	const why = "the host removed you from the room"
	if p := o.peer; p != nil {
		r.send(p, &protocol.Error{Code: protocol.CodeKicked, Name: protocol.CodeKicked.String(), Message: why})
		p.Close(protocol.CodeKicked, why)
	}
	r.free(now, o, "kicked by the host")
	return nil
}
