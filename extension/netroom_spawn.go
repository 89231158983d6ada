package main

import (
	"fmt"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/typedargs"
	"github.com/nearzero/nearzero/netcode/wire"
)

// NetRoom as MultiplayerSpawner: spawn_entity instantiates a scene for
// this player and announces it; every other NetRoom instantiates the same
// scene (when it is in spawnable_scenes) with its NetPredictor drawing
// the entity. Freeing the local node despawns it everywhere.

// roomEntities are a NetRoom's spawned entities.
type roomEntities struct {
	scenes []string                       // spawnable_scenes
	local  map[int]godot.ObjectID         // ours, by entity id
	remote map[netroom.Key]godot.ObjectID // others', by key
}

var (
	sigEntitySpawned   = godot.NewSignal3[godot.Node, int64, godot.Array](netRoomClass, "entity_spawned", "node", "slot", "args")
	sigEntityDespawned = godot.NewSignal2[godot.Node, int64](netRoomClass, "entity_despawned", "node", "slot")
)

func init() {
	c := netRoomClass
	c.Group("Spawning", "")
	// An Array of Strings (see synced_properties for why not a
	// PackedStringArray).
	godot.Property(c, "spawnable_scenes",
		func(n *NetRoom) godot.Array {
			a := godot.NewArray()
			for _, s := range n.ents.scenes {
				godot.ArrayAppend(a, s)
			}
			return a
		},
		func(n *NetRoom, v godot.Array) {
			n.ents.scenes = n.ents.scenes[:0]
			for i := range v.Len() {
				if s, ok := godot.ArrayAt[string](v, i); ok && s != "" {
					n.ents.scenes = append(n.ents.scenes, s)
				}
			}
			n.UpdateConfigurationWarnings() // an entry's parent may be lost
		})
	godot.Method2R(c, "spawn_entity", (*NetRoom).spawnEntity, "scene_path", "args").ReturnClass("Node")
	godot.Method1(c, "despawn_entity", func(n *NetRoom, node godot.Node) {
		for id, oid := range n.ents.local {
			if oid == node.ID() {
				delete(n.ents.local, id)
				if err := n.model.Despawn(id); err != nil {
					godot.PrintError("NetRoom.despawn_entity: " + err.Error())
				}
				node.QueueFree()
				return
			}
		}
		godot.PrintError("NetRoom.despawn_entity: the node was not spawned by this NetRoom's spawn_entity")
	}, "node")
}

// instantiate loads and instantiates a scene of spawnable_scenes.
func (n *NetRoom) instantiate(path string) (godot.Node, error) {
	if !netroom.SceneAllowed(n.ents.scenes, path) {
		return godot.Node{}, fmt.Errorf("scene %q is not in spawnable_scenes", path)
	}
	res, err := godot.Load(path)
	if err != nil {
		return godot.Node{}, err
	}
	defer res.Release() // Load's reference; the instance needs none
	scene, ok := godot.Cast[godot.PackedScene](res)
	if !ok {
		return godot.Node{}, fmt.Errorf("%q is not a PackedScene", path)
	}
	inst := scene.Instantiate()
	if inst.IsNull() {
		return godot.Node{}, fmt.Errorf("%q did not instantiate", path)
	}
	return inst, nil
}

// predictorsIn returns the NetPredictors in the tree at node.
func predictorsIn(node godot.Node, out []*NetPredictor) []*NetPredictor {
	if p, ok := godot.InstanceOf[NetPredictor](node); ok {
		out = append(out, p)
	}
	for i := range node.ChildCount() {
		out = predictorsIn(node.Child(i), out)
	}
	return out
}

// spawnEntity is spawn_entity: it instantiates scenePath for this player,
// binds its NetPredictor, if it has one, to a free entity id, announces it
// with args and adds it under its parent. It returns the node (null on a refusal, which
// is printed).
func (n *NetRoom) spawnEntity(scenePath string, args godot.Array) godot.Node {
	fail := func(err error) godot.Node {
		godot.PrintErrorf("NetRoom.spawn_entity: %v", err)
		return godot.Node{}
	}
	if !n.model.InRoom() {
		return fail(netroom.ErrNotInRoom)
	}
	vals, err := argsFromArray(args, 1) // events.go
	if err != nil {
		return fail(err)
	}
	raw, err := typedargs.Encode(vals)
	if err != nil {
		return fail(err)
	}
	id, err := n.model.FreeEntity()
	if err != nil {
		return fail(err)
	}
	parent, where := n.entityParent(scenePath)
	if parent.IsNull() {
		return fail(fmt.Errorf("%s is not a node", where))
	}
	inst, err := n.instantiate(scenePath)
	if err != nil {
		return fail(err)
	}
	preds := predictorsIn(inst, nil)
	if err := netroom.CheckSpawnScene(scenePath, len(preds)); err != nil {
		inst.QueueFree()
		return fail(err)
	}
	for _, p := range preds { // none: spawned and despawned only, no states
		if err := p.m.BindLocalEntity(n.model, id); err != nil {
			inst.QueueFree()
			return fail(err)
		}
	}
	if err := n.model.Spawn(id, scenePath, raw); err != nil {
		inst.QueueFree()
		return fail(err)
	}
	if n.ents.local == nil {
		n.ents.local = map[int]godot.ObjectID{}
	}
	n.ents.local[id] = inst.ID()
	inst.SetName(fmt.Sprintf("Entity%d_%d", n.model.Slot(), id))
	parent.AddChild(inst)
	return inst
}

// entityParent returns the node instances of scene go under: the parent
// its spawnable_scenes entry names ("res://rocket.tscn|Projectiles", a
// path from the NetRoom), else spawn_path's node; and that place in words
// for an error.
func (n *NetRoom) entityParent(scene string) (godot.Node, string) {
	path, _ := netroom.SpawnParent(n.ents.scenes, scene)
	if path == "" {
		return n.spawnParent(), fmt.Sprintf("spawn_path %q", n.spawnPath.String())
	}
	np := godot.NewNodePath(path)
	defer np.Destroy()
	return n.GetNodeOrNull(np), fmt.Sprintf("the parent %q of %s in spawnable_scenes", path, scene)
}

// despawnFreed despawns our spawned entities whose nodes were freed.
func (n *NetRoom) despawnFreed() {
	for id, oid := range n.ents.local {
		if oid.Object().IsNull() {
			delete(n.ents.local, id)
			_ = n.model.Despawn(id)
		}
	}
}

// spawnRemoteEntity instantiates another player's entity and emits
// entity_spawned. A scene outside spawnable_scenes is refused with an
// error line.
func (n *NetRoom) spawnRemoteEntity(e *netroom.Event) error {
	parent, where := n.entityParent(e.Text)
	if parent.IsNull() {
		godot.PrintErrorf("NetRoom: %s is not a node; entity %d of player %d not spawned", where, e.Entity, e.Slot)
		return nil
	}
	inst, err := n.instantiate(e.Text)
	if err != nil {
		godot.PrintErrorf("NetRoom: player %d spawned an entity: %v; not spawned", e.Slot, err)
		return nil
	}
	for _, p := range predictorsIn(inst, nil) {
		if e.Entity >= wire.FirstShared { // a shared object the host spawned
			_ = p.m.SetEntity(e.Entity-wire.FirstShared, true)
		} else {
			_ = p.m.SetEntity(e.Entity, false)
		}
		p.bindRemote(n.model, e.Slot)
	}
	if n.ents.remote == nil {
		n.ents.remote = map[netroom.Key]godot.ObjectID{}
	}
	n.ents.remote[netroom.KeyOf(e.Slot, e.Entity)] = inst.ID()
	inst.SetName(fmt.Sprintf("Entity%d_%d", e.Slot, e.Entity))
	parent.AddChild(inst) // runs the scene's _ready, which may free n
	if !n.alive() {
		return nil
	}
	n.applyKeptProps(e.Slot, e.Entity) // synced.go
	var vals []any
	if e.Spawn != nil {
		vals, _ = typedargs.Decode(e.Spawn.Args) // checked by the model
	}
	a := arrayOf(vals)
	defer a.Destroy()
	return sigEntitySpawned.Emit(n, inst, int64(e.Slot), a)
}

// despawnRemoteEntity emits entity_despawned and frees the node.
func (n *NetRoom) despawnRemoteEntity(e *netroom.Event) error {
	k := netroom.KeyOf(e.Slot, e.Entity)
	oid, ok := n.ents.remote[k]
	delete(n.ents.remote, k)
	node, alive := godot.Cast[godot.Node](oid.Object())
	if !ok || !alive {
		return nil
	}
	err := sigEntityDespawned.Emit(n, node, int64(e.Slot))
	if n.alive() {
		if node, alive := godot.Cast[godot.Node](oid.Object()); alive {
			node.QueueFree()
		}
	}
	return err
}
