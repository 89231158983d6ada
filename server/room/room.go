package room

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/funnel"
)

// Hooks are where a room reports what the server keeps or counts. Every
// function is called synchronously with the room's lock held: it must not
// block and must not call back into the Room. Nil fields mean "nowhere".
type Hooks struct {
	// Metrics receives counters.
	Metrics Metrics
	// Event receives one analytics event per player per funnel step. At is
	// set; Time is left for the caller.
	Event func(funnel.Event)
	// Results receives each round's results, before the room announces
	// them; the server saves them (asynchronously).
	Results func(*protocol.Results)
	// Renamed reports an accepted display-name change (the server stores it).
	Renamed func(user, name string)
	// Log receives structured logs.
	Log *slog.Logger
	// Behind reports how far behind its own work the server measures
	// itself now (server: the Go scheduler's delay), 0 when it keeps up.
	// While it is positive, the room credits its players' states with the
	// delay its own reading shows (timeline.go); nil means never: states
	// are judged as they arrive.
	Behind func() time.Duration
}

// Member says who takes a seat.
type Member struct {
	User string       // stable user id; the seat belongs to it
	Name string       // display name, already normalised
	Via  protocol.Via // how they arrived (analytics); default ViaCode
	// Addr is the client's network address as the caller keys it (the
	// server: its IP, /64 for IPv6); a host's kick bans it as well as User,
	// since a fresh identity is free. Empty: none.
	Addr string
	// Net is the client's network as the caller keys it (the server: the
	// /24 of an IPv4 address, the /56 of an IPv6 one); a host's kick bans
	// it for new seats too, or, when it is the host's own network, bans
	// the identities made there after the kick. Empty: none.
	Net string
	// NewAt is when the caller made User, on the room's clock, if it made
	// it for this connection (a hello without a token); 0 for an identity
	// the client brought.
	NewAt time.Duration
	// ICEServers go to the member in its Joined: the STUN and TURN servers
	// for its direct links, TURN ones with its own credentials (the
	// caller makes them; the room does not read them). Nil: none.
	ICEServers []protocol.ICEServer
}

// netBan is a kick's ban of a network (Member.Net) for new seats.
type netBan struct {
	until time.Duration
	// fresh limits the ban to identities made at or after at: the host's
	// own network, where its other players may still join.
	fresh bool
	at    time.Duration
}

// seat is one player's place in the room. Owned by the room.
type seat struct {
	slot      int
	user      string
	name      string
	nameKey   string // protocol.NameKey(name): no two seats share one
	via       protocol.Via
	addr      string        // Member.Addr of the latest join
	net       string        // Member.Net of the latest join
	peer      Peer          // nil while the seat is held
	joinedAt  time.Duration // first arrival: the host is the longest present
	heldUntil time.Duration // while peer is nil

	loaded float64
	ready  bool
	voted  bool
	ent    *entrant // the player's record in the running round, if any
	funnel uint32   // analytics steps already emitted (bit = index in funnel.Steps)

	direct [MaxSlots/64 + 1]uint64 // slots this player reports a direct link with

	rs          *clock.Restamper
	clk         senderClock // the player's timeline the checks judge by (timeline.go)
	rt          roundTrip   // claimed and measured round trips (roundtrip.go)
	states      bucket
	controls    bucket
	signals     [MaxSlots]pairBudget // Signal budget toward each slot
	ev          eventBudget          // event and chat budgets (events.go)
	ents        entSeat              // extra entities and their budgets (entities.go)
	sentRev     uint64               // the room state revision this player last got
	abuse       float64
	abuseAt     time.Duration
	errAt       time.Duration // last Error sent about a rejected state
	has         bool          // last is set (on this connection)
	last        wire.State    // last accepted state, re-stamped and with our slot
	lastArrival time.Duration
	mo          track     // what the motion checks know; outlives the connection
	beside      [2]uint64 // shared objects (bit id-128) it first appeared within the spawn clearance of (entities.go)
	accepted    uint32    // states accepted (samples the offset metric)
	n           int
	buf         [wire.MaxStateSize]byte // last accepted state as relayed

	relayIn [MaxSlots]shareBudget // what each slot may relay to this one (inbox.go)
}

// track is what the motion checks (netcode/motion) know of an entity's
// last accepted state. A player's survives a reconnect, and a leave and
// rejoin within the room's life (Room.gone), so a new connection's first
// state is checked like any other.
type track = motion.Track

// leftSeat is what the room keeps of a player who gave up their seat: the
// motion track, and the measure of their clock its times are on (a
// rejoin with the same clock resumes it: senderClock.resume).
type leftSeat struct {
	mo  track
	clk senderClock
}

// entrant is a participant's record in a round; it outlives a seat that
// is given up mid-round.
type entrant struct {
	slot       int
	user, name string
	inPosition bool
	finished   bool
	gone       bool // left, or the seat hold ran out
	finishAt   time.Duration
	score      float64
}

// Room is one room's state machine on the server. See the package
// documentation. (Each player's game models its seat in it with
// client/netroom's Room, over a client/serverlink connection.)
// A Room is not safe for concurrent use: the server guards each with a
// mutex; the bench drives it from one goroutine.
type Room struct {
	code   string
	invite string
	cfg    Config        // read-only after New
	limits motion.Limits // cfg's motion rules, with defaults; read-only after New
	hooks  Hooks         // read-only after New; Metrics and Log never nil
	m      Metrics
	dm     DirectMetrics       // m's, when it counts direct skips; else nil
	drm    DirectReportMetrics // m's, when it counts direct cheat reports; else nil
	rtm    RoundTripMetrics    // m's, when it counts measured round trips; else nil
	tm     TeleportMetrics     // m's, when it counts teleports; else nil

	seats  []*seat // by slot; nil = free
	byPeer map[Peer]*seat
	byUser map[string]*seat
	count  int
	host   int

	phase    protocol.Phase
	phaseAt  time.Duration
	deadline time.Duration // handshake time-out or results end
	goAt     time.Duration
	endAt    time.Duration
	warned   bool
	round    int
	limit    time.Duration // time limit of the current round
	settings protocol.Settings
	delay    delayState // the input delay in force (inputdelay.go)
	entrants []*entrant

	draining bool
	drainEnd time.Duration
	closed   bool

	// late is set while a state is checked that arrived later than the
	// room's backlog credit while the room is behind (timeline.go).
	late bool

	scratch []*seat            // recipients of one event or chat line (events.go)
	hitPred *predict.Predictor // rebuilds what a shooter drew (hits.go)

	objs   [256 - wire.FirstShared]*object // shared objects by id - FirstShared (entities.go)
	epochs [256 - wire.FirstShared]uint32  // last epoch of each forgotten object
	em     EntityMetrics                   // m's, when it counts those; else nil

	dimSet  bool                     // the host has sent a state: dim2D is the room's
	dim2D   bool                     // the room carries 2D states
	gone    map[string]leftSeat      // by user: players who gave up their seat
	banned  map[string]time.Duration // by user: kicked by the host, until then
	bannedA map[string]time.Duration // by Member.Addr: the same, for new seats
	bannedN map[string]netBan        // by Member.Net: the same, for new seats
	emptyAt time.Duration            // when the last connection went, while seats are only held

	rev     uint64
	dirty   bool          // the room changed since revision rev
	owed    bool          // some player has not got revision rev
	urgent  bool          // send the room state now, not at the end of the window
	snapAt  time.Duration // when the last room state went out
	snapped bool          // one went out
	out     []byte        // scratch for encoding control frames

	rttScratch []time.Duration // adaptiveDelay's
}

// New returns an empty room in the lobby with the given code at time now.
// A nil cfg means defaults; a nil hooks means none.
func New(code string, cfg *Config, hooks *Hooks, now time.Duration) (*Room, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new room %s: %w", code, err)
	}
	c := cfg.withDefaults()
	r := &Room{
		code:     code,
		invite:   protocol.InviteLink(c.InviteBase, code),
		cfg:      c,
		limits:   c.Limits, // defaults applied by withDefaults
		seats:    make([]*seat, c.MaxPlayers),
		byPeer:   make(map[Peer]*seat),
		byUser:   make(map[string]*seat),
		gone:     make(map[string]leftSeat),
		banned:   make(map[string]time.Duration),
		bannedA:  make(map[string]time.Duration),
		bannedN:  make(map[string]netBan),
		host:     -1,
		phase:    protocol.PhaseLobby,
		phaseAt:  now,
		settings: protocol.Settings{RoundUS: protocol.US(c.RoundLimit), MaxPlayers: c.MaxPlayers},
	}
	if hooks != nil {
		r.hooks = *hooks
	}
	if r.hooks.Log == nil {
		r.hooks.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r.hooks.Log = r.hooks.Log.With("room", code)
	r.m = r.hooks.Metrics
	if r.m == nil {
		r.m = nopMetrics{}
	}
	r.dm, _ = r.m.(DirectMetrics)
	r.drm, _ = r.m.(DirectReportMetrics)
	r.rtm, _ = r.m.(RoundTripMetrics)
	r.tm, _ = r.m.(TeleportMetrics)
	r.em, _ = r.m.(EntityMetrics)
	r.m.PhaseChanged("", protocol.PhaseLobby)
	if c.InputDelay.Mode != protocol.InputDelayOff {
		r.setInputDelay(now, c.InputDelay) // the server's: in force from the start
		r.delay.from = r.delay.to
		set := r.delay.set
		r.settings.InputDelay = &set
	}
	return r, nil
}

// Code returns the room code.
func (r *Room) Code() string { return r.code }

// Invite returns the invite link.
func (r *Room) Invite() string { return r.invite }

// Phase returns the current phase.
func (r *Room) Phase() protocol.Phase { return r.phase }

// Round returns how many rounds have started.
func (r *Room) Round() int { return r.round }

// Players returns the number of seats taken, held ones included.
func (r *Room) Players() int { return r.count }

// Connected returns the number of seated players with a connection.
func (r *Room) Connected() int { return len(r.byPeer) }

// Host returns the host's slot, or -1 in an empty room.
func (r *Room) Host() int { return r.host }

// Closed reports whether the room emptied and closed; a closed room refuses
// every join, and the server forgets it.
func (r *Room) Closed() bool { return r.closed }

// Busy reports whether a round is running (handshake, countdown or
// playing): a draining server waits for it.
func (r *Room) Busy() bool {
	switch r.phase {
	case protocol.PhaseHandshake, protocol.PhaseCountdown, protocol.PhasePlaying:
		return true
	}
	return false
}

// SlotOf returns the slot of p's seat, or -1 when p holds none.
func (r *Room) SlotOf(p Peer) int {
	if s := r.byPeer[p]; s != nil {
		return s.slot
	}
	return -1
}

// NameOf returns the display name of p's seat, and false when p holds
// none.
func (r *Room) NameOf(p Peer) (string, bool) {
	if s := r.byPeer[p]; s != nil {
		return s.name, true
	}
	return "", false
}

// setName gives s a display name (already normalised).
func (s *seat) setName(name string) {
	s.name, s.nameKey = name, ""
	if name != "" {
		s.nameKey = protocol.NameKey(name)
	}
}

// nameHolder returns the seat other than except whose name looks like a
// name of key (protocol.NameKey), or nil.
func (r *Room) nameHolder(key string, except *seat) *seat {
	if key == "" {
		return nil
	}
	for _, o := range r.seats {
		if o != nil && o != except && o.nameKey == key {
			return o
		}
	}
	return nil
}

// distinctName returns name for a new seat, numbered (" 2", " 3"...) when
// another player's name looks like it, so that nobody joins under another
// player's name.
func (r *Room) distinctName(name string) string {
	if name == "" || r.nameHolder(protocol.NameKey(name), nil) == nil {
		return name
	}
	base := []rune(name)
	for i := 2; ; i++ {
		suffix := fmt.Sprintf(" %d", i)
		b := base[:min(len(base), protocol.MaxNameLen-len(suffix))]
		cand, err := protocol.NormalizeName(string(b) + suffix)
		if err == nil && r.nameHolder(protocol.NameKey(cand), nil) == nil {
			return cand
		}
		if i > 2*MaxSlots { // cannot happen: fewer seats than numbers tried
			return cand
		}
	}
}

// LastState returns the last state accepted from slot, re-stamped onto the
// server clock (the copy kept for results and checks), and its arrival time.
func (r *Room) LastState(slot int) (wire.State, time.Duration, bool) {
	if slot < 0 || slot >= len(r.seats) || r.seats[slot] == nil || !r.seats[slot].has {
		return wire.State{}, 0, false
	}
	s := r.seats[slot]
	return s.last, s.lastArrival, true
}

// Join seats p as m.User at time now and sends it Joined, then the last
// state of every other player. A user who already holds a seat gets it
// back (a reconnect); if another connection still sits in it, that one is
// closed with CodeSessionReplaced. Errors are *protocol.Error with
// CodeRoomNotFound (closed room), CodeRoomFull, CodeAlreadyInRoom or
// CodeKicked (the host kicked this user, or a player at a new seat's
// address or network, less than KickBan ago).
func (r *Room) Join(now time.Duration, p Peer, m Member) (int, error) {
	if r.closed {
		return -1, protocol.Errorf(protocol.CodeRoomNotFound, "room %s has closed", r.code)
	}
	if s := r.byPeer[p]; s != nil {
		return -1, protocol.Errorf(protocol.CodeAlreadyInRoom, "already in room %s as slot %d", r.code, s.slot)
	}
	if until, ok := r.banned[m.User]; ok {
		if now < until {
			return -1, protocol.Errorf(protocol.CodeKicked, "the host removed you from room %s; you may rejoin in %v",
				r.code, (until - now).Round(time.Second))
		}
		delete(r.banned, m.User)
	}
	if m.Via == "" {
		m.Via = protocol.ViaCode
	}
	reconnected := false
	s := r.byUser[m.User]
	if s != nil {
		if s.peer != nil {
			delete(r.byPeer, s.peer)
			s.peer.Close(protocol.CodeSessionReplaced, "the same user joined from another connection")
		}
		reconnected = true
		s.peer = p
		s.addr, s.net = m.Addr, m.Net
		s.heldUntil = 0
		if m.Name != "" && m.Name != s.name && r.nameHolder(protocol.NameKey(m.Name), s) == nil {
			s.setName(m.Name)
		}
		r.resetRelay(s)
		r.hooks.Log.Debug("reconnected", "slot", s.slot, "user", s.user)
	} else {
		// Only new seats: a player seated before the kick, on the same
		// network as the kicked one, may still reconnect.
		if until, ok := r.bannedA[m.Addr]; ok && m.Addr != "" {
			if now < until {
				return -1, protocol.Errorf(protocol.CodeKicked, "the host removed a player at your address from room %s; you may join in %v",
					r.code, (until - now).Round(time.Second))
			}
			delete(r.bannedA, m.Addr)
		}
		if b, ok := r.bannedN[m.Net]; ok && m.Net != "" {
			switch {
			case now >= b.until:
				delete(r.bannedN, m.Net)
			case !b.fresh:
				return -1, protocol.Errorf(protocol.CodeKicked, "the host removed a player on your network from room %s; you may join in %v",
					r.code, (b.until - now).Round(time.Second))
			case m.NewAt > 0 && m.NewAt >= b.at:
				return -1, protocol.Errorf(protocol.CodeKicked, "the host removed a player on its own network from room %s: "+
					"identities new since then may join in %v; connect with your saved token", r.code, (b.until - now).Round(time.Second))
			}
		}
		slot := -1
		for i, o := range r.seats {
			if o == nil {
				slot = i
				break
			}
		}
		if size := r.settings.MaxPlayers; slot < 0 || r.seated() >= size {
			return -1, protocol.Errorf(protocol.CodeRoomFull, "room %s is full (%d players)", r.code, size)
		}
		rs, err := clock.NewRestamper(&r.cfg.Restamp)
		if err != nil { // cannot happen: New validated the config
			return -1, protocol.Errorf(protocol.CodeInternal, "re-stamper: %v", err)
		}
		// The state bucket is full, timed as far back as a state may be
		// judged (BacklogCredit, timeline.go): one judged before the
		// join's arrival, as a new player's first ones are while the
		// server is behind, refills it like any later one.
		s = &seat{slot: slot, user: m.User, via: m.Via, addr: m.Addr, net: m.Net, peer: p, joinedAt: now, rs: rs,
			states:   ratelimit.Full(now-r.cfg.BacklogCredit, r.cfg.RateBurst),
			controls: ratelimit.Full(now, r.cfg.ControlBurst)}
		s.setName(r.distinctName(m.Name))
		if g, ok := r.gone[m.User]; ok { // back after leaving: checked from where they left
			s.mo, s.clk = g.mo, g.clk
			delete(r.gone, m.User)
		}
		r.seats[slot] = s
		r.byUser[m.User] = s
		for _, o := range r.seats { // budgets toward this slot start afresh for its new occupant
			if o != nil {
				o.signals[slot] = pairBudget{}
			}
		}
		r.count++
		r.hooks.Log.Debug("joined", "slot", slot, "user", s.user, "via", m.Via)
	}
	r.byPeer[p] = s
	if reconnected {
		r.emit(now, s, funnel.StepReconnected, "")
	} else {
		r.emit(now, s, funnel.StepRoomJoined, "")
	}
	r.electHost()
	r.rev++
	r.dirty = false
	snap := r.Snapshot()
	r.send(p, &protocol.Joined{Code: r.code, Invite: r.invite, Slot: s.slot, Reconnected: reconnected, Room: snap,
		ICEServers: m.ICEServers})
	s.sentRev = r.rev
	r.owed = true // the others hear of the join with the next room state
	for _, o := range r.seats {
		if o != nil && o != s && o.has {
			p.Send(o.buf[:o.n], false)
		}
	}
	r.sendProps(s)    // events.go: synced properties for the late joiner
	r.sendEntities(s) // entities.go: spawns, owners, their last states
	r.flush(now)
	return s.slot, nil
}

// Leave gives up p's seat at once (a did-not-finish in a running round)
// and sends p Left. It reports whether p held a seat.
func (r *Room) Leave(now time.Duration, p Peer) bool {
	s := r.byPeer[p]
	if s == nil {
		return false
	}
	r.send(p, &protocol.Left{Reason: "left the room"})
	r.free(now, s, "left")
	r.flush(now)
	return true
}

// Disconnect tells the room p's connection is gone: the seat is held for
// SeatHold so the player can reconnect into the same slot. Unknown peers
// (already replaced or removed) are ignored.
func (r *Room) Disconnect(now time.Duration, p Peer) {
	s := r.byPeer[p]
	if s == nil {
		return
	}
	delete(r.byPeer, p)
	s.peer = nil
	s.heldUntil = now + r.cfg.SeatHold
	r.noteEmpty(now)
	s.direct = [len(s.direct)]uint64{} // the others' reports stand: see clearLinks
	r.dirty = true
	r.releaseObjects(now, s)
	r.hooks.Log.Debug("disconnected", "slot", s.slot, "user", s.user)
	r.progress(now)
	r.flush(now)
}

// Drain marks the room as on a draining server: no new rounds, and every
// player is told the server is updating, with left the grace remaining.
// A running round goes on.
func (r *Room) Drain(now, left time.Duration) {
	if r.draining {
		return
	}
	r.draining = true
	r.drainEnd = now + left
	r.broadcast(&protocol.Notice{Kind: protocol.NoticeServerUpdating,
		Text: "the server is updating: finish the round, then reconnect", LeftUS: protocol.US(left)})
	r.dirty, r.urgent = true, true
	r.flush(now)
}

// Close empties the room at once: every connected player is closed with
// code and reason, and the room is closed. Used when the server stops.
func (r *Room) Close(code protocol.Code, reason string) {
	for p := range r.byPeer {
		p.Close(code, reason)
	}
	r.byPeer = map[Peer]*seat{}
	r.markClosed()
}

func (r *Room) markClosed() {
	if !r.closed {
		r.closed = true
		r.m.PhaseChanged(r.phase, "")
	}
}

// free removes a seat for good.
func (r *Room) free(now time.Duration, s *seat, reason string) {
	r.emit(now, s, funnel.StepLeft, reason)
	if s.ent != nil && r.Busy() {
		s.ent.gone = true
	}
	if s.peer != nil {
		delete(r.byPeer, s.peer)
		s.peer = nil
		r.noteEmpty(now)
	}
	r.clearLinks(s)
	r.keepMotion(s)
	r.seats[s.slot] = nil
	delete(r.byUser, s.user)
	r.count--
	r.dirty = true
	r.hooks.Log.Debug("seat freed", "slot", s.slot, "user", s.user, "reason", reason)
	r.electHost()
	r.dropEntities(s)
	r.releaseObjects(now, s)
	r.progress(now) // even in an emptied room: a round it ran ends with its results
	if r.count == 0 {
		r.markClosed()
	}
}

// noteEmpty starts the EmptyHold clock when the last connection is gone.
func (r *Room) noteEmpty(now time.Duration) {
	if len(r.byPeer) == 0 {
		r.emptyAt = now
	}
}

// abandoned reports whether seats are taken but nobody is connected.
func (r *Room) abandoned() bool { return r.count > 0 && len(r.byPeer) == 0 }

// electHost makes the longest-present player the host.
func (r *Room) electHost() {
	host := -1
	var at time.Duration
	for _, s := range r.seats {
		if s != nil && (host < 0 || s.joinedAt < at) {
			host, at = s.slot, s.joinedAt
		}
	}
	if host != r.host {
		r.host = host
		r.dirty = true
	}
}

// resetRelay forgets what the relay knew of a seat's connection. The
// motion checks keep the last accepted position (a reconnect must not
// clear it), but not its stamp: a new connection may bring a new clock.
// The player's timeline goes on if the new connection keeps the clock
// (senderClock.resume), so that what the seat keeps on it (the tracks'
// times, the rate buckets) compares with the new connection's states.
func (r *Room) resetRelay(s *seat) {
	s.rs.Reset()
	s.clk.reconnect()
	s.rt.reset()
	s.has = false
	s.n = 0
	s.mo.Stamped = false
	s.direct = [len(s.direct)]uint64{} // the others' reports stand: see clearLinks
	r.resetEntities(s)
}

// maxGone bounds Room.gone: past it, the oldest entry is dropped (by then
// the time since its last state allows nearly any move anyway).
const maxGone = 4 * MaxSlots

// keepMotion remembers the motion state of a seat being freed, and the
// measure of the clock it is timed on, so the same user rejoining the room
// is checked from where they left, over the time they took.
func (r *Room) keepMotion(s *seat) {
	if !s.mo.OK {
		return
	}
	if len(r.gone) >= maxGone {
		oldest, at := "", time.Duration(0)
		for u, g := range r.gone {
			if oldest == "" || g.mo.Arrival < at {
				oldest, at = u, g.mo.Arrival
			}
		}
		delete(r.gone, oldest)
	}
	mo, clk := s.mo, s.clk
	mo.Stamped = false
	clk.reconnect()
	r.gone[s.user] = leftSeat{mo: mo, clk: clk}
}

// clearLinks forgets every direct link of s, in both directions, when the
// seat is freed (a new player in the slot inherits none). A reconnect
// clears only s's own reports: a pair is direct only while both report, so
// relaying resumes at once, and the other player's report stands, since its
// link to s may well have survived s's server connection; s reports again
// once reconnected.
func (r *Room) clearLinks(s *seat) {
	s.direct = [len(s.direct)]uint64{}
	for _, o := range r.seats {
		if o != nil {
			o.direct[s.slot/64] &^= 1 << (s.slot % 64)
		}
	}
}

// direct reports whether a and b both report a direct link to each other.
func direct(a, b *seat) bool {
	return a.direct[b.slot/64]&(1<<(b.slot%64)) != 0 && b.direct[a.slot/64]&(1<<(a.slot%64)) != 0
}

// Snapshot returns the room's visible state.
func (r *Room) Snapshot() protocol.RoomState {
	st := protocol.RoomState{
		Code: r.code, Rev: r.rev, Phase: r.phase, PhaseUS: protocol.US(r.phaseAt),
		Round: r.round, Host: r.host, Settings: r.settings, InputDelay: r.delaySnapshot(), Draining: r.draining,
		Players: make([]protocol.PlayerState, 0, r.count),
	}
	switch r.phase {
	case protocol.PhaseHandshake, protocol.PhaseResults:
		st.DeadlineUS = protocol.US(r.deadline)
	case protocol.PhaseCountdown:
		st.DeadlineUS = protocol.US(r.goAt)
		st.GoUS = protocol.US(r.goAt)
	case protocol.PhasePlaying:
		st.DeadlineUS = protocol.US(r.endAt)
		st.GoUS = protocol.US(r.goAt)
	}
	for _, s := range r.seats {
		if s == nil {
			continue
		}
		ps := protocol.PlayerState{Slot: s.slot, User: s.user, Name: s.name, Connected: s.peer != nil,
			Loaded: s.loaded, Ready: s.ready, Voted: s.voted}
		if s.ent != nil {
			ps.Participant, ps.InPosition, ps.Finished = true, s.ent.inPosition, s.ent.finished
		}
		st.Players = append(st.Players, ps)
	}
	return st
}

// flush sends the room state to every player who has not got it, at most
// once per SnapshotEvery unless urgent: a change within the window waits
// for its end (Next schedules it), merged with any others.
func (r *Room) flush(now time.Duration) {
	if r.closed || (!r.dirty && !r.owed) {
		return
	}
	if !r.urgent && r.snapped && now < r.snapAt+r.cfg.SnapshotEvery {
		return
	}
	if r.dirty {
		r.dirty = false
		r.rev++
	}
	r.owed, r.urgent = false, false
	snap := r.Snapshot()
	b, ok := r.encode(&snap)
	if !ok {
		return
	}
	for _, s := range r.seats {
		if s != nil && s.peer != nil && s.sentRev != r.rev {
			s.peer.Send(b, true)
			s.sentRev = r.rev
			r.snapAt, r.snapped = now, true
		}
	}
}

// snapshotDue returns when the pending room state goes out, if one is pending.
func (r *Room) snapshotDue() (time.Duration, bool) {
	if r.closed || (!r.dirty && !r.owed) {
		return 0, false
	}
	return r.snapAt + r.cfg.SnapshotEvery, true
}

// encode encodes m into the scratch buffer.
func (r *Room) encode(m protocol.Message) ([]byte, bool) {
	b, err := protocol.Append(r.out[:0], m)
	if err != nil {
		r.hooks.Log.Error("encode", "type", protocol.TypeName(m.Type()), "err", err)
		return nil, false
	}
	r.out = b
	return b, true
}

func (r *Room) send(p Peer, m protocol.Message) {
	if b, ok := r.encode(m); ok {
		p.Send(b, true)
	}
}

func (r *Room) broadcast(m protocol.Message) { r.broadcastExcept(nil, m) }

func (r *Room) broadcastExcept(skip Peer, m protocol.Message) {
	b, ok := r.encode(m)
	if !ok {
		return
	}
	for _, s := range r.seats {
		if s != nil && s.peer != nil && s.peer != skip {
			s.peer.Send(b, true)
		}
	}
}

func (r *Room) sendError(s *seat, e *protocol.Error) {
	if s.peer != nil {
		r.send(s.peer, e)
	}
}

var stepBit = func() map[funnel.Step]uint32 {
	m := make(map[funnel.Step]uint32, len(funnel.Steps))
	for i, s := range funnel.Steps {
		m[s] = 1 << i
	}
	return m
}()

// funnelOnce are the steps emitted at most once per seat; the other steps
// that carry a bit are emitted once per round cycle.
var funnelOnce = stepBit[funnel.StepRoomJoined] | stepBit[funnel.StepInviteShared] | stepBit[funnel.StepLoaded]

// emit sends one analytics event for s, at most once per step per cycle
// (left, reconnected and round_finished always go out).
func (r *Room) emit(now time.Duration, s *seat, step funnel.Step, detail string) {
	switch step {
	case funnel.StepLeft, funnel.StepReconnected, funnel.StepRoundFinished:
	default:
		bit := stepBit[step]
		if s.funnel&bit != 0 {
			return
		}
		s.funnel |= bit
	}
	if r.hooks.Event == nil {
		return
	}
	r.hooks.Event(funnel.Event{At: now, Step: step, User: s.user, Room: r.code, Via: s.via,
		Players: r.count, Phase: r.phase, Round: r.round, Detail: detail})
}

// pairBudget is one sender's Signal budget toward one recipient.
type pairBudget struct {
	msgs, bytes bucket
	set         bool // the buckets were filled
	cands       int  // "candidate" signals since the last offer or answer
}

// take refills both buckets, then takes one message and n bytes if both
// have them.
func (b *pairBudget) take(now time.Duration, c *Config, n int) bool {
	if !b.set {
		*b = pairBudget{msgs: ratelimit.Full(now, c.SignalBurst), bytes: ratelimit.Full(now, c.SignalBytesBurst), set: true}
	}
	b.msgs.Refill(now, c.SignalRate, c.SignalBurst)
	b.bytes.Refill(now, c.SignalBytes, c.SignalBytesBurst)
	if b.msgs.Tokens < 1 || b.bytes.Tokens < float64(n) {
		return false
	}
	b.msgs.Tokens--
	b.bytes.Tokens -= float64(n)
	return true
}

// bucket is the shared token bucket (netcode/ratelimit).
type bucket = ratelimit.Bucket
