package netroom

import "time"

// directWatch tracks the liveness of direct links by arrival: up at the
// first arrival, down after a silence (docs/architecture.md §5: once a direct
// link is up the server stops relaying that pair, so a dead link must be
// reported quickly or the entity goes without data).
type directWatch struct {
	up   [MaxSlots]bool
	last [MaxSlots]time.Duration
	nUp  int
}

// arrived records an arrival from slot and reports whether the link just
// came up.
func (d *directWatch) arrived(slot int, at time.Duration) bool {
	if slot < 0 || slot >= MaxSlots {
		return false
	}
	d.last[slot] = max(d.last[slot], at)
	if d.up[slot] {
		return false
	}
	d.up[slot] = true
	d.nUp++
	return true
}

// down reports, once, that slot's link has been silent longer than
// silence at now.
func (d *directWatch) down(slot int, now, silence time.Duration) bool {
	if !d.up[slot] || now-d.last[slot] <= silence {
		return false
	}
	d.up[slot] = false
	d.nUp--
	return true
}
