// Package ratelimit is the token bucket that every budget in nearzero uses:
// the room's per-seat and per-pair budgets, the server's per-connection and
// per-address limits, and a direct link's flood guard. Time is an argument
// (a time.Duration since any origin), so the room on simulated time and the
// server on the wall clock share it. A Bucket is a plain value: not safe for
// concurrent use; its owner serialises access.
package ratelimit

import "time"

// Bucket holds Tokens, earned at a rate per second up to a burst. The rate
// and burst are arguments of each call rather than fields, so a budget
// whose settings live in a shared config costs no copy of them per bucket.
// The zero value is empty at time 0; Full makes a full one.
type Bucket struct {
	// Tokens may go below zero when the owner records a debt (a flood that
	// has to stop for a while to be forgiven).
	Tokens float64
	// At is the time of the last refill.
	At time.Duration
}

// Full returns a bucket holding burst tokens at now.
func Full(now time.Duration, burst float64) Bucket { return Bucket{Tokens: burst, At: now} }

// Refill adds what rate (tokens per second) earned since the last refill,
// up to burst. Time that goes backwards earns nothing.
func (b *Bucket) Refill(now time.Duration, rate, burst float64) {
	if now > b.At {
		b.Tokens = min(burst, b.Tokens+rate*(now-b.At).Seconds())
		b.At = now
	}
}

// Take refills, then removes one token if there is a whole one, and reports
// whether it did.
func (b *Bucket) Take(now time.Duration, rate, burst float64) bool {
	return b.TakeN(now, rate, burst, 1)
}

// TakeN refills, then removes n tokens if there are that many (a message
// of n bytes against a byte budget), and reports whether it did.
func (b *Bucket) TakeN(now time.Duration, rate, burst, n float64) bool {
	b.Refill(now, rate, burst)
	if b.Tokens < n {
		return false
	}
	b.Tokens -= n
	return true
}
