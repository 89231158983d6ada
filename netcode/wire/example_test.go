package wire_test

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

func ExampleAppendState() {
	s := wire.State{
		Fields: wire.HasAcc | wire.HasTurn | wire.HasExtras,
		Slot:   1,
		Seq:    100,
		Stamp:  wire.StampOf(1500 * time.Millisecond),
		Pos:    geom.Vec3{X: 10, Y: 0.5, Z: -4},
		Vel:    geom.Vec3{X: 20},
		Rot:    geom.Identity,
	}
	b, err := wire.AppendState(nil, &s)
	if err != nil {
		panic(err)
	}
	var got wire.State
	if err := wire.DecodeState(b, &got); err != nil {
		panic(err)
	}
	fmt.Println(len(b), "bytes; x =", got.Pos.X, "vx =", got.Vel.X, "stamp", got.Stamp.Sub(wire.StampOf(0)))
	// Output: 40 bytes; x = 10 vx = 20 stamp 1.5s
}
