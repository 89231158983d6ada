package protocol

import (
	"fmt"
	"math"

	"github.com/nearzero/nearzero/netcode/wire"
)

// Hit messages: a shooter reports a hit; the server decides and tells.
const (
	TypeHit       wire.ControlType = 21
	TypeHitResult wire.ControlType = 72
)

// Hit reports that the sender hit the player in Target with a shot fired
// at FireUS (server clock, as the shooter's clock sync reads it), at Point:
// where the shooter drew the target when it fired (2D games leave Z 0).
// The server accepts it when Point lies within its tolerance of where it
// reconstructs the shooter drew that target then, and the shot is at most
// its rewind cap old; the answer is HitResult.
type Hit struct {
	Target int        `json:"target"`
	FireUS int64      `json:"fire_us"`
	Point  [3]float64 `json:"point"`
}

// HitResult is the server's decision on a Hit. An accepted hit goes to
// every player (the damage, the target's health, a kill); a refused one
// only to the shooter, with Reason.
type HitResult struct {
	From     int    `json:"from"`
	Target   int    `json:"target"`
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"` // why refused
	Damage   int    `json:"damage,omitempty"`
	Health   int    `json:"health"` // the target's health after the hit
	// Killed: the hit took the target's health to 0; it respawns at once
	// with full health (the game shows the death and moves it).
	Killed bool `json:"killed,omitempty"`
	Kills  int  `json:"kills"`  // the shooter's kills so far
	Deaths int  `json:"deaths"` // the target's deaths so far
	// RewindUS is how far back the server looked (its clock when the hit
	// arrived minus FireUS); MissBy how far Point was from the drawn
	// position it reconstructed (units of the game; -1 when none).
	RewindUS int64   `json:"rewind_us"`
	MissBy   float64 `json:"miss_by"`
}

// Type implements Message.
func (*Hit) Type() wire.ControlType { return TypeHit }

// Type implements Message.
func (*HitResult) Type() wire.ControlType { return TypeHitResult }

func init() {
	registry[TypeHit] = entry{"hit", func() Message { return new(Hit) }}
	registry[TypeHitResult] = entry{"hit_result", func() Message { return new(HitResult) }}
}

func (m *Hit) validate() error {
	if m.Target < 0 {
		return fmt.Errorf("target %d is negative", m.Target)
	}
	for _, v := range m.Point {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("point %v not finite", m.Point)
		}
	}
	return nil
}
