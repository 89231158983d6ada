package wire

import (
	"errors"
	"fmt"
)

// ProtocolVersion is the version of the wire format and the room protocol.
// Bump it on every change to either; peers of another version are refused
// with an *UpdateRequiredError. Version 2 added entity ids to states and
// the spawn and ownership messages; version 3 typed arguments in events,
// spawns and synced properties (a Vector2 is no longer an array), which
// an older client would misread rather than refuse; version 4 the round
// trip the server measures (a probe in each pong, answered by an echo),
// which the server requires of every client; version 5 the room size
// (Settings.MaxPlayers), which a server of version 4 would ignore, seating
// a third player in a two-player room.
const ProtocolVersion uint16 = 5

// RulesVersion is the version of the simulation rules (physics, prediction
// and movement limits). Players of different rules versions are kept out of
// one room, because their entities would move differently. Bump it on every
// change to the predictor or the checks. Version 2: a shared object may
// jump (a reset) for the players the room's rules allow (the host, by
// default).
const RulesVersion uint16 = 2

// ErrUpdateRequired indicates that the peer speaks another protocol or rules
// version; one side must update. Match it with errors.Is.
var ErrUpdateRequired = errors.New("update required")

// UpdateRequiredError says which version differs. It matches ErrUpdateRequired.
type UpdateRequiredError struct {
	// What is "protocol" or "rules".
	What string
	// Peer is the version the other side sent; Local is ours.
	Peer, Local uint16
}

// Error implements error.
func (e *UpdateRequiredError) Error() string {
	newer := "this build is older"
	if e.Peer < e.Local {
		newer = "the peer is older"
	}
	return fmt.Sprintf("update required: %s version %d, this build speaks %d (%s)", e.What, e.Peer, e.Local, newer)
}

// Is reports whether target is ErrUpdateRequired.
func (e *UpdateRequiredError) Is(target error) bool { return target == ErrUpdateRequired }

// CheckVersions returns an *UpdateRequiredError when either version differs
// from this build's, and nil when both match.
func CheckVersions(protocol, rules uint16) error {
	if protocol != ProtocolVersion {
		return &UpdateRequiredError{What: "protocol", Peer: protocol, Local: ProtocolVersion}
	}
	if rules != RulesVersion {
		return &UpdateRequiredError{What: "rules", Peer: rules, Local: RulesVersion}
	}
	return nil
}
