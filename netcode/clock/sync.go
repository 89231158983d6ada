package clock

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of SyncConfig.
const (
	DefaultWarmupInterval = 100 * time.Millisecond
	DefaultWarmupSamples  = 24
	DefaultSyncInterval   = time.Second
	DefaultSyncWindow     = 32
	DefaultSyncSlewRate   = 0.005
	DefaultJumpAbove      = 50 * time.Millisecond
	DefaultSyncedAfter    = 13
	DefaultMaxRTT         = 5 * time.Second
	DefaultMaxDrift       = 50e-6
)

// consistencySlack is how far two samples' offset intervals may miss each
// other before the older one is taken as contradicted and dropped. It covers
// rounding of the server's clock reading; it does not move the estimate,
// which is the middle of the intersection either way.
const consistencySlack = time.Millisecond

// SyncConfig tunes a Sync. The zero value of every field means its default.
type SyncConfig struct {
	// WarmupInterval is the time between pings while the sample window holds
	// fewer than WarmupSamples samples. Default 100 ms.
	//
	// The estimate is bounded by the fastest trip each way among the
	// samples, and under jitter the fastest of a few sits high: with ±10 ms
	// at each edge (the network lab's case) the other player's states were
	// placed 1.4 ms off in their first seconds on average, 0.7 ms until
	// 10 s, with pings every 250 ms for 16 samples then every 2 s; 0.65 and
	// 0.35 ms with these defaults (client/core TestServerMappingUnderJitter's
	// setting, 20 seeds). A ping is some 30 bytes.
	WarmupInterval time.Duration
	// WarmupSamples is how many samples end the warm-up. Default 24; at most Window.
	WarmupSamples int
	// Interval is the time between pings after the warm-up. Default 1 s.
	Interval time.Duration
	// Window is how many pong samples are kept. Default 32.
	Window int
	// SlewRate is the largest rate of change of the applied offset, in seconds
	// per second of local time. Default 0.005 (5 ms/s); must be below 1 so
	// that server time never runs backwards.
	SlewRate float64
	// JumpAbove is the change of the estimate above which it is applied at
	// once instead of slewed. Default 50 ms. The first sync always jumps.
	JumpAbove time.Duration
	// SyncedAfter is how many samples are needed before Synced reports true.
	// Default 13: about 1.2 s of the warm-up, as 6 of its pings every
	// 250 ms took before. Synced earlier (6 samples, 0.5 s), remote
	// entities were drawn from rougher first estimates: in the network
	// lab one player drew the other 55 cm off on average in its first
	// second, and Auto then drew with a 30 ms lag for 5 s.
	SyncedAfter int
	// MaxRTT is the longest round trip believed; slower pongs are ignored.
	// Default 5 s.
	MaxRTT time.Duration
	// MaxDrift is the largest relative rate error assumed between the local
	// and the server clock, in seconds per second: an old sample's bounds
	// widen by MaxDrift times its age. Default 50e-6 (50 ppm). A larger value
	// costs accuracy on steady clocks; a faster drift than assumed costs
	// accuracy too (the estimate lags by about the excess drift times the age
	// of the samples that bound it) but never stability: samples that
	// contradict newer ones are dropped.
	MaxDrift float64
}

// withDefaults returns a copy with zero fields set to their defaults.
func (c *SyncConfig) withDefaults() SyncConfig {
	var d SyncConfig
	if c != nil {
		d = *c
	}
	if d.WarmupInterval == 0 {
		d.WarmupInterval = DefaultWarmupInterval
	}
	if d.WarmupSamples == 0 {
		d.WarmupSamples = DefaultWarmupSamples
	}
	if d.Interval == 0 {
		d.Interval = DefaultSyncInterval
	}
	if d.Window == 0 {
		d.Window = DefaultSyncWindow
	}
	if d.SlewRate == 0 {
		d.SlewRate = DefaultSyncSlewRate
	}
	if d.JumpAbove == 0 {
		d.JumpAbove = DefaultJumpAbove
	}
	if d.SyncedAfter == 0 {
		d.SyncedAfter = DefaultSyncedAfter
	}
	if d.MaxRTT == 0 {
		d.MaxRTT = DefaultMaxRTT
	}
	if d.MaxDrift == 0 {
		d.MaxDrift = DefaultMaxDrift
	}
	return d
}

// Validate reports the first invalid field, after defaults are applied.
func (c *SyncConfig) Validate() error {
	d := c.withDefaults()
	switch {
	case d.WarmupInterval < 0:
		return fmt.Errorf("clock: WarmupInterval %v is negative", d.WarmupInterval)
	case d.Interval < 0:
		return fmt.Errorf("clock: Interval %v is negative", d.Interval)
	case d.WarmupInterval > d.Interval:
		return fmt.Errorf("clock: WarmupInterval %v exceeds Interval %v; warm-up pings must be the faster ones",
			d.WarmupInterval, d.Interval)
	case d.Window < 0:
		return fmt.Errorf("clock: Window %d is negative", d.Window)
	case d.WarmupSamples < 0:
		return fmt.Errorf("clock: WarmupSamples %d is negative", d.WarmupSamples)
	case d.WarmupSamples > d.Window:
		return fmt.Errorf("clock: WarmupSamples %d exceeds Window %d; the warm-up would never end",
			d.WarmupSamples, d.Window)
	case !(d.SlewRate > 0 && d.SlewRate < 1): // also rejects NaN
		return fmt.Errorf("clock: SlewRate %v is outside (0, 1)", d.SlewRate)
	case d.JumpAbove < 0:
		return fmt.Errorf("clock: JumpAbove %v is negative", d.JumpAbove)
	case d.SyncedAfter < 0:
		return fmt.Errorf("clock: SyncedAfter %d is negative", d.SyncedAfter)
	case d.MaxRTT < 0:
		return fmt.Errorf("clock: MaxRTT %v is negative", d.MaxRTT)
	case !(d.MaxDrift > 0 && d.MaxDrift < 0.01):
		return fmt.Errorf("clock: MaxDrift %v is outside (0, 0.01)", d.MaxDrift)
	}
	return nil
}

// ErrInvalidConfig indicates a configuration that Validate rejects. Match it
// with errors.Is.
var ErrInvalidConfig = errors.New("clock: invalid configuration")

// Sync estimates the offset of the server's clock from the local clock by
// ping and pong, and applies it smoothly. See the package documentation for
// the method. A Sync is not safe for concurrent use.
type Sync struct {
	cfg SyncConfig // read-only after NewSync

	buf  []sample // ring of Window samples, oldest at head
	head int
	n    int

	total    int           // samples accepted since Reset
	pings    int           // pings sent since Reset
	lastPing time.Duration // local time of the last ping
	rtt      time.Duration // fastest round trip in the window
	trips    time.Duration // width of the intersection: fastest trip each way
	retGap   time.Duration // lowest receipt minus server time among the kept pongs
	off      slew          // applied server-minus-local offset
}

// sample is one pong: the server-minus-local offset lay in [lo, hi] when it
// arrived at local time recv.
type sample struct {
	recv, lo, hi, rtt time.Duration
}

// NewSync returns a Sync; a nil cfg means every default.
func NewSync(cfg *SyncConfig) (*Sync, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new sync: %w: %w", ErrInvalidConfig, err)
	}
	d := cfg.withDefaults()
	return &Sync{cfg: d, buf: make([]sample, d.Window), off: slew{rate: d.SlewRate}}, nil
}

// NextPing returns the local time the next ping is due: 0 before the first
// ping (due at once for any non-negative clock), then WarmupInterval after
// the last ping while the window holds fewer than WarmupSamples samples, and
// Interval after it once it does. A pong that arrives moves it, so ask again
// after Observe. After a clock step (see Observe) the warm-up starts again.
func (s *Sync) NextPing() time.Duration {
	if s.pings == 0 {
		return 0
	}
	if s.n < s.cfg.WarmupSamples {
		return s.lastPing + s.cfg.WarmupInterval
	}
	return s.lastPing + s.cfg.Interval
}

// Sent records that a ping was sent at local time now.
func (s *Sync) Sent(now time.Duration) {
	s.pings++
	s.lastPing = now
}

// Observe takes a pong: the local time its ping was sent, the server's clock
// when it answered, and the local time the pong was received. Pongs with a
// round trip that is not positive or exceeds MaxRTT are ignored.
//
// Older samples that contradict this one (their offset bounds, widened for
// drift, do not overlap its bounds) are dropped: the server clock stepped,
// or drifted faster than MaxDrift. A step thus moves the estimate at once
// and, being larger than JumpAbove, jumps the applied offset.
func (s *Sync) Observe(sent, server, received time.Duration) {
	rtt := received - sent
	if rtt <= 0 || rtt > s.cfg.MaxRTT {
		return
	}
	if s.n == len(s.buf) {
		s.head = (s.head + 1) % len(s.buf)
		s.n--
	}
	s.buf[(s.head+s.n)%len(s.buf)] = sample{recv: received, lo: server - received, hi: server - sent, rtt: rtt}
	s.n++
	s.total++

	// Intersect the bounds from the newest sample back, widening each by the
	// drift its age allows; stop at the first sample that contradicts the
	// newer ones and drop it and everything older.
	const inf = time.Duration(1<<63 - 1)
	lo, hi, best, keep := -inf, inf, inf, 0
	ulo, uhi := -inf, inf // the same, not widened: Trips
	for i := s.n - 1; i >= 0; i-- {
		p := s.buf[(s.head+i)%len(s.buf)]
		age := max(received-p.recv, 0)
		w := time.Duration(s.cfg.MaxDrift * float64(age))
		nlo, nhi := max(lo, p.lo-w), min(hi, p.hi+w)
		if nlo > nhi+consistencySlack {
			break
		}
		lo, hi, best = nlo, nhi, min(best, p.rtt)
		ulo, uhi = max(ulo, p.lo), min(uhi, p.hi)
		keep++
	}
	s.head = (s.head + s.n - keep) % len(s.buf)
	s.n = keep
	s.rtt = best
	s.trips = min(max(uhi-ulo, 0), best)
	s.retGap = -ulo
	s.off.update(received, lo+(hi-lo)/2, s.cfg.JumpAbove)
}

// Synced reports whether at least SyncedAfter samples have been taken since
// the last Reset, so that remote entities may be drawn.
func (s *Sync) Synced() bool { return s.total >= s.cfg.SyncedAfter && s.off.set }

// ServerTime returns the server clock reading at local time local, using the
// applied offset. It does not change the Sync and never decreases as local
// increases (between Observe calls; only a jump steps it). Before the first
// sample it returns local.
func (s *Sync) ServerTime(local time.Duration) time.Duration { return local + s.off.value(local) }

// LocalTime is the inverse of ServerTime: the local time at which the
// server's clock reads server (to within a nanosecond of rounding). It does
// not change the Sync and never decreases as server increases.
func (s *Sync) LocalTime(server time.Duration) time.Duration { return s.off.inverse(server) }

// Offset returns the applied server-minus-local offset at local time local;
// 0 before the first sample.
func (s *Sync) Offset(local time.Duration) time.Duration { return s.off.value(local) }

// Target returns the current estimate of the offset, which the applied
// offset slews toward; 0 before the first sample.
func (s *Sync) Target() time.Duration { return s.off.to }

// RTT returns the fastest round trip among the kept samples; 0 before the
// first sample.
func (s *Sync) RTT() time.Duration { return s.rtt }

// Trips returns the round trip made of the fastest trip each way among
// the kept samples: the width of the intersection of their offset bounds,
// never more than RTT; 0 before the first sample. One pong's round trip
// holds the jitter of both its trips, so the fastest of a few dozen sits
// several milliseconds above the fastest trip up plus the fastest trip
// down, which different pongs may have made. Whoever maps our stamps with
// "fastest gap minus half the round trip" (the room's re-stamper) takes
// our states as that much older than they are with RTT.
//
// The bounds are not widened for drift here, as the offset's are: that
// widening, up to MaxDrift times a sample's age on each side, would put
// back most of what the fastest trips gain (2.4 ms for samples 24 s old
// at 50 ppm). Drift moves Trips by the clocks' relative rate times the
// time between the two fastest trips, either way: 0.5 ms for 25 s at
// 20 ppm.
func (s *Sync) Trips() time.Duration { return s.trips }

// ReturnGap returns the lowest gap from the server's clock reading in a
// pong to its receipt, on the local clock, among the kept samples: the
// fastest trip down less the clock offset (not widened for drift, as
// Trips). Added to the server's lowest gap of our states (its arrival less
// our stamp: the fastest trip up plus the offset), the offsets cancel and
// what remains is a round trip made of the fastest state up, of 60 a
// second, and the fastest pong down: tighter than Trips, whose trip up is
// the fastest of a few dozen pings (clock.Restamper.ObservePeerGap). ok is
// false before the first sample.
func (s *Sync) ReturnGap() (gap time.Duration, ok bool) { return s.retGap, s.n > 0 }

// Reset forgets every sample, the applied offset and the ping schedule, as
// for a connection to another server. The configuration is kept.
func (s *Sync) Reset() {
	buf := s.buf
	*s = Sync{cfg: s.cfg, buf: buf, off: slew{rate: s.cfg.SlewRate}}
}
