package core

import (
	"time"

	"github.com/nearzero/nearzero/netcode/wire"
)

// MaxSlots bounds the slots a DirectWatch tracks (a slot is one byte).
const MaxSlots = 256

// Link health (DirectWatch.State): a direct link is reported up once it
// has carried HealthStates states and lost at most the allowed share of
// the recent ones (about the last HealthWindow), and down again when it
// loses more than twice that.
const (
	// HealthStates is how many states a link must carry before it is
	// judged: a second's worth at 60 a second.
	HealthStates = 60
	// HealthWindow is how many of a peer's latest states (by sequence
	// number) the loss is measured over, about two seconds' worth.
	HealthWindow = 120
	// DefaultMaxLoss is the share of its states a direct link may lose
	// and be reported up: what it loses the server path would deliver,
	// late, so a link losing more leaves the server relaying as well.
	DefaultMaxLoss = 0.05
)

// DirectWatch tracks the liveness and health of direct links: up at the
// first arrival (Arrived) or once the link delivers what it should
// (State), down after a silence or a run of losses. Once a direct link is
// reported up the server stops relaying that pair, so a dead or lossy
// link must be reported quickly or the entity goes without data. The zero
// value has every link down.
type DirectWatch struct {
	up   [MaxSlots]bool
	last [MaxSlots]time.Duration
	nUp  int
	loss [MaxSlots]linkLoss
	// newest is each (slot, entity)'s newest sequence number on the
	// direct path (key slot<<8 | entity), made on the first State.
	newest map[int]wire.Seq
}

// linkLoss estimates the share of a peer's states its direct link lost,
// from the gaps in their sequence numbers (each entity its own), over
// about its last HealthWindow states; a state arriving late fills the
// gap it left.
type linkLoss struct {
	expected, received float64
	states             int // states counted since the estimate started
	// trusted is set once the link has been healthy, and kept through a
	// silence (a stall is not a loss: when states come again the link is
	// up again at once); a link reported down for its losses, or
	// dropped, must prove itself again.
	trusted bool
}

// lossReset is a jump in sequence numbers taken for a new sender (a
// reconnect, a respawned entity) rather than losses.
const lossReset = 1000

// value returns the estimated loss, 0 to 1.
func (l *linkLoss) value() float64 {
	if l.expected <= 0 {
		return 0
	}
	return min(max(1-l.received/l.expected, 0), 1)
}

// State records a state from slot's direct link, of entity with sequence
// number seq, arriving at at; it reports whether the link just became
// healthy (report it up to the server) or just stopped being so (report
// it down: the server relays again). A link is healthy once it has
// carried HealthStates states and lost at most maxLoss of its latest
// ones; it stops being so when it loses more than twice that. A healthy
// link reported down for a silence (Down) is up again at its first state. Until it is
// up the server goes on relaying: a link that loses states the server
// path would deliver does not replace it (jitter that makes a data
// channel discard late messages, a path dropping a share of them).
func (d *DirectWatch) State(slot, entity int, seq wire.Seq, at time.Duration, maxLoss float64) (up, down bool) {
	if slot < 0 || slot >= MaxSlots {
		return false, false
	}
	d.last[slot] = max(d.last[slot], at)
	if d.newest == nil {
		d.newest = map[int]wire.Seq{}
	}
	l := &d.loss[slot]
	key := slot<<8 | entity&0xff
	prev, seen := d.newest[key]
	switch diff := seq.Diff(prev); {
	case !seen || l.states == 0 || diff > lossReset || diff < -lossReset:
		d.newest[key] = seq // a new entity, a new count, or a new sender
		l.expected++
		l.received++
	case diff > 0:
		k := 1.0
		for range min(diff, HealthWindow) {
			k *= 1 - 1.0/HealthWindow
		}
		l.expected = l.expected*k + float64(diff)
		l.received = l.received*k + 1
		d.newest[key] = seq
	case diff < 0: // late: counted lost when the gap opened
		l.received = min(l.received+1, l.expected)
	default:
		return false, false // the same state again
	}
	l.states++
	if l.states < HealthStates {
		if !d.up[slot] && l.trusted {
			d.up[slot] = true
			d.nUp++
			return true, false
		}
		return false, false
	}
	loss := l.value()
	switch {
	case !d.up[slot] && loss <= maxLoss:
		d.up[slot] = true
		d.nUp++
		l.trusted = true
		return true, false
	case d.up[slot] && loss > 2*maxLoss:
		d.up[slot] = false
		d.nUp--
		l.trusted = false
		return false, true
	case d.up[slot]:
		l.trusted = true
	}
	return false, false
}

// Loss returns the share of slot's states its direct link lost recently
// (State's estimate); ok is false before it has judged the link.
func (d *DirectWatch) Loss(slot int) (loss float64, ok bool) {
	if slot < 0 || slot >= MaxSlots || d.loss[slot].states < HealthStates {
		return 0, false
	}
	return d.loss[slot].value(), true
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
	// Judged afresh when states come again; a link that was healthy is up
	// again at its first state (a stall is not a loss).
	d.loss[slot] = linkLoss{trusted: d.loss[slot].trusted}
	return true
}

// Drop marks slot's link down at once (reported by the caller).
func (d *DirectWatch) Drop(slot int) {
	if slot < 0 || slot >= MaxSlots {
		return
	}
	if d.up[slot] {
		d.up[slot] = false
		d.nUp--
	}
	d.loss[slot] = linkLoss{}
}

// Up reports whether slot's link is up.
func (d *DirectWatch) Up(slot int) bool { return slot >= 0 && slot < MaxSlots && d.up[slot] }

// Count returns the number of links up.
func (d *DirectWatch) Count() int { return d.nUp }
