package clock_test

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/wire"
)

// A client pings a server whose clock reads 90 s ahead, 35 ms away each way.
// The times are the client's clock; a real client passes its frame time.
func ExampleSync() {
	s, err := clock.NewSync(nil)
	if err != nil {
		panic(err)
	}
	const ahead, oneWay = 90 * time.Second, 35 * time.Millisecond
	now := time.Duration(0)
	for !s.Synced() {
		if due := s.NextPing(); now < due {
			now = due // a real client checks every frame
		}
		s.Sent(now)
		// The server stamps its clock when the ping arrives; the pong takes
		// as long again.
		server := now + oneWay + ahead
		s.Observe(now, server, now+2*oneWay)
	}
	fmt.Println("synced after", now, "round trip", s.RTT())
	fmt.Println("server time at local 10 s:", s.ServerTime(10*time.Second))
	fmt.Println("local time at server 100 s:", s.LocalTime(100*time.Second))
	// Output:
	// synced after 1.2s round trip 70ms
	// server time at local 10 s: 1m40s
	// local time at server 100 s: 10s
}

// The room server restamps a player's states onto its own clock before
// relaying them. The player's clock reads 2 h ahead of the server's; states
// take 25 ms or more and the fastest round trip is 50 ms. A late arrival does
// not move the restamped time.
func ExampleRestamper() {
	r, err := clock.NewRestamper(nil)
	if err != nil {
		panic(err)
	}
	r.ObserveRTT(50*time.Millisecond, 0)
	const ahead, oneWay = 2 * time.Hour, 25 * time.Millisecond
	for i, delay := range []time.Duration{0, 9 * time.Millisecond, 2 * time.Millisecond} {
		sampled := time.Duration(i) * 20 * time.Millisecond // server time the player sampled the state
		stamp := wire.StampOf(sampled + ahead)              // what the player writes
		got := r.Restamp(stamp, sampled+oneWay+delay)       // arrival: later when the link is slow
		// The relayed frame carries the server's stamp: wire.StampOf(got).
		fmt.Println("sampled at", sampled, "restamped to", got)
	}
	// Output:
	// sampled at 0s restamped to 0s
	// sampled at 20ms restamped to 20ms
	// sampled at 40ms restamped to 40ms
}
