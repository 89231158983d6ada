package simnet_test

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/simnet"
)

// Five packets, 20 ms apart, over a 30 ms link with half-normal jitter that
// loses one packet in every five.
func ExampleLink() {
	s := simnet.NewScheduler(42)
	link := simnet.NewLink(s, simnet.LinkConfig{
		Name:    "client->server",
		Latency: 30 * time.Millisecond,
		Jitter:  simnet.NormalJitter{Sigma: 5 * time.Millisecond},
		Loss:    &simnet.ExactLoss{Drop: 1, Every: 5},
	}, func(p []byte) {
		fmt.Printf("%s arrived at %v\n", p, s.Now().Round(100*time.Microsecond))
	})
	for i := range 5 {
		s.At(time.Duration(i)*20*time.Millisecond, func() { link.Send(fmt.Appendf(nil, "packet %d", i)) })
	}
	s.RunUntil(time.Second)
	st := link.Stats()
	fmt.Printf("sent %d, delivered %d, lost %d\n", st.Sent, st.Delivered, st.Lost)
	// Output:
	// packet 0 arrived at 30.6ms
	// packet 1 arrived at 50.8ms
	// packet 2 arrived at 75ms
	// packet 4 arrived at 111.4ms
	// sent 5, delivered 4, lost 1
}

// A drifting client clock, 50 ppm fast, as the bench gives each client.
func ExampleClock() {
	c := simnet.Clock{Offset: 3 * time.Second, PPM: 50}
	fmt.Println(c.Read(time.Minute))
	fmt.Println(c.TrueTime(c.Read(time.Minute)))
	// Output:
	// 1m3.003s
	// 1m0s
}

// A 60 fps main thread: a network arrival between frames is handled at the
// start of the next frame.
func ExampleFrames() {
	s := simnet.NewScheduler(1)
	var frames *simnet.Frames
	frames = simnet.NewFrames(s, simnet.FrameConfig{}, func(f simnet.Frame) {
		fmt.Printf("frame %d at %v\n", f.Index, f.Start.Round(time.Millisecond))
	})
	s.At(5*time.Millisecond, func() {
		frames.Post(func() { fmt.Printf("arrival handled at %v\n", s.Now().Round(time.Millisecond)) })
	})
	s.RunUntil(40 * time.Millisecond)
	// Output:
	// frame 0 at 0s
	// arrival handled at 17ms
	// frame 1 at 17ms
	// frame 2 at 33ms
}

// A unit test scripts the faults by hand: the second packet is lost and the
// last two arrive swapped.
func ExampleBridge() {
	b := simnet.NewBridge(func(p []byte) { fmt.Printf("B got %s\n", p) }, nil)
	send := b.Sender(simnet.AtoB) // what the code under test would call
	for _, p := range []string{"s1", "s2", "s3", "s4"} {
		send([]byte(p))
	}
	b.Deliver(simnet.AtoB, 1)
	b.Drop(simnet.AtoB, 1)
	b.Reorder(simnet.AtoB)
	b.DeliverAll()
	// Output:
	// B got s1
	// B got s4
	// B got s3
}
