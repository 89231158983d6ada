package sender_test

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// An entity moves at 10 m/s along +X with 120 Hz physics; the sender sends
// at the default 60 Hz. Each physics frame samples the pose, then polls;
// a state that is due is encoded for the socket. States are stamped with
// their frame's time and carry the velocity derived from the positions (the
// first, from one position, is still).
func ExampleSender_PollState() {
	s, err := sender.New(sender.Config{})
	if err != nil {
		panic(err)
	}
	buf := make([]byte, 0, wire.MaxStateSize)
	for frame := range 8 {
		t := time.Duration(frame) * time.Second / 120
		s.Sample(t, geom.Vec3{X: 10 * t.Seconds()}, geom.Identity)
		st, ok := s.PollState(t, 1)
		if !ok {
			continue
		}
		b, err := wire.AppendState(buf[:0], &st)
		if err != nil {
			panic(err)
		}
		fmt.Printf("frame %d: seq %d, stamp %5.2f ms, x %.3f m, vx %.1f m/s, %d bytes\n",
			frame, st.Seq, st.Stamp.Sub(wire.StampOf(0)).Seconds()*1000, st.Pos.X, st.Vel.X, len(b))
	}
	// Output:
	// frame 0: seq 0, stamp  0.00 ms, x 0.000 m, vx 0.0 m/s, 38 bytes
	// frame 2: seq 1, stamp 16.67 ms, x 0.167 m, vx 10.0 m/s, 38 bytes
	// frame 4: seq 2, stamp 33.33 ms, x 0.333 m, vx 10.0 m/s, 38 bytes
	// frame 6: seq 3, stamp 50.00 ms, x 0.500 m, vx 10.0 m/s, 38 bytes
}
