package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/bindings/godot/fakeengine"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
)

func TestFrictionGlue(t *testing.T) { runChild(t, "TestFrictionGlueChild") }

// TestFrictionGlueChild drives, on the fake engine, what a second ported
// game met (issue 33) at the NetRoom node: what a signal handler reads
// back, connection failures on their own signal, RoomError complete, the
// room size argument, and the warning for a setting without effect.
func TestFrictionGlueChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestFrictionGlue starts")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	link := &glueLink{}
	var dialErr error
	dialer = func(ctx context.Context, url string, opts *serverlink.Options) (netroom.ServerLink, error) {
		if dialErr != nil {
			return nil, dialErr
		}
		return link, nil
	}
	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene} {
		fakeengine.Initialize(uint32(l))
	}
	rec := fakeengine.Records()
	for _, want := range []string{
		"constant NetRoom.RoomError.ERROR_IMPLAUSIBLE=4012",
		"constant NetRoom.RoomError.ERROR_BAD_REQUEST=4000",
		"constant NetRoom.RoomError.ERROR_TOO_MANY=4023",
		"constant NetRoom.ConnectionError.CONNECTION_REFUSED=2",
		"constant NetRoom.ConnectionError.CONNECTION_LOST=5",
		"signal NetRoom.connection_error",
	} {
		assert.True(t, contains(rec, want), "missing %q", want)
	}
	assert.True(t, slicesHasAll(rec, "method NetRoom.create_room", "default=0"), "create_room(max_players = 0)")
	assert.True(t, slicesHasAll(rec, "method NetRoom.host_local", "default=0 default=0"), "host_local(port = 0, max_players = 0)")

	main := node(t, "Node", "Main")
	roomObj := node(t, "NetRoom", "Room")
	fakeengine.AddChild(main, roomObj)
	fakeengine.SetInTree(main, true)
	virtual(t, roomObj, "_enter_tree")
	fakeengine.Call("NetRoom", "set_server_address", roomObj, "127.0.0.1:1")
	frames := func(until string) []string {
		from := len(fakeengine.Records())
		deadline := time.Now().Add(5 * time.Second)
		for !contains(since(from), until) && time.Now().Before(deadline) {
			virtual(t, roomObj, "_process")
			time.Sleep(time.Millisecond)
		}
		return since(from)
	}

	{ // a connection that cannot be made: connection_error, not room_error
		dialErr = fmt.Errorf("dial ws://127.0.0.1:1/ws: %w", syscall.ECONNREFUSED)
		fakeengine.Call("NetRoom", "create_room", roomObj) // max_players left out: the default
		got := frames("emit disconnected")
		assert.True(t, contains(got, fmt.Sprintf("emit connection_error %d", netroom.ConnRefused)), "%v", got)
		assert.False(t, contains(got, "emit room_error"), "not a room error: %v", got)
		dialErr = nil
	}
	{ // leave_room while disconnected: nothing, no error
		from := len(fakeengine.Records())
		fakeengine.Call("NetRoom", "leave_room", roomObj)
		virtual(t, roomObj, "_process")
		assert.False(t, contains(since(from), "emit room_error"), "%v", since(from))
	}

	fakeengine.Call("NetRoom", "create_room", roomObj, int64(2))
	frames("emit connected")

	{ // handlers read the room as their event left it
		fakeengine.ReadOnSignal("", "NetRoom", "get_local_slot")
		link.push(&protocol.Joined{Code: "ABCDEF", Slot: 2, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
			Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{{Slot: 0, Name: "Ann"}, {Slot: 2, Name: "Cy"}}}})
		link.push(protocol.Errorf(protocol.CodeKicked, "the host removed you"))
		link.push(&protocol.Left{})
		from := len(fakeengine.Records())
		virtual(t, roomObj, "_process")
		got := since(from)
		assert.True(t, contains(got, "read in room_joined: get_local_slot = 2"), "before, -1: %v", got)
		assert.True(t, contains(got, "read in player_joined: get_local_slot = 2"), "%v", got)
		assert.True(t, contains(got, "emit room_error 4021"), "%v", got)
		assert.True(t, contains(got, "read in room_left: get_local_slot = -1"), "%v", got)
	}
	{ // the host leaves: player_left still sees it host, host_changed the new one
		link.push(&protocol.Joined{Code: "ABCDEF", Slot: 1, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
			Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{{Slot: 0, Name: "Ann"}, {Slot: 1, Name: "Bob"}}}})
		virtual(t, roomObj, "_process")
		fakeengine.ReadOnSignal("", "NetRoom", "get_host_slot")
		link.push(&protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 1,
			Players: []protocol.PlayerState{{Slot: 1, Name: "Bob"}}})
		from := len(fakeengine.Records())
		virtual(t, roomObj, "_process")
		got := since(from)
		assert.True(t, contains(got, "read in player_left: get_host_slot = 0"), "before, 1: %v", got)
		assert.True(t, contains(got, "read in host_changed: get_host_slot = 1"), "%v", got)
		fakeengine.ReadOnSignal("", "", "")
		r, _ := fakeengine.Call("NetRoom", "get_host_slot", roomObj)
		assert.Equal(t, int64(1), r.Int, "outside handlers: the live state")
	}
	{ // a setting without effect: said once
		from := len(fakeengine.Records())
		fakeengine.Call("NetRoom", "set_direct_lag_latency_ms", roomObj, 80.0)
		virtual(t, roomObj, "_process")
		virtual(t, roomObj, "_process")
		n := 0
		for _, r := range since(from) {
			if strings.HasPrefix(r, "warning") && strings.Contains(r, "direct_lag_apart is off") {
				n++
			}
		}
		assert.Equal(t, 1, n, "%v", since(from))
		from = len(fakeengine.Records())
		fakeengine.Call("NetRoom", "set_direct_lag_apart", roomObj, true)
		virtual(t, roomObj, "_process")
		assert.False(t, contains(since(from), "warning"), "%v", since(from))
	}
	{ // paddles placed in the level, standing for slots 0 and 1
		level := node(t, "Node", "Level")
		room2 := node(t, "NetRoom", "Room2")
		left, right := node(t, "Node2D", "Left"), node(t, "Node2D", "Right")
		lnet, rnet := node(t, "NetPredictor", "LNet"), node(t, "NetPredictor", "RNet")
		fakeengine.AddChild(level, room2)
		fakeengine.AddChild(level, left)
		fakeengine.AddChild(level, right)
		fakeengine.AddChild(left, lnet)
		fakeengine.AddChild(right, rnet)
		fakeengine.Call("NetPredictor", "set_player_slot", lnet, int64(0))
		fakeengine.Call("NetPredictor", "set_player_slot", rnet, int64(1))
		fakeengine.SetInTree(level, true)
		virtual(t, room2, "_enter_tree")
		from := len(fakeengine.Records())
		virtual(t, lnet, "_ready")
		virtual(t, rnet, "_ready")
		assert.False(t, contains(since(from), "already has an entity"), "two placed nodes, two slots: %v", since(from))
		fakeengine.Call("NetRoom", "set_server_address", room2, "127.0.0.1:1")
		fakeengine.Call("NetRoom", "join_room", room2, "ABCDEF")
		deadline := time.Now().Add(5 * time.Second)
		for !contains(since(from), "emit connected") && time.Now().Before(deadline) {
			virtual(t, room2, "_process")
			time.Sleep(time.Millisecond)
		}
		link.push(&protocol.Joined{Code: "ABCDEF", Slot: 1, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
			Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{{Slot: 0, Name: "Ann"}, {Slot: 1, Name: "Bob"}}}})
		from = len(fakeengine.Records())
		virtual(t, room2, "_process")
		assert.False(t, contains(since(from), "emit player_spawned"), "no player scene for slot 0: %v", since(from))
		virtual(t, lnet, "_process")
		virtual(t, rnet, "_physics_process")
		r, _ := fakeengine.Call("NetPredictor", "is_local", rnet)
		assert.Equal(t, int64(1), r.Int, "Bob's paddle is his")
		r, _ = fakeengine.Call("NetPredictor", "is_local", lnet)
		assert.Zero(t, r.Int)
		r, _ = fakeengine.Call("NetPredictor", "get_slot", lnet)
		assert.Equal(t, int64(0), r.Int, "Ann's paddle draws Ann")
		assert.True(t, contains(since(from), "visible Left false"), "hidden until Ann's first state: %v", since(from))
		assert.False(t, contains(since(from), "error"), "%v", since(from))
	}
}

// slicesHasAll reports whether one record has every part.
func slicesHasAll(rec []string, parts ...string) bool {
	for _, r := range rec {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(r, p)
		}
		if ok {
			return true
		}
	}
	return false
}
