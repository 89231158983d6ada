package entity

import (
	"errors"
	"fmt"

	"github.com/nearzero/nearzero/client/netroom"
)

// A node placed in the level may stand for a player slot (Godot's
// set_multiplayer_authority move): the left paddle is slot 0's, the right
// one slot 1's, on every machine. On the machine seated in that slot it
// is the local entity (sampled and sent), on every other it draws that
// player's entity; while nobody holds the slot (or before a room) it is
// idle, left as the scene placed it. The room spawns no player scene for
// a slot a node stands for with entity_id 0 (netroom.Room.ReserveSlot).

// ErrPlayerSlot indicates a player slot a NetPredictor cannot stand for.
var ErrPlayerSlot = errors.New("entity: player_slot must be -1 (none) or a slot 0..255, on an entity that is not a shared object")

// SetPlayerSlot makes the entity stand for slot (-1: none, the default:
// the local player's entity, or a spawned copy's). Set it in the scene,
// or before the node enters the tree; changed later, the entity binds
// again at once.
func (p *Predictor) SetPlayerSlot(slot int) error {
	if slot < -1 || slot >= netroom.MaxSlots || (slot >= 0 && p.shared) {
		return fmt.Errorf("player_slot %d: %w", slot, ErrPlayerSlot)
	}
	if slot == p.playerSlot {
		return nil
	}
	bound := p.room != nil && !p.byRoom
	if bound {
		p.ExitTree() // releases the reservation and the current binding
	}
	p.playerSlot = slot
	if !bound {
		return nil
	}
	if slot < 0 {
		p.bindSlot(ModeLocal)
		return nil
	}
	p.reserve()
	p.bindSlot(ModeIdle)
	p.SyncSlot()
	return nil
}

// PlayerSlot returns the slot the entity stands for, -1 for none.
func (p *Predictor) PlayerSlot() int { return p.playerSlot }

// slotted reports whether the entity is a placed node standing for a slot.
func (p *Predictor) slotted() bool { return p.playerSlot >= 0 && !p.shared && !p.byRoom }

// reserve reserves the slot in the room for a node standing for the
// player's own entity (entity_id 0): no player scene is spawned for it; a
// second such node for one slot is reported. A node standing for another
// of the player's entities (entity_id 1..127: its paddle beside its
// spawned avatar) reserves nothing.
func (p *Predictor) reserve() {
	if p.room == nil || p.reserved || !p.slotted() || p.entity != 0 {
		return
	}
	if err := p.room.ReserveSlot(p.playerSlot, p); err != nil {
		p.report(err)
		return
	}
	p.reserved = true
}

// SyncSlot follows the room for an entity standing for a player slot:
// local while we hold the slot, drawing its player while another does,
// idle otherwise. Call it every frame, before drawing or sampling; it
// reports whether the mode changed (the node then shows or hides the root
// and hands its interpolation over).
func (p *Predictor) SyncSlot() bool {
	if !p.slotted() || p.room == nil {
		return false
	}
	want := ModeIdle
	switch r := p.room; {
	case !r.InRoom():
	case r.Slot() == p.playerSlot:
		want = ModeLocal
	default:
		if _, ok := r.Player(p.playerSlot); ok {
			want = ModeRemote
		}
	}
	if want == p.mode {
		return false
	}
	p.bindSlot(want)
	return true
}

// bindSlot leaves the current mode (unbinding the drawn entity, giving up
// the sender's claim) and takes mode.
func (p *Predictor) bindSlot(mode Mode) {
	if p.room != nil {
		switch p.mode {
		case ModeRemote:
			p.room.UnbindEntity(p.key(), p.remote)
		case ModeLocal:
			p.room.ReleaseLocalEntity(p.WireEntity(), p.local)
			p.claimed = false
		}
	}
	p.mode = mode
	p.slot = -1
	if mode == ModeRemote {
		p.slot = p.playerSlot
		if p.remote != nil {
			p.remote.Reset() // another player's states, or the same player's after a gap
		}
	}
	if mode == ModeLocal && p.local != nil {
		p.local.Reset() // a fresh sender: its first state jumps to where the root is
	}
	if mode == ModeIdle {
		return
	}
	// build keeps a Remote or Local whose settings are unchanged: bind it
	// explicitly.
	p.build()
	switch mode {
	case ModeRemote:
		if err := p.room.BindEntity(p.key(), p.remote); err != nil {
			p.report(err)
		}
	case ModeLocal:
		if err := p.room.ClaimLocalEntity(p.WireEntity(), p.local); err != nil {
			p.report(err)
		} else {
			p.claimed = true
		}
	}
}
