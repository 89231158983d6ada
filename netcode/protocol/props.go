package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/nearzero/nearzero/netcode/wire"
)

// TypeProp is a synced property (NetPredictor.synced_properties) set by
// its owner; it goes both ways.
const TypeProp wire.ControlType = 20

// Limits of synced properties that every build enforces; a server may set
// tighter ones (room.PropLimits).
const (
	// MaxPropKey is the longest property key (a property path) in bytes.
	MaxPropKey = 64
	// MaxPropValue is the largest property value as JSON, in bytes.
	MaxPropValue = 1 << 10
)

// ErrBadProp indicates a property key outside the rules, or a value that
// is not one JSON value or too big.
var ErrBadProp = errors.New("protocol: bad synced property")

// Prop sets synced property Key of a player's entity to Value (one JSON
// value: null, bool, number, string, array, object). The owner sends it
// when the value changes; the server keeps the last value of every key of
// every seated player, relays each change to the others with Slot set to
// the owner's slot, and sends a joining player every value kept. Entity
// names one of the player's entities (0, the player's own, for now).
type Prop struct {
	Slot   int             `json:"slot"`
	Entity int             `json:"entity,omitempty"`
	Key    string          `json:"key"`
	Value  json.RawMessage `json:"value"`
}

// Type implements Message.
func (*Prop) Type() wire.ControlType { return TypeProp }

func init() {
	registry[TypeProp] = entry{"prop", func() Message { return new(Prop) }}
}

// CheckProp checks a property key (1 to MaxPropKey bytes of printable
// UTF-8) and value (one JSON value of at most MaxPropValue bytes, nesting
// at most MaxArgDepth deep).
func CheckProp(key string, value json.RawMessage) error {
	if key == "" || len(key) > MaxPropKey || !utf8.ValidString(key) {
		return fmt.Errorf("%w: key must be 1 to %d bytes of UTF-8", ErrBadProp, MaxPropKey)
	}
	for _, r := range key {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: key %q has a control character", ErrBadProp, key)
		}
	}
	if len(value) > MaxPropValue {
		return fmt.Errorf("%w: %q is %d bytes, at most %d", ErrBadProp, key, len(value), MaxPropValue)
	}
	if len(value) == 0 || !json.Valid(value) {
		return fmt.Errorf("%w: the value of %q is not one JSON value", ErrBadProp, key)
	}
	if d := ArgDepth(value); d > MaxArgDepth {
		return fmt.Errorf("%w: the value of %q nests %d deep, at most %d", ErrBadProp, key, d, MaxArgDepth)
	}
	return nil
}

func (m *Prop) validate() error {
	if m.Entity < 0 {
		return fmt.Errorf("entity %d is negative", m.Entity)
	}
	return CheckProp(m.Key, m.Value)
}
