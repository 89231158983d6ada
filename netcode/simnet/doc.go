// Package simnet is virtual time and simulated networks for nearzero's tests
// and bench: a cheap discrete-event Scheduler, one-way Links with latency,
// jitter, loss, Wi-Fi stalls and outages, drifting Clocks, Frames for a busy
// game main thread, and a clock-free Bridge for unit tests that script faults
// by hand.
//
// A bench run puts two clients and a server room on one Scheduler, wires them
// with Links, and calls RunUntil; a two-minute scenario (two frame schedules
// feeding six links) runs in about 10 ms (BenchmarkTwoMinuteScenario).
//
// # Invariants
//
//   - Time is virtual. Nothing reads the wall clock, sleeps or starts a
//     goroutine; time moves only inside Step and RunUntil, and never backwards.
//   - Events due at the same time run in the order they were scheduled, so a
//     run is a pure function of the seed and the calls made.
//   - Every random choice comes from a stream named by its consumer
//     (Scheduler.Rand(name)), derived from the seed and the name alone: adding
//     a link, or turning loss on, never changes the draws of another stream.
//     A link draws its jitter and its loss for every packet it is given, so
//     turning on loss or an outage does not shift the jitter of later packets.
//   - An Ordered (or Reliable) link never reorders. A Reliable link never
//     loses: losses and outages become delay.
//   - Nothing is safe for concurrent use; the test's goroutine owns it all.
//     Callbacks may schedule events and send, but must not call Step or
//     RunUntil (that panics).
//   - The scheduler allocates nothing per event beyond the caller's closure;
//     an ordered link allocates nothing per packet, an unordered one one
//     closure.
//   - Invalid configs panic in the constructor (NewLink, NewFrames) or in
//     SetConfig, with the error of Validate: they are programming errors in a
//     test, not conditions to handle.
package simnet
