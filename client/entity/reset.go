package entity

import (
	"errors"
	"fmt"

	"github.com/nearzero/nearzero/netcode/geom"
)

// Reset is where reset_to puts an entity: the root's new position and
// orientation.
type Reset struct {
	Pos geom.Vec3
	Rot geom.Quat
}

// ErrNoReset indicates a reset_to on an entity this machine may not move:
// another player's, or a shared object this player neither owns nor can
// claim as the host.
var ErrNoReset = errors.New("entity: reset_to moves an entity this machine sends: your own, or a shared object you own (the host claims one to reset it)")

// ResetTo asks for the entity to jump to r (a respawn; the ball back to
// the centre after a point): every other player draws one jump there, not
// a fast move. now reports whether the node places the root at r at once:
// the local player's entity and its other entities, and a shared object
// this player owns. The host may reset a shared object another player
// owns: it claims it (the server grants the host any object), and the
// node places it when the ownership arrives (TakeReset). The server lets
// a shared object jump only for the players its rules allow (the host, by
// default); a refusal comes back as room_error ERROR_IMPLAUSIBLE.
func (p *Predictor) ResetTo(r Reset) (now bool, err error) {
	switch {
	case p.IsLocal():
		p.hasReset = false
		if p.local != nil {
			p.local.Teleport()
		}
		return true, nil
	case p.mode == ModeShared && p.room != nil && p.room.InRoom() && p.room.Host() == p.room.Slot():
		p.reset, p.hasReset = r, true
		if !p.room.Claiming(p.WireEntity()) {
			if err := p.room.Claim(p.WireEntity()); err != nil {
				p.hasReset = false
				return false, fmt.Errorf("reset_to: %w", err)
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("reset_to (%s entity): %w", p.mode, ErrNoReset)
}

// TakeReset returns a reset waiting for the ownership of a shared object,
// once this player owns it: the node places the root there, and the next
// state is flagged as a jump. ok is false when there is none to apply
// now.
func (p *Predictor) TakeReset() (r Reset, ok bool) {
	if !p.hasReset || !p.Owned() {
		return Reset{}, false
	}
	p.hasReset = false
	if p.local != nil {
		p.local.Teleport()
	}
	return p.reset, true
}
