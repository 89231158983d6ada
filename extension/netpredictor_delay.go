package main

import (
	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/entity"
)

// Our own entity under the room's input delay (client/entity,
// Predictor.Delayed): the root, the physics body, stays where the game
// simulates it; what is drawn goes where it was the delay before. The
// drawn nodes are visual_path's node, or else the root's children that
// are neither collision shapes nor physics bodies, areas or ray and shape
// casts (meshes, sprites, a camera): each is placed, every rendered frame, as it sits
// under the root but under the delayed root instead. A change the game
// makes to such a child's own transform (an animation) is kept: it is
// what the child is placed by from then on.

// delayedNode is one drawn node moved by the delay.
type delayedNode struct {
	id    godot.ObjectID
	rest3 godot.Transform3D // its transform under the root, as the game set it
	set3  godot.Transform3D // its transform under the root, as we last set it
	rest2 godot.Transform2D
	set2  godot.Transform2D
	seen  bool // found this frame
}

// delayedVisuals are the nodes moved by the delay.
type delayedVisuals struct{ nodes []delayedNode }

// drawDelayed places our own entity's drawn nodes where the room's input
// delay puts it, or back under the root without one.
func (p *NetPredictor) drawDelayed() {
	if !p.rootAlive() {
		return
	}
	pos, rot, _, ok := p.m.Delayed(procClock.Now())
	if !ok {
		p.delayed.restore(p.m.Dim())
		return
	}
	for i := range p.delayed.nodes {
		p.delayed.nodes[i].seen = false
	}
	switch p.m.Dim() {
	case entity.Dim3D:
		g := p.root3.GlobalTransform()
		inv := affineInverse3(g)
		gd := godot.Transform3D{Basis: scaledBasis(rot, p.scale3), Origin: vec3To(pos)}
		p.eachDrawn(func(n godot.Node) {
			n3, ok := godot.Cast[godot.Node3D](n)
			if !ok {
				return
			}
			d := p.delayed.track(n.ID())
			local := mul3(inv, n3.GlobalTransform())
			if d.set3 == (godot.Transform3D{}) || !near3(local, d.set3) {
				d.rest3 = local // new, or moved by the game
				n.SetPhysicsInterpolationMode(godot.PhysicsInterpolationOff)
			}
			want := mul3(gd, d.rest3)
			n3.SetGlobalTransform(want)
			d.set3 = mul3(inv, want)
		})
	case entity.Dim2D:
		g := p.root2.GlobalTransform()
		inv := affineInverse2(g)
		gd := scaledTransform2D(rot.Angle2D(), pos, p.scale2)
		p.eachDrawn(func(n godot.Node) {
			n2, ok := godot.Cast[godot.Node2D](n)
			if !ok {
				return
			}
			d := p.delayed.track(n.ID())
			local := mul2(inv, n2.GlobalTransform())
			if d.set2 == (godot.Transform2D{}) || !near2(local, d.set2) {
				d.rest2 = local
				n.SetPhysicsInterpolationMode(godot.PhysicsInterpolationOff)
			}
			want := mul2(gd, d.rest2)
			n2.SetGlobalTransform(want)
			d.set2 = mul2(inv, want)
		})
	}
	p.delayed.forgetUnseen()
}

// eachDrawn calls f with every node the delay moves: visual_path's, or
// the root's children that are not collision shapes or physics objects.
func (p *NetPredictor) eachDrawn(f func(n godot.Node)) {
	if !p.visualPath.IsEmpty() {
		if n := p.GetNodeOrNull(p.visualPath); !n.IsNull() && n.ID() != p.rootID {
			f(n)
		}
		return
	}
	root := p.root()
	for i := range root.ChildCount() {
		n := root.Child(i)
		if n.ID() == p.self || collisionNode(n) {
			continue
		}
		f(n)
	}
}

// collisionNode reports whether n takes part in physics (a shape, a body,
// an area, a ray or shape cast): those stay with the simulated root.
func collisionNode(n godot.Node) bool {
	for _, c := range [...]string{"CollisionShape3D", "CollisionPolygon3D", "CollisionObject3D", "RayCast3D", "ShapeCast3D",
		"CollisionShape2D", "CollisionPolygon2D", "CollisionObject2D", "RayCast2D", "ShapeCast2D"} {
		if n.IsClass(c) {
			return true
		}
	}
	return false
}

// track returns the entry of node id, made if new, marked seen.
func (v *delayedVisuals) track(id godot.ObjectID) *delayedNode {
	for i := range v.nodes {
		if v.nodes[i].id == id {
			v.nodes[i].seen = true
			return &v.nodes[i]
		}
	}
	v.nodes = append(v.nodes, delayedNode{id: id, seen: true})
	return &v.nodes[len(v.nodes)-1]
}

// forgetUnseen drops the nodes not found this frame (freed, moved away).
func (v *delayedVisuals) forgetUnseen() {
	kept := v.nodes[:0]
	for _, d := range v.nodes {
		if d.seen {
			kept = append(kept, d)
		}
	}
	v.nodes = kept
}

// restore puts every moved node back under the root as the game set it.
func (v *delayedVisuals) restore(dim entity.Dim) {
	for _, d := range v.nodes {
		n, ok := godot.Cast[godot.Node](d.id.Object())
		if !ok {
			continue
		}
		n.SetPhysicsInterpolationMode(godot.PhysicsInterpolationInherit)
		switch dim {
		case entity.Dim3D:
			if n3, ok := godot.Cast[godot.Node3D](n); ok {
				parent, ok := godot.Cast[godot.Node3D](n.Parent())
				if ok {
					n3.SetGlobalTransform(mul3(parent.GlobalTransform(), d.rest3))
				}
			}
		case entity.Dim2D:
			if n2, ok := godot.Cast[godot.Node2D](n); ok {
				parent, ok := godot.Cast[godot.Node2D](n.Parent())
				if ok {
					n2.SetGlobalTransform(mul2(parent.GlobalTransform(), d.rest2))
				}
			}
		}
	}
	v.nodes = v.nodes[:0]
}
