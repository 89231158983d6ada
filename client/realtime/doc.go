// Package realtime is what the client runs on real time, once: the local
// Clock interface and the wall clock, the runner that drives the lag
// simulator (netcode/lagsim) on real time, and Group, the bounded wait for
// a part's goroutines at close.
//
// netcode/lagsim is a pure delay line on injected time; Lag gives it a
// goroutine and timers. The server link (client/serverlink), the direct links
// (client/direct) and the UDP relay (client/udprelay) all use it, so a
// "50 ms" link behaves the same whichever path a message takes.
//
// It imports nothing of the engine or the server.
package realtime
