package main

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/bindings/godot/fakeengine"
	"github.com/nearzero/nearzero/client/netdebug"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
)

func TestDebuggerGlue(t *testing.T) { runChild(t, "TestDebuggerGlueChild") }

// TestDebuggerGlueChild: a NetRoom in a room sends nothing to the editor
// without a debugger, nor with one but without the addon's editor plugin
// enabled; with both, "nearzero:sample" at most ten times a second.
func TestDebuggerGlueChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestDebuggerGlue starts")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	link := &glueLink{}
	dialer = func(ctx context.Context, url string, opts *serverlink.Options) (netroom.ServerLink, error) {
		return link, nil
	}
	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene} {
		fakeengine.Initialize(uint32(l))
	}
	main := node(t, "Node", "Host")
	roomObj := node(t, "NetRoom", "NetRoom")
	fakeengine.AddChild(main, roomObj)
	fakeengine.SetInTree(main, true)
	virtual(t, roomObj, "_enter_tree")
	fakeengine.Call("NetRoom", "set_server_address", roomObj, "127.0.0.1:1")
	fakeengine.Call("NetRoom", "join_room", roomObj, "ABCDEF")
	from := len(fakeengine.Records())
	deadline := time.Now().Add(5 * time.Second)
	for !contains(since(from), "emit connected") && time.Now().Before(deadline) {
		virtual(t, roomObj, "_process")
		time.Sleep(time.Millisecond)
	}
	link.push(&protocol.Joined{Code: "ABCDEF", Slot: 1, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
		Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{{Slot: 0, Name: "Ann"}, {Slot: 1, Name: "Bob"}}}})

	// run calls _process for at least d of wall time and returns the
	// debugger messages sent and the time it ran.
	run := func(d time.Duration) (sent []string, took time.Duration) {
		from := len(fakeengine.Records())
		start := time.Now()
		for time.Since(start) < d {
			virtual(t, roomObj, "_process")
			time.Sleep(2 * time.Millisecond)
		}
		took = time.Since(start)
		for _, r := range since(from) {
			if strings.HasPrefix(r, "debugger ") {
				sent = append(sent, r)
			}
		}
		return sent, took
	}

	sent, _ := run(300 * time.Millisecond)
	assert.Empty(t, sent, "no debugger attached: nothing sent")
	assert.True(t, debugState.checked)
	assert.False(t, debugState.on)

	// A debugger, but a project without the plugin (the fake has no
	// project settings): the editor would warn of every message.
	fakeengine.SetDebugger(true)
	debugState.checked = false
	sent, _ = run(300 * time.Millisecond)
	assert.Empty(t, sent, "the plugin is not enabled: nothing sent")
	assert.False(t, debugState.on)

	// Both: as debuggerOn decides in a game run from the editor with the
	// plugin enabled.
	debugState.checked, debugState.on = true, true
	sent, took := run(450 * time.Millisecond)
	require.GreaterOrEqual(t, len(sent), 2, "samples go out")
	assert.LessOrEqual(t, len(sent), int(took/netdebug.DefaultEvery)+1, "at most ten a second over %v", took)
	for _, s := range sent {
		assert.Equal(t, "debugger send_message nearzero:sample 1", s)
	}
}

// TestSampleDict: the Dictionary the editor plugin reads
// (addons/nearzero/debugger/panel.gd) carries every figure under the
// names the panel uses, times in seconds and milliseconds.
func TestSampleDict(t *testing.T) { runChild(t, "TestSampleDictChild") }

func TestSampleDictChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestSampleDict starts")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene} {
		fakeengine.Initialize(uint32(l))
	}
	s := netdebug.Sample{
		Time: 2500 * time.Millisecond,
		Room: netdebug.Room{Status: "connected", Code: "ABCDEF", Slot: 1, Host: 0, Phase: "lobby", Synced: true,
			Players: []netdebug.Player{{Slot: 0, Name: "Ann", Connected: true}, {Slot: 1, Name: "Bob", Connected: true}}},
		Links: []netdebug.Link{
			{Name: "server", Slot: -1, Up: true, RTT: 42 * time.Millisecond, Offset: -3 * time.Millisecond, Loss: 0.02,
				Jitter: 4 * time.Millisecond, InPerSec: 1800, OutPerSec: 1700},
			{Name: "direct 0", Slot: 0, Up: true, RTT: 20 * time.Millisecond, Loss: -1, InPerSec: -1, OutPerSec: -1,
				Candidates: "host/srflx"},
		},
		Entities: []netdebug.Entity{{Slot: 0, Entity: 0, Age: 55 * time.Millisecond, Speed: 3.5, Correction: 0.25,
			Path: "direct", Visibility: "visible", Pops: 2, Snaps: 1}},
	}
	d := sampleDict(&s, "Host/NetRoom")
	defer d.Destroy()
	get := func(d godot.Dictionary, key string) godot.Variant {
		k := godot.NewVariant(key)
		defer k.Destroy()
		v, ok := d.Get(k)
		require.True(t, ok, "key %q", key)
		return v
	}
	str := func(d godot.Dictionary, key string) string {
		v, ok := godot.DictionaryGet[string](d, key)
		require.True(t, ok, "string %q", key)
		return v
	}
	num := func(d godot.Dictionary, key string) float64 {
		v := get(d, key)
		defer v.Destroy()
		if f, ok := godot.VariantAs[float64](v); ok {
			return f
		}
		i, ok := godot.VariantAs[int64](v)
		require.True(t, ok, "number %q", key)
		return float64(i)
	}
	at := func(d godot.Dictionary, key string, i int) godot.Dictionary {
		a, ok := godot.DictionaryGet[godot.Array](d, key)
		require.True(t, ok, "array %q", key)
		defer a.Destroy()
		v, ok := a.At(i)
		require.True(t, ok, "%s[%d]", key, i)
		defer v.Destroy()
		e, ok := godot.VariantAs[godot.Dictionary](v)
		require.True(t, ok, "%s[%d] is a Dictionary", key, i)
		return e
	}

	assert.Equal(t, "Host/NetRoom", str(d, "source"))
	assert.InDelta(t, 2.5, num(d, "time"), 1e-9, "seconds")
	room, ok := godot.DictionaryGet[godot.Dictionary](d, "room")
	require.True(t, ok)
	defer room.Destroy()
	assert.Equal(t, "ABCDEF", str(room, "code"))
	assert.Equal(t, 1.0, num(room, "slot"))
	assert.Equal(t, 0.0, num(room, "host"))
	p := at(room, "players", 1)
	assert.Equal(t, "Bob", str(p, "name"))
	p.Destroy()

	server := at(d, "links", 0)
	assert.Equal(t, "server", str(server, "name"))
	assert.InDelta(t, 42, num(server, "rtt_ms"), 1e-9)
	assert.InDelta(t, -3, num(server, "offset_ms"), 1e-9)
	assert.InDelta(t, 0.02, num(server, "loss"), 1e-9)
	assert.InDelta(t, 4, num(server, "jitter_ms"), 1e-9)
	assert.Equal(t, 1800.0, num(server, "in_bps"))
	assert.Equal(t, 1700.0, num(server, "out_bps"))
	server.Destroy()
	direct := at(d, "links", 1)
	assert.Equal(t, "host/srflx", str(direct, "candidates"))
	assert.Equal(t, -1.0, num(direct, "loss"), "unknown: negative")
	direct.Destroy()

	e := at(d, "entities", 0)
	defer e.Destroy()
	assert.InDelta(t, 55, num(e, "age_ms"), 1e-9)
	assert.Equal(t, 3.5, num(e, "speed"))
	assert.Equal(t, 0.25, num(e, "correction"))
	assert.Equal(t, "direct", str(e, "path"))
	assert.Equal(t, "visible", str(e, "visibility"))
	assert.Equal(t, 2.0, num(e, "pops"))
	assert.Equal(t, 1.0, num(e, "snaps"))
}
