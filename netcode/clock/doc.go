// Package clock keeps time across machines: Sync estimates the server's clock
// from pings, and Restamper maps a sender's timestamps onto the receiver's
// clock. Both take the time as an argument (a time.Duration since an
// arbitrary origin of the caller's clock) and never read the wall clock.
//
// # Sync
//
// Each pong says the server-minus-local offset lay in an interval: the server
// read its clock after the ping left (local time sent) and before the pong
// came back (local time received), so
//
//	server - received <= offset <= server - sent
//
// whatever the two one-way latencies were. Sync intersects these intervals
// over a window of recent pongs, widening each by the drift its age allows,
// and takes the middle of the intersection as its target. Fast pongs give
// narrow intervals, so the lowest-round-trip samples bound the estimate on
// each side; a slow pong cannot pull it away. With symmetric links the error
// is half the difference between the fastest upward and the fastest downward
// excess latency, well under a millisecond with a few dozen samples. With
// asymmetric links the error is half the asymmetry: no ping protocol can see
// it, since shifting the server clock by d while moving d of latency from one
// direction to the other changes no reading.
//
// The intersection's width, unwidened (Trips), is a round trip made of the
// fastest trip each way, which different pongs may have made: tighter
// under jitter than any one pong's round trip. A client claims it to the
// room, whose Restamper halves it.
//
// A sample whose interval misses the intersection of newer ones means the
// server clock stepped (or drifted faster than MaxDrift); the contradicted
// older samples are dropped, and a step larger than JumpAbove jumps the
// applied offset at once.
//
// # Restamper
//
// The gap from a sender's stamp to the state's arrival is the clock offset
// plus the one-way latency (plus any wait between sampling and sending). The
// fastest gap over GapWindow, minus half the fastest round trip over
// RTTWindow, estimates the receiver-minus-sender offset. A monotonic deque
// keeps the windowed minimum in O(1) amortised time. A gap that shrinks is
// taken at once; gaps that all stay more than JumpAbove above the minimum for
// StepAfter, at one level (the lowest gap of each third of StepAfter within
// JumpAbove/2), mean the sender's clock went back, and the older gaps are
// forgotten. High gaps that rise or fall are a queue filling or draining
// (congestion, a slow catch-up after a stall) and never move the mapping.
// For Settle from its first state (or SettleUntil), a Restamper applies
// each estimate at once: they tighten by milliseconds in a sender's first
// seconds. States that arrive before any round trip is known are mapped
// with the gap alone (a one-way latency late); the first round trip is then
// taken at once rather than slid (the bench saw 10 s of slide otherwise).
//
// # Slewing
//
// Both types apply their estimate through a slewed offset: it moves toward
// the target by at most SlewRate seconds per second, except on the first
// sample and when the target is more than JumpAbove away, when it jumps. So
// between jumps, mapped time runs at 1±SlewRate and never backwards.
//
// # Invariants
//
//   - Reads (ServerTime, LocalTime, Offset, Target, RTT, NextPing, Synced)
//     are pure functions of the stored state and their argument.
//   - Between two updates, the applied offset changes by at most SlewRate
//     times the elapsed time; an update changes it only by jumping to the
//     target, and only on the first sample, a change above JumpAbove, or
//     (Restamper) the first round trip or a state while settling.
//   - No goroutines, no wall clock, no allocation per call once warm.
//   - Neither type is safe for concurrent use.
package clock
