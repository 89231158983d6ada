package netroom

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Entities beyond a player's own: a player's extra entities (a trailer,
// a projectile: wire ids 1..wire.MaxPlayerEntity), spawned on every
// machine through the server, and shared objects (a ball: wire ids
// wire.FirstShared..255) that one player at a time owns and sends.

var (
	// ErrEntity indicates an entity id outside its range.
	ErrEntity = errors.New("netroom: entity id out of range")
	// ErrNoFreeEntity indicates that every id of the player's own
	// entities is taken.
	ErrNoFreeEntity = errors.New("netroom: no free entity id (despawn some)")
	// ErrSpawnScene indicates a scene spawn_entity cannot spawn (more than
	// one NetPredictor).
	ErrSpawnScene = errors.New("netroom: scene not spawnable")
)

// Key names a remote entity: a player's entity is (Slot, Entity); a shared
// object is keyed by its id alone (Slot -1), whoever owns it.
type Key struct {
	Slot, Entity int
}

// KeyOf returns the key of entity sent by slot.
func KeyOf(slot, entity int) Key {
	if entity >= wire.FirstShared {
		return Key{Slot: -1, Entity: entity}
	}
	return Key{Slot: slot, Entity: entity}
}

// SharedID returns the wire id of shared object n (0..127).
func SharedID(n int) int { return wire.FirstShared + n }

// Receiver is what a Room hands one remote entity's states to, and all it
// asks of it: the drawing side of the entity (client/entity's Remote,
// which a NetPredictor binds). The Room calls it on its own goroutine, the
// engine's main thread, in arrival order; Add must not allocate (Route is
// on the per-frame path).
type Receiver interface {
	// Add takes a received state whose stamp maps to local on the local
	// clock, which arrived at arrival on path; false when refused
	// (duplicate, stale, not finite).
	Add(path predict.Path, s *wire.State, local, arrival time.Duration) bool
	// Jitter and Loss are the arrival jitter of the path drawn from and
	// the share of states lost, for LinkFigures (ok false before any).
	Jitter() time.Duration
	Loss() (loss float64, ok bool)
}

// owner is what the room last heard of a shared object's owner.
type owner struct {
	slot  int
	epoch uint32
	msg   protocol.Owner
}

// entities is the Room's part for entities other than the players' own.
// Main thread only.
type entities struct {
	locals  map[int]any            // who holds our entity ids (not 0), see ClaimLocalEntity
	spawned map[int]bool           // our spawned ids, live
	remote  map[Key]protocol.Spawn // spawns announced by others, live
	owners  map[int]owner          // shared objects by wire id
	claims  map[int]time.Duration  // claims sent, not answered: when
	claimed ratelimit.Bucket       // claims sent (ClaimRate)
	hasRate bool                   // claimed is set
	lastID  int                    // the id FreeEntity gave last
	scratch []Key
}

// BindEntity makes rem the Receiver of entity k's states (entity 0 is a
// player's own). Another Receiver bound there already is an error
// (ErrTaken).
func (r *Room) BindEntity(k Key, rem Receiver) error {
	switch {
	case k.Entity < 0 || k.Entity > 255:
		return fmt.Errorf("bind entity %d: %w", k.Entity, ErrEntity)
	case k.Entity == 0 && (k.Slot < 0 || k.Slot >= MaxSlots):
		return fmt.Errorf("bind %d: %w", k.Slot, ErrSlot)
	}
	k = KeyOf(k.Slot, k.Entity)
	if cur := r.remotes[k]; cur != nil && cur != rem {
		if k.Entity == 0 {
			return r.fail(fmt.Errorf("player %d: %w", k.Slot, ErrTaken))
		}
		return r.fail(fmt.Errorf("entity %v: %w", k, ErrTaken))
	}
	if r.remotes == nil {
		r.remotes = map[Key]Receiver{}
	}
	r.remotes[k] = rem
	return nil
}

// UnbindEntity removes rem from k, if it is the one bound there.
func (r *Room) UnbindEntity(k Key, rem Receiver) {
	k = KeyOf(k.Slot, k.Entity)
	if cur, ok := r.remotes[k]; ok && cur == rem {
		delete(r.remotes, k)
	}
}

// EachReceiver calls fn for every Receiver bound, in no set order.
func (r *Room) EachReceiver(fn func(Key, Receiver)) {
	for k, rem := range r.remotes {
		fn(k, rem)
	}
}

// BoundEntity returns the Receiver bound to k, or nil.
func (r *Room) BoundEntity(k Key) Receiver { return r.remotes[KeyOf(k.Slot, k.Entity)] }

// ClaimLocalEntity makes holder the one sender of our entity id (0 is the
// player's own: ClaimLocal). Another holder of it is an error (ErrTaken);
// FreeEntity gives no id that is held. The Room asks nothing of holder
// and compares it by identity: pass a pointer (a NetPredictor passes its
// client/entity Local).
func (r *Room) ClaimLocalEntity(id int, holder any) error {
	if id == 0 {
		return r.ClaimLocal(holder)
	}
	if id < 0 || id > 255 {
		return fmt.Errorf("entity %d: %w", id, ErrEntity)
	}
	if cur := r.ents.locals[id]; cur != nil && cur != holder {
		return r.fail(fmt.Errorf("local entity %d: %w", id, ErrTaken))
	}
	if r.ents.locals == nil {
		r.ents.locals = map[int]any{}
	}
	r.ents.locals[id] = holder
	return nil
}

// ReleaseLocalEntity gives up holder's claim of id, if it holds it.
func (r *Room) ReleaseLocalEntity(id int, holder any) {
	if id == 0 {
		r.ReleaseLocal(holder)
		return
	}
	if cur, ok := r.ents.locals[id]; ok && cur == holder {
		delete(r.ents.locals, id)
	}
}

// FreeEntity returns an id for a new entity of ours (1..MaxPlayerEntity)
// that no spawn and no local entity uses. It takes them round, the least
// recently given first: a despawned entity's id is not reused at once,
// because the new entity's first states (the unreliable queue) could
// reach the server before the old one's Despawn (the reliable queue) and
// be refused as stale.
func (r *Room) FreeEntity() (int, error) {
	for i := 1; i <= wire.MaxPlayerEntity; i++ {
		id := (r.ents.lastID+i-1)%wire.MaxPlayerEntity + 1
		if !r.ents.spawned[id] && r.ents.locals[id] == nil {
			r.ents.lastID = id
			return id, nil
		}
	}
	return 0, ErrNoFreeEntity
}

// Spawn announces our entity id (1..wire.MaxPlayerEntity) to everyone:
// their NetRooms instantiate scene with args (a JSON array, or nil). The
// caller instantiates its own copy. Refusals by the server (too many, too
// fast) come back as EventError.
func (r *Room) Spawn(id int, scene string, args json.RawMessage) error {
	m := &protocol.Spawn{Entity: id, Scene: scene, Args: args}
	if id > wire.MaxPlayerEntity {
		return fmt.Errorf("spawn %d: %w (a player's own entities are 1..%d)", id, ErrEntity, wire.MaxPlayerEntity)
	}
	if err := protocol.CheckSpawn(m); err != nil {
		return fmt.Errorf("netroom: spawn: %w", err)
	}
	if err := r.sendInRoom(m); err != nil {
		return err
	}
	if r.ents.spawned == nil {
		r.ents.spawned = map[int]bool{}
	}
	r.ents.spawned[id] = true
	return nil
}

// Despawn removes our spawned entity id on every machine.
func (r *Room) Despawn(id int) error {
	if !r.ents.spawned[id] {
		return fmt.Errorf("despawn %d: %w (not spawned)", id, ErrEntity)
	}
	delete(r.ents.spawned, id)
	return r.sendInRoom(&protocol.Despawn{Entity: id})
}

// ClaimRate and ClaimBurst pace the claims a Room sends, all objects
// together, below the server's default limit (10 a second, burst 20): a
// game that claims the ball every frame it touches it would otherwise be
// disconnected for control_rate.
const (
	ClaimRate  = 8.0
	ClaimBurst = 16.0
)

// claimAnswer is how long a claim waits for its answer before Claim sends
// another (one lost across a reconnect must not block the object's claims).
const claimAnswer = time.Second

// Claim asks the server for shared object id (wire id, FirstShared..255).
// The answer comes as EventOwner (to everyone when granted; to us alone
// with a Reason when refused). A claim of id still unanswered is not sent
// again, nor one over ClaimRate: call it as often as the game likes (every
// frame the player touches the object); the next call past the pause
// sends.
func (r *Room) Claim(id int) error {
	if err := protocol.CheckEntity(id, true); err != nil {
		return fmt.Errorf("netroom: claim: %w", err)
	}
	if !r.InRoom() {
		return r.sendInRoom(&protocol.Claim{Entity: id}) // its error says why
	}
	now := r.Now()
	if at, ok := r.ents.claims[id]; ok && now-at < claimAnswer {
		return nil // asked already: the answer is on its way
	}
	if !r.ents.hasRate {
		r.ents.claimed, r.ents.hasRate = ratelimit.Full(now, ClaimBurst), true
	}
	if !r.ents.claimed.Take(now, ClaimRate, ClaimBurst) {
		return nil
	}
	if err := r.sendInRoom(&protocol.Claim{Entity: id}); err != nil {
		return err
	}
	if r.ents.claims == nil {
		r.ents.claims = map[int]time.Duration{}
	}
	r.ents.claims[id] = now
	return nil
}

// Claiming reports whether a claim of id was sent and not answered yet.
func (r *Room) Claiming(id int) bool {
	_, ok := r.ents.claims[id]
	return ok
}

// Owner returns the slot that owns shared object id and the handover's
// epoch; ok is false when nobody does or nothing was heard.
func (r *Room) Owner(id int) (slot int, epoch uint32, ok bool) {
	o, ok := r.ents.owners[id]
	if !ok || o.slot == protocol.NoOwner {
		return protocol.NoOwner, o.epoch, false
	}
	return o.slot, o.epoch, true
}

// Handover returns the Owner message of the last handover of id, for the
// old owner to seed its drawing with (see protocol.Owner).
func (r *Room) Handover(id int) (protocol.Owner, bool) {
	o, ok := r.ents.owners[id]
	return o.msg, ok
}

// RemoteSpawns returns the live spawns announced by other players.
func (r *Room) RemoteSpawns() []protocol.Spawn {
	out := make([]protocol.Spawn, 0, len(r.ents.remote))
	for _, s := range r.ents.remote {
		out = append(out, s)
	}
	return out
}

// CheckSpawnScene checks a scene about to be spawned as an entity holds
// at most one NetPredictor (predictors of them): with one, the entity
// moves (its states drawn everywhere); with none, it is only spawned and
// despawned everywhere (a pickup, a decal, a door) and sends no states.
// Two would be one entity id for two bodies.
func CheckSpawnScene(scene string, predictors int) error {
	if predictors > 1 {
		return fmt.Errorf("%w: %q has %d NetPredictors; a spawned scene holds one at most", ErrSpawnScene, scene, predictors)
	}
	return nil
}

// SceneAllowed reports whether scene is one of list (NetRoom's
// spawnable_scenes, entries as ParseSpawnable reads them): a NetRoom
// instantiates only those for other players, so a peer cannot make it
// load any resource it names.
func SceneAllowed(list []string, scene string) bool {
	_, ok := SpawnParent(list, scene)
	return ok
}

// spawnSep separates a spawnable_scenes entry's scene from its parent: no
// portable file name has one, and it reads as "scene | where".
const spawnSep = "|"

// ParseSpawnable splits an entry of spawnable_scenes, "res://rocket.tscn"
// or "res://rocket.tscn|Projectiles", into its scene path and the path of
// the node its instances go under ("" when none: spawn_path), both with
// spaces around them trimmed.
func ParseSpawnable(entry string) (scene, parent string) {
	scene, parent, _ = strings.Cut(entry, spawnSep)
	return strings.TrimSpace(scene), strings.TrimSpace(parent)
}

// SpawnParent returns the parent path the entry of list for scene names
// ("" for spawn_path) and whether scene is listed at all.
func SpawnParent(list []string, scene string) (string, bool) {
	for _, e := range list {
		if s, parent := ParseSpawnable(e); s == scene && s != "" {
			return parent, true
		}
	}
	return "", false
}

// MissingSpawns returns the remote players the room counts as spawned
// (EventSpawn came for them) whose scene has(slot) says is not there: the
// players already in the room when the player scene was set, or whose
// scene failed to spawn or was freed. The node spawns them again.
func (r *Room) MissingSpawns(has func(slot int) bool) []int {
	var out []int
	for slot, spawned := range r.spawned {
		if spawned && slot != r.slot && !has(slot) {
			out = append(out, slot)
		}
	}
	return out
}

// ReserveSlot marks slot as one a node placed in the level stands for (a
// NetPredictor with player_slot set: the paddle of player 1, drawn from
// that player's states on every other machine, sent from it on theirs).
// A reserved slot gets no EventSpawn: nothing is spawned for it; one
// already spawned is despawned. Another holder of the reservation is an
// error (ErrTaken, also queued as EventError).
func (r *Room) ReserveSlot(slot int, holder any) error {
	if slot < 0 || slot >= MaxSlots {
		return fmt.Errorf("reserve slot %d: %w", slot, ErrSlot)
	}
	if cur := r.reserved[slot]; cur != nil && cur != holder {
		return r.fail(fmt.Errorf("player slot %d: another node in the level stands for it: %w", slot, ErrTaken))
	}
	r.reserved[slot] = holder
	r.despawn(slot)
	return nil
}

// ReleaseSlot gives up holder's reservation of slot, if it holds it; a
// player seated there is spawned again as any other.
func (r *Room) ReleaseSlot(slot int, holder any) {
	if slot < 0 || slot >= MaxSlots || r.reserved[slot] != holder {
		return
	}
	r.reserved[slot] = nil
	if _, ok := r.Player(slot); ok && r.inRoom && slot != r.slot && !r.spawned[slot] {
		r.spawned[slot] = true
		r.emit(Event{Kind: EventSpawn, Slot: slot})
	}
}

// Reserved reports whether a node in the level stands for slot.
func (r *Room) Reserved(slot int) bool {
	return slot >= 0 && slot < MaxSlots && r.reserved[slot] != nil
}

// applyEntityMessage handles the entity messages; it reports whether m
// was one.
func (r *Room) applyEntityMessage(m protocol.Message) bool {
	switch m := m.(type) {
	case *protocol.Spawn:
		if m.Slot == r.slot || protocol.CheckSpawn(m) != nil {
			return true
		}
		k := KeyOf(m.Slot, m.Entity)
		if r.ents.remote == nil {
			r.ents.remote = map[Key]protocol.Spawn{}
		}
		if _, dup := r.ents.remote[k]; dup {
			return true
		}
		r.ents.remote[k] = *m
		r.emit(Event{Kind: EventEntitySpawned, Slot: m.Slot, Entity: m.Entity, Text: m.Scene, Spawn: m})
	case *protocol.Despawn:
		r.despawnEntity(KeyOf(m.Slot, m.Entity))
		r.dcheck.forget(KeyOf(m.Slot, m.Entity))
		delete(r.props, KeyOf(m.Slot, m.Entity))
	case *protocol.Owner:
		if m.Entity < wire.FirstShared || m.Entity > 255 {
			return true
		}
		delete(r.ents.claims, m.Entity)
		cur, known := r.ents.owners[m.Entity]
		if known && m.Epoch < cur.epoch {
			return true // an old handover, overtaken
		}
		if r.ents.owners == nil {
			r.ents.owners = map[int]owner{}
		}
		r.ents.owners[m.Entity] = owner{slot: m.Slot, epoch: m.Epoch, msg: *m}
		if !known || cur.slot != m.Slot || m.Reason != "" {
			r.emit(Event{Kind: EventOwner, Slot: m.Slot, Entity: m.Entity, Text: m.Reason, Owner: m})
		}
	default:
		return false
	}
	return true
}

// despawnEntity forgets another player's spawn and tells the node.
func (r *Room) despawnEntity(k Key) {
	if _, ok := r.ents.remote[k]; !ok {
		return
	}
	delete(r.ents.remote, k)
	r.emit(Event{Kind: EventEntityDespawned, Slot: k.Slot, Entity: k.Entity})
}

// despawnEntitiesOf forgets every spawn of slot (-1: everyone's).
func (r *Room) despawnEntitiesOf(slot int) {
	r.ents.scratch = r.ents.scratch[:0]
	for k, s := range r.ents.remote {
		if slot < 0 || s.Slot == slot {
			r.ents.scratch = append(r.ents.scratch, k)
		}
	}
	for _, k := range r.ents.scratch {
		r.despawnEntity(k)
	}
}

// leaveEntities forgets every entity of the room we left.
func (r *Room) leaveEntities() {
	r.despawnEntitiesOf(-1)
	r.ents.spawned, r.ents.owners, r.ents.claims = nil, nil, nil
}
