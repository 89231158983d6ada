package entity

import (
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
)

// Pops and snaps of a drawn entity, for the editor's debugger tab: what a
// player sees jump.

// PopDistance is the drawn move beyond the predicted one that counts as a
// pop in one rendered frame: 10 cm in 3D, 4 px in 2D.
const (
	PopDistance   = 0.1
	PopDistance2D = 4.0
)

// drawCounts counts a drawn entity's visible jumps.
type drawCounts struct {
	last  geom.Vec3
	at    time.Duration
	has   bool
	pops  uint64
	snaps uint64
	speed float64
}

// frame counts the pose drawn at now: a snap (correction too big to fade,
// or a reset), or a pop (a move differing from the drawn velocity's by
// more than PopDistance); it also keeps the drawn speed.
func (c *drawCounts) frame(now time.Duration, pose *predict.Pose, dim2D bool) {
	if !pose.Valid {
		c.has = false
		return
	}
	if pose.Snapped {
		c.snaps++
	}
	if c.has && now > c.at {
		dt := (now - c.at).Seconds()
		moved := pose.Pos.Sub(c.last)
		c.speed = moved.Len() / dt
		limit := PopDistance
		if dim2D {
			limit = PopDistance2D
		}
		if !pose.Snapped && moved.Sub(pose.Vel.Scale(dt)).Len() > limit {
			c.pops++
		}
	}
	c.last, c.at, c.has = pose.Pos, now, true
}

// DrawFigures are a drawn entity's figures over its life, for the
// debugger: Pops and Snaps counted, and the speed it was drawn at in the
// last frame (units per second).
type DrawFigures struct {
	Pops, Snaps uint64
	Speed       float64
}

// DrawFigures returns the entity's counts since it was made.
func (r *Remote) DrawFigures() DrawFigures {
	return DrawFigures{Pops: r.counts.pops, Snaps: r.counts.snaps, Speed: r.counts.speed}
}

// DrawFigures returns the drawn entity's counts (zero unless drawn).
func (p *Predictor) DrawFigures() DrawFigures {
	if p.remote == nil {
		return DrawFigures{}
	}
	return p.remote.DrawFigures()
}
