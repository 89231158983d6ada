package core

import "time"

// MaxSlots bounds the slots a DirectWatch tracks (a slot is one byte).
const MaxSlots = 256

// DirectWatch tracks the liveness of direct links by arrival: up at the
// first arrival, down after a silence. Once a direct link is reported up
// the server stops relaying that pair, so a dead link must be reported
// quickly or the entity goes without data. The zero value has every link
// down.
type DirectWatch struct {
	up   [MaxSlots]bool
	last [MaxSlots]time.Duration
	nUp  int
}

// Arrived records an arrival from slot at at and reports whether the link
// just came up (report it to the server).
func (d *DirectWatch) Arrived(slot int, at time.Duration) bool {
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

// Down reports, once, that slot's link has been silent longer than
// silence at now (report it to the server).
func (d *DirectWatch) Down(slot int, now, silence time.Duration) bool {
	if slot < 0 || slot >= MaxSlots || !d.up[slot] || now-d.last[slot] <= silence {
		return false
	}
	d.up[slot] = false
	d.nUp--
	return true
}

// Drop marks slot's link down at once (reported by the caller).
func (d *DirectWatch) Drop(slot int) {
	if slot >= 0 && slot < MaxSlots && d.up[slot] {
		d.up[slot] = false
		d.nUp--
	}
}

// Up reports whether slot's link is up.
func (d *DirectWatch) Up(slot int) bool { return slot >= 0 && slot < MaxSlots && d.up[slot] }

// Count returns the number of links up.
func (d *DirectWatch) Count() int { return d.nUp }
