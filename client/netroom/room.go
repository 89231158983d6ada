package netroom

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/inputdelay"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// MaxSlots is the number of slots a Room tracks: a slot is one byte on the
// wire.
const MaxSlots = 256

var (
	// ErrClosed indicates a call on a closed Room.
	ErrClosed = errors.New("netroom: closed")
	// ErrNotConnected indicates a request that needs the connection while
	// it is down (reconnecting).
	ErrNotConnected = errors.New("netroom: not connected")
	// ErrNotInRoom indicates a request that needs a seat.
	ErrNotInRoom = errors.New("netroom: not in a room")
	// ErrInRoom indicates create or join while seated; leave first.
	ErrInRoom = errors.New("netroom: already in a room")
	// ErrBusy indicates a request while create, join or leave is in flight.
	ErrBusy = errors.New("netroom: another request is in flight")
	// ErrSlot indicates a slot outside 0..MaxSlots-1.
	ErrSlot = errors.New("netroom: slot out of range")
	// ErrTaken indicates a second NetPredictor for one player: this build
	// draws and sends one entity per player, so the second one is refused
	// (rather than silently replacing the first).
	ErrTaken = errors.New("netroom: the player already has an entity (one NetPredictor per player)")
)

// Status is the state of a Room's connection.
type Status uint8

// Statuses.
const (
	StatusDisconnected Status = iota
	StatusConnecting
	StatusConnected
	StatusReconnecting
)

// String returns "disconnected", "connecting", "connected" or "reconnecting".
func (s Status) String() string {
	switch s {
	case StatusDisconnected:
		return "disconnected"
	case StatusConnecting:
		return "connecting"
	case StatusConnected:
		return "connected"
	case StatusReconnecting:
		return "reconnecting"
	}
	return "invalid"
}

type opKind uint8

const (
	opDial opKind = iota + 1
	opCreate
	opJoin
	opLeave
	opGoodbye // closing a link (no result unless it panics)
)

// opResult is what a goroutine hands back to Update.
type opResult struct {
	kind opKind
	gen  uint64
	link ServerLink
	err  error
	// panicked: the goroutine panicked (err wraps ErrPanic).
	panicked bool
}

// request is a create or join waiting for the connection.
type request struct {
	kind opKind // opCreate or opJoin; 0 for none
	code string
	size int // opCreate: the room's size, 0 for the server's maximum
}

// Stats are counters for debug figures and tests.
type Stats struct {
	// Routed is the number of received states handed to a Receiver (a drawn entity).
	Routed uint64
	// Unrouted is the number of received states for a slot with no Receiver
	// bound (not spawned yet, or no NetPredictor in its scene).
	Unrouted uint64
	// Refused is the number of routed states the Receiver
	// refused (duplicates, stale, non-finite).
	Refused uint64
	// DirectDown is the number of direct links reported down for silence.
	DirectDown uint64
	// DirectLossy is the number of direct links reported down for losing
	// more than twice Config.DirectMaxLoss of their states.
	DirectLossy uint64
	// DirectRouted is the number of the routed states that came over a
	// direct link (the rest came by the server).
	DirectRouted uint64
	// DirectRejected is the number of states received over a direct link
	// and dropped: they failed the motion checks, or their sender was
	// dropped from direct play for that.
	DirectRejected uint64
	// DirectDistrusted is the number of peers dropped from direct play
	// because their direct states kept failing the motion checks.
	DirectDistrusted uint64
}

// Room is the game-side room: one player's connection to the room server
// and seat in a room, as the NetRoom node sees it. It drives the
// connection (a ServerLink: client/serverlink's Conn) and the direct links;
// the server's own room is server/room's Room. Make it with New; drive it
// from one goroutine (the engine's main thread): call Update once per
// frame and Route before drawing. Its methods never block.
type Room struct {
	cfg   Config // main thread; Server, Name and Lag change with the setters
	clock realtime.Clock

	// Main thread only.
	props   map[Key]map[string]any // synced properties by entity (props.go)
	status  Status
	link    ServerLink
	gen     uint64 // connection attempt; results of older ones are stale
	want    request
	busy    bool // create, join or leave in flight
	synced  bool
	code    string
	invite  string
	slot    int
	inRoom  bool
	room    protocol.RoomState
	players []protocol.PlayerState // room.Players, owned
	spawned [MaxSlots]bool
	remotes map[Key]Receiver // by (slot, entity), entity 0 included; see route
	local   any              // who holds the player's own entity, see ClaimLocal
	ents    entities         // other entities (entities.go)
	direct  directWatch
	dcheck  directChecks // motion checks on direct states (directcheck.go)
	mesh    direct.Links // nil while no direct links (see syncDirect)
	// seatICE are the STUN and TURN servers the seat came with (joined's);
	// nil from a server that hands them out in its welcome.
	seatICE []protocol.ICEServer
	// Buffers of the direct links, reused.
	peerSlots []int
	signals   []protocol.Signal
	dstates   []direct.State // Route's buffer
	frame     []byte
	dlead     core.Lead // the send lead of the direct links (serverlink.DefaultSendLead)
	pending   []Event   // queued events, delivered by the next Update
	out       []Event   // Update's result, reused
	cevs      []serverlink.Event
	states    []serverlink.RemoteState
	stats     Stats
	undrawn   map[int]undrawnSpan // by slot: a remote player's own states with nothing bound (Undrawn)
	isClosed  bool
	// The input delay (inputdelay.go): the setting a Create asks for, and
	// the delay in force at the last Update.
	wantDelay protocol.InputDelay
	delayNow  time.Duration
	// shown is the View the getters return while showing (SetView): the
	// event a signal handler runs for.
	shown   View
	showing bool
	// reserved marks slots a node placed in the level stands for
	// (ReserveSlot): they get no EventSpawn.
	reserved [MaxSlots]any

	// Goroutines hand results over through mu.
	mu      sync.Mutex
	results []opResult
	spare   []opResult
	group   realtime.Group  // goroutines in flight (see spawn)
	life    context.Context // cancelled by Close
	endLife context.CancelFunc
}

// New returns a disconnected Room. Nothing runs until Connect, Create or Join.
func New(cfg Config) (*Room, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("netroom.New: %w", err)
	}
	cfg = cfg.withDefaults()
	r := &Room{cfg: cfg, clock: cfg.Clock, slot: -1, dlead: core.Lead{Max: cfg.SendLead}} // withDefaults started a wall clock if none
	r.room.Host = -1
	r.life, r.endLife = context.WithCancel(context.Background())
	return r, nil
}

// Clock returns the local clock every time of the Room is on.
func (r *Room) Clock() realtime.Clock { return r.clock }

// Now reads the local clock.
func (r *Room) Now() time.Duration { return r.clock.Now() }

// SetServer sets the server address for the next connect.
func (r *Room) SetServer(addr string) { r.cfg.Server = addr }

// Server returns the server address as set.
func (r *Room) Server() string { return r.cfg.Server }

// lagSetter is the part of a ServerLink that changes the lag simulator live
// (*serverlink.Conn has it; a test's fake may not).
type lagSetter interface {
	SetLag(serverlink.LagConfig) error
}

// SetLag sets the lag simulator under the server link, and under the
// direct links unless SetDirectLagApart(true): at once on the open
// connection and links, and for the next connect. An invalid setting is
// reported as EventError and returned.
func (r *Room) SetLag(l serverlink.LagConfig) error {
	if err := l.Validate(); err != nil {
		return r.fail(fmt.Errorf("set lag: %w", err))
	}
	r.cfg.Lag = l
	if ls, ok := r.link.(lagSetter); ok {
		if err := ls.SetLag(l); err != nil {
			return r.fail(fmt.Errorf("set lag: %w", err))
		}
	}
	if !r.cfg.DirectLagApart {
		return r.applyDirectLag()
	}
	return nil
}

// SetToken sets the identity token for the next connect.
func (r *Room) SetToken(token string) { r.cfg.Token = token }

// Token returns the identity token: the server's once connected (keep it
// to stay the same player next time), else the one set.
func (r *Room) Token() string {
	if r.link != nil {
		return r.link.Token()
	}
	return r.cfg.Token
}

// SetName changes the display name: it is sent at once when connected and
// used for every later connect.
func (r *Room) SetName(name string) error {
	r.cfg.Name = name
	if r.link == nil || r.status != StatusConnected {
		return nil
	}
	return r.send(&protocol.SetName{Name: name})
}

// Name returns the display name as set.
func (r *Room) Name() string { return r.cfg.Name }

// Status returns the connection's state (the View's while one is shown:
// SetView).
func (r *Room) Status() Status {
	if r.showing {
		return r.shown.Status
	}
	return r.status
}

// Synced reports whether the clock is synchronised to the server.
func (r *Room) Synced() bool { return r.synced }

// InRoom reports whether we have a seat (the View's while one is shown).
func (r *Room) InRoom() bool {
	if r.showing {
		return r.shown.InRoom
	}
	return r.inRoom
}

// Code returns the room's code, "" when in none (the View's while one is
// shown).
func (r *Room) Code() string {
	if r.showing {
		return r.shown.Code
	}
	return r.code
}

// Invite returns the room's invite link, "" when in none.
func (r *Room) Invite() string { return r.invite }

// Slot returns our slot, -1 when in no room (the View's while one is
// shown).
func (r *Room) Slot() int {
	if r.showing {
		return r.shown.Slot
	}
	return r.slot
}

// Host returns the host's slot, -1 when in no room or hostless (the
// View's while one is shown).
func (r *Room) Host() int {
	if r.showing {
		return r.shown.Host
	}
	return r.room.Host
}

// Phase returns the room's phase, "" when in no room (the View's while
// one is shown).
func (r *Room) Phase() protocol.Phase {
	if r.showing {
		return r.shown.Phase
	}
	return r.room.Phase
}

// State returns the room's latest state; its Players slice is Players().
func (r *Room) State() protocol.RoomState { return r.room }

// Players returns the seats in the room, in the server's order. The slice
// is the Room's: read it before the next Update.
func (r *Room) Players() []protocol.PlayerState { return r.players }

// Player returns the seat of slot; false when nobody holds it.
func (r *Room) Player(slot int) (protocol.PlayerState, bool) {
	for _, p := range r.players {
		if p.Slot == slot {
			return p, true
		}
	}
	return protocol.PlayerState{}, false
}

// Spawned reports whether slot currently has a spawned scene (between its
// EventSpawn and EventDespawn).
func (r *Room) Spawned(slot int) bool { return slot >= 0 && slot < MaxSlots && r.spawned[slot] }

// Stats returns the counters.
func (r *Room) Stats() Stats { return r.stats }

// Link returns the server link, nil while disconnected (the debugger reads
// its byte counts through it).
func (r *Room) Link() ServerLink { return r.link }

// RTT returns the best recent round trip to the server, 0 when disconnected.
func (r *Room) RTT() time.Duration {
	if r.link == nil {
		return 0
	}
	return r.link.RTT()
}

// ServerTime maps a local time onto the server's clock; ok is false until
// the clock is synchronised (the value is then the local time).
func (r *Room) ServerTime(local time.Duration) (time.Duration, bool) {
	if r.link == nil || !r.synced {
		return local, false
	}
	return r.link.ServerTime(local), true
}

// LocalTime maps a server time onto the local clock; ok is false until the
// clock is synchronised.
func (r *Room) LocalTime(server time.Duration) (time.Duration, bool) {
	if r.link == nil || !r.synced {
		return server, false
	}
	return r.link.LocalTime(server), true
}

// Connect starts connecting, unless connected or connecting already. The
// outcome comes as EventConnected, or EventError then EventDisconnected.
func (r *Room) Connect() error {
	switch {
	case r.isClosed:
		return r.fail(ErrClosed)
	case r.status != StatusDisconnected:
		return nil
	}
	url, err := ServerURL(r.cfg.Server)
	if err != nil {
		err = fmt.Errorf("connect: %w: %w", errBadAddress, err)
		r.connFailed(err)
		return err
	}
	r.gen++
	gen := r.gen
	r.status = StatusConnecting
	opts := r.cfg.Options // the setters keep Token, Name and Lag current
	opts.Clock = r.clock
	dial := r.cfg.Dial
	r.goDo(opDial, gen, func(ctx context.Context) opResult {
		link, err := dial(ctx, url, &opts)
		return opResult{kind: opDial, gen: gen, link: link, err: err}
	})
	return nil
}

// Create opens a new room with the server's default settings and takes
// its first seat (as host); it connects first when needed. The outcome comes
// as EventJoined, or EventError.
func (r *Room) Create() error { return r.request(request{kind: opCreate}) }

// CreateSized is Create for a room of at most maxPlayers seats (0: the
// server's maximum, 16 by default): a player joining a full room gets
// room_full. A size the server cannot hold is refused with bad_request.
func (r *Room) CreateSized(maxPlayers int) error {
	if maxPlayers < 0 || maxPlayers > MaxSlots {
		return r.fail(fmt.Errorf("create room: max_players %d: 0 (the server's maximum) to %d", maxPlayers, MaxSlots))
	}
	return r.request(request{kind: opCreate, size: maxPlayers})
}

// Join takes a seat in the room with codeOrLink (a code, any case, or an
// invite link); it connects first when needed. The outcome comes as
// EventJoined, or EventError.
func (r *Room) Join(codeOrLink string) error {
	if _, err := protocol.ParseRoomCode(codeOrLink); err != nil {
		return r.fail(fmt.Errorf("join: %w", err))
	}
	return r.request(request{kind: opJoin, code: codeOrLink})
}

func (r *Room) request(q request) error {
	switch {
	case r.isClosed:
		return r.fail(ErrClosed)
	case r.inRoom:
		return r.fail(fmt.Errorf("%s: %w", q.kind, ErrInRoom))
	case r.busy || r.want.kind != 0:
		return r.fail(fmt.Errorf("%s: %w", q.kind, ErrBusy))
	}
	switch r.status {
	case StatusDisconnected:
		if err := r.Connect(); err != nil {
			return err
		}
		r.want = q
		return nil
	case StatusConnecting:
		r.want = q
		return nil
	case StatusReconnecting:
		return r.fail(fmt.Errorf("%s: %w", q.kind, ErrNotConnected))
	}
	r.start(q)
	return nil
}

// start runs a create, join or leave on the link.
func (r *Room) start(q request) {
	link, gen := r.link, r.gen
	if q.kind == opLeave && !r.inRoom {
		_ = r.fail(fmt.Errorf("leave: %w", ErrNotInRoom)) // a queued leave outlived the seat
		return
	}
	r.busy = true
	settings := r.createSettings(q.size)
	r.goDo(q.kind, gen, func(ctx context.Context) opResult {
		var err error
		switch q.kind {
		case opCreate:
			_, err = link.Create(ctx, settings)
		case opJoin:
			_, err = link.Join(ctx, q.code)
		case opLeave:
			err = link.Leave(ctx)
		}
		return opResult{kind: q.kind, gen: gen, err: err}
	})
}

// Leave gives up the seat. The outcome comes as EventLeft, or EventError.
// While a create or join is still in flight, the leave waits for it; one
// still waiting for the connection is dropped. Outside a room (and while
// disconnected) there is nothing to leave: Leave does nothing, like a
// second leave while one is in flight.
func (r *Room) Leave() error {
	switch {
	case r.isClosed:
		return r.fail(ErrClosed)
	case r.busy && r.want.kind == 0 && r.link != nil:
		r.want = request{kind: opLeave}
		return nil
	case r.want.kind == opCreate || r.want.kind == opJoin:
		r.want = request{} // never sent: nothing to undo
		return nil
	case !r.inRoom || r.link == nil || r.busy:
		return nil
	}
	r.start(request{kind: opLeave})
	return nil
}

// SetReady sets or clears our ready flag in the lobby.
func (r *Room) SetReady(ready bool) error { return r.sendInRoom(&protocol.Ready{Ready: ready}) }

// ReportLoaded reports level loading progress in the lobby, 0 to 1 (1 is
// loaded; Start needs every player loaded and ready).
func (r *Room) ReportLoaded(progress float64) error {
	return r.sendInRoom(&protocol.Loading{Progress: min(max(progress, 0), 1)})
}

// ReportInPosition reports, in the start handshake, that our entity is at
// its start position.
func (r *Room) ReportInPosition() error { return r.sendInRoom(&protocol.InPosition{}) }

// Start is the host's start button.
func (r *Room) Start() error { return r.sendInRoom(&protocol.Start{}) }

// Kick is the host's kick button: the server removes the player in slot
// from the room (lobby or results only) and refuses their rejoin for a
// while. Refusals come back as error events (not_host, wrong_phase).
func (r *Room) Kick(slot int) error {
	if slot < 0 {
		return fmt.Errorf("kick: slot %d: slots start at 0", slot)
	}
	return r.sendInRoom(&protocol.Kick{Slot: slot})
}

// Vote casts (true) or withdraws a restart vote.
func (r *Room) Vote(restart bool) error { return r.sendInRoom(&protocol.Vote{Restart: restart}) }

// Finish reports that we finished the round, with a game score.
func (r *Room) Finish(score float64) error { return r.sendInRoom(&protocol.Finish{Score: score}) }

func (r *Room) sendInRoom(m protocol.Message) error {
	if !r.inRoom || r.link == nil {
		return r.fail(fmt.Errorf("%s: %w", protocol.TypeName(m.Type()), ErrNotInRoom))
	}
	return r.send(m)
}

func (r *Room) send(m protocol.Message) error {
	if r.status != StatusConnected {
		return r.fail(fmt.Errorf("%s: %w", protocol.TypeName(m.Type()), ErrNotConnected))
	}
	if err := r.link.Send(m); err != nil {
		return r.fail(fmt.Errorf("%s: %w", protocol.TypeName(m.Type()), err))
	}
	return nil
}

// SendState queues our entity's state for the server. It never blocks and
// queues no event: states are droppable, so one sent while not in a room
// (ErrNotInRoom) or while reconnecting is simply dropped.
func (r *Room) SendState(s *wire.State) error {
	if !r.inRoom || r.link == nil {
		return ErrNotInRoom
	}
	if !wire.Shared(s.Entity) {
		r.sendDirect(s) // before the server: the link skips its queue
	} // a shared object goes by the server alone, which knows its owner
	if err := r.link.SendState(s); err != nil {
		return fmt.Errorf("netroom: send state: %w", err)
	}
	return nil
}

// Bind makes rem the Receiver of slot's states (its entity 0:
// BindEntity(KeyOf(slot, 0), rem)). Another Receiver bound there already
// is an error (ErrTaken, also queued as EventError): Unbind it first.
func (r *Room) Bind(slot int, rem Receiver) error { return r.BindEntity(KeyOf(slot, 0), rem) }

// ClaimLocal makes holder the local player's entity, the one whose states
// are sent (ClaimLocalEntity with id 0). Another holder of the claim is an
// error (ErrTaken, also queued as EventError).
func (r *Room) ClaimLocal(holder any) error {
	if r.local != nil && r.local != holder {
		return r.fail(fmt.Errorf("local player: %w", ErrTaken))
	}
	r.local = holder
	return nil
}

// ReleaseLocal gives up holder's claim, if it holds it.
func (r *Room) ReleaseLocal(holder any) {
	if r.local == holder {
		r.local = nil
	}
}

// Unbind removes rem from slot, if it is the one bound there.
func (r *Room) Unbind(slot int, rem Receiver) { r.UnbindEntity(KeyOf(slot, 0), rem) }

// Bound returns the Receiver bound to slot, or nil.
func (r *Room) Bound(slot int) Receiver { return r.BoundEntity(KeyOf(slot, 0)) }

// ProcessPriority is the NetRoom node's process priority: lower than any
// node's default (0), so its _process, which routes the frame's states
// (Route), runs before every NetPredictor draws, wherever the NetRoom
// sits in the tree. A scene may change it; a NetPredictor processed
// before the NetRoom draws a frame late.
const ProcessPriority = -1000

// Route hands every state received since the last call, by the server
// or a direct link, to the Receiver bound to its key (route), and returns
// how many it routed. Call it once per frame before the entities draw:
// the NetRoom node does, from its _process, which runs before every
// NetPredictor's (ProcessPriority). It does not allocate once its buffers
// have grown to a frame's worth of states.
func (r *Room) Route() int {
	n := 0
	if r.link != nil {
		r.states = r.link.PollStates(r.states[:0])
		for i := range r.states {
			rs := &r.states[i]
			if r.route(predict.PathServer, &rs.State, rs.Local, rs.Arrival) {
				n++
			}
		}
	}
	if r.mesh != nil {
		r.dstates = r.mesh.Poll(r.dstates[:0])
		for i := range r.dstates {
			ds := &r.dstates[i]
			if r.AddDirect(&ds.State, ds.Local, ds.Arrival) {
				n++
			}
		}
	}
	return n
}

// AddDirect hands a state that came over a direct link from its sender
// (stamp already mapped onto the local clock at local) to the bound Receiver,
// and keeps the link's liveness and health: the link is reported up to the
// server once it delivers (core.DirectWatch.State: HealthStates states,
// at most DirectMaxLoss of them lost), down when it loses more than twice
// that, and down after DirectSilence without a state. Route calls
// it for the states of the Room's own direct links (Config.NewDirect); a
// custom transport may call it too. What passes the direct path's own
// checks takes the one routing path (route).
func (r *Room) AddDirect(s *wire.State, local, arrival time.Duration) bool {
	slot := int(s.Slot)
	if slot == r.slot || !r.inRoom || slot < 0 || slot >= MaxSlots {
		return false
	}
	if wire.Shared(s.Entity) {
		return false // shared objects come by the server alone
	}
	// Direct states skip the server's motion checks: the same checks run
	// here (directcheck.go).
	if r.dcheck.distrust[slot] {
		r.stats.DirectRejected++
		return false
	}
	r.dcheck.load(r.link)
	if ok, drop := r.dcheck.check(s, arrival); !ok {
		r.stats.DirectRejected++
		if drop {
			r.distrustDirect(slot)
		}
		return false
	}
	switch up, down := r.direct.State(slot, int(s.Entity), s.Seq, arrival, r.cfg.DirectMaxLoss); {
	case up && r.link != nil:
		_ = r.link.Send(&protocol.DirectLink{Slot: slot, Up: true})
	case down:
		r.stats.DirectLossy++
		if r.link != nil {
			_ = r.link.Send(&protocol.DirectLink{Slot: slot, Up: false})
		}
	}
	return r.route(predict.PathDirect, s, local, arrival)
}

// route is the one routing path of a received state, whichever way it
// came: the Receiver bound to its key (KeyOf(slot, entity), entity 0, a
// player's own, included) takes it, and the outcome is counted once
// (Routed, and DirectRouted for the direct path; Unrouted: nothing bound,
// or our own echoed; Refused: the Receiver refused it).
func (r *Room) route(path predict.Path, s *wire.State, local, arrival time.Duration) bool {
	rem := r.remotes[KeyOf(int(s.Slot), int(s.Entity))]
	if rem == nil || int(s.Slot) == r.slot { // ours, echoed: drawn from our side
		r.stats.Unrouted++
		if rem == nil && s.Entity == 0 && int(s.Slot) != r.slot {
			r.noteUndrawn(int(s.Slot), arrival)
		}
		return false
	}
	if len(r.undrawn) > 0 {
		delete(r.undrawn, int(s.Slot)) // drawn now
	}
	// With an input delay the state belongs that far ahead on the shared
	// timeline (a stamp moved ahead by its sender would be taken for a
	// clock offset by the re-stamping).
	if !rem.Add(path, s, inputdelay.Place(local, r.delayNow), arrival) {
		r.stats.Refused++
		return false
	}
	r.stats.Routed++
	if path == predict.PathDirect {
		r.stats.DirectRouted++
	}
	return true
}

// UndrawnAfter is how long a remote player's own states must keep arriving
// with nothing bound to draw them before Undrawn reports it: a lobby may
// run a while before the game sets player_scene.
const UndrawnAfter = 5 * time.Second

// undrawnSpan is when a remote player's unbound states began arriving and
// when the last one did.
type undrawnSpan struct{ first, last time.Duration }

func (r *Room) noteUndrawn(slot int, arrival time.Duration) {
	if r.undrawn == nil {
		r.undrawn = map[int]undrawnSpan{}
	}
	sp, ok := r.undrawn[slot]
	if !ok || arrival-sp.last > time.Second { // a pause starts a new span
		sp.first = arrival
	}
	sp.last = arrival
	r.undrawn[slot] = sp
}

// Undrawn returns a remote player whose own states have kept arriving for
// UndrawnAfter with nothing bound to draw them (no player scene spawned
// for it, no NetPredictor bound to its slot), the last within a second of
// now; false when there is none. The node warns of it once.
func (r *Room) Undrawn(now time.Duration) (slot int, ok bool) {
	for slot, sp := range r.undrawn {
		if sp.last-sp.first >= UndrawnAfter && now-sp.last <= time.Second {
			return slot, true
		}
	}
	return 0, false
}

// Update applies what happened since the last call (finished requests,
// server messages, connection changes) and returns the events in order,
// after those queued by method calls since. now is the local time. The
// slice is reused by the next call.
func (r *Room) Update(now time.Duration) []Event {
	r.mu.Lock()
	results := r.results
	r.results = r.spare[:0]
	r.mu.Unlock()
	for i := range results {
		r.applyResult(&results[i])
		results[i] = opResult{}
	}
	r.spare = results[:0]

	if r.link != nil {
		r.cevs = r.link.PollEvents(r.cevs[:0])
		for i := range r.cevs {
			r.applyEvent(&r.cevs[i])
			r.cevs[i] = serverlink.Event{}
		}
	}
	r.tickDirect()
	if r.link != nil && r.direct.Count() > 0 {
		for slot := range MaxSlots {
			if r.direct.Down(slot, now, r.cfg.DirectSilence) {
				r.stats.DirectDown++
				r.dcheck.unstamp(slot)
				_ = r.link.Send(&protocol.DirectLink{Slot: slot, Up: false})
			}
		}
	}
	r.updateInputDelay(now)
	r.out = append(r.out[:0], r.pending...)
	clear(r.pending)
	r.pending = r.pending[:0]
	return r.out
}

// emit queues an event for the next Update's result, with the room as
// it stands now (its View).
func (r *Room) emit(e Event) {
	e.View = r.view()
	r.pending = append(r.pending, e)
}

// fail queues EventError for a local failure and returns err.
func (r *Room) fail(err error) error {
	r.emit(errorEvent(err))
	return err
}

// errorEvent describes err as EventError: the protocol code when there is
// one (update required reworded for players), else CodeLocal.
func errorEvent(err error) Event {
	code := protocol.CodeOf(err)
	if errors.Is(err, wire.ErrUpdateRequired) {
		code = protocol.CodeUpdateRequired
	}
	if code < 0 {
		code = CodeLocal
	}
	text := UserText(err)
	if code == protocol.CodeUpdateRequired {
		text = updateText(err)
	}
	return Event{Kind: EventError, Code: code, Text: text,
		Internal: errors.Is(err, ErrPanic) || errors.Is(err, serverlink.ErrPanic)}
}

func (r *Room) applyResult(res *opResult) {
	if res.panicked {
		r.emit(errorEvent(res.err)) // whatever the attempt: a bug is worth telling
		if res.kind == opGoodbye || res.gen != r.gen {
			return
		}
	}
	if res.gen != r.gen {
		if res.link != nil {
			r.closeLink(res.link, false) // a connect overtaken by Disconnect
		}
		return
	}
	switch res.kind {
	case opDial:
		if res.err != nil {
			r.status = StatusDisconnected
			r.want = request{}
			if !res.panicked {
				r.connFailed(res.err)
				if ConnErrorOf(res.err) == ConnUpdateRequired {
					r.emit(errorEvent(res.err)) // also a room error, as before connection_error
				}
			}
			r.emit(Event{Kind: EventDisconnected, Text: UserText(res.err)})
			return
		}
		r.link, r.status = res.link, StatusConnected
		r.emit(Event{Kind: EventConnected})
		if q := r.want; q.kind != 0 {
			r.want = request{}
			r.start(q)
		}
	case opCreate, opJoin, opLeave:
		r.busy = false
		var pe *protocol.Error
		if res.err != nil && !errors.As(res.err, &pe) && !res.panicked {
			// A refusal (*protocol.Error) arrives as a server message too
			// and is reported from there; this is a local failure.
			r.emit(errorEvent(res.err))
		}
		if q := r.want; q.kind != 0 {
			r.want = request{}
			r.start(q)
		}
	}
}

func (r *Room) applyEvent(ev *serverlink.Event) {
	switch ev.Kind {
	case serverlink.EventMessage:
		r.applyMessage(ev.Msg)
	case serverlink.EventSynced:
		r.synced = true
		r.emit(Event{Kind: EventSynced})
	case serverlink.EventReconnecting:
		r.status = StatusReconnecting
		if errors.Is(ev.Err, serverlink.ErrPanic) {
			r.emit(errorEvent(ev.Err)) // a bug, not the network: say so
		} else {
			r.connFailed(ev.Err)
		}
		r.emit(Event{Kind: EventReconnecting, Text: errText(ev.Err)})
	case serverlink.EventReconnected:
		r.status = StatusConnected
		r.emit(Event{Kind: EventReconnected})
		r.reportDirectUp() // the server forgot our reports with the old connection
	case serverlink.EventRoomLost:
		if ev.Err != nil {
			r.emit(errorEvent(ev.Err))
		}
		r.leaveRoom()
	case serverlink.EventDisconnected:
		if ev.Err != nil && (protocol.CodeOf(ev.Err) == protocol.CodeUpdateRequired ||
			errors.Is(ev.Err, wire.ErrUpdateRequired) || errors.Is(ev.Err, serverlink.ErrPanic)) {
			r.emit(errorEvent(ev.Err))
		}
		if ev.Err != nil && !errors.Is(ev.Err, serverlink.ErrPanic) {
			r.connFailed(gaveUp(ev.Err))
		}
		r.gone(errText(ev.Err), false)
	}
}

func errText(err error) string { return UserText(err) }

// gone ends the connection on our side: seat, link and status. With
// leave, the seat is given up first (in the goodbye goroutine).
func (r *Room) gone(reason string, leave bool) {
	leave = leave && r.inRoom
	r.leaveRoom()
	if r.link != nil {
		r.closeLink(r.link, leave)
		r.link = nil
	}
	r.gen++ // requests in flight on the old link are stale
	r.status, r.synced, r.busy, r.want = StatusDisconnected, false, false, request{}
	r.emit(Event{Kind: EventDisconnected, Text: reason})
}

func (r *Room) applyMessage(m protocol.Message) {
	if r.applyGameMessage(m) || r.applyEntityMessage(m) {
		return
	}
	switch m := m.(type) {
	case *protocol.Joined:
		if r.inRoom && m.Code != r.code {
			r.leaveRoom()
		}
		rejoin := r.inRoom && m.Code == r.code && m.Slot == r.slot
		r.code, r.invite, r.slot, r.inRoom = m.Code, m.Invite, m.Slot, true
		r.setSeatICE(m.ICEServers)
		joinedAt := -1
		if !rejoin {
			r.room = protocol.RoomState{Host: -1}
			r.players = r.players[:0]
			joinedAt = len(r.pending)
			r.emit(Event{Kind: EventJoined, Text: m.Code, Slot: m.Slot})
		}
		r.applyRoom(&m.Room, !rejoin)
		if joinedAt >= 0 {
			// room_joined's handlers see the room the join brought: its
			// host (is_host() of a room we created) and phase, the
			// players arriving after on player_joined.
			v := &r.pending[joinedAt].View
			v.Host, v.Phase = r.room.Host, r.room.Phase
		}
	case *protocol.RoomState:
		if r.inRoom && m.Code == r.code && m.Rev >= r.room.Rev {
			r.applyRoom(m, false)
		}
	case *protocol.Left:
		r.leaveRoom()
	case *protocol.Results:
		r.emit(Event{Kind: EventResults, Results: m})
	case *protocol.Notice:
		r.emit(Event{Kind: EventNotice, Text: m.Kind, Detail: m.Text})
	case *protocol.Error:
		r.emit(errorEvent(m))
	case *protocol.Signal:
		if r.mesh != nil && m.To == r.slot {
			r.mesh.Signal(m)
		}
	}
}

// applyRoom takes the new room state and emits what changed; first is true
// for the state that came with joining.
func (r *Room) applyRoom(st *protocol.RoomState, first bool) {
	old := r.players
	for _, p := range st.Players {
		prev, ok := findPlayer(old, p.Slot)
		switch {
		case !ok:
			r.emit(Event{Kind: EventPlayerJoined, Slot: p.Slot, Text: p.Name})
		case prev != p:
			r.emit(Event{Kind: EventPlayerUpdated, Slot: p.Slot})
		}
	}
	for _, p := range old {
		if _, ok := findPlayer(st.Players, p.Slot); !ok {
			r.emit(Event{Kind: EventPlayerLeft, Slot: p.Slot})
			r.despawnEntitiesOf(p.Slot)
			r.despawn(p.Slot)
		}
	}
	// Each change lands just before the event that announces it (View):
	// player_left of the old host still sees it host, host_changed the new.
	if first || st.Host != r.room.Host {
		r.room.Host = st.Host
		r.emit(Event{Kind: EventHostChanged, Slot: st.Host})
	}
	if first || st.Phase != r.room.Phase {
		r.room.Phase = st.Phase
		next := st.DeadlineUS
		if next == 0 && st.Phase == protocol.PhaseCountdown {
			next = st.GoUS
		}
		r.emit(Event{Kind: EventPhaseChanged, Phase: st.Phase, Next: protocol.DurationUS(next)})
	}
	r.room = *st
	r.players = append(r.players[:0], st.Players...)
	r.room.Players = r.players
	for _, p := range r.players {
		if p.Slot != r.slot && p.Slot >= 0 && p.Slot < MaxSlots && !r.spawned[p.Slot] && r.reserved[p.Slot] == nil {
			r.spawned[p.Slot] = true
			r.emit(Event{Kind: EventSpawn, Slot: p.Slot})
		}
	}
	r.syncDirect()
}

func findPlayer(ps []protocol.PlayerState, slot int) (protocol.PlayerState, bool) {
	for _, p := range ps {
		if p.Slot == slot {
			return p, true
		}
	}
	return protocol.PlayerState{}, false
}

func (r *Room) despawn(slot int) {
	if slot >= 0 && slot < MaxSlots && r.spawned[slot] {
		r.spawned[slot] = false
		r.emit(Event{Kind: EventDespawn, Slot: slot})
	}
}

// leaveRoom forgets the seat: every spawned slot is despawned, then
// EventLeft.
func (r *Room) leaveRoom() {
	if !r.inRoom {
		return
	}
	r.leaveEntities()
	for slot := range r.spawned {
		r.despawn(slot)
	}
	r.inRoom, r.code, r.invite, r.slot = false, "", "", -1
	r.seatICE = nil
	r.room = protocol.RoomState{Host: -1}
	r.players = r.players[:0]
	r.closeDirect()
	r.dcheck = directChecks{}
	r.emit(Event{Kind: EventLeft})
}

// Disconnect closes the connection (the server holds the seat for a
// while: Leave first to give it up). Events: EventDespawn for every
// spawned slot, EventLeft when seated, EventDisconnected with an empty
// reason; they come with the next Update.
func (r *Room) Disconnect() {
	if r.status == StatusDisconnected {
		return
	}
	r.gone("", false)
}

// Quit gives up the seat (if seated) and disconnects, in one goodbye: the
// leave is sent before the connection closes. The events are those of
// Disconnect. The Room can connect again.
func (r *Room) Quit() {
	if r.status == StatusDisconnected {
		return
	}
	r.gone("", true)
}

// Close quits (a Room closed for good has no use for a held seat) and
// stops the Room; later calls fail with ErrClosed. Its goroutines end
// within twice CloseTimeout (see Wait).
func (r *Room) Close() {
	if r.isClosed {
		return
	}
	r.Quit()
	r.isClosed = true
	r.endLife()
}

// Idle reports, without waiting, whether the Room has no goroutine in
// flight (no request or goodbye): a closed, idle Room needs nothing more.
func (r *Room) Idle() bool { return r.group.Running() == 0 }

// ErrPanic marks an EventError made from a panic in one of the Room's
// goroutines (a request, a goodbye): recovered, logged with its stack and
// reported, so that a bug there does not end the game.
var ErrPanic = errors.New("netroom: internal error (recovered panic)")

// spawn runs f in a goroutine counted by Wait and Idle. A panic in f is
// recovered, logged and queued as a failed result of kind (0: none), so
// the next Update reports it (and frees a request in flight).
func (r *Room) spawn(f func(), kind opKind, gen uint64) {
	r.group.Go(func() {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			err := fmt.Errorf("%w in %s: %v", ErrPanic, kind, v)
			r.cfg.Log.Error("netroom: recovered a panic", "err", err, "stack", string(debug.Stack()))
			r.mu.Lock()
			r.results = append(r.results, opResult{kind: kind, gen: gen, err: err, panicked: true})
			r.mu.Unlock()
		}()
		f()
	})
}

// Wait waits up to d for the Room's goroutines (a goodbye in flight) to
// end, and reports whether they did.
func (r *Room) Wait(d time.Duration) bool { return r.group.Wait(d) }

// goDo runs f, the request kind of attempt gen, in a goroutine and
// queues its result for Update.
func (r *Room) goDo(kind opKind, gen uint64, f func(ctx context.Context) opResult) {
	r.spawn(func() {
		res := f(r.life)
		r.mu.Lock()
		r.results = append(r.results, res)
		r.mu.Unlock()
	}, kind, gen)
}

// closeLink says goodbye on link in a goroutine, leaving the room first
// when leave is set.
func (r *Room) closeLink(link ServerLink, leave bool) {
	timeout := r.cfg.CloseTimeout
	r.spawn(func() {
		if leave {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			_ = link.Leave(ctx)
			cancel()
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_ = link.Close(ctx)
	}, opGoodbye, r.gen)
}

func (k opKind) String() string {
	switch k {
	case opDial:
		return "connect"
	case opCreate:
		return "create room"
	case opJoin:
		return "join room"
	case opLeave:
		return "leave room"
	case opGoodbye:
		return "goodbye"
	}
	return "request"
}
