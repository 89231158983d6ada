package main

import (
	"slices"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/netroom"
)

// NetPredictor.synced_properties: on the owner, the listed properties of
// the root are read each physics frame and their changes sent (merged, at
// most 10 times a second, reliable, kept by the server for late joiners);
// on the others, NetRoom applies each change to the player's spawned
// scene root.

// syncedProps is a NetPredictor's replication list and its sender.
type syncedProps struct {
	paths    []string
	nps      []godot.NodePath
	props    entity.Props
	reported map[string]bool // paths whose refusal was printed once
}

func init() {
	// An Array of Strings rather than a PackedStringArray: the []string
	// codec crashed when a spawned scene set it (Godot 4.6-dev; see
	// bindings), while Arrays are the events' proven path.
	godot.Property(netPredictorClass, "synced_properties",
		func(p *NetPredictor) godot.Array {
			a := godot.NewArray()
			for _, s := range p.synced.paths {
				godot.ArrayAppend(a, s)
			}
			return a
		},
		func(p *NetPredictor, v godot.Array) {
			paths := make([]string, 0, v.Len())
			for i := range v.Len() {
				if s, ok := godot.ArrayAt[string](v, i); ok {
					paths = append(paths, s)
				}
			}
			p.synced.set(paths)
			p.UpdateConfigurationWarnings()
		})
}

func (s *syncedProps) set(paths []string) {
	s.release()
	s.paths = slices.Clone(paths)
	s.props.Resend()
}

// release destroys the parsed paths.
func (s *syncedProps) release() {
	for i := range s.nps {
		s.nps[i].Destroy()
	}
	s.nps = s.nps[:0]
}

// syncProps reads the listed properties of the local entity's root and
// sends what changed. Called each physics frame of a local NetPredictor.
func (p *NetPredictor) syncProps() {
	s := &p.synced
	if len(s.paths) == 0 || !p.m.IsLocal() || p.m.Room() == nil {
		return
	}
	if _, shared := p.m.Entity(); shared {
		return // a shared object's values would not follow it to a new owner (warned)
	}
	root := p.root()
	if root.IsNull() {
		return
	}
	if len(s.nps) != len(s.paths) {
		// Parsed on the first physics frame, not in the setter: a NodePath
		// parsed there crashed get_indexed in Godot 4.6-dev (unexplained).
		for _, path := range s.paths {
			s.nps = append(s.nps, godot.NewNodePath(path))
		}
	}
	for i, path := range s.paths {
		v := root.GetIndexed(s.nps[i])
		x, err := argFromVariant(v, 1)
		v.Destroy()
		if err == nil {
			err = s.props.Set(path, x)
		}
		if err != nil && !s.reported[path] {
			if s.reported == nil {
				s.reported = map[string]bool{}
			}
			s.reported[path] = true
			godot.PrintErrorf("NetPredictor: synced property %q not sent: %v", path, err)
		}
	}
	s.props.Entity = p.m.WireEntity()
	s.props.Flush(procClock.Now(), p.m.Room())
}

// applyProp sets a received synced property on the entity's node: the
// spawned player scene's root for a player's own entity, the spawned
// scene for one made with spawn_entity, else the root of the NetPredictor
// with that entity_id in the player's scene (a trailer). Values keep
// their types; numbers become int or float as the property is.
func (n *NetRoom) applyProp(e *netroom.Event) {
	if e.Slot < 0 || e.Slot >= netroom.MaxSlots || len(e.Args) != 1 {
		return
	}
	if root, ok := n.propRoot(e.Slot, e.Entity); ok {
		setProp(root, e.Text, e.Args[0])
	}
}

// propRoot returns the node synced properties of entity (slot, id) go to.
func (n *NetRoom) propRoot(slot, id int) (godot.Node, bool) {
	if id != 0 {
		if oid, ok := n.ents.remote[netroom.KeyOf(slot, id)]; ok {
			return godot.Cast[godot.Node](oid.Object())
		}
	}
	root, ok := godot.Cast[godot.Node](n.spawned[slot].Object())
	if !ok || root.IsNull() || id == 0 {
		return root, ok && !root.IsNull()
	}
	for _, p := range predictorsIn(root, nil) {
		if pid, shared := p.m.Entity(); pid == id && !shared && p.rootAlive() {
			return p.root(), true
		}
	}
	return godot.Node{}, false
}

// applyKeptProps sets every synced property already received for entity
// (slot, id) on a node just spawned for it: they may have come first.
func (n *NetRoom) applyKeptProps(slot, id int) {
	kept := n.model.PropsOf(netroom.Key{Slot: slot, Entity: id})
	if len(kept) == 0 {
		return
	}
	root, ok := n.propRoot(slot, id)
	if !ok {
		return
	}
	for key, v := range kept {
		setProp(root, key, v)
	}
}

// setProp sets property path key of root to x, converted as propVariant.
func setProp(root godot.Node, key string, x any) {
	path := godot.NewNodePath(key)
	defer path.Destroy()
	cur := root.GetIndexed(path)
	like := cur.Type()
	cur.Destroy()
	v := propVariant(x, like)
	root.SetIndexed(path, v)
	v.Destroy()
}

// propVariant converts a received value to a Variant, as the type it
// left as; a number becomes int or float as the property is, so a float
// property set to 3 stays a float.
func propVariant(x any, like godot.VariantType) godot.Variant {
	switch xv := x.(type) {
	case int64:
		if like == godot.TypeFloat {
			return godot.NewVariant(float64(xv))
		}
	case float64:
		if like == godot.TypeInt {
			return godot.NewVariant(int64(xv))
		}
	}
	return variantOf(x)
}
