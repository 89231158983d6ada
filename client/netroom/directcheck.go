package netroom

import (
	"time"

	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

const (
	// DirectFailLimit is how many of a peer's direct states may fail the
	// motion checks within DirectFailWindow before the peer is dropped to
	// the server path. More than one, so a single odd state (a respawn the
	// checks misjudge) costs a dropped state, not the link.
	DirectFailLimit = 3
	// DirectFailWindow is the window DirectFailLimit counts in.
	DirectFailWindow = 5 * time.Second
)

// directChecks runs the server's motion checks (netcode/motion) on the
// states direct peers send: those skip the server, so without this a
// cheater would move as it likes for its direct peers. A failing state is
// dropped; a peer whose states keep failing is distrusted: its direct link
// is closed, reported down with protocol.DirectCheat, and its states come
// by the server (and its checks) again until it leaves the room.
type directChecks struct {
	loaded    bool
	on        bool
	limits    motion.Limits
	tracks    map[Key]*directTrack
	fails     [MaxSlots]int
	failSince [MaxSlots]time.Duration
	distrust  [MaxSlots]bool
	has       [MaxSlots]bool // tracks holds some of the slot's
}

// directTrack is one direct (slot, entity)'s motion history.
type directTrack struct {
	motion.Track
	seq wire.Seq
}

// load takes the room's limits from the server's welcome (the defaults
// when the server did not send them, or the link cannot say).
func (d *directChecks) load(l ServerLink) {
	if d.loaded {
		return
	}
	var m *protocol.Motion
	if w, ok := l.(welcomer); ok {
		m = w.Welcome().Limits.Motion
	}
	d.limits, d.on = motion.FromProtocol(m)
	d.loaded = true
}

// check reports whether s, from a direct peer, arriving at now, passes the
// motion checks, and whether its sender just crossed DirectFailLimit.
func (d *directChecks) check(s *wire.State, now time.Duration) (ok, drop bool) {
	slot := int(s.Slot)
	if !d.on {
		return true, false
	}
	k := KeyOf(slot, int(s.Entity))
	t := d.tracks[k]
	if t == nil {
		if d.tracks == nil {
			d.tracks = map[Key]*directTrack{}
		}
		t = &directTrack{}
		d.tracks[k] = t
		d.has[slot] = true
	} else if !s.Seq.Newer(t.seq) {
		// Out of order (or a duplicate): the Receiver refuses it as stale;
		// measured against a newer position it would look like a jump.
		return true, false
	}
	if t.Step(now, &d.limits, s) == motion.Pass {
		t.seq = s.Seq
		return true, false
	}
	if d.fails[slot] == 0 || now-d.failSince[slot] > DirectFailWindow {
		d.fails[slot], d.failSince[slot] = 0, now
	}
	d.fails[slot]++
	return false, d.fails[slot] >= DirectFailLimit
}

// forget drops what the checks know of slot's entity (a despawn: the next
// spawn may be anywhere).
func (d *directChecks) forget(k Key) { delete(d.tracks, k) }

// forgetSlot drops everything about slot: its player left, and a new one
// may take the seat.
func (d *directChecks) forgetSlot(slot int) {
	if d.has[slot] {
		for k := range d.tracks {
			if k.Slot == slot {
				delete(d.tracks, k)
			}
		}
	}
	d.has[slot] = false
	d.fails[slot], d.failSince[slot], d.distrust[slot] = 0, 0, false
}

// unstamp makes slot's next stamps incomparable with its last ones (as
// the server does on a new connection): after a silence or a reconnect the
// peer's clock may have started again, and its next state is measured by
// the time since its last instead.
func (d *directChecks) unstamp(slot int) {
	if !d.has[slot] {
		return
	}
	for k, t := range d.tracks {
		if k.Slot == slot {
			t.Stamped = false
		}
	}
}

// distrustDirect drops slot from direct play: its states come by the
// server from now on, and the server hears why.
func (r *Room) distrustDirect(slot int) {
	r.dcheck.distrust[slot] = true
	r.stats.DirectDistrusted++
	r.cfg.Log.Warn("netroom: direct peer failed motion checks, back to the server path", "slot", slot)
	r.direct.Drop(slot)
	if r.link != nil {
		_ = r.link.Send(&protocol.DirectLink{Slot: slot, Up: false, Reason: protocol.DirectCheat})
	}
	r.syncDirect() // closes its link
}

// DirectDistrusted reports whether slot was dropped from direct play for
// failing the motion checks.
func (r *Room) DirectDistrusted(slot int) bool {
	return slot >= 0 && slot < MaxSlots && r.dcheck.distrust[slot]
}
