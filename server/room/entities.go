package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mathbits "math/bits"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Defaults of EntityLimits.
const (
	DefaultMaxEntities   = 32
	DefaultSpawnRate     = 10.0
	DefaultSpawnBurst    = 20.0
	DefaultClaimRate     = 10.0
	DefaultClaimBurst    = 20.0
	DefaultClaimRadius   = 4.0   // m
	DefaultClaimRadius2D = 128.0 // px
	DefaultSpawnRadius   = 20.0  // m
	DefaultSpawnRadius2D = 640.0 // px
	DefaultClaimHold     = 200 * time.Millisecond
	// DefaultClaimAfterTeleport is longer than TeleportEvery, so a chain
	// of teleports keeps the claim measured from before the first of them
	// until the player has stood still for a while.
	DefaultClaimAfterTeleport = 3 * time.Second
	// DefaultClaimAfterSpawn is as long: a body that just appeared has no
	// "before" to measure from.
	DefaultClaimAfterSpawn = 3 * time.Second
	// DefaultStateShare is how many entities' worth of states a player's
	// extra entities and shared objects may send together.
	DefaultStateShare = 8.0
)

// EntityLimits bound a player's extra entities (wire.State.Entity
// 1..wire.MaxPlayerEntity, protocol.Spawn) and tune who may take over a
// shared object (wire.FirstShared..255, protocol.Claim). The zero value
// of every field means its default.
type EntityLimits struct {
	// MaxPerPlayer is how many extra entities one player may have live at
	// once (spawned, or known from their states), at most
	// wire.MaxPlayerEntity. Default 32. A Spawn past it is refused with
	// CodeTooMany, and so is a state of a new entity (a rejected state).
	MaxPerPlayer int
	// SpawnRate is how many Spawn messages one player may send per second,
	// and SpawnBurst how many at once. Defaults 10 and 20. One over it is
	// refused with CodeRateLimited and counts toward AbuseLimit.
	SpawnRate, SpawnBurst float64
	// ClaimRate is how many Claim messages one player may send per second,
	// and ClaimBurst how many at once. Defaults 10 and 20.
	ClaimRate, ClaimBurst float64
	// ClaimRadius is how near (in metres, 3D) a player's own entity must be
	// to a shared object's last position to take it from another
	// connected owner; the claimant must also be nearer than the owner.
	// Default 4. The host takes any object at any distance.
	ClaimRadius float64
	// ClaimRadius2D is ClaimRadius for 2D rooms, in pixels. Default 128.
	ClaimRadius2D float64
	// ClaimHold is the least time between two handovers of one object by
	// the radius rule, so two players at the same distance do not trade it
	// every frame. Default 200 ms.
	ClaimHold time.Duration
	// ClaimAfterTeleport is how long after a player's accepted teleport
	// (a state flagged wire.FlagTeleport that jumped) a claim is also
	// measured from where the player was before the jump: the farther of
	// the two counts. A teleport may land anywhere (a respawn), so without
	// it a player 1 km away could jump onto the ball and take it. Default
	// 3 s.
	ClaimAfterTeleport time.Duration
	// StateShare bounds the states of all of one player's extra entities
	// and shared objects together, beside each one's own rate limit: at
	// most StateShare x SendRate x RateFactor per second, burst StateShare
	// x RateBurst. Default 8. Without it a player's MaxPerPlayer entities
	// would each have a player's budget, and the relay would fan out 32
	// times what one player may send today.
	StateShare float64
	// SharedResets says who may reset a shared object: move it any
	// distance with a state flagged wire.FlagTeleport while owning it (the
	// ball back to the centre after a goal), drawn by everyone as one
	// jump. Resets spend the object's teleport budget
	// (motion.Limits.TeleportEvery and TeleportsPerMinute). Default
	// ResetsByHost: the host (which may claim any object, at any
	// distance); a player cannot carry the ball into the goal by a jump.
	SharedResets SharedResets
	// ClaimAfterSpawn is how long after a player's own entity appeared
	// (its first accepted state in the room) the player's claims on
	// objects another connected player owns are refused: a fresh identity
	// could otherwise appear on the ball and take it from its owner.
	// Default 3 s.
	ClaimAfterSpawn time.Duration
	// SpawnClearance is how far (metres, 3D) a player's own entity must
	// get from a shared object another connected player owns before it
	// may claim it, when it first appeared nearer (its first state in the
	// room): a body that appears beside the ball is drawn and relayed like
	// any other, but takes the ball by the radius rule only after it has
	// been this far from it once, as if it had appeared there and walked
	// in. Default 0: none. Off by default because honest games place
	// players beside the ball (a paddle; the arena's player, who appears
	// at home where the ball came to rest, and plays it without leaving):
	// they could never claim it. Games whose players appear anywhere set it,
	// or better SpawnArea; ClaimAfterSpawn holds every new body's claims a
	// while either way. The host is exempt (it takes any object anyway).
	SpawnClearance float64
	// SpawnClearance2D is SpawnClearance for 2D rooms, in pixels. Default
	// 0: none.
	SpawnClearance2D float64
	// SpawnArea, when set, is where a player's own entity may appear: its
	// first state in the room must lie inside (3D). SpawnArea2D is the
	// same for 2D rooms, in pixels. Default: none.
	SpawnArea, SpawnArea2D Area
	// SpawnRadius is how far (metres, 3D) from its player's own entity an
	// entity's first state may lie: a new extra entity, or a shared object
	// whose first state the server relays (one placed in the level, just
	// claimed). Later states are checked against the entity's own track.
	// Default 20; SpawnRadius2D, in pixels, 640. Without it a player could
	// place a new entity anywhere in the world bounds.
	SpawnRadius, SpawnRadius2D float64
}

// SharedResets is who may reset a shared object (EntityLimits.SharedResets).
type SharedResets uint8

// Who may reset a shared object.
const (
	// ResetsByHost: the host, while it owns the object. The default.
	ResetsByHost SharedResets = iota
	// ResetsByOwner: whoever owns the object.
	ResetsByOwner
	// ResetsOff: nobody; a shared object never jumps.
	ResetsOff
)

func (l EntityLimits) withDefaults() EntityLimits {
	setDefault(&l.MaxPerPlayer, DefaultMaxEntities)
	setDefault(&l.SpawnRate, DefaultSpawnRate)
	setDefault(&l.SpawnBurst, DefaultSpawnBurst)
	setDefault(&l.ClaimRate, DefaultClaimRate)
	setDefault(&l.ClaimBurst, DefaultClaimBurst)
	setDefault(&l.ClaimRadius, DefaultClaimRadius)
	setDefault(&l.ClaimRadius2D, DefaultClaimRadius2D)
	setDefault(&l.SpawnRadius, DefaultSpawnRadius)
	setDefault(&l.SpawnRadius2D, DefaultSpawnRadius2D)
	setDefault(&l.ClaimHold, DefaultClaimHold)
	setDefault(&l.ClaimAfterTeleport, DefaultClaimAfterTeleport)
	setDefault(&l.ClaimAfterSpawn, DefaultClaimAfterSpawn)
	setDefault(&l.StateShare, DefaultStateShare)
	return l
}

func (l EntityLimits) validate() error {
	switch {
	case l.MaxPerPlayer < 1 || l.MaxPerPlayer > wire.MaxPlayerEntity:
		return fmt.Errorf("MaxPerPlayer %d outside 1..%d", l.MaxPerPlayer, wire.MaxPlayerEntity)
	case l.SpawnRate <= 0 || l.SpawnBurst < 1 || l.ClaimRate <= 0 || l.ClaimBurst < 1:
		return fmt.Errorf("SpawnRate %v, SpawnBurst %v, ClaimRate %v, ClaimBurst %v: need positive rates and bursts of at least 1",
			l.SpawnRate, l.SpawnBurst, l.ClaimRate, l.ClaimBurst)
	case l.StateShare < 1:
		return fmt.Errorf("StateShare %v below 1 would refuse a single entity's rate", l.StateShare)
	case l.SharedResets > ResetsOff:
		return fmt.Errorf("SharedResets %d unknown", l.SharedResets)
	case l.ClaimRadius < 0 || l.ClaimRadius2D < 0 || l.ClaimHold < 0 || l.ClaimAfterTeleport < 0 || l.ClaimAfterSpawn < 0:
		return fmt.Errorf("negative ClaimRadius %v, ClaimRadius2D %v, ClaimHold %v, ClaimAfterTeleport %v or ClaimAfterSpawn %v",
			l.ClaimRadius, l.ClaimRadius2D, l.ClaimHold, l.ClaimAfterTeleport, l.ClaimAfterSpawn)
	case math.IsNaN(l.SpawnClearance) || math.IsNaN(l.SpawnClearance2D):
		return fmt.Errorf("SpawnClearance %v or SpawnClearance2D %v is not a number", l.SpawnClearance, l.SpawnClearance2D)
	}
	if err := l.SpawnArea.validate(); err != nil {
		return fmt.Errorf("SpawnArea: %w", err)
	}
	if err := l.SpawnArea2D.validate(); err != nil {
		return fmt.Errorf("SpawnArea2D: %w", err)
	}
	return nil
}

// Area is an axis-aligned box, Min to Max on each axis; the zero value is
// no area.
type Area struct {
	Min, Max geom.Vec3
}

// IsZero reports whether a is no area.
func (a Area) IsZero() bool { return a == Area{} }

// Contains reports whether p lies in a (edges included).
func (a Area) Contains(p geom.Vec3) bool {
	return p.X >= a.Min.X && p.X <= a.Max.X && p.Y >= a.Min.Y && p.Y <= a.Max.Y && p.Z >= a.Min.Z && p.Z <= a.Max.Z
}

func (a Area) validate() error {
	if !(a.Min.X <= a.Max.X && a.Min.Y <= a.Max.Y && a.Min.Z <= a.Max.Z) {
		return fmt.Errorf("min %v not below max %v on every axis", a.Min, a.Max)
	}
	return nil
}

// spawnRefused returns why s's own entity may not appear at st (its first
// state in the room), or nil: outside the spawn area.
func (r *Room) spawnRefused(s *seat, st *wire.State) error {
	area := r.cfg.Entities.SpawnArea
	if st.Dim2D {
		area = r.cfg.Entities.SpawnArea2D
	}
	if !area.IsZero() && !area.Contains(st.Pos) {
		return errOutsideSpawnArea
	}
	return nil
}

// spawnClearance returns the spawn clearance for states of st's dimension
// (0: none).
func (r *Room) spawnClearance(st *wire.State) float64 {
	if st.Dim2D {
		return max(r.cfg.Entities.SpawnClearance2D, 0)
	}
	return max(r.cfg.Entities.SpawnClearance, 0)
}

// noteBeside records, at s's first accepted state st, the shared objects
// another connected player owns within the spawn clearance: s may not
// claim them until it has been that far from each (clearBeside).
func (r *Room) noteBeside(s *seat, st *wire.State) {
	s.beside = [2]uint64{}
	clear := r.spawnClearance(st)
	if clear <= 0 || s.slot == r.host {
		return
	}
	for _, o := range r.objs {
		if o == nil || !o.placed || o.owner == s.slot {
			continue
		}
		if own := r.seatAt(o.owner); own == nil || own.peer == nil {
			continue // free for anyone: nothing to take
		}
		if d := st.Pos.Sub(o.pos); d.Dot(d) < clear*clear {
			i := o.id - wire.FirstShared
			s.beside[i/64] |= 1 << (i % 64)
		}
	}
}

// clearBeside forgets, after s's accepted state st, each object s
// appeared beside that st lies the spawn clearance or more from.
func (r *Room) clearBeside(s *seat, st *wire.State) {
	clear := r.spawnClearance(st)
	for w := range s.beside {
		for bits := s.beside[w]; bits != 0; bits &= bits - 1 {
			i := w*64 + mathbits.TrailingZeros64(bits)
			if o := r.objs[i]; o == nil || !o.placed || far(st.Pos.Sub(o.pos), clear) {
				s.beside[w] &^= 1 << (i % 64) // gone, or left behind
			}
		}
	}
}

// far reports whether d is clear or longer.
func far(d geom.Vec3, clear float64) bool { return d.Dot(d) >= clear*clear }

// besideOf reports whether s appeared beside o and has not been the
// spawn clearance from it since.
func (s *seat) besideOf(o *object) bool {
	i := o.id - wire.FirstShared
	return s.beside[i/64]&(1<<(i%64)) != 0
}

var (
	errOutsideSpawnArea = errors.New("a player's first state must lie in the room's spawn area")
)

// EntityMetrics is an optional part of Metrics: a Metrics that has it also
// counts shared-object states dropped because their sender does not own the
// object. Those are normal around a handover (states in flight), so they
// are not rejections and weigh nothing in the abuse score.
type EntityMetrics interface {
	// StatesNotOwner counts shared-object states from a player that does
	// not own the object, and states of an entity its player despawned
	// less than a second ago (in flight when the Despawn overtook them).
	StatesNotOwner(n int)
}

// JoinBurst returns the most reliable messages Join sends a player at
// once under c: Joined, every other player's synced properties and
// spawns, a Spawn and an Owner per shared object, and a room state. A
// connection's reliable queue must hold that many.
func (c *Config) JoinBurst() int {
	d := c.withDefaults()
	return 2 + (d.MaxPlayers-1)*(d.Events.PropKeys+d.Entities.MaxPerPlayer) + 2*(256-wire.FirstShared)
}

// entSeat is one player's extra entities and entity budgets.
type entSeat struct {
	tracks [wire.MaxPlayerEntity + 1]*entity // by id; 0 unused (the seat's own fields)
	live   int                               // non-nil tracks
	spawns bucket
	claims bucket
	states bucket // every extra entity's and shared object's states (StateShare)
	set    bool   // the buckets were filled
	// gone is when each id was last despawned (0: never): a state of it
	// arriving within despawnQuiet is one that was in flight (states and
	// control messages travel in separate queues), dropped without a word
	// rather than taken for a new entity.
	gone [wire.MaxPlayerEntity + 1]time.Duration
}

// despawnQuiet is how long after a Despawn the entity's late states are
// dropped quietly.
const despawnQuiet = time.Second

func (es *entSeat) fill(now time.Duration, c *Config) {
	if !es.set {
		l := &c.Entities
		es.spawns, es.claims, es.set = ratelimit.Full(now, l.SpawnBurst), ratelimit.Full(now, l.ClaimBurst), true
		es.states = ratelimit.Full(now, l.StateShare*c.RateBurst)
	}
}

// takeState takes one state from the budget of track b and from the
// player's shared budget of extra states; false means over the rate.
func (r *Room) takeState(now time.Duration, s *seat, b *bucket) bool {
	c := &r.cfg
	s.ents.fill(now, c)
	share := c.Entities.StateShare
	return b.Take(now, c.SendRate*c.RateFactor, c.RateBurst) &&
		s.ents.states.Take(now, share*c.SendRate*c.RateFactor, share*c.RateBurst)
}

// entity is one extra entity of a player: the relay's view of it, like the
// seat's for entity 0, but dropped with the seat.
type entity struct {
	states bucket
	has    bool     // seq is set (on this connection)
	seq    wire.Seq // of the last accepted state
	mo     track
	spawn  *protocol.Spawn // as relayed; nil when it never sent one
	n      int
	buf    [wire.MaxStateSize]byte // last accepted state as relayed
}

func newEntity(now time.Duration, c *Config) *entity {
	return &entity{states: ratelimit.Full(now, c.RateBurst)}
}

// object is a shared object: owned by one player at a time, its states
// checked on one track across owners and numbered by the room.
type object struct {
	id       uint8
	owner    int // slot, or protocol.NoOwner
	epoch    uint32
	handover time.Duration // when owner last changed
	by       *seat         // who spawned it (with spawn); nil for one placed in the level
	spawn    *protocol.Spawn

	placed bool      // pos is set: from the last state, else the spawn
	pos    geom.Vec3 // where a claim is measured from
	known  bool      // a state was relayed: stamp and vel are set too
	stamp  wire.Stamp
	vel    geom.Vec3

	states   bucket
	mo       track
	has      bool     // seq is set: the current owner's last accepted state
	seq      wire.Seq // as that owner numbered it
	relaySeq wire.Seq // the room's numbering, one sequence across owners
	n        int
	buf      [wire.MaxStateSize]byte // last state as relayed
}

// checkExtra runs a state of an extra entity or a shared object through
// the checks entity 0's states get, on the entity's own rate bucket,
// sequence (has, last) and track: it decodes frame into st and reports
// whether the state passes. None passes before the player's own entity
// has an accepted position, and a first state must lie near it (nearBody).
func (r *Room) checkExtra(now, at time.Duration, s *seat, frame []byte, states *bucket, has bool, last wire.Seq,
	mo *track, st *wire.State, jumps bool) bool {
	if !r.takeState(at, s, states) {
		r.reject(now, s, RejectRate, nil)
		return false
	}
	if !r.cfg.NoMotionChecks && !s.mo.OK {
		// Nothing to measure the spawn radius from: it would let an entity
		// appear anywhere. Counted, but without an Error or abuse score,
		// since a client's first frame may send them before its own.
		r.m.Rejected(RejectTeleport)
		return false
	}
	if err := wire.DecodeState(frame, st); err != nil {
		r.reject(now, s, RejectMalformed, err)
		return false
	}
	if has && !st.Seq.Newer(last) {
		r.reject(now, s, RejectStale, nil)
		return false
	}
	if !mo.OK && !r.nearBody(s, st) {
		r.reject(now, s, RejectTeleport, errFarFromBody)
		return false
	}
	return r.admit(now, at, s, st, mo, jumps)
}

// nearBody reports whether an entity's first state st lies within
// SpawnRadius of its player's own entity (checkExtra has made sure that
// entity has a position).
func (r *Room) nearBody(s *seat, st *wire.State) bool {
	if r.cfg.NoMotionChecks {
		return true
	}
	radius := r.cfg.Entities.SpawnRadius
	if st.Dim2D {
		radius = r.cfg.Entities.SpawnRadius2D
	}
	d := st.Pos.Sub(s.mo.Pos)
	return d.Dot(d) <= radius*radius
}

// errFarFromBody is the reason a first state too far from its player is
// refused.
var errFarFromBody = errors.New("an entity's first state must lie near its player's own entity")

// entityState is the relay path of a player's extra entity: entity 0's
// checks on the entity's own track, budget and sequence, re-stamped on
// the seat's one sender clock.
func (r *Room) entityState(now, at time.Duration, s *seat, e uint8, frame []byte) {
	es := &s.ents
	t := es.tracks[e]
	fresh := t == nil
	if fresh && es.gone[e] != 0 && now-es.gone[e] < despawnQuiet {
		if r.em != nil {
			r.em.StatesNotOwner(1) // not this sender's (any more): counted with the others
		}
		return
	}
	if fresh {
		if es.live >= r.cfg.Entities.MaxPerPlayer {
			r.reject(now, s, RejectEntities, errTooManyEntities)
			return
		}
		t = newEntity(at, &r.cfg) // kept only once a state is accepted
	}
	var st wire.State
	if !r.checkExtra(now, at, s, frame, &t.states, t.has, t.seq, &t.mo, &st, false) {
		return
	}
	if fresh {
		es.tracks[e] = t
		es.live++
	}
	t.has, t.seq = true, st.Seq
	t.n = copy(t.buf[:], frame)
	out := t.buf[:t.n]
	r.restamp(now, s, &st, out)
	r.fanOut(now, s, out, fanSkipDirect, nil, 0)
}

// mayReset reports whether s, the owner of a shared object, may reset it
// (a flagged jump) under EntityLimits.SharedResets.
func (r *Room) mayReset(s *seat) bool {
	switch r.cfg.Entities.SharedResets {
	case ResetsByOwner:
		return true
	case ResetsByHost:
		return s.slot == r.host
	}
	return false
}

// sharedResetRule says why a shared object's flagged jump was refused:
// the rule, when the sender may not reset, else the teleport budget.
func (r *Room) sharedResetRule(allowed bool) error {
	switch {
	case allowed:
		return fmt.Errorf("resets of one object at most once per %v and %.0f a minute", r.limits.TeleportEvery,
			r.limits.TeleportsPerMinute)
	case r.cfg.Entities.SharedResets == ResetsByHost:
		return errResetHostOnly
	}
	return errResetOff
}

var (
	errResetHostOnly = errors.New("only the host resets shared objects in this room (claim it first)")
	errResetOff      = errors.New("shared objects are never reset in this room")
)

// objectState is the relay path of a shared object: only its owner's
// states pass (others are dropped quietly: they were in flight during a
// handover), checked on the object's track, renumbered by the room and
// sent to every other player, direct links or not (clients send shared
// states through the server only).
func (r *Room) objectState(now, at time.Duration, s *seat, e uint8, frame []byte) {
	o := r.objs[e-wire.FirstShared]
	if o == nil || o.owner != s.slot {
		if r.em != nil {
			r.em.StatesNotOwner(1)
		}
		return
	}
	var st wire.State
	if !r.checkExtra(now, at, s, frame, &o.states, o.has, o.seq, &o.mo, &st, r.mayReset(s)) {
		return
	}
	o.has, o.seq = true, st.Seq
	o.n = copy(o.buf[:], frame)
	out := o.buf[:o.n]
	r.restamp(now, s, &st, out)
	o.relaySeq++
	_ = wire.PatchSeq(out, o.relaySeq) // cannot fail: out decoded above
	o.placed, o.pos, o.known, o.stamp, o.vel = true, st.Pos, true, st.Stamp, st.Vel
	r.fanOut(now, s, out, fanAll, nil, 0)
}

// spawn checks a player's Spawn, keeps it for late joiners and relays it
// with the sender's slot.
func (r *Room) spawn(now time.Duration, s *seat, m *protocol.Spawn) *protocol.Error {
	if err := protocol.CheckSpawn(m); err != nil {
		return protocol.Errorf(protocol.CodeBadRequest, "spawn refused: %v", err)
	}
	l := &r.cfg.Entities
	e := uint8(m.Entity)
	shared := wire.Shared(e)
	var t *entity
	switch {
	case shared && s.slot != r.host:
		return protocol.Errorf(protocol.CodeNotHost, "spawn refused: only the host spawns shared objects (%d..255)", wire.FirstShared)
	case shared && r.objs[e-wire.FirstShared] != nil:
		return protocol.Errorf(protocol.CodeBadRequest, "spawn refused: shared object %d exists; despawn it first", e)
	case !shared:
		if t = s.ents.tracks[e]; t != nil && t.spawn != nil {
			return protocol.Errorf(protocol.CodeBadRequest, "spawn refused: entity %d is already spawned; despawn it first", e)
		}
		if t == nil && s.ents.live >= l.MaxPerPlayer {
			return protocol.Errorf(protocol.CodeTooMany, "spawn refused: you have %d entities, at most %d", s.ents.live, l.MaxPerPlayer)
		}
	}
	s.ents.fill(now, &r.cfg)
	if !s.ents.spawns.Take(now, l.SpawnRate, l.SpawnBurst) {
		r.rejectControl(now, s, RejectControlRate, protocol.Errorf(protocol.CodeRateLimited,
			"spawn refused: more than %.0f spawns per second (burst %.0f)", l.SpawnRate, l.SpawnBurst))
		return nil
	}
	// A copy: the decoded message's bytes are the sender's to reuse.
	sp := &protocol.Spawn{Slot: s.slot, Entity: m.Entity, Scene: m.Scene, Pos: m.Pos, Rot: m.Rot}
	if len(m.Args) > 0 {
		sp.Args = append(json.RawMessage(nil), m.Args...)
	}
	if shared {
		o := &object{id: e, owner: s.slot, epoch: r.epochs[e-wire.FirstShared] + 1, handover: now, by: s, spawn: sp, placed: true,
			pos:    geom.Vec3{X: m.Pos[0], Y: m.Pos[1], Z: m.Pos[2]},
			states: ratelimit.Full(now, r.cfg.RateBurst)}
		r.objs[e-wire.FirstShared] = o
		r.broadcastExcept(s.peer, sp)
		r.broadcast(o.ownerMsg("")) // everyone's view of owners comes from Owner messages alone
		return nil
	}
	if t == nil {
		t = newEntity(now, &r.cfg)
		s.ents.tracks[e] = t
		s.ents.live++
	}
	t.spawn = sp
	r.broadcastExcept(s.peer, sp)
	return nil
}

// despawn forgets one of the sender's entities, or (from the host) a
// shared object, and relays the Despawn with the sender's slot.
func (r *Room) despawn(now time.Duration, s *seat, m *protocol.Despawn) *protocol.Error {
	if err := protocol.CheckEntity(m.Entity, false); err != nil {
		return protocol.Errorf(protocol.CodeBadRequest, "despawn refused: %v", err)
	}
	e := uint8(m.Entity)
	if wire.Shared(e) {
		if r.objs[e-wire.FirstShared] == nil {
			return protocol.Errorf(protocol.CodeBadRequest, "despawn refused: no shared object %d", e)
		}
		if s.slot != r.host {
			return protocol.Errorf(protocol.CodeNotHost, "despawn refused: only the host despawns shared objects")
		}
		r.forget(e)
	} else {
		if s.ents.tracks[e] == nil {
			return protocol.Errorf(protocol.CodeBadRequest, "despawn refused: you have no entity %d", e)
		}
		s.ents.tracks[e] = nil
		s.ents.live--
		s.ents.gone[e] = max(now, 1)
	}
	r.broadcastExcept(s.peer, &protocol.Despawn{Slot: s.slot, Entity: m.Entity})
	return nil
}

// claim decides a Claim: granted (Owner to everyone) or refused (Owner
// with Reason to the claimant alone).
func (r *Room) claim(now time.Duration, s *seat, m *protocol.Claim) *protocol.Error {
	if err := protocol.CheckEntity(m.Entity, true); err != nil {
		return protocol.Errorf(protocol.CodeBadRequest, "claim refused: %v", err)
	}
	l := &r.cfg.Entities
	s.ents.fill(now, &r.cfg)
	if !s.ents.claims.Take(now, l.ClaimRate, l.ClaimBurst) {
		r.rejectControl(now, s, RejectControlRate, protocol.Errorf(protocol.CodeRateLimited,
			"claim refused: more than %.0f claims per second (burst %.0f)", l.ClaimRate, l.ClaimBurst))
		return nil
	}
	i := m.Entity - wire.FirstShared
	o := r.objs[i]
	if o == nil { // placed in the level: the first claim takes it
		o = &object{id: uint8(m.Entity), owner: protocol.NoOwner, epoch: r.epochs[i], handover: now,
			states: ratelimit.Full(now, r.cfg.RateBurst)}
		r.objs[i] = o
	}
	if o.owner == s.slot {
		r.send(s.peer, o.ownerMsg("")) // no change: no new epoch
		return nil
	}
	if why := r.claimRefused(now, s, o); why != "" {
		r.send(s.peer, o.ownerMsg(why))
		return nil
	}
	r.handOver(now, o, s.slot)
	return nil
}

// claimRefused returns why s may not take o ("" when it may). Free
// objects, those of a disconnected or departed owner, and any claim by
// the host are granted; otherwise the claimant's own entity must be within
// the claim radius of the object, nearer than the owner's, and the last
// handover ClaimHold ago. Within ClaimAfterTeleport of the claimant's
// teleport, its distance is also measured from before the jump; within
// ClaimAfterSpawn of its appearance, it may not claim at all, and an
// object it appeared beside not before it has been SpawnClearance away.
func (r *Room) claimRefused(now time.Duration, s *seat, o *object) string {
	cur := r.seatAt(o.owner)
	if cur == nil || cur.peer == nil || s.slot == r.host {
		return ""
	}
	l := &r.cfg.Entities
	radius := l.ClaimRadius
	if r.dim2D {
		radius = l.ClaimRadius2D
	}
	switch {
	case !s.mo.OK:
		return "the server has no position of yours yet"
	case now-s.mo.Since < l.ClaimAfterSpawn:
		return fmt.Sprintf("you appeared %v ago; claims wait %v", (now - s.mo.Since).Round(time.Millisecond), l.ClaimAfterSpawn)
	case !o.placed:
		return "the server has no position of the object yet"
	case s.besideOf(o):
		clear := l.SpawnClearance
		if r.dim2D {
			clear = l.SpawnClearance2D
		}
		return fmt.Sprintf("you appeared beside it; claims wait until you have been %.1f from it (the spawn clearance)", clear)
	}
	d := s.mo.Pos.Sub(o.pos).Len()
	if s.mo.Teleported && now-s.mo.TeleportAt < l.ClaimAfterTeleport {
		if before := s.mo.From.Sub(o.pos).Len(); before > d {
			d = before
			if d > radius {
				return fmt.Sprintf("you teleported %v ago from %.1f away, beyond the claim radius %.1f",
					now-s.mo.TeleportAt, d, radius)
			}
		}
	}
	if d > radius {
		return fmt.Sprintf("the object is %.1f away, beyond the claim radius %.1f", d, radius)
	}
	if cur.mo.OK && cur.mo.Pos.Sub(o.pos).Len() <= d {
		return fmt.Sprintf("its owner (slot %d) is at least as near", cur.slot)
	}
	if since := now - o.handover; since < l.ClaimHold {
		return fmt.Sprintf("it changed hands %v ago; it stays %v", since, l.ClaimHold)
	}
	return ""
}

// forget drops shared object e, keeping its epoch: one that takes its id
// later counts on from there, so epochs of an id never repeat.
func (r *Room) forget(e uint8) {
	i := e - wire.FirstShared
	r.epochs[i] = r.objs[i].epoch
	r.objs[i] = nil
}

// handOver gives o to slot (protocol.NoOwner for nobody) and tells
// everyone. The new owner's states are checked on the object's track,
// but its seq and clock are its own.
func (r *Room) handOver(now time.Duration, o *object, slot int) {
	o.owner = slot
	o.epoch++
	o.handover = now
	o.has = false
	o.mo.Stamped = false // first state: gap = time since the last one plus the allowance
	r.broadcast(o.ownerMsg(""))
}

// releaseObjects passes every shared object s owns to the host, if
// connected and not s, else to nobody. Called when s disconnects or its
// seat is freed (after the host election).
func (r *Room) releaseObjects(now time.Duration, s *seat) {
	to := protocol.NoOwner
	if h := r.seatAt(r.host); h != nil && h != s && h.peer != nil {
		to = h.slot
	}
	for _, o := range r.objs {
		if o != nil && o.owner == s.slot {
			r.handOver(now, o, to)
		}
	}
}

// dropEntities announces a Despawn for every entity a freed seat spawned
// (the shared objects it spawned as the host stay: they belong to the
// room, and pass to the next host with the others).
func (r *Room) dropEntities(s *seat) {
	for e, t := range s.ents.tracks {
		if t != nil && t.spawn != nil {
			r.broadcast(&protocol.Despawn{Slot: s.slot, Entity: e})
		}
	}
	s.ents = entSeat{}
	for _, o := range r.objs {
		if o != nil && o.by == s {
			o.by = nil // its spawn now goes to everyone who joins
		}
	}
}

// resetEntities forgets what the relay knew of a seat's connection for its
// extra entities and the shared objects it owns: a new connection may
// bring new sequence numbers and a new clock.
func (r *Room) resetEntities(s *seat) {
	for _, t := range s.ents.tracks {
		if t != nil {
			t.has, t.n, t.mo.Stamped = false, 0, false
		}
	}
	for _, o := range r.objs {
		if o != nil && o.owner == s.slot {
			o.has, o.mo.Stamped = false, false
		}
	}
}

// sendEntities sends a player who just joined (or came back) the others'
// Spawns, the shared objects' Spawns and owners (one Owner per object the
// room knows, NoOwner included, since a spawned one would otherwise read
// as the host's), then the last state of every extra entity and shared
// object.
func (r *Room) sendEntities(s *seat) {
	p := s.peer
	if p == nil {
		return
	}
	for _, o := range r.seats {
		if o == nil || o == s {
			continue
		}
		for _, t := range o.ents.tracks {
			if t != nil && t.spawn != nil {
				r.send(p, t.spawn)
			}
		}
	}
	for _, o := range r.objs {
		if o != nil && o.spawn != nil && o.by != s {
			r.send(p, o.spawn)
		}
	}
	for _, o := range r.objs {
		if o != nil {
			r.send(p, o.ownerMsg(""))
		}
	}
	for _, o := range r.seats {
		if o == nil || o == s {
			continue
		}
		for _, t := range o.ents.tracks {
			if t != nil && t.n > 0 {
				p.Send(t.buf[:t.n], false)
			}
		}
	}
	for _, o := range r.objs {
		if o != nil && o.n > 0 {
			p.Send(o.buf[:o.n], false)
		}
	}
}

// ownerMsg is o's Owner message, with reason for a refused claim.
func (o *object) ownerMsg(reason string) *protocol.Owner {
	m := &protocol.Owner{Entity: int(o.id), Slot: o.owner, Epoch: o.epoch, Known: o.known, Reason: reason}
	if o.known {
		m.Stamp = uint32(o.stamp)
		m.Pos = [3]float64{o.pos.X, o.pos.Y, o.pos.Z}
		m.Vel = [3]float64{o.vel.X, o.vel.Y, o.vel.Z}
	}
	return m
}

// Owner returns the owner of shared object e (protocol.NoOwner for none)
// and its epoch; ok is false for an object the room does not know.
func (r *Room) Owner(e uint8) (slot int, epoch uint32, ok bool) {
	if !wire.Shared(e) || r.objs[e-wire.FirstShared] == nil {
		return protocol.NoOwner, 0, false
	}
	o := r.objs[e-wire.FirstShared]
	return o.owner, o.epoch, true
}

var errTooManyEntities = errors.New("a state of a new entity past the room's entity limit")
