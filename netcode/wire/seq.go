package wire

import "time"

// Seq is a 16-bit sequence number that wraps. Compare with Newer and Diff, never with <.
type Seq uint16

// Diff returns the signed distance s-o in [-32768, 32767], taking the wrap into account.
func (s Seq) Diff(o Seq) int { return int(int16(s - o)) }

// Newer reports whether s comes after o, wrap-aware.
func (s Seq) Newer(o Seq) bool { return s.Diff(o) > 0 }

// Stamp is a sender timestamp: a uint32 count of StampUnit ticks that wraps
// about every 11.9 hours. Its origin is the sender's clock origin.
type Stamp uint32

// StampUnit is the resolution of a Stamp.
const StampUnit = 10 * time.Microsecond

// stampPeriod is the time after which a Stamp wraps.
const stampPeriod = time.Duration(1<<32) * StampUnit

// StampOf returns the stamp of a clock reading t (time since the clock's origin),
// rounded to the nearest tick. Negative times wrap like any other.
func StampOf(t time.Duration) Stamp { return Stamp(uint32(int64(quantize(t) / StampUnit))) }

// Sub returns the signed time from o to s, wrap-aware: the result lies
// within half a wrap period (about ±6 h).
func (s Stamp) Sub(o Stamp) time.Duration { return time.Duration(int32(s-o)) * StampUnit }

// Near returns the clock reading closest to ref whose stamp is s: it undoes
// the wrap given any reference within ±5.9 hours of the true time.
func (s Stamp) Near(ref time.Duration) time.Duration {
	q := quantize(ref)
	return q + s.Sub(StampOf(q))
}

// quantize rounds t to the nearest StampUnit, halves upwards.
func quantize(t time.Duration) time.Duration {
	q := t / StampUnit
	if rem := t % StampUnit; rem >= StampUnit/2 {
		q++
	} else if rem < -StampUnit/2 {
		q--
	}
	return q * StampUnit
}
