package main

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/bindings/godot/fakeengine"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/typedargs"
)

func TestArgsGlue(t *testing.T) { runChild(t, "TestArgsGlueChild") }

// TestArgsGlueChild converts every argument type the fake engine models
// from a Variant to its netcode/typedargs value, through the wire, and back to a
// Variant of the same type and value: the scalars, the math types, Arrays,
// Dictionaries and the packed arrays of numbers and vectors. The fake's
// PackedByteArray and PackedStringArray hold no contents (their engine
// methods do nothing there), and its packed arrays keep each element as
// the Variant put in (no float32 narrowing): typedargs' wire tests cover
// those.
func TestArgsGlueChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestArgsGlue starts")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene} {
		fakeengine.Initialize(uint32(l))
	}
	sn := godot.NewStringName("jump")
	defer sn.Destroy()
	tests := []struct {
		v    godot.Variant
		want any
	}{
		{godot.Variant{}, nil},
		{godot.NewVariant(true), true},
		{godot.NewVariant(int64(-7)), int64(-7)},
		{godot.NewVariant(2.5), 2.5},
		{godot.NewVariant("héllo"), "héllo"},
		{godot.NewVariant(sn), typedargs.StringName("jump")},
		{godot.NewVariant(godot.Vector2{X: 1.5, Y: -0.1}), typedargs.Vector2{1.5, -0.1}},
		{godot.NewVariant(godot.Vector2i{X: -3, Y: 7}), typedargs.Vector2i{-3, 7}},
		{godot.NewVariant(godot.Vector3{X: 1, Y: 2, Z: 3.25}), typedargs.Vector3{1, 2, 3.25}},
		{godot.NewVariant(godot.Vector3i{X: 1, Y: -2, Z: 3}), typedargs.Vector3i{1, -2, 3}},
		{godot.NewVariant(godot.Vector4{X: 0.1, Y: 0.2, Z: 0.3, W: 0.4}), typedargs.Vector4{0.1, 0.2, 0.3, 0.4}},
		{godot.NewVariant(godot.Color{R: 1, G: 0.5, A: 0.75}), typedargs.Color{1, 0.5, 0, 0.75}},
		{godot.NewVariant(godot.Quaternion{Y: 0.6, W: 0.8}), typedargs.Quaternion{0, 0.6, 0, 0.8}},
		{godot.NewVariant(godot.Rect2{Position: godot.Vector2{X: 10, Y: 20}, Size: godot.Vector2{X: 30.5, Y: 40}}),
			typedargs.Rect2{10, 20, 30.5, 40}},
		{godot.NewVariant(godot.Basis{Rows: [3]godot.Vector3{{X: 1, Y: 2, Z: 3}, {X: 4, Y: 5, Z: 6}, {X: 7, Y: 8, Z: 9}}}),
			typedargs.Basis{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{godot.NewVariant(godot.Transform2D{X: godot.Vector2{X: 1}, Y: godot.Vector2{Y: 2}, Origin: godot.Vector2{X: 320.5, Y: -12}}),
			typedargs.Transform2D{1, 0, 0, 2, 320.5, -12}},
		{godot.NewVariant(godot.Transform3D{Basis: godot.Basis{Rows: [3]godot.Vector3{{X: 1, Y: 2, Z: 3}, {X: 4, Y: 5, Z: 6}, {X: 7, Y: 8, Z: 9}}},
			Origin: godot.Vector3{X: 10, Y: 11, Z: 12}}), typedargs.Transform3D{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
	}
	// An Array, a Dictionary with int, String and StringName keys (in its
	// order), and the packed arrays, built as the engine would.
	arr := godot.NewArray()
	godot.ArrayAppend(arr, int64(1))
	godot.ArrayAppend(arr, godot.Vector2{X: 1, Y: 2})
	inner := godot.NewArray()
	godot.ArrayAppend(inner, "deep")
	godot.ArrayAppend(arr, inner)
	inner.Destroy()
	dict := godot.NewDictionary()
	for _, kv := range [][2]godot.Variant{
		{godot.NewVariant(int64(2)), godot.NewVariant("two")},
		{godot.NewVariant("name"), godot.NewVariant(godot.Vector3i{X: 1, Y: 2, Z: 3})},
		{godot.NewVariant(sn), godot.NewVariant(true)},
		{godot.NewVariant("2"), godot.NewVariant(2.5)},
	} {
		dict.Set(kv[0], kv[1])
		kv[0].Destroy()
		kv[1].Destroy()
	}
	packed := func(typ godot.VariantType, elems ...godot.Variant) godot.Variant {
		a := godot.NewArray()
		for _, e := range elems {
			a.Append(e)
			e.Destroy()
		}
		av := godot.NewVariant(a)
		a.Destroy()
		p, ok := av.Convert(typ)
		require.True(t, ok, "%s", typ)
		av.Destroy()
		return p
	}
	f := func(x float64) godot.Variant { return godot.NewVariant(x) }
	i := func(x int64) godot.Variant { return godot.NewVariant(x) }
	tests = append(tests, []struct {
		v    godot.Variant
		want any
	}{
		{godot.NewVariant(arr), []any{int64(1), typedargs.Vector2{1, 2}, []any{"deep"}}},
		{godot.NewVariant(dict), typedargs.Dict{{Key: int64(2), Value: "two"}, {Key: "name", Value: typedargs.Vector3i{1, 2, 3}},
			{Key: typedargs.StringName("jump"), Value: true}, {Key: "2", Value: 2.5}}},
		{packed(godot.TypePackedInt32Array, i(-1), i(1<<30)), []int32{-1, 1 << 30}},
		{packed(godot.TypePackedInt64Array, i(-1), i(1<<62)), []int64{-1, 1 << 62}},
		{packed(godot.TypePackedFloat32Array, f(0.5), f(-2)), []float32{0.5, -2}},
		{packed(godot.TypePackedFloat64Array, f(0.1), f(1e300)), []float64{0.1, 1e300}},
		{packed(godot.TypePackedVector2Array, godot.NewVariant(godot.Vector2{X: 1, Y: 2})), typedargs.PackedVector2Array{{1, 2}}},
		{packed(godot.TypePackedVector3Array, godot.NewVariant(godot.Vector3{X: 1, Y: 2, Z: 3})), typedargs.PackedVector3Array{{1, 2, 3}}},
	}...)
	arr.Destroy()
	dict.Destroy()

	for _, tc := range tests {
		typ := tc.v.Type()
		x, err := argFromVariant(tc.v, 1)
		require.NoError(t, err, "%s", typ)
		assert.Equal(t, tc.want, x, "%s", typ)
		// Through the wire and back to a Variant of the same type.
		raw, err := typedargs.Encode([]any{x})
		require.NoError(t, err, "%s", typ)
		vals, err := typedargs.Decode(raw)
		require.NoError(t, err, "%s", typ)
		back := variantOf(vals[0])
		assert.Equal(t, typ, back.Type(), "%s arrives as the type it left as", typ)
		y, err := argFromVariant(back, 1)
		require.NoError(t, err, "%s", typ)
		assert.Equal(t, tc.want, y, "%s", typ)
		back.Destroy()
		tc.v.Destroy()
	}

	// Types events do not carry are refused, naming the type.
	room := fakeengine.Construct("NetRoom")
	obj := godot.NewVariant(godot.ObjectFromPtr(room))
	_, err := argFromVariant(obj, 1)
	assert.ErrorIs(t, err, typedargs.ErrBadArg)
	assert.ErrorContains(t, err, "Object")
	np := godot.NewNodePath("a/b")
	npv := godot.NewVariant(np)
	_, err = argFromVariant(npv, 1)
	assert.ErrorContains(t, err, "NodePath")
	npv.Destroy()
	np.Destroy()
	// A Dictionary key of another type, and an Object deep in an Array.
	bad := godot.NewDictionary()
	k, e := godot.NewVariant(2.5), godot.NewVariant(1.0)
	bad.Set(k, e)
	k.Destroy()
	e.Destroy()
	badv := godot.NewVariant(bad)
	bad.Destroy()
	_, err = argFromVariant(badv, 1)
	assert.ErrorContains(t, err, "dictionary key of type float")
	badv.Destroy()
	nested := godot.NewArray()
	nested.Append(obj)
	_, err = argsFromArray(nested, 1)
	assert.ErrorContains(t, err, "[0]: ")
	assert.ErrorIs(t, err, typedargs.ErrBadArg)
	nested.Destroy()
	obj.Destroy()
	fakeengine.Destroy(room)
}

func TestEventsGlue(t *testing.T) { runChild(t, "TestEventsGlueChild") }

// sendLink is a glueLink that keeps what the NetRoom sent.
type sendLink struct {
	glueLink
	sent []protocol.Message
}

func (l *sendLink) Send(m protocol.Message) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, m)
	return nil
}

// TestEventsGlueChild drives send_event_all, send_event_to_host and
// event_received through the glue: typed arguments leave as typed values
// on the wire and arrive, here too for call_local, as the same types.
func TestEventsGlueChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestEventsGlue starts")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	link := &sendLink{}
	dialer = func(ctx context.Context, url string, opts *serverlink.Options) (netroom.ServerLink, error) {
		return link, nil
	}
	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene} {
		fakeengine.Initialize(uint32(l))
	}
	main := node(t, "Node", "Main")
	room := fakeengine.Construct("NetRoom")
	fakeengine.SetName(room, "Room")
	fakeengine.AddChild(main, room)
	fakeengine.SetInTree(main, true)
	virtual(t, room, "_enter_tree")
	fakeengine.Call("NetRoom", "set_server_address", room, "127.0.0.1:1")
	fakeengine.Call("NetRoom", "create_room", room)
	from := len(fakeengine.Records())
	for deadline := time.Now().Add(5 * time.Second); !contains(since(from), "emit connected") && time.Now().Before(deadline); {
		virtual(t, room, "_process")
		time.Sleep(time.Millisecond)
	}
	// We are slot 1; the host is slot 0.
	link.push(&protocol.Joined{Code: "ABCDEF", Slot: 1, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
		Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{{Slot: 0, Name: "Ann"}, {Slot: 1, Name: "Bob"}}}})
	virtual(t, room, "_process")
	require.True(t, contains(since(from), "emit room_joined ABCDEF 1"), "%v", since(from))

	call := func(method string, name string, vals ...godot.Variant) {
		t.Helper()
		s := godot.NewString(name)
		defer s.Destroy()
		a := godot.NewArray()
		defer a.Destroy()
		for _, v := range vals {
			a.Append(v)
			v.Destroy()
		}
		require.True(t, fakeengine.Ptrcall("NetRoom", method, room,
			[]unsafe.Pointer{unsafe.Pointer(&s), unsafe.Pointer(&a)}, nil), method)
	}
	sentEvents := func() []*protocol.Event {
		link.mu.Lock()
		defer link.mu.Unlock()
		var out []*protocol.Event
		for _, m := range link.sent {
			if e, ok := m.(*protocol.Event); ok {
				out = append(out, e)
			}
		}
		link.sent = nil
		return out
	}

	call("send_event_all", "boom", godot.NewVariant(godot.Vector2{X: 1, Y: 2}), godot.NewVariant(godot.Vector2i{X: 3, Y: 4}))
	sent := sentEvents()
	require.Len(t, sent, 1)
	assert.Equal(t, protocol.ToAll, sent[0].To)
	vals, err := typedargs.Decode(sent[0].Args)
	require.NoError(t, err)
	assert.Equal(t, []any{typedargs.Vector2{1, 2}, typedargs.Vector2i{3, 4}}, vals, "typed on the wire")
	from = len(fakeengine.Records())
	virtual(t, room, "_process")
	assert.True(t, contains(since(from), "emit event_received 1 boom [5,6]"),
		"run here too, from our slot, a Vector2 and a Vector2i: %v", since(from))

	call("send_event_to_host", "buy", godot.NewVariant("sword"))
	sent = sentEvents()
	require.Len(t, sent, 1)
	assert.Equal(t, 0, sent[0].To, "to the host's slot")
	from = len(fakeengine.Records())
	virtual(t, room, "_process")
	assert.False(t, contains(since(from), "emit event_received"), "not run here: we are not the host")

	// Another player's event with typed arguments arrives typed.
	raw, err := typedargs.Encode([]any{typedargs.Transform2D{1, 0, 0, 1, 5, 6}, typedargs.Dict{{Key: int64(1), Value: "one"}},
		[]float32{0.5}})
	require.NoError(t, err)
	link.push(&protocol.Event{Name: "hello", Args: raw, From: 0, To: protocol.ToAll})
	from = len(fakeengine.Records())
	virtual(t, room, "_process")
	assert.True(t, contains(since(from), "emit event_received 0 hello [11,27,32]"),
		"a Transform2D, a Dictionary, a PackedFloat32Array: %v", since(from))

	// An argument events do not carry: room_error, nothing sent.
	call("send_event_all", "bad", godot.NewVariant(godot.ObjectFromPtr(room)))
	assert.Empty(t, sentEvents())
	from = len(fakeengine.Records())
	virtual(t, room, "_process")
	assert.True(t, contains(since(from), "emit room_error 0"), "%v", since(from))
	assert.False(t, contains(since(from), "emit event_received"))
}

func TestSpawnGlue(t *testing.T) { runChild(t, "TestSpawnGlueChild") }

// TestSpawnGlueChild: players already in the room are spawned when
// player_scene is set (at the next _process) and by spawn_players(); a
// spawnable scene's entry names its parent; a scene without a
// NetPredictor is spawned and announced with no states.
func TestSpawnGlueChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestSpawnGlue starts")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	link := &sendLink{}
	dialer = func(ctx context.Context, url string, opts *serverlink.Options) (netroom.ServerLink, error) {
		return link, nil
	}
	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene} {
		fakeengine.Initialize(uint32(l))
	}
	main := node(t, "Node", "Main")
	level := node(t, "Node2D", "Level")
	shots := node(t, "Node2D", "Projectiles")
	room := fakeengine.Construct("NetRoom")
	fakeengine.SetName(room, "Room")
	fakeengine.AddChild(main, level)
	fakeengine.AddChild(level, shots)
	fakeengine.AddChild(main, room)
	fakeengine.SetInTree(main, true)
	virtual(t, room, "_enter_tree")
	n, ok := godot.InstanceOf[NetRoom](godot.ObjectFromPtr(room))
	require.True(t, ok)

	scenes := godot.NewArray()
	godot.ArrayAppend(scenes, "res://pickup.tscn | ../Level/Projectiles")
	godot.ArrayAppend(scenes, "res://mover_predictor.tscn")
	require.True(t, fakeengine.Ptrcall("NetRoom", "set_spawnable_scenes", room, []unsafe.Pointer{unsafe.Pointer(&scenes)}, nil))
	scenes.Destroy()

	fakeengine.Call("NetRoom", "set_server_address", room, "127.0.0.1:1")
	fakeengine.Call("NetRoom", "create_room", room)
	from := len(fakeengine.Records())
	for deadline := time.Now().Add(5 * time.Second); !contains(since(from), "emit connected") && time.Now().Before(deadline); {
		virtual(t, room, "_process")
		time.Sleep(time.Millisecond)
	}
	// In the lobby with two others, and no player_scene yet: nobody spawned.
	link.push(&protocol.Joined{Code: "ABCDEF", Slot: 0, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
		Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{{Slot: 0, Name: "Ann"}, {Slot: 1, Name: "Bob"},
			{Slot: 2, Name: "Cy"}}}})
	from = len(fakeengine.Records())
	virtual(t, room, "_process")
	require.True(t, contains(since(from), "emit room_joined ABCDEF 0"), "%v", since(from))
	assert.False(t, contains(since(from), "emit player_spawned"))
	r, _ := fakeengine.Call("NetRoom", "spawn_players", room)
	assert.Zero(t, r.Int, "no player_scene: nothing to spawn")

	// player_scene set after the lobby: the players already there get
	// theirs at the next _process, not inside the setter.
	res, err := godot.Load("res://player.tscn")
	require.NoError(t, err)
	scene := res.Ptr()
	from = len(fakeengine.Records())
	require.True(t, fakeengine.Ptrcall("NetRoom", "set_player_scene", room, []unsafe.Pointer{unsafe.Pointer(&scene)}, nil))
	assert.False(t, contains(since(from), "emit player_spawned"), "not inside the setter")
	virtual(t, room, "_process")
	got := since(from)
	assert.True(t, contains(got, "add_child Main Player1"), "%v", got)
	assert.True(t, contains(got, "emit player_spawned 1"), "%v", got)
	assert.True(t, contains(got, "emit player_spawned 2"), "%v", got)
	from = len(fakeengine.Records())
	virtual(t, room, "_process")
	assert.False(t, contains(since(from), "emit player_spawned"), "once")

	// A freed copy comes back with spawn_players(), at once.
	obj := n.spawned[2].Object()
	require.False(t, obj.IsNull())
	fakeengine.Destroy(obj.Ptr())
	from = len(fakeengine.Records())
	r, _ = fakeengine.Call("NetRoom", "spawn_players", room)
	assert.Equal(t, int64(1), r.Int)
	assert.True(t, contains(since(from), "emit player_spawned 2"), "%v", since(from))

	// A scene without a NetPredictor goes under its entry's parent, is
	// announced, and sends no states.
	spawn := func(path string) unsafe.Pointer {
		t.Helper()
		s := godot.NewString(path)
		defer s.Destroy()
		a := godot.NewArray()
		defer a.Destroy()
		godot.ArrayAppend(a, godot.Vector2{X: 5, Y: 6})
		var ret unsafe.Pointer
		require.True(t, fakeengine.Ptrcall("NetRoom", "spawn_entity", room,
			[]unsafe.Pointer{unsafe.Pointer(&s), unsafe.Pointer(&a)}, unsafe.Pointer(&ret)))
		return ret
	}
	from = len(fakeengine.Records())
	pickup := spawn("res://pickup.tscn")
	require.NotNil(t, pickup, "%v", since(from))
	assert.True(t, contains(since(from), "add_child Projectiles Entity0_"), "under its own parent: %v", since(from))
	link.mu.Lock()
	var spawns []*protocol.Spawn
	for _, m := range link.sent {
		if s, ok := m.(*protocol.Spawn); ok {
			spawns = append(spawns, s)
		}
	}
	link.mu.Unlock()
	require.Len(t, spawns, 1)
	assert.Equal(t, "res://pickup.tscn", spawns[0].Scene)
	vals, err := typedargs.Decode(spawns[0].Args)
	require.NoError(t, err)
	assert.Equal(t, []any{typedargs.Vector2{5, 6}}, vals, "spawn args keep their types")

	// With a NetPredictor, under spawn_path (the NetRoom's parent).
	from = len(fakeengine.Records())
	require.NotNil(t, spawn("res://mover_predictor.tscn"), "%v", since(from))
	assert.True(t, contains(since(from), "add_child Main Entity0_"), "%v", since(from))

	// Another player's pickup: under the same parent, args typed.
	raw, err := typedargs.Encode([]any{typedargs.Color{1, 0, 0, 1}})
	require.NoError(t, err)
	link.push(&protocol.Spawn{Slot: 1, Entity: 5, Scene: "res://pickup.tscn", Args: raw})
	from = len(fakeengine.Records())
	virtual(t, room, "_process")
	got = since(from)
	assert.True(t, contains(got, "add_child Projectiles Entity1_5"), "%v", got)
	assert.True(t, contains(got, "emit entity_spawned <24> 1 [20]"), "a Color: %v", got)
}
