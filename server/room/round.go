package room

import (
	"cmp"
	"slices"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/funnel"
)

// Tick advances the room's timers to now: expired seat holds, a room
// nobody is connected to (EmptyHold), the
// handshake time-out, the countdown, the time warning and limit, and the
// end of the results. Call it at Next (or later; overdue steps run in time
// order, each at its scheduled time).
func (r *Room) Tick(now time.Duration) {
	for i := 0; i < 16 && !r.closed; i++ { // each pass runs the earliest due step
		at, ok := r.Next()
		if !ok || at > now {
			break
		}
		r.step(at)
	}
	r.flush(now)
}

// Next returns the time of the room's next timed step; ok is false when
// nothing is scheduled. The server arms its timer for it; the bench ticks at it.
func (r *Room) Next() (at time.Duration, ok bool) {
	consider := func(t time.Duration) {
		if !ok || t < at {
			at, ok = t, true
		}
	}
	if r.closed {
		return 0, false
	}
	for _, s := range r.seats {
		if s != nil && s.peer == nil {
			consider(s.heldUntil)
		}
	}
	if r.abandoned() {
		consider(r.emptyAt + r.cfg.EmptyHold)
	}
	if t, due := r.snapshotDue(); due {
		consider(t)
	}
	switch r.phase {
	case protocol.PhaseHandshake, protocol.PhaseResults:
		consider(r.deadline)
	case protocol.PhaseCountdown:
		consider(r.goAt)
	case protocol.PhasePlaying:
		if !r.warned {
			consider(r.endAt - r.cfg.TimeWarning)
		}
		consider(r.endAt)
	}
	return at, ok
}

// step runs whatever is due at exactly time at.
func (r *Room) step(at time.Duration) {
	if r.abandoned() && r.emptyAt+r.cfg.EmptyHold <= at {
		for _, s := range r.seats {
			if s != nil {
				r.free(at, s, "room empty")
			}
		}
		return // closed
	}
	for _, s := range r.seats {
		if s != nil && s.peer == nil && s.heldUntil <= at {
			r.free(at, s, "seat hold expired")
			if r.closed {
				return
			}
		}
	}
	switch r.phase {
	case protocol.PhaseHandshake:
		if r.deadline <= at {
			r.broadcast(&protocol.Notice{Kind: protocol.NoticeHandshakeTimeout,
				Text: "not everyone reported in position; starting anyway"})
			r.countdown(at)
		}
	case protocol.PhaseCountdown:
		if r.goAt <= at {
			r.play(at)
		}
	case protocol.PhasePlaying:
		if !r.warned && r.endAt-r.cfg.TimeWarning <= at {
			r.warned = true
			r.broadcast(&protocol.Notice{Kind: protocol.NoticeTimeWarning, Text: "time is nearly up",
				LeftUS: protocol.US(r.endAt - at)})
		}
		if r.endAt <= at {
			r.finishRound(at, false)
		}
	case protocol.PhaseResults:
		if r.deadline <= at {
			r.lobby(at)
		}
	}
	if t, due := r.snapshotDue(); due && t <= at {
		r.flush(at)
	}
}

func (r *Room) setPhase(now time.Duration, p protocol.Phase) {
	r.m.PhaseChanged(r.phase, p)
	r.hooks.Log.Debug("phase", "from", r.phase, "to", p, "round", r.round)
	r.phase, r.phaseAt = p, now
	r.dirty, r.urgent = true, true // the round flow waits for no window
}

// start is the host's start button.
func (r *Room) start(now time.Duration, s *seat) *protocol.Error {
	if s.slot != r.host {
		return protocol.Errorf(protocol.CodeNotHost, "only the host starts the round")
	}
	if r.phase != protocol.PhaseLobby {
		return protocol.Errorf(protocol.CodeWrongPhase, "a round is already under way (%s)", r.phase)
	}
	if r.draining {
		return protocol.Errorf(protocol.CodeDraining, "the server is updating; no new rounds")
	}
	n := 0
	for _, o := range r.seats {
		if o == nil || o.peer == nil {
			continue
		}
		if o.loaded < 1 || !o.ready {
			return protocol.Errorf(protocol.CodeNotReady, "%s is not loaded and ready", o.name)
		}
		n++
	}
	if n < r.cfg.MinPlayers {
		return protocol.Errorf(protocol.CodeNotReady, "%d connected players, %d needed", n, r.cfg.MinPlayers)
	}
	r.emit(now, s, funnel.StepStartClicked, "")
	r.handshake(now)
	return nil
}

// vote casts or withdraws a restart vote.
func (r *Room) vote(now time.Duration, s *seat, restart bool) *protocol.Error {
	if r.phase != protocol.PhasePlaying && r.phase != protocol.PhaseResults {
		return protocol.Errorf(protocol.CodeWrongPhase, "restart votes only while playing or on the results")
	}
	if restart && r.draining {
		return protocol.Errorf(protocol.CodeDraining, "the server is updating; no new rounds")
	}
	if s.voted == restart {
		return nil
	}
	s.voted = restart
	r.dirty = true
	if restart {
		r.emit(now, s, funnel.StepRestartVote, "")
	}
	r.progress(now)
	return nil
}

// roundSteps are the funnel steps emitted once per round.
var roundSteps = stepBit[funnel.StepStartClicked] | stepBit[funnel.StepHandshakeDone] |
	stepBit[funnel.StepRoundStarted] | stepBit[funnel.StepRestartVote]

// handshake begins a round: the connected players become its participants.
func (r *Room) handshake(now time.Duration) {
	r.round++
	r.limit = protocol.DurationUS(r.settings.RoundUS)
	r.entrants = r.entrants[:0]
	for _, o := range r.seats {
		if o == nil {
			continue
		}
		o.voted = false
		o.ent = nil
		o.funnel &^= roundSteps
		if o.peer != nil {
			o.ent = &entrant{slot: o.slot, user: o.user, name: o.name}
			r.entrants = append(r.entrants, o.ent)
		}
	}
	r.deadline = now + r.cfg.HandshakeTimeout
	r.setPhase(now, protocol.PhaseHandshake)
}

func (r *Room) countdown(now time.Duration) {
	r.goAt = now + r.cfg.Countdown
	r.setPhase(now, protocol.PhaseCountdown)
}

func (r *Room) play(at time.Duration) {
	r.endAt = at + r.limit
	r.warned = false
	r.setPhase(at, protocol.PhasePlaying)
	for _, o := range r.seats {
		if o != nil && o.ent != nil && o.peer != nil {
			r.emit(at, o, funnel.StepRoundStarted, "")
		}
	}
}

// progress moves the round on when nobody is left to wait for.
func (r *Room) progress(now time.Duration) {
	switch r.phase {
	case protocol.PhaseHandshake:
		waiting, remaining, connected := false, false, false
		for _, e := range r.entrants {
			if e.gone {
				continue
			}
			remaining = true
			if s := r.byUser[e.user]; s != nil && s.peer != nil {
				connected = true
				waiting = waiting || !e.inPosition
			}
		}
		switch {
		case !remaining:
			r.lobby(now) // everyone left before the start
		case connected && !waiting:
			r.countdown(now)
		}
	case protocol.PhasePlaying:
		done := true
		for _, e := range r.entrants {
			if !e.finished && !e.gone {
				done = false
				break
			}
		}
		if done {
			r.finishRound(now, false)
			return
		}
		if r.allVoted() {
			r.finishRound(now, true)
			r.handshake(now)
		}
	case protocol.PhaseResults:
		if r.allVoted() {
			r.handshake(now)
		}
	}
}

// allVoted reports whether every connected player voted to restart.
func (r *Room) allVoted() bool {
	if r.draining || len(r.byPeer) == 0 {
		return false
	}
	for _, s := range r.byPeer {
		if !s.voted {
			return false
		}
	}
	return true
}

// finishRound ends the round: results are built, handed to the Results
// hook, and announced. aborted marks a round ended by a restart vote.
func (r *Room) finishRound(now time.Duration, aborted bool) {
	res := &protocol.Results{Code: r.code, Round: r.round, Aborted: aborted,
		StartUS: protocol.US(r.goAt), EndUS: protocol.US(now), RoundUS: protocol.US(r.limit)}
	ents := slices.Clone(r.entrants)
	slices.SortStableFunc(ents, func(a, b *entrant) int {
		switch {
		case a.finished && !b.finished:
			return -1
		case !a.finished && b.finished:
			return 1
		case a.finished && a.finishAt != b.finishAt:
			return cmp.Compare(a.finishAt, b.finishAt)
		}
		return cmp.Compare(a.slot, b.slot)
	})
	place := 0
	for _, e := range ents {
		pr := protocol.PlayerResult{Slot: e.slot, User: e.user, Name: e.name, Status: protocol.StatusDNF, Score: e.score}
		if e.finished {
			place++
			pr.Status, pr.Place, pr.TimeUS = protocol.StatusFinished, place, protocol.US(e.finishAt-r.goAt)
		}
		res.Players = append(res.Players, pr)
	}
	if r.hooks.Results != nil {
		r.hooks.Results(res)
	}
	r.deadline = now + r.cfg.ResultsFor
	r.setPhase(now, protocol.PhaseResults)
	for _, s := range r.seats {
		if s == nil || s.ent == nil {
			continue
		}
		status := protocol.StatusDNF
		if s.ent.finished {
			status = protocol.StatusFinished
		}
		r.emit(now, s, funnel.StepRoundFinished, status)
	}
	for _, s := range r.seats {
		if s != nil {
			s.voted = false
		}
	}
	r.broadcast(res)
}

// lobby returns the room to the lobby: ready flags and round records clear.
func (r *Room) lobby(now time.Duration) {
	r.setPhase(now, protocol.PhaseLobby)
	r.entrants = r.entrants[:0]
	for _, s := range r.seats {
		if s == nil {
			continue
		}
		s.ready, s.voted, s.ent = false, false, nil
		s.funnel &= funnelOnce
		if s.peer != nil {
			r.emit(now, s, funnel.StepBackInRoom, "")
		}
	}
}
