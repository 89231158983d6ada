package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/nearzero/nearzero/netcode/wire"
)

// Entity messages: spawning and despawning a player's extra entities (the
// MultiplayerSpawner role) and ownership of shared objects. States name
// their entity with wire.State.Entity.
const (
	TypeSpawn   wire.ControlType = 22
	TypeDespawn wire.ControlType = 23
	TypeClaim   wire.ControlType = 24
	TypeOwner   wire.ControlType = 73
)

// Limits of spawn messages that every build enforces; a server may set
// tighter ones (room.EntityLimits).
const (
	// MaxSceneName is the longest scene name in bytes (a res:// path or a
	// name the game registered).
	MaxSceneName = 200
	// MaxSpawnArgs is the largest Args of a Spawn, as JSON.
	MaxSpawnArgs = 1 << 10
	// NoOwner is Owner.Slot of a shared object nobody owns.
	NoOwner = -1
)

// ErrBadSpawn indicates a spawn with an entity id, scene name or args
// outside the rules.
var ErrBadSpawn = errors.New("protocol: bad spawn")

// Spawn announces an extra entity of a player: every client instantiates
// Scene for it with Args, at Pos with Rot (a quaternion x, y, z, w; 2D
// games use Rot[2] as the angle and leave the rest 0). The owner sends it
// with Entity (1..wire.MaxPlayerEntity) before the entity's first state;
// the server relays it with Slot set, keeps it for players who join later,
// and announces a Despawn for each when its owner leaves. The host may
// also spawn shared objects (Entity wire.FirstShared..255); the host owns
// those until someone claims one.
type Spawn struct {
	Slot   int             `json:"slot"`
	Entity int             `json:"entity"`
	Scene  string          `json:"scene"`
	Args   json.RawMessage `json:"args,omitempty"`
	Pos    [3]float64      `json:"pos"`
	Rot    [4]float64      `json:"rot"`
}

// Despawn removes an entity announced by Spawn. The owner sends it with
// Entity; the server relays it with Slot set.
type Despawn struct {
	Slot   int `json:"slot"`
	Entity int `json:"entity"`
}

// Claim asks the server for ownership of shared object Entity
// (wire.FirstShared..255). The server answers every claim with an Owner:
// to everyone when ownership changes, to the claimant alone when it is
// refused (Reason says why).
type Claim struct {
	Entity int `json:"entity"`
}

// Owner says who owns shared object Entity: Slot (NoOwner for nobody),
// from the handover Epoch on (it counts up per object, so late messages can
// be told apart). The new owner starts sending at once; the server drops
// the old owner's states from then on. Stamp, Seq, Pos and Vel are the
// last state the server relayed for the object (its clock, the sequence
// number it gave it; Known false when none): where the new owner's
// simulation takes over, and what the old owner, which never received its
// own states, seeds its drawing with so that nobody sees a jump.
type Owner struct {
	Entity int        `json:"entity"`
	Slot   int        `json:"slot"`
	Epoch  uint32     `json:"epoch"`
	Known  bool       `json:"known,omitempty"`
	Stamp  uint32     `json:"stamp,omitempty"`
	Seq    uint16     `json:"seq,omitempty"`
	Pos    [3]float64 `json:"pos"`
	Vel    [3]float64 `json:"vel"`
	Reason string     `json:"reason,omitempty"` // why a claim was refused
}

// Type implements Message.
func (*Spawn) Type() wire.ControlType { return TypeSpawn }

// Type implements Message.
func (*Despawn) Type() wire.ControlType { return TypeDespawn }

// Type implements Message.
func (*Claim) Type() wire.ControlType { return TypeClaim }

// Type implements Message.
func (*Owner) Type() wire.ControlType { return TypeOwner }

func init() {
	registry[TypeSpawn] = entry{"spawn", func() Message { return new(Spawn) }}
	registry[TypeDespawn] = entry{"despawn", func() Message { return new(Despawn) }}
	registry[TypeClaim] = entry{"claim", func() Message { return new(Claim) }}
	registry[TypeOwner] = entry{"owner", func() Message { return new(Owner) }}
}

// CheckSpawn checks a Spawn as its sender wrote it: an entity id of a
// player's own (1..wire.MaxPlayerEntity) or of a shared object
// (wire.FirstShared..255), a scene name of 1 to MaxSceneName printable
// bytes, Args empty or one JSON array of at most MaxSpawnArgs bytes
// nesting at most MaxArgDepth levels inside it, and finite numbers.
func CheckSpawn(m *Spawn) error {
	if m.Entity < 1 || m.Entity > 255 {
		return fmt.Errorf("%w: entity %d outside 1..255 (0 is the player's own)", ErrBadSpawn, m.Entity)
	}
	if m.Scene == "" || len(m.Scene) > MaxSceneName || !utf8.ValidString(m.Scene) {
		return fmt.Errorf("%w: scene must be 1 to %d bytes of UTF-8", ErrBadSpawn, MaxSceneName)
	}
	for _, r := range m.Scene {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: scene %q has a control character", ErrBadSpawn, m.Scene)
		}
	}
	if len(m.Args) > 0 {
		if len(m.Args) > MaxSpawnArgs {
			return fmt.Errorf("%w: args of %d bytes (at most %d)", ErrBadSpawn, len(m.Args), MaxSpawnArgs)
		}
		if d := ArgDepth(m.Args) - 1; d > MaxArgDepth {
			return fmt.Errorf("%w: args nest %d deep, at most %d", ErrBadSpawn, d, MaxArgDepth)
		}
		var a []json.RawMessage
		if err := json.Unmarshal(m.Args, &a); err != nil {
			return fmt.Errorf("%w: args must be a JSON array: %v", ErrBadSpawn, err)
		}
	}
	for _, v := range append(m.Pos[:], m.Rot[:]...) {
		if v-v != 0 {
			return fmt.Errorf("%w: position or rotation not finite", ErrBadSpawn)
		}
	}
	return nil
}

// CheckEntity checks an entity id of a Despawn (1..255) or a Claim
// (shared: wire.FirstShared..255).
func CheckEntity(entity int, shared bool) error {
	lo := 1
	if shared {
		lo = wire.FirstShared
	}
	if entity < lo || entity > 255 {
		return fmt.Errorf("%w: entity %d outside %d..255", ErrBadSpawn, entity, lo)
	}
	return nil
}
