package entity

import (
	"fmt"

	"github.com/nearzero/nearzero/netcode/geom"
)

// A local entity is sampled at the end of each physics frame. A root that
// game code moves in _process (rather than _physics_process) changes
// between samples: its states carry where it was at the last physics
// frame, up to a rendered frame late and unevenly spaced, and remote
// players draw it less accurately (a ported game's paddle: 3.25 px mean
// error against 0.2 moved in _physics_process). The node tells the model
// where the root is at each rendered frame (RenderedAt) and the model
// warns once when that keeps differing from the last sample.

// MovedOutsidePhysicsAfter is how many rendered frames must find the root
// moved since the last physics frame before the warning: a few are normal
// (a teleport by a signal handler, a one-off placement).
const MovedOutsidePhysicsAfter = 30

// moveEpsilon is how far a root may differ from its last sample without
// counting (float noise).
const moveEpsilon = 1e-4

// moveWatch counts rendered frames whose root moved since the last sample.
type moveWatch struct {
	last   geom.Vec3
	has    bool
	moved  int
	warned bool
}

func (w *moveWatch) sampled(pos geom.Vec3) { w.last, w.has = pos, true }

// RenderedAt tells a local entity where its root is at a rendered frame
// (the node's _process). Roots moved by the physics engine (rigid
// bodies) move between the callbacks by design: the node does not call it
// for them. It returns the warning to print, once.
func (p *Predictor) RenderedAt(pos geom.Vec3) (warning string, ok bool) {
	w := &p.watch
	if !p.IsLocal() || !w.has || w.warned {
		return "", false
	}
	if pos.Sub(w.last).Len() <= moveEpsilon {
		return "", false
	}
	w.moved++
	if w.moved < MovedOutsidePhysicsAfter {
		return "", false
	}
	w.warned = true
	return fmt.Sprintf("its root moved between physics frames in %d rendered frames (moved in _process, or in a "+
		"_physics_process that runs after this node's?). NetPredictor samples the root at the end of each physics "+
		"frame, in its own _physics_process, so such a move reaches the other players up to a frame late and "+
		"unevenly: move the root in its own _physics_process (move_and_slide, or by velocity * delta there)", w.moved), true
}
