package room_test

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/room"
)

// Example drives a real room on simulated time with two in-memory peers,
// the way the bench does: join, send a state, tick, read what came out.
func Example() {
	now := 10 * time.Second // the server clock; any origin
	r, err := room.New("ABCDEF", &room.Config{SeatHold: 5 * time.Second}, nil, now)
	if err != nil {
		panic(err)
	}
	ann, bob := &room.MemPeer{}, &room.MemPeer{}
	slotAnn, _ := r.Join(now, ann, room.Member{User: "u-ann", Name: "Ann"})
	slotBob, _ := r.Join(now, bob, room.Member{User: "u-bob", Name: "Bob"})
	fmt.Println("slots", slotAnn, slotBob, "host", r.Host())
	bob.Take() // Joined and room updates

	// Ann sends a state stamped on her own clock; Bob receives it re-stamped
	// onto the server clock, with Ann's slot.
	frame, _ := wire.AppendState(nil, &wire.State{Seq: 1, Stamp: wire.StampOf(3 * time.Second),
		Pos: geom.Vec3{X: 1}, Rot: geom.Quat{W: 1}})
	now += 30 * time.Millisecond
	r.HandleFrame(now, ann, frame)
	for _, f := range bob.Take() {
		var s wire.State
		_ = wire.DecodeState(f.Data, &s)
		fmt.Println("bob got slot", s.Slot, "reliable", f.Reliable, "server time", s.Stamp.Near(now))
	}

	// Time sync: a ping is answered with the server clock.
	r.HandleFrame(now, bob, protocol.MustMarshal(&protocol.Ping{TUS: 42}))
	for _, m := range room.Messages(bob.Take()) {
		fmt.Printf("bob got %s %+v\n", protocol.TypeName(m.Type()), m)
	}

	// Ann's connection drops; her seat is held for SeatHold. The server
	// ticks the room at each Next: here the room state telling Bob (held
	// back: room states go out at most once per SnapshotEvery), then the
	// end of the hold.
	r.Disconnect(now, ann)
	for at, ok := r.Next(); ok; at, ok = r.Next() {
		fmt.Println("tick at", at)
		r.Tick(at)
	}
	fmt.Println("players", r.Players(), "host", r.Host())
	// Output:
	// slots 0 1 host 0
	// bob got slot 0 reliable false server time 10.03s
	// bob got pong &{TUS:42 ServerUS:10030000 Probe:1}
	// tick at 10.1s
	// tick at 15.03s
	// players 1 host 1
}
