package clock

import (
	"math"
	"time"
)

// slew is an applied offset that moves toward a target at a bounded rate.
// Its value is a pure function of the stored state and the time asked about,
// so reads never change it. Both Sync and Restamper use it.
type slew struct {
	at   time.Duration // time of the last update (the anchor)
	from time.Duration // applied offset at `at`
	to   time.Duration // target
	rate float64       // largest |d offset / d t|, in (0, 1)
	set  bool          // false until the first update
}

// value returns the applied offset at time t: from, moved toward to by at
// most rate·(t-at), and from itself for times before the anchor.
func (s *slew) value(t time.Duration) time.Duration {
	d := s.to - s.from
	if d == 0 || t <= s.at {
		return s.from
	}
	// Truncation toward zero keeps value monotonic in t, so t+value(t) never
	// decreases (rate < 1).
	m := s.rate * float64(t-s.at)
	if m >= math.Abs(float64(d)) {
		return s.to
	}
	if d > 0 {
		return s.from + time.Duration(m)
	}
	return s.from - time.Duration(m)
}

// inverse returns the time t at which t+value(t) = u (the inverse of the
// mapping from own time to the other clock), to within rounding.
func (s *slew) inverse(u time.Duration) time.Duration {
	if u <= s.at+s.from {
		return u - s.from
	}
	d := s.to - s.from
	if d == 0 {
		return u - s.from
	}
	// The slide ends |d|/rate after the anchor; past it the offset is `to`.
	end := float64(s.at) + math.Abs(float64(d))/s.rate + float64(s.to)
	if float64(u) >= end {
		return u - s.to
	}
	slope := 1 + s.rate
	if d < 0 {
		slope = 1 - s.rate
	}
	return s.at + time.Duration(math.Round(float64(u-s.at-s.from)/slope))
}

// update moves the anchor to t (never backwards) and sets a new target. The
// applied offset stays continuous unless this is the first update or the
// target is more than jumpAbove away from it; then it jumps to the target.
// It reports whether it jumped.
func (s *slew) update(t, target, jumpAbove time.Duration) bool {
	if !s.set {
		*s = slew{at: t, from: target, to: target, rate: s.rate, set: true}
		return true
	}
	if t < s.at {
		t = s.at
	}
	cur := s.value(t)
	s.at, s.to = t, target
	if absDur(target-cur) > jumpAbove {
		s.from = target
		return true
	}
	s.from = cur
	return false
}

// reset forgets everything but the rate.
func (s *slew) reset() { *s = slew{rate: s.rate} }

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
