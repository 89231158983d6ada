package clock

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/wire"
)

// Defaults of RestampConfig.
const (
	DefaultGapWindow        = 15 * time.Second
	DefaultRTTWindow        = 60 * time.Second
	DefaultRestampSlewRate  = 0.004
	DefaultRestampJumpAbove = 50 * time.Millisecond
	DefaultStepAfter        = time.Second
)

// RestampConfig tunes a Restamper. The zero value of every field means its
// default.
type RestampConfig struct {
	// GapWindow is the window, by arrival time, over which the fastest
	// stamp-to-arrival gap is taken. Default 15 s.
	GapWindow time.Duration
	// RTTWindow is the window, by receiver time, over which the fastest round
	// trip is taken. Default 60 s. The newest round trip is kept even when it
	// is older.
	RTTWindow time.Duration
	// SlewRate is the largest rate of change of the applied offset, in seconds
	// per second of receiver time. Default 0.004 (4 ms/s); must be below 1.
	SlewRate float64
	// JumpAbove is the change of the target above which it is applied at
	// once instead of slid. Default 50 ms. The first state always jumps,
	// and so does the first state mapped with a round trip.
	JumpAbove time.Duration
	// StepAfter is how long, by arrival time, every gap must stay more than
	// JumpAbove above the windowed minimum before the sender's clock is taken
	// to have stepped back and the older gaps are forgotten. A step forward
	// (gaps shrink) is taken at the first state; a step back looks like a
	// stall until it lasts. Default 1 s; must be shorter than GapWindow.
	StepAfter time.Duration
	// Settle is how long from the first state (of the Restamper, or since
	// Reset) the applied offset takes the estimate at once instead of
	// sliding to it (as SettleUntil). The estimate tightens fast in a
	// sender's first seconds, by several ms (its fastest gap over the first
	// states, the first round trips): slid at SlewRate, that early error
	// stayed for seconds (the network lab's server path drew a new player's
	// states 10-13 ms off for 3 s). Default 0: never (server/room sets it;
	// a direct link settles from when it comes up, core.Peer).
	Settle time.Duration
}

// withDefaults returns a copy with zero fields set to their defaults.
func (c *RestampConfig) withDefaults() RestampConfig {
	var d RestampConfig
	if c != nil {
		d = *c
	}
	if d.GapWindow == 0 {
		d.GapWindow = DefaultGapWindow
	}
	if d.RTTWindow == 0 {
		d.RTTWindow = DefaultRTTWindow
	}
	if d.SlewRate == 0 {
		d.SlewRate = DefaultRestampSlewRate
	}
	if d.JumpAbove == 0 {
		d.JumpAbove = DefaultRestampJumpAbove
	}
	if d.StepAfter == 0 {
		d.StepAfter = DefaultStepAfter
	}
	return d
}

// Validate reports the first invalid field, after defaults are applied.
func (c *RestampConfig) Validate() error {
	d := c.withDefaults()
	switch {
	case d.GapWindow < 0:
		return fmt.Errorf("clock: GapWindow %v is negative", d.GapWindow)
	case d.RTTWindow < 0:
		return fmt.Errorf("clock: RTTWindow %v is negative", d.RTTWindow)
	case !(d.SlewRate > 0 && d.SlewRate < 1): // also rejects NaN
		return fmt.Errorf("clock: SlewRate %v is outside (0, 1)", d.SlewRate)
	case d.JumpAbove < 0:
		return fmt.Errorf("clock: JumpAbove %v is negative", d.JumpAbove)
	case d.StepAfter < 0:
		return fmt.Errorf("clock: StepAfter %v is negative", d.StepAfter)
	case d.Settle < 0:
		return fmt.Errorf("clock: Settle %v is negative", d.Settle)
	case d.StepAfter >= d.GapWindow:
		return fmt.Errorf("clock: StepAfter %v is not shorter than GapWindow %v; a step back would never be seen",
			d.StepAfter, d.GapWindow)
	}
	return nil
}

// Restamper maps a sender's timestamps onto the receiver's clock. It is the
// one estimator used by the server for relayed states (the receiver is the
// server) and by clients for direct links, so both paths agree. See the
// package documentation for the method. A Restamper is not safe for
// concurrent use.
type Restamper struct {
	cfg RestampConfig // read-only after NewRestamper

	gaps minQueue // arrival - sender time, by arrival
	rtts minQueue // round trips, by receiver time
	off  slew     // applied receiver-minus-sender offset

	last    time.Duration // latest arrival seen (window clock)
	runFrom time.Duration // start of the current run of high gaps (see stepBack)
	inRun   bool
	// runLow are the lowest gaps in the three thirds of StepAfter from
	// runFrom on: a clock that stepped back gives three level thirds, a
	// queue filling or draining (congestion, a slow catch-up after a
	// stall) does not.
	runLow [3]time.Duration
	// rttKnown is set once a Restamp has used a round trip.
	rttKnown bool
	// peerGap is the sender's lowest gap of our stamps (ObservePeerGap),
	// received at peerAt; hasPeer once one came.
	peerGap, peerAt time.Duration
	hasPeer         bool
	// settleUntil: before this receiver time the applied offset takes
	// the estimate at once (SettleUntil), when settling.
	settleUntil time.Duration
	settling    bool
}

// NewRestamper returns a Restamper; a nil cfg means every default.
func NewRestamper(cfg *RestampConfig) (*Restamper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new restamper: %w: %w", ErrInvalidConfig, err)
	}
	d := cfg.withDefaults()
	return &Restamper{cfg: d, off: slew{rate: d.SlewRate}}, nil
}

// ObserveRTT records a round trip to the sender measured at receiver time
// now. It takes effect at the next Restamp. Round trips that are not
// positive are ignored.
func (r *Restamper) ObserveRTT(rtt, now time.Duration) {
	if rtt <= 0 {
		return
	}
	r.rtts.expire(now-r.cfg.RTTWindow, 0)
	r.rtts.push(now, rtt)
}

// ObservePeerGap records, at receiver time now, the sender's own lowest
// gap of our stamps: the fastest of our states to reach it, its arrival on
// its clock minus our sample time on ours: on a direct link, where both
// ends stream states to each other, the peer's Restamper.LowGap; at the
// room server, the lowest gap from a pong's server time to its receipt
// that the player reports in its pings (clock.Sync.ReturnGap).
//
// Added to our own lowest gap of its stamps, the two clocks' offsets
// cancel and what remains is a round trip made of the fastest one-way
// trip each way: with states at 60 a second each way, a far better
// estimate of the fastest round trip than pings at one a second give (a
// round trip's own minimum over a handful of pings sits high under
// jitter, and half its excess puts every state that much early). It
// takes the round trip's place whenever it is the smaller, so the
// mapping is the midpoint of the two fastest trips. The latest report is
// kept for RTTWindow.
func (r *Restamper) ObservePeerGap(gap, now time.Duration) {
	r.peerGap, r.peerAt, r.hasPeer = gap, now, true
}

// SettleUntil makes the applied offset take the estimate at once, not
// slide to it, for states arriving before receiver time t: a new direct
// link, whose first round trip may be one held up a little (ICE's, taken
// while its agent was busy), and whose estimate tightens fast in its first
// seconds, should not carry an early error for the many seconds a slide
// takes.
func (r *Restamper) SettleUntil(t time.Duration) { r.settleUntil, r.settling = t, true }

// LowGap returns the lowest stamp-to-arrival gap in the window (arrival
// minus the sender's time, which holds the two clocks' offset): what this
// side reports to a sender's ObservePeerGap. ok is false before any state.
func (r *Restamper) LowGap() (gap time.Duration, ok bool) { return r.gaps.min() }

// Restamp records a state stamped stamp by the sender that arrived at
// receiver time arrival, and returns the sender's sample time on the
// receiver's clock: the unwrapped stamp plus the applied offset. The server
// writes wire.StampOf(result) into the relayed frame; a client feeding a
// predictor uses the result directly.
func (r *Restamper) Restamp(stamp wire.Stamp, arrival time.Duration) time.Duration {
	var sender time.Duration
	if r.off.set {
		// Unwrap against where the sender's clock should be now, which stays
		// right across silences longer than half the stamp period.
		sender = stamp.Near(arrival - r.off.value(arrival))
	} else {
		sender = time.Duration(stamp) * wire.StampUnit
	}
	gap := arrival - sender
	if !r.off.set && r.cfg.Settle > 0 {
		r.SettleUntil(max(arrival+r.cfg.Settle, r.settleUntil))
	}
	now := arrival // the windows need a clock that never goes back
	if r.off.set {
		now = max(now, r.last)
	}
	r.last = now

	r.gaps.expire(now-r.cfg.GapWindow, 0)
	if low, ok := r.gaps.min(); ok && gap-low > r.cfg.JumpAbove {
		r.stepBack(now, gap)
	} else {
		r.inRun = false
	}
	r.gaps.push(now, gap)

	low, _ := r.gaps.min()
	r.rtts.expire(now-r.cfg.RTTWindow, 1)
	rtt, hasRTT := r.rtts.min()
	if r.hasPeer && now-r.peerAt <= r.cfg.RTTWindow {
		if both := low + r.peerGap; both > 0 && (!hasRTT || both < rtt) {
			rtt, hasRTT = both, true
		}
	}
	jumpAbove := r.cfg.JumpAbove
	if r.settling && arrival < r.settleUntil {
		jumpAbove = 0
	}
	if hasRTT && !r.rttKnown {
		// The first round trip: the estimate so far lacked half of it, a
		// whole one-way latency (tens of ms, which would take seconds to
		// slide). Take the corrected offset at once, as a first state.
		r.rttKnown = true
		jumpAbove = 0
	}
	r.off.update(arrival, low-rtt/2, jumpAbove)
	return sender + r.off.value(arrival)
}

// stepBack follows a run of gaps more than JumpAbove above the windowed
// minimum. When every gap has been high for StepAfter and the run is level
// (the lowest gap of each third of StepAfter within JumpAbove/2 of the
// others), the sender's clock went back: the gaps from before the run are
// forgotten. A run that rises or falls is a queue (congestion, a backlog
// draining after a stall), which must not move the mapping: taking it for a
// step would jump the mapping forward, then back once the queue drains,
// and draw the sender's states going backwards.
func (r *Restamper) stepBack(now, gap time.Duration) {
	const none = time.Duration(1<<63 - 1)
	third := max(r.cfg.StepAfter/3, 1)
	if !r.inRun {
		r.inRun, r.runFrom, r.runLow = true, now, [3]time.Duration{none, none, none}
	}
	for now-r.runFrom >= 3*third {
		lo := min(r.runLow[0], r.runLow[1], r.runLow[2])
		hi := max(r.runLow[0], r.runLow[1], r.runLow[2])
		if hi != none && hi-lo <= r.cfg.JumpAbove/2 {
			r.gaps.expire(r.runFrom, 0)
			r.inRun = false
			return
		}
		// Not level (or a third saw nothing): slide the run by a third.
		r.runFrom += third
		r.runLow = [3]time.Duration{r.runLow[1], r.runLow[2], none}
	}
	i := (now - r.runFrom) / third
	r.runLow[i] = min(r.runLow[i], gap)
}

// Offset returns the applied receiver-minus-sender offset at receiver time
// now (what Restamp adds to an unwrapped stamp); 0 before the first state.
// It does not change the Restamper.
func (r *Restamper) Offset(now time.Duration) time.Duration { return r.off.value(now) }

// HasRoundTrip reports whether the latest Restamp used a round trip.
// Before one, the estimate lacks half of it (the one-way latency): a
// state mapped then is taken as newer than it is by that much.
func (r *Restamper) HasRoundTrip() bool { return r.rttKnown }

// Target returns the current estimate of the offset, which the applied
// offset slides toward; 0 before the first state.
func (r *Restamper) Target() time.Duration { return r.off.to }

// ForgetRoundTrips forgets the round trips observed so far: the next one
// is taken as the first (the offset jumps to its estimate). For a round
// trip measured on a different path than the states take (a direct link's
// ICE checks, beneath any lag simulator on either side), good only until
// one measured the states' way arrives.
func (r *Restamper) ForgetRoundTrips() {
	r.rtts.clear()
	r.rttKnown = false
}

// Reset forgets every state, round trip and the applied offset, as for a
// new sender. The configuration and the buffers are kept.
func (r *Restamper) Reset() {
	r.gaps.clear()
	r.rtts.clear()
	r.off.reset()
	r.last, r.runFrom, r.inRun, r.rttKnown = 0, 0, false, false
	r.peerGap, r.peerAt, r.hasPeer = 0, 0, false
	r.settleUntil, r.settling = 0, false
}
