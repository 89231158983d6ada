package netroom

import (
	"encoding/json"
	"fmt"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/typedargs"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Synced properties (NetPredictor.synced_properties), the Room's side:
// what it sends for our entities (client/entity's Props hands it the
// changed values) and what it keeps of the others'.

// SendProp sends synced property key of our entity (0: the player's own)
// with value, one JSON value as protocol.CheckProp takes it: reliable,
// and kept by the server for players who join later. A failure is queued
// as EventError too.
func (r *Room) SendProp(entity int, key string, value json.RawMessage) error {
	return r.sendInRoom(&protocol.Prop{Entity: entity, Key: key, Value: value})
}

// PropsOf returns the synced properties last received for entity k
// (values as typedargs.Decode gives them): what a node spawned after they
// arrived applies first. Nil when none.
func (r *Room) PropsOf(k Key) map[string]any {
	return r.props[k]
}

// applyProp keeps a received property and emits EventProp.
func (r *Room) applyProp(m *protocol.Prop) {
	vals, err := typedargs.Decode(json.RawMessage("[" + string(m.Value) + "]"))
	if err != nil || len(vals) != 1 {
		r.emit(errorEvent(fmt.Errorf("synced property %q from slot %d: %w", m.Key, m.Slot, err)))
		return
	}
	if m.Entity < 0 || m.Entity > wire.MaxPlayerEntity {
		return // shared objects have no synced properties (yet)
	}
	k := Key{Slot: m.Slot, Entity: m.Entity}
	if r.props == nil {
		r.props = map[Key]map[string]any{}
	}
	if r.props[k] == nil {
		r.props[k] = map[string]any{}
	}
	r.props[k][m.Key] = vals[0]
	r.emit(Event{Kind: EventProp, Slot: m.Slot, Entity: m.Entity, Text: m.Key, Args: vals})
}

// pruneProps forgets the properties of slots no longer in the room.
func (r *Room) pruneProps(st *protocol.RoomState) {
	for k := range r.props {
		found := false
		for _, p := range st.Players {
			found = found || p.Slot == k.Slot
		}
		if !found {
			delete(r.props, k)
		}
	}
}
