package predict

import (
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Path is a route a remote entity's states arrive by.
type Path uint8

// Paths.
const (
	// PathServer is the copy relayed by the room server.
	PathServer Path = 0
	// PathDirect is the peer-to-peer data channel.
	PathDirect Path = 1

	numPaths = 2
)

// String returns "server", "direct" or "invalid".
func (p Path) String() string {
	switch p {
	case PathServer:
		return "server"
	case PathDirect:
		return "direct"
	default:
		return "invalid"
	}
}

// Visibility says how to show a remote entity.
type Visibility uint8

// Visibilities.
const (
	// Visible: drawn normally.
	Visible Visibility = iota
	// Ghost: no news for Config.GhostAfter; drawn see-through, not collidable.
	Ghost
	// Hidden: no news for Config.HideAfter, or no sample yet; not drawn.
	Hidden
)

// String returns "visible", "ghost", "hidden" or "invalid".
func (v Visibility) String() string {
	switch v {
	case Visible:
		return "visible"
	case Ghost:
		return "ghost"
	case Hidden:
		return "hidden"
	default:
		return "invalid"
	}
}

// Sample is one received state, already on the receiver's clock.
type Sample struct {
	// Time is when the sender sampled the state, mapped onto the
	// receiver's clock.
	Time time.Duration
	// Seq is the sender's sequence number; a path refuses a second sample
	// with the same Seq.
	Seq wire.Seq
	// Pos is the position (m; px in 2D, with Z zero).
	Pos geom.Vec3
	// Vel is the velocity (m/s; px/s in 2D).
	Vel geom.Vec3
	// Acc is the acceleration as the sender measured it, centripetal part
	// included (m/s²; px/s² in 2D).
	Acc geom.Vec3
	// Rot is the orientation; in 2D a rotation about +Z (geom.Angle2D).
	Rot geom.Quat
	// Turn is the turn rate about the up axis (rad/s).
	Turn float64
	// Anim and Input are the game's extras: animation state and input bits.
	Anim, Input uint8
	// Flags are the state flags; wire.FlagTeleport makes the predictor snap.
	Flags wire.Flags
}

// SampleOf returns the sample of a decoded state whose stamp the caller has
// mapped to t on the receiver's clock.
func SampleOf(s *wire.State, t time.Duration) Sample {
	return Sample{
		Time:  t,
		Seq:   s.Seq,
		Pos:   s.Pos,
		Vel:   s.Vel,
		Acc:   s.Acc,
		Rot:   s.Rot,
		Turn:  s.Turn,
		Anim:  s.Anim,
		Input: s.Input,
		Flags: s.Flags,
	}
}

// finite reports whether every number in s is finite.
func (s *Sample) finite() bool {
	return s.Pos.Finite() && s.Vel.Finite() && s.Acc.Finite() && s.Rot.Finite() &&
		!math.IsNaN(s.Turn) && !math.IsInf(s.Turn, 0)
}
