package entity

import (
	"errors"
	"fmt"
	"time"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/inputdelay"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Mode is what a NetPredictor does.
type Mode uint8

// Modes.
const (
	// ModeUnbound: no NetRoom found yet (looked for again every
	// SearchEvery physics frames).
	ModeUnbound Mode = iota
	// ModeLocal: the owning player's entity: sample and send.
	ModeLocal
	// ModeRemote: a remote player's entity, bound by the NetRoom that
	// spawned its scene: draw it.
	ModeRemote
	// ModeFed: no room; states pushed by hand (push_state) feed it: draw it.
	ModeFed
	// ModeShared: a shared object (a ball): sample and send while this
	// player owns it, draw it from received states while another does.
	ModeShared
)

// String returns "unbound", "local", "remote", "fed" or "shared".
func (m Mode) String() string {
	switch m {
	case ModeUnbound:
		return "unbound"
	case ModeLocal:
		return "local"
	case ModeRemote:
		return "remote"
	case ModeFed:
		return "fed"
	case ModeShared:
		return "shared"
	}
	return "invalid"
}

// Dim is the kind of the entity's root node.
type Dim uint8

// Root kinds.
const (
	DimNone Dim = iota // no usable root (not found, or not Node3D/Node2D)
	Dim3D
	Dim2D
)

// ErrLocalPush indicates a state pushed by hand to the local player's
// entity, which is sampled from its root instead.
var ErrLocalPush = errors.New("entity: push_state on the local player's entity is ignored")

// SearchEvery is how many physics frames an unbound NetPredictor waits
// between looks for a NetRoom.
const SearchEvery = 60

// Predictor is the engine-free model of a NetPredictor node: its settings,
// the mode state machine (unbound, local, remote, fed), the Local or
// Remote it drives, the motion profile and the visibility policy. The node
// reads and writes engine objects and emits signals; every decision is
// here. Main thread only, like the Room it is bound to.
type Predictor struct {
	// Settings (the inspector's).
	profile    Profile
	pcfg       predict.Config // TeleportDistance and Width 0: per dimension
	sendRate   float64
	applyVis   bool
	ghostAlpha float64
	anim       uint8
	input      uint8
	extrasSet  bool

	// Binding.
	mode    Mode
	room    *netroom.Room
	slot    int
	dim     Dim
	remote  *Remote
	local   *Local
	own     *inputdelay.Own // our own entity's simulated poses, drawn the room's input delay late
	claimed bool            // local holds the room's claim
	entity  int             // the node's entity_id: 0..wire.MaxPlayerEntity
	shared  bool            // a shared object: wire id FirstShared+entity
	// Shared objects: who owns it as last seen, and our last sample (what
	// our drawing starts from when we lose it).
	owned     bool
	ownerSlot int
	claimAt   time.Duration
	last      predict.Sample
	hasLast   bool
	dirty     bool // settings changed since remote/local were made or set
	search    int  // physics frames until the next room search
	pushSeq   wire.Seq
	states    uint64
	errs      []error // configuration errors to report, drained by Errors
	lastErr   string
}

// NewPredictor returns an unbound Predictor with the defaults the
// inspector shows: the netcode packages' settings under DefaultProfile
// (Auto: the predictor tunes itself per entity and link).
func NewPredictor() *Predictor {
	cfg := DefaultProfile.Apply(predict.DefaultConfig(false))
	cfg.TeleportDistance, cfg.Width = 0, 0 // per dimension, at build
	return &Predictor{profile: DefaultProfile, pcfg: cfg, sendRate: sender.DefaultRate,
		applyVis: true, ghostAlpha: 0.5, slot: -1, ownerSlot: -1}
}

// Mode returns what the entity does now.
func (p *Predictor) Mode() Mode { return p.mode }

// Room returns the Room it is bound to, or nil.
func (p *Predictor) Room() *netroom.Room { return p.room }

// Profile returns the motion profile.
func (p *Predictor) Profile() Profile { return p.profile }

// SetProfile sets the motion profile: a preset sets the prediction cap
// and smoothing time constant, Auto turns the self-tuning on (and any
// other profile turns it off). A running predictor keeps its history.
func (p *Predictor) SetProfile(v Profile) {
	p.profile = v
	p.pcfg = v.Apply(p.pcfg)
	p.dirty = true
}

// Config returns the prediction settings (TeleportDistance and Width 0
// mean the per-dimension defaults).
func (p *Predictor) Config() predict.Config { return p.pcfg }

// SetConfig changes the prediction settings; it applies before the next
// frame and keeps the predictor's history. Changing the cap or the
// smoothing away from the profile's preset makes the profile Custom;
// profileChanged says so (the inspector must re-read it).
func (p *Predictor) SetConfig(cfg predict.Config) (profileChanged bool) {
	p.pcfg = cfg
	p.dirty = true
	if c, t, ok := p.profile.Preset(); ok && (c != cfg.PredictionCap || t != cfg.SmoothingTau) {
		p.profile = ProfileCustom
		return true
	}
	return false
}

// SendRate returns the states sent per second.
func (p *Predictor) SendRate() float64 { return p.sendRate }

// SetSendRate sets the states sent per second (applies before the next
// physics frame).
func (p *Predictor) SetSendRate(hz float64) { p.sendRate, p.dirty = hz, true }

// ApplyVisibility reports whether the root is hidden and faded by the
// predictor.
func (p *Predictor) ApplyVisibility() bool { return p.applyVis }

// SetApplyVisibility turns applying visibility to the root on or off.
func (p *Predictor) SetApplyVisibility(on bool) { p.applyVis = on }

// GhostAlpha returns the alpha a 2D ghost is faded to.
func (p *Predictor) GhostAlpha() float64 { return p.ghostAlpha }

// SetGhostAlpha sets the alpha a 2D ghost is faded to, clamped to [0, 1].
func (p *Predictor) SetGhostAlpha(a float64) { p.ghostAlpha = min(max(a, 0), 1) }

// SetExtras sets the animation state and input bits sent with every state
// (clamped to 0-255).
func (p *Predictor) SetExtras(anim, input int64) {
	p.anim, p.input, p.extrasSet = uint8(min(max(anim, 0), 255)), uint8(min(max(input, 0), 255)), true
	if p.local != nil {
		p.local.SetExtras(p.anim, p.input)
	}
}

// Extras returns the animation state and input bits: a remote entity's as
// last received, else the ones set.
func (p *Predictor) Extras() (anim, input int64) {
	if p.remote != nil {
		pose := p.remote.Pose()
		return int64(pose.Anim), int64(pose.Input)
	}
	return int64(p.anim), int64(p.input)
}

// BindRemote makes the entity remote player slot's in room: called by the
// NetRoom that spawned its scene, before the scene enters the tree. A
// shared object in that scene stays shared (nobody's in particular).
func (p *Predictor) BindRemote(room *netroom.Room, slot int) {
	if p.shared {
		p.mode, p.room = ModeShared, room
		return
	}
	p.mode, p.room, p.slot = ModeRemote, room, slot
}

// BindLocalEntity makes the entity our extra entity id (1..MaxPlayerEntity)
// sending through room: called by the NetRoom that spawned its scene for
// us (spawn_entity), before the scene enters the tree.
func (p *Predictor) BindLocalEntity(room *netroom.Room, id int) error {
	if id < 1 || id > wire.MaxPlayerEntity {
		return fmt.Errorf("entity %d: %w (1..%d)", id, netroom.ErrEntity, wire.MaxPlayerEntity)
	}
	p.entity, p.shared, p.mode, p.room = id, false, ModeLocal, room
	return nil
}

// SetEntity sets the node's entity id (0 is the player's own entity;
// 1..wire.MaxPlayerEntity its others) and whether it is a shared object
// (then id 0..127 names the object, the same on every machine). Set it
// before the node is bound (in the scene, or before add_child).
func (p *Predictor) SetEntity(id int, shared bool) error {
	if id < 0 || id > wire.MaxPlayerEntity {
		return fmt.Errorf("entity_id %d: %w (0..%d)", id, netroom.ErrEntity, wire.MaxPlayerEntity)
	}
	p.entity, p.shared = id, shared
	return nil
}

// Entity returns the node's entity id and whether it is a shared object.
func (p *Predictor) Entity() (id int, shared bool) { return p.entity, p.shared }

// WireEntity returns the entity id its states carry.
func (p *Predictor) WireEntity() int {
	if p.shared {
		return netroom.SharedID(p.entity)
	}
	return p.entity
}

// key is the Room's key of the entity when drawn.
func (p *Predictor) key() netroom.Key { return netroom.KeyOf(p.slot, p.WireEntity()) }

// Owned reports whether this player owns the shared object now.
func (p *Predictor) Owned() bool { return p.mode == ModeShared && p.owned }

// OwnerSlot returns the slot that owns the shared object (-1: nobody, or
// not a shared object).
func (p *Predictor) OwnerSlot() int {
	if p.mode != ModeShared {
		return -1
	}
	return p.ownerSlot
}

// Claim asks the server for the shared object (on contact, say). The
// answer comes with a later SyncOwner.
func (p *Predictor) Claim() error {
	if p.mode != ModeShared || p.room == nil {
		return fmt.Errorf("entity: claim: %w (not a shared object in a room)", netroom.ErrEntity)
	}
	if p.owned {
		return nil
	}
	return p.room.Claim(p.WireEntity())
}

// claimRetry is how long the host waits before claiming an unowned shared
// object again.
const claimRetry = time.Second

// SyncOwner follows the shared object's owner as the Room heard it; call
// it every frame. It reports whether the owner changed: the node then
// tells the game (owner_changed), which hands its physics body over. The
// host claims an object nobody owns, so every object moves under someone.
// Gaining it starts a fresh sender from where the object is drawn; losing
// it starts drawing from our last sample, stamped with the server's
// sequence number of the handover, so the new owner's states join it
// without a jump.
func (p *Predictor) SyncOwner(now time.Duration) bool {
	if p.mode != ModeShared || p.room == nil {
		return false
	}
	id := p.WireEntity()
	slot, _, ok := p.room.Owner(id)
	in := p.room.InRoom() && p.room.Slot() >= 0
	if !ok && in && p.room.Host() == p.room.Slot() && !p.room.Claiming(id) && now >= p.claimAt {
		p.claimAt = now + claimRetry
		_ = p.room.Claim(id) // refused or lost: tried again
	}
	mine := ok && in && slot == p.room.Slot()
	if slot == p.ownerSlot && mine == p.owned {
		return false
	}
	was := p.owned
	p.ownerSlot, p.owned = slot, mine
	if p.dirty || p.remote == nil || p.local == nil {
		p.build()
	}
	switch {
	case mine && !was:
		p.local.Restart() // no teleport flag: receivers join the two owners' states
		if p.own != nil {
			p.own.Reset() // what we simulated when we last owned it is stale
		}
		p.claimed = p.room.ClaimLocalEntity(id, p.local) == nil
	case !mine && was:
		p.room.ReleaseLocalEntity(id, p.local)
		p.claimed = false
		p.remote.Reset()
		if h, ok := p.room.Handover(id); ok && p.hasLast {
			seed := p.last
			seed.Seq = wire.Seq(h.Seq)
			p.remote.AddSample(predict.PathServer, seed, now)
		}
	}
	return true
}

// SetDim sets the root's kind (at ready, and when the root changes); a new
// kind rebuilds the Remote or Local before its next use.
func (p *Predictor) SetDim(d Dim) {
	if d != p.dim {
		p.dim, p.dirty = d, true
	}
}

// Dim returns the root's kind.
func (p *Predictor) Dim() Dim { return p.dim }

// Ready is the node's _ready: room is the NetRoom model found for a local
// entity (nil: none yet), ignored when a NetRoom bound it as remote.
func (p *Predictor) Ready(room *netroom.Room) {
	if p.mode == ModeUnbound && room != nil {
		p.mode, p.room = p.boundMode(), room
	}
	p.build()
}

// SearchDue counts a physics frame of an unbound entity and reports
// whether to look for a NetRoom now (every SearchEvery frames).
func (p *Predictor) SearchDue() bool {
	if p.mode != ModeUnbound {
		return false
	}
	if p.search--; p.search > 0 {
		return false
	}
	p.search = SearchEvery
	return true
}

// BindLocal makes an unbound entity the local player's, sending through
// room.
func (p *Predictor) BindLocal(room *netroom.Room) {
	if p.mode != ModeUnbound || room == nil {
		return
	}
	p.mode, p.room = p.boundMode(), room
	p.build()
}

// boundMode is the mode of an entity found by its room: local, or shared.
func (p *Predictor) boundMode() Mode {
	if p.shared {
		return ModeShared
	}
	return ModeLocal
}

// ExitTree unbinds the entity from its room (a remote one stops
// receiving, a local one gives up the claim).
func (p *Predictor) ExitTree() {
	if p.room == nil {
		return
	}
	switch p.mode {
	case ModeRemote:
		p.room.UnbindEntity(p.key(), p.remote)
	case ModeLocal:
		p.room.ReleaseLocalEntity(p.WireEntity(), p.local)
		p.claimed = false
	case ModeShared:
		p.room.UnbindEntity(p.key(), p.remote)
		p.room.ReleaseLocalEntity(p.WireEntity(), p.local)
		p.claimed = false
	}
}

// EnterTree binds the entity again after a reparent (after the first
// Ready).
func (p *Predictor) EnterTree() {
	if p.room == nil {
		return
	}
	switch {
	case p.mode == ModeRemote && p.remote != nil:
		_ = p.room.BindEntity(p.key(), p.remote)
	case p.mode == ModeLocal && p.local != nil:
		p.claimed = p.room.ClaimLocalEntity(p.WireEntity(), p.local) == nil
	case p.mode == ModeShared && p.remote != nil:
		_ = p.room.BindEntity(p.key(), p.remote)
		if p.owned && p.local != nil {
			p.claimed = p.room.ClaimLocalEntity(p.WireEntity(), p.local) == nil
		}
	}
}

// Errors returns the errors to report since the last call (invalid
// settings, a second entity for one player), each once.
func (p *Predictor) Errors() []error {
	out := p.errs
	p.errs = nil
	return out
}

func (p *Predictor) report(err error) {
	if err.Error() != p.lastErr {
		p.errs = append(p.errs, err)
		p.lastErr = err.Error()
	}
}

// predictConfig is the predictor configuration for the root's dimension.
func (p *Predictor) predictConfig() predict.Config {
	cfg := p.pcfg
	cfg.Dim2D = p.dim == Dim2D
	return cfg
}

// build makes (or updates) the Remote or Local for the mode and settings.
func (p *Predictor) build() {
	p.dirty = false
	switch p.mode {
	case ModeShared:
		p.buildRemote()
		p.buildLocal(p.owned)
	case ModeRemote, ModeFed:
		p.buildRemote()
	case ModeLocal:
		p.buildLocal(true)
	}
}

// buildRemote makes (or updates) the drawing side.
func (p *Predictor) buildRemote() {
	if p.remote != nil && p.remote.Config().Dim2D == (p.dim == Dim2D) {
		// Keep the samples and the smoothing: only the settings change.
		if err := p.remote.SetConfig(p.predictConfig()); err != nil {
			p.report(fmt.Errorf("%w; keeping the previous settings", err))
		}
		return
	}
	rem, err := NewRemote(p.predictConfig())
	if err != nil {
		p.report(fmt.Errorf("%w; using the defaults", err))
		rem, _ = NewRemote(predict.Config{Dim2D: p.dim == Dim2D})
	}
	if (p.mode == ModeRemote || p.mode == ModeShared) && p.room != nil {
		p.room.UnbindEntity(p.key(), p.remote)
		if err := p.room.BindEntity(p.key(), rem); err != nil {
			p.report(err)
		}
	}
	p.remote = rem
}

// buildLocal makes (or updates) the sending side; claim: hold the room's
// claim of the entity id (a shared object only while owned).
func (p *Predictor) buildLocal(claim bool) {
	if p.local != nil && p.local.Config().Dim2D == (p.dim == Dim2D) && p.local.Config().Rate == p.sendRate {
		return // the sender's settings are unchanged: keep its history
	}
	loc, err := NewLocal(sender.Config{Dim2D: p.dim == Dim2D, Rate: p.sendRate})
	if err != nil {
		p.report(fmt.Errorf("%w; using the defaults", err))
		loc, _ = NewLocal(sender.Config{Dim2D: p.dim == Dim2D})
	}
	if p.extrasSet {
		loc.SetExtras(p.anim, p.input)
	}
	if p.own == nil {
		p.own, _ = inputdelay.New(0, ownFrames) // valid arguments: no error
	} else {
		p.own.Reset()
	}
	if p.room != nil {
		if p.local != nil {
			p.room.ReleaseLocalEntity(p.WireEntity(), p.local)
		}
		p.claimed = false
		if claim { // a shared object we do not own (yet) holds no claim
			if err := p.room.ClaimLocalEntity(p.WireEntity(), loc); err != nil {
				p.report(err)
			} else {
				p.claimed = true
			}
		}
	}
	p.local = loc
}

// Draws reports whether the entity is drawn from received states (remote
// or fed): the node's _process places the root.
func (p *Predictor) Draws() bool {
	return p.mode == ModeRemote || p.mode == ModeFed || (p.mode == ModeShared && !p.owned)
}

// Frame is a drawn entity's _process: it applies changed settings and
// returns the pose at now and what changed. It routes nothing: the Room
// routed this frame's states already (Room.Route, from the NetRoom's
// _process, which runs first).
func (p *Predictor) Frame(now time.Duration) (predict.Pose, Change) {
	if !p.Draws() {
		return predict.Pose{}, 0
	}
	if p.dirty || p.remote == nil {
		p.build()
	}
	pose, ch := p.remote.Frame(now)
	p.states = p.remote.Added()
	return pose, ch
}

// Effects is what the node applies to its root after a frame's changes:
// the visibility policy.
type Effects struct {
	// SetVisible: set the root's visible flag to Visible.
	SetVisible, Visible bool
	// SetAlpha: set a 2D root's modulate alpha to its own times Alpha.
	SetAlpha bool
	Alpha    float64
	// ResetInterpolation: the entity jumped (snap, or shown again): the
	// engine must not interpolate the root from where it was.
	ResetInterpolation bool
}

// EffectsOf returns what to apply for the changes ch of the last Frame.
// visible is the root's visible flag as last read or applied.
func (p *Predictor) EffectsOf(ch Change, visible bool) Effects {
	var e Effects
	if p.remote == nil {
		return e
	}
	if ch&ChangeHidden != 0 && p.applyVis && visible == p.remote.Hidden() {
		e.SetVisible, e.Visible = true, !p.remote.Hidden()
	}
	if ch&ChangeGhost != 0 && p.applyVis && p.dim == Dim2D {
		e.SetAlpha, e.Alpha = true, 1
		if p.remote.Ghost() {
			e.Alpha = p.ghostAlpha
		}
	}
	e.ResetInterpolation = ch&ChangeSnapped != 0 || (ch&ChangeHidden != 0 && !p.remote.Hidden())
	return e
}

// HideUntilData reports whether the root should be hidden now that the
// entity draws (hidden until its first state), when visibility applies.
func (p *Predictor) HideUntilData() bool { return p.Draws() && p.applyVis }

// Sample is a local entity's _physics_process: it records the root's pose
// at frame time t and sends a state when one is due. It reports whether a
// state went out.
func (p *Predictor) Sample(t time.Duration, pos geom.Vec3, rot geom.Quat, vel geom.Vec3, hasVel bool) bool {
	if !p.IsLocal() {
		return false
	}
	if p.dirty || p.local == nil {
		p.build()
	}
	if !p.claimed {
		return false // a second entity for the local player: reported, not sent
	}
	p.local.Sample(t, pos, rot, vel, hasVel)
	p.own.Record(t, pos, rot)
	if p.mode == ModeShared {
		p.last, p.hasLast = predict.Sample{Time: t, Pos: pos, Rot: rot, Vel: vel}, true
	}
	st, ok := p.local.PollAt(p.room.Now(), max(p.room.Slot(), 0)) // stamped as it leaves
	if ok {
		st.Entity = uint8(p.WireEntity())
	}
	if !ok || !p.room.InRoom() || p.room.SendState(st) != nil {
		return false
	}
	p.states++
	return true
}

// ownFrames is how many simulated frames of our own entity are kept for
// drawing it the room's input delay late: 250 ms (protocol.MaxInputDelayUS)
// at up to 480 physics frames a second.
const ownFrames = 128

// Delayed returns where to draw our own entity at now under the room's
// input delay D (netroom.Room.InputDelay): its simulated pose D before now,
// interpolated between the physics frames sampled (Sample). ok is false
// when it is not ours, there is no delay, or nothing was sampled yet: then
// it is drawn where the game simulates it. Only what is drawn is late; the
// body's physics stays where the game put it.
func (p *Predictor) Delayed(now time.Duration) (pos geom.Vec3, rot geom.Quat, delay time.Duration, ok bool) {
	if !p.IsLocal() || p.room == nil || p.own == nil {
		return geom.Vec3{}, geom.Identity, 0, false
	}
	if delay = p.room.InputDelay(); delay <= 0 {
		return geom.Vec3{}, geom.Identity, 0, false
	}
	pos, rot, ok = p.own.AtDelay(now, delay)
	return pos, rot, delay, ok
}

// InputDelay returns the room's input delay in force (0 without a room).
func (p *Predictor) InputDelay() time.Duration {
	if p.room == nil {
		return 0
	}
	return p.room.InputDelay()
}

// Teleport makes remote copies of a local entity snap to its next state.
func (p *Predictor) Teleport() {
	if p.local != nil {
		p.local.Teleport()
	}
}

// Push feeds a state by hand at local time now (custom transports, tests,
// benchmarks): an unbound entity starts drawing from these (ModeFed). A
// local entity refuses it.
func (p *Predictor) Push(localTime time.Duration, pos geom.Vec3, rot geom.Quat, vel geom.Vec3, now time.Duration) error {
	if p.mode == ModeUnbound {
		p.mode = ModeFed
		p.build()
	}
	if !p.Draws() {
		return ErrLocalPush
	}
	if p.dirty || p.remote == nil {
		p.build()
	}
	p.pushSeq++
	p.remote.AddSample(predict.PathServer, predict.Sample{
		Time: localTime, Seq: p.pushSeq, Pos: pos, Vel: vel, Rot: rot,
	}, now)
	return nil
}

// IsLocal reports whether this is the local player's entity.
// A shared object is local while this player owns it.
func (p *Predictor) IsLocal() bool { return p.mode == ModeLocal || (p.mode == ModeShared && p.owned) }

// Slot returns the owning player's slot, or -1 when unknown.
func (p *Predictor) Slot() int {
	switch p.mode {
	case ModeRemote:
		return p.slot
	case ModeLocal:
		return p.room.Slot()
	case ModeShared:
		return p.ownerSlot
	}
	return -1
}

// Pose returns the last frame's pose (zero unless drawn).
func (p *Predictor) Pose() predict.Pose {
	if p.remote == nil {
		return predict.Pose{}
	}
	return p.remote.Pose()
}

// Jitter returns the drawn path's arrival jitter (Remote.Jitter); 0
// unless drawn.
func (p *Predictor) Jitter() time.Duration {
	if p.remote == nil {
		return 0
	}
	return p.remote.Jitter()
}

// Ghost reports whether the last frame drew a ghost.
func (p *Predictor) Ghost() bool { return p.remote != nil && p.remote.Ghost() }

// Hidden reports whether the last frame hid the entity.
func (p *Predictor) Hidden() bool { return p.remote != nil && p.remote.Hidden() }

// Collidable reports whether the entity may take part in collisions: the
// local one always, a remote one per its pose's contact trust.
func (p *Predictor) Collidable() bool {
	return p.IsLocal() || (p.remote != nil && p.remote.Pose().Collidable)
}

// States returns the states drawn from (remote) or sent (local).
func (p *Predictor) States() uint64 { return p.states }

// Tree is the part of the scene tree FindRoom walks: nodes of type N,
// NetRooms of type R.
type Tree[N, R any] interface {
	Parent(n N) (N, bool)
	ChildCount(n N) int
	Child(n N, i int) N
	RoomOf(n N) (R, bool)
}

// FindRoom returns the NetRoom a local entity at node from sends through:
// the nearest NetRoom that is an ancestor of from or a child of an
// ancestor; else the only one in rooms (those in the tree). The node
// checks room_path, when set, before.
func FindRoom[N, R any](t Tree[N, R], from N, rooms []R) (R, bool) {
	for a, ok := t.Parent(from); ok; a, ok = t.Parent(a) {
		if r, ok := t.RoomOf(a); ok {
			return r, true
		}
		for i := range t.ChildCount(a) {
			if r, ok := t.RoomOf(t.Child(a, i)); ok {
				return r, true
			}
		}
	}
	if len(rooms) == 1 {
		return rooms[0], true
	}
	var zero R
	return zero, false
}
