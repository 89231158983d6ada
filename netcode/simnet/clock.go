package simnet

import (
	"math"
	"time"
)

// Clock is a drifting local clock, as a simulated client or server reads it:
//
//	Read(true) = Offset + true*(1 + PPM*1e-6)
//
// where true is the scheduler's time. The zero value is a perfect clock.
// A PPM of 50 gains 50 µs per second (3 ms per minute); a negative PPM loses.
type Clock struct {
	// Offset is the local reading at true time 0. Default 0.
	Offset time.Duration
	// PPM is the rate error in parts per million. Default 0.
	PPM float64
}

// Read returns the local clock's reading at trueTime, rounded to the
// nanosecond.
func (c Clock) Read(trueTime time.Duration) time.Duration {
	// Only the drift term goes through float64, so a reading hours from the
	// origin keeps nanosecond precision.
	drift := math.Round(float64(trueTime) * c.PPM * 1e-6)
	return c.Offset + trueTime + time.Duration(drift)
}

// TrueTime is the inverse of Read: the first true time at which the clock
// reads local or later, so an event scheduled there sees Read >= local.
// TrueTime(Read(t)) is within 1 ns of t.
func (c Clock) TrueTime(local time.Duration) time.Duration {
	k := c.PPM * 1e-6
	x := local - c.Offset
	// x/(1+k) = x - x*k/(1+k); again only the small term is a float.
	t := x - time.Duration(math.Round(float64(x)*k/(1+k)))
	// Rounding lands up to a nanosecond either side; Read never decreases
	// (|PPM| < 1e6), so step to the first reading at or past local. A timer
	// set a nanosecond early would see the clock short of local and, set
	// again from TrueTime, fire at the same instant for ever.
	for c.Read(t) < local {
		t++
	}
	for c.Read(t-1) >= local {
		t--
	}
	return t
}

// Since returns how long the local clock measures between true times from
// and to: (to-from)*(1+PPM*1e-6), up to rounding.
func (c Clock) Since(from, to time.Duration) time.Duration { return c.Read(to) - c.Read(from) }
