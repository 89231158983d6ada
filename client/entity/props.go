package entity

import (
	"bytes"
	"fmt"
	"time"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/typedargs"
)

// DefaultPropRate is how many times a second a local entity sends its
// changed synced properties at most: changes in between are merged.
const DefaultPropRate = 10.0

// Props is the owner side of one entity's synced properties
// (NetPredictor.synced_properties): fed the current values each physics
// frame, it sends the ones that changed since they were last sent, at
// most Rate times a second, through the Room (reliable, kept by the server
// for late joiners). Owned by the main thread.
type Props struct {
	// Rate is the most sends per second; 0 means DefaultPropRate.
	Rate   float64
	Entity int // the entity's id among its owner's (0: the player's own)

	sent    map[string][]byte // last value sent per key, as JSON
	pending map[string][]byte // changed since, not yet sent
	order   []string          // pending keys in the order they changed
	nextAt  time.Duration
}

// Set records key's current value (what typedargs.Encode takes); an unchanged
// value costs nothing. A value events cannot carry fails with typedargs.ErrBadArg
// and so does one over protocol.MaxPropValue once encoded.
func (p *Props) Set(key string, value any) error {
	raw, err := typedargs.Encode([]any{value})
	if err != nil {
		return fmt.Errorf("synced property %q: %w", key, err)
	}
	raw = raw[1 : len(raw)-1] // the one value inside [ ]
	if err := protocol.CheckProp(key, raw); err != nil {
		return fmt.Errorf("synced property: %w", err)
	}
	if p.sent == nil {
		p.sent, p.pending = map[string][]byte{}, map[string][]byte{}
	}
	if old, ok := p.sent[key]; ok && bytes.Equal(old, raw) {
		delete(p.pending, key) // changed back before it went out
		return nil
	}
	if _, ok := p.pending[key]; !ok {
		p.order = append(p.order, key)
	}
	p.pending[key] = raw
	return nil
}

// Flush sends the pending changes through r when due (at most Rate times
// a second), oldest change first, and reports how many went out. Changes
// r cannot send now (not in a room) stay pending.
func (p *Props) Flush(now time.Duration, r *netroom.Room) int {
	if len(p.pending) == 0 || now < p.nextAt || !r.InRoom() || r.Status() != netroom.StatusConnected {
		return 0
	}
	rate := p.Rate
	if rate <= 0 {
		rate = DefaultPropRate
	}
	p.nextAt = now + time.Duration(float64(time.Second)/rate)
	n := 0
	keep := p.order[:0]
	for _, k := range p.order {
		v, ok := p.pending[k]
		if !ok {
			continue
		}
		if err := r.SendProp(p.Entity, k, v); err != nil {
			keep = append(keep, k)
			continue
		}
		p.sent[k] = v
		delete(p.pending, k)
		n++
	}
	p.order = keep
	return n
}

// Resend forgets what was sent, so every value set goes out again at the
// next Flush (a new room: its server keeps nothing of ours).
func (p *Props) Resend() {
	for k, v := range p.sent {
		if _, ok := p.pending[k]; !ok {
			p.pending[k] = v
			p.order = append(p.order, k)
		}
	}
	clear(p.sent)
}

// MaxSyncedKeys is how many synced properties a player's entities may
// have in all with the server's default limit (room.DefaultPropKeys).
const MaxSyncedKeys = 32

// SyncedWarnings returns NetPredictor's configuration warnings about its
// synced_properties: empty, duplicate or too long paths, and more than the
// server keeps.
func SyncedWarnings(paths []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		switch {
		case p == "":
			out = append(out, "synced_properties has an empty entry: remove it.")
		case len(p) > protocol.MaxPropKey:
			out = append(out, fmt.Sprintf("synced_properties: %q is longer than %d bytes and is not sent.", p, protocol.MaxPropKey))
		case seen[p]:
			out = append(out, fmt.Sprintf("synced_properties lists %q twice.", p))
		}
		seen[p] = true
	}
	if len(paths) > MaxSyncedKeys {
		out = append(out, fmt.Sprintf("synced_properties lists %d properties; the server keeps at most %d per player by default.",
			len(paths), MaxSyncedKeys))
	}
	return out
}
