package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/funnel"
	"github.com/nearzero/nearzero/server/metrics"
	"github.com/nearzero/nearzero/server/room"
)

// host runs one room on real time: a mutex around the room and a timer for
// its next step.
type host struct {
	s    *Server
	code string // read-only
	addr string // read-only: the address that created the room
	net  string // read-only: its network (prefixKeyOf)
	// lobby is whether the room is in the lobby (PlayingReserve counts
	// these); set under mu, read under Server.mu, which never holds mu.
	lobby atomic.Bool

	mu     sync.Mutex // guards everything below, and r
	r      *room.Room
	timer  *time.Timer
	next   time.Duration // when timer fires; valid while armed
	armed  bool
	closed bool
	// busyAt is when the room was last seen out of the lobby
	// (LobbyTimeout).
	busyAt time.Duration
}

// newHost creates a room; the caller adds it to the directory.
func (s *Server) newHost(code, addr string) (*host, error) {
	h := &host{s: s, code: code, addr: addr, net: prefixKeyOf(addr), busyAt: s.now()}
	h.lobby.Store(true)
	hooks := &room.Hooks{
		Metrics: s.m,
		Event:   s.emit,
		Results: func(res *protocol.Results) { s.saveResults(res, false) },
		Log:     s.log,
		Behind:  s.behind,
	}
	r, err := room.New(code, &s.cfg.Room, hooks, s.now())
	if err != nil {
		return nil, err
	}
	h.r = r
	return h, nil
}

// do runs f on the room under its lock at the current time, then re-arms
// the timer and retires the room if it closed.
// A panic in f closes this room alone (failLocked).
func (h *host) do(f func(now time.Duration)) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	now := h.s.now()
	closed := h.runLocked(now, f)
	h.mu.Unlock()
	if closed {
		h.s.retire(h)
	}
}

// runLocked runs f and re-arms the timer, with h.mu held, and reports
// whether the room closed; a panic in f closes it (failLocked).
func (h *host) runLocked(now time.Duration, f func(now time.Duration)) (closed bool) {
	defer func() {
		if v := recover(); v != nil {
			h.failLocked(v)
			closed = true
		}
	}()
	f(now)
	return h.afterLocked(now)
}

// afterLocked re-arms the timer for the room's next step and reports
// whether the room closed.
func (h *host) afterLocked(now time.Duration) bool {
	if h.r.Closed() {
		h.closed = true
		h.stopTimerLocked()
		return true
	}
	inLobby := h.r.Phase() == protocol.PhaseLobby
	if !inLobby {
		h.busyAt = now
	}
	h.lobby.Store(inLobby)
	at, ok := h.r.Next()
	if !ok {
		h.stopTimerLocked()
		return false
	}
	if h.armed && h.next == at {
		return false
	}
	h.next, h.armed = at, true
	d := max(0, at-now)
	if h.timer == nil {
		h.timer = time.AfterFunc(d, h.tick)
	} else {
		h.timer.Reset(d)
	}
	return false
}

func (h *host) tick() {
	h.do(func(now time.Duration) {
		h.armed = false
		h.r.Tick(now)
	})
}

func (h *host) stopTimerLocked() {
	if h.timer != nil {
		h.timer.Stop()
	}
	h.armed = false
}

// stop closes the host for good (later calls to do do nothing) and
// returns the record of the round it interrupts, or nil when none ran.
func (h *host) stop(now time.Duration) *protocol.Results {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	h.stopTimerLocked()
	if !h.r.Busy() {
		return nil
	}
	return interrupted(h.r.Snapshot(), now)
}

// interrupted builds the record of a round stopped in state st at now:
// every participant, finished or not (the room's finish times are not in
// its snapshot; finishers keep status finished, without a place).
func interrupted(st protocol.RoomState, now time.Duration) *protocol.Results {
	res := &protocol.Results{Code: st.Code, Round: st.Round, StartUS: st.GoUS, EndUS: protocol.US(now),
		RoundUS: st.DeadlineUS - st.GoUS}
	if st.Phase != protocol.PhasePlaying {
		res.RoundUS = 0 // the limit is only known once the round plays
	}
	for _, p := range st.Players {
		if !p.Participant {
			continue
		}
		status := protocol.StatusDNF
		if p.Finished {
			status = protocol.StatusFinished
		}
		res.Players = append(res.Players, protocol.PlayerResult{Slot: p.Slot, User: p.User, Name: p.Name, Status: status})
	}
	return res
}

// retire removes a closed room from the directory.
func (s *Server) retire(h *host) {
	s.mu.Lock()
	gone := s.rooms[h.code] == h
	if gone {
		delete(s.rooms, h.code)
		s.m.Rooms.Dec()
		if s.roomsBy[h.addr]--; s.roomsBy[h.addr] <= 0 {
			delete(s.roomsBy, h.addr)
		}
		if s.roomsIn[h.net]--; s.roomsIn[h.net] <= 0 {
			delete(s.roomsIn, h.net)
		}
	}
	s.mu.Unlock()
	if gone && s.cluster != nil {
		s.cluster.Release(h.code) // never blocks
	}
	s.log.Debug("room closed", "room", h.code)
}

// createRoom claims a fresh code atomically and opens a room there for a
// client at addr. In a cluster the code is claimed in the directory too,
// so that it is unique across nodes.
func (s *Server) createRoom(addr string) (*host, *protocol.Error) {
	if s.cluster == nil {
		return s.openRoom(addr, "")
	}
	// Refuse before the directory round trip what would be refused after.
	s.mu.Lock()
	e := s.refuseCreateLocked(addr)
	s.mu.Unlock()
	if e != nil {
		return nil, e
	}
	for range 8 { // a taken code is a 1-in-887-million event per open room
		s.mu.Lock()
		code := s.freeCodeLocked()
		s.mu.Unlock()
		taken, err := s.cluster.Claim(context.Background(), code)
		if err != nil {
			s.log.Error("claim room code", "err", err)
			return nil, protocol.Errorf(protocol.CodeInternal, "the room directory is unreachable; try again in a moment")
		}
		if taken {
			continue
		}
		h, e := s.openRoom(addr, code)
		if e != nil {
			s.cluster.Release(code)
		}
		return h, e
	}
	return nil, protocol.Errorf(protocol.CodeInternal, "could not find a free room code")
}

// refuseCreateLocked says why a client at addr may not open a room now,
// or nil (s.mu held).
func (s *Server) refuseCreateLocked(addr string) *protocol.Error {
	switch {
	case s.shut || s.draining:
		return protocol.Errorf(protocol.CodeDraining, "the server is updating; no new rooms")
	case s.cfg.MaxRoomsPerAddr > 0 && s.roomsBy[addr] >= s.cfg.MaxRoomsPerAddr:
		s.m.Limited(metrics.LimitRoomsPerAddr)
		return protocol.Errorf(protocol.CodeRateLimited,
			"your address already has %d open rooms; leave one or wait for it to close", s.cfg.MaxRoomsPerAddr)
	case s.cfg.MaxRoomsPerPrefix > 0 && s.roomsIn[prefixKeyOf(addr)] >= s.cfg.MaxRoomsPerPrefix:
		s.m.Limited(metrics.LimitRoomsPerNet)
		return protocol.Errorf(protocol.CodeRateLimited,
			"your network already has %d open rooms; leave one or wait for it to close", s.cfg.MaxRoomsPerPrefix)
	case len(s.rooms) >= s.cfg.MaxRooms:
		return protocol.Errorf(protocol.CodeServerFull, "the server runs its maximum of %d rooms", s.cfg.MaxRooms)
	case s.overloaded():
		return s.overloadError()
	}
	if s.cfg.PlayingReserve <= 0 && s.cfg.SmallNetReserve <= 0 {
		return nil
	}
	most := s.cfg.MaxRooms
	if s.cfg.PlayingReserve > 0 {
		most -= int(float64(s.cfg.MaxRooms) * s.cfg.PlayingReserve)
	}
	lobbies := 0
	for _, h := range s.rooms {
		if h.lobby.Load() {
			lobbies++
		}
	}
	if s.cfg.PlayingReserve > 0 && lobbies >= most {
		s.m.Limited(metrics.LimitLobbies)
		return protocol.Errorf(protocol.CodeServerFull,
			"the server has %d rooms waiting in their lobbies, its maximum; try again in a minute", most)
	}
	if s.cfg.SmallNetReserve > 0 && s.roomsIn[prefixKeyOf(addr)] >= smallNetRooms &&
		lobbies >= most-int(float64(most)*s.cfg.SmallNetReserve) {
		// The rest is kept for networks that hold few rooms: many
		// addresses over a few dozen networks cannot take every lobby.
		s.m.Limited(metrics.LimitSmallNets)
		return protocol.Errorf(protocol.CodeServerFull,
			"the server has %d rooms waiting in their lobbies; the rest are kept for networks with fewer rooms than yours, "+
				"try again in a minute", lobbies)
	}
	return nil
}

// freeCodeLocked draws a code no local room uses (s.mu held).
func (s *Server) freeCodeLocked() string {
	code := protocol.NewRoomCode(s.rng)
	for s.rooms[code] != nil {
		code = protocol.NewRoomCode(s.rng)
	}
	return code
}

// openRoom opens a room for a client at addr under code, or under a fresh
// local code when code is "".
func (s *Server) openRoom(addr, code string) (*host, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.refuseCreateLocked(addr); e != nil {
		return nil, e
	}
	if code == "" {
		code = s.freeCodeLocked()
	} else if s.rooms[code] != nil {
		return nil, protocol.Errorf(protocol.CodeInternal, "could not open a room")
	}
	h, err := s.newHost(code, addr)
	if err != nil {
		s.log.Error("new room", "err", err)
		return nil, protocol.Errorf(protocol.CodeInternal, "could not open a room")
	}
	s.rooms[code] = h
	s.roomsBy[addr]++
	s.roomsIn[h.net]++
	s.m.Rooms.Inc()
	return h, nil
}

// expireLobbies closes every room that has sat in the lobby for
// LobbyTimeout without starting a round, its players ready or not (Ready
// costs nothing, so it cannot keep a room open); its players are closed
// with CodeTimeout.
func (s *Server) expireLobbies() {
	s.mu.Lock()
	hosts := s.hostsLocked()
	s.mu.Unlock()
	for _, h := range hosts { // outside s.mu: never with a host's lock
		h.do(func(now time.Duration) {
			if h.r.Phase() != protocol.PhaseLobby {
				h.busyAt = now
				return
			}
			if idle := now - h.busyAt; idle >= s.cfg.LobbyTimeout {
				s.m.Limited(metrics.LimitIdleLobby)
				s.log.Info("idle lobby closed", "room", h.code, "idle", idle)
				h.r.Close(protocol.CodeTimeout, fmt.Sprintf("no round started in the lobby for %v: room closed", s.cfg.LobbyTimeout))
			}
		})
	}
}

// lookupRoom returns the room with code, or nil.
func (s *Server) lookupRoom(code string) *host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rooms[code]
}

// connectionFailed records the funnel's connection_failed step.
func (s *Server) connectionFailed(user, roomCode string, code protocol.Code) {
	s.emit(funnel.Event{At: s.now(), Step: funnel.StepConnectionFailed, User: user, Room: roomCode,
		Detail: code.String()})
}
