package main

import "github.com/nearzero/nearzero/bindings/godot"

// NetPredictor's entity settings: several entities per player
// (entity_id) and shared objects (shared: one owner at a time, handed
// over by the server; the owner simulates and sends, the others draw).

var sigOwnerChanged = godot.NewSignal2[int64, bool](netPredictorClass, "owner_changed", "owner_slot", "mine")

func init() {
	c := netPredictorClass
	c.Group("Entity", "")
	godot.Property(c, "entity_id", func(p *NetPredictor) int64 { id, _ := p.m.Entity(); return int64(id) },
		func(p *NetPredictor, v int64) {
			_, shared := p.m.Entity()
			if err := p.m.SetEntity(int(v), shared); err != nil {
				godot.PrintErrorf("NetPredictor %s: %v", p.Name(), err)
			}
			p.UpdateConfigurationWarnings()
		}).Range(0, 127, 1)
	godot.Property(c, "shared", func(p *NetPredictor) bool { _, s := p.m.Entity(); return s },
		func(p *NetPredictor, v bool) {
			id, _ := p.m.Entity()
			_ = p.m.SetEntity(id, v)
			p.UpdateConfigurationWarnings()
		}).Getter("is_shared")
	godot.Property(c, "owner_slot", func(p *NetPredictor) int64 { return int64(p.m.OwnerSlot()) }, nil)
	godot.Property(c, "owner", func(p *NetPredictor) bool { return p.m.Owned() }, nil).Getter("is_owner")
	godot.Method0(c, "claim", func(p *NetPredictor) {
		if err := p.m.Claim(); err != nil {
			godot.PrintErrorf("NetPredictor %s: %v", p.Name(), err)
		}
	})
}

// syncOwner follows a shared object's owner: on a change the root's
// physics is handed over (a RigidBody simulates while ours and is frozen,
// placed by the predictor, while another player's), then owner_changed.
// It reports whether the node survived the signal's handlers.
func (p *NetPredictor) syncOwner() bool {
	if !p.m.SyncOwner(procClock.Now()) {
		return true
	}
	p.handOverBody()
	p.placeReset() // a reset_to that waited for the host's claim
	if err := sigOwnerChanged.Emit(p, int64(p.m.OwnerSlot()), p.m.Owned()); !p.alive() {
		return false
	} else if err != nil {
		godot.PrintErrorf("NetPredictor: signal owner_changed: %v", err)
	}
	return true
}

// handOverBody freezes a rigid root we do not own and lets one we own
// simulate, starting at the velocity it was drawn with.
func (p *NetPredictor) handOverBody() {
	if !p.rootAlive() {
		return
	}
	mine := p.m.Owned()
	vel := p.m.Pose().Vel
	switch p.vel {
	case velRigid3D:
		b := godot.RigidBody3D{Node3D: p.root3}
		b.SetFreezeEnabled(!mine)
		if mine {
			b.SetLinearVelocity(vec3To(vel))
		}
	case velRigid2D:
		b := godot.RigidBody2D{Node2D: p.root2}
		b.SetFreezeEnabled(!mine)
		if mine {
			b.SetLinearVelocity(vec2To(vel))
		}
	}
	if !mine {
		p.root().SetPhysicsInterpolationMode(godot.PhysicsInterpolationOff)
	}
}
