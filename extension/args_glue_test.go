package main

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/bindings/godot/fakeengine"
	"github.com/nearzero/nearzero/client/netroom"
)

func TestArgsGlue(t *testing.T) { runChild(t, "TestArgsGlueChild") }

// TestArgsGlueChild converts every argument type the fake engine models
// from a Variant to netroom's value, through the wire, and back to a
// Variant of the same type and value. The fake has no Array, Dictionary
// or packed array contents (their engine methods do nothing there), so
// those are covered by netroom's tests of the wire alone.
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
		{godot.NewVariant(sn), netroom.StringName("jump")},
		{godot.NewVariant(godot.Vector2{X: 1.5, Y: -0.1}), netroom.Vector2{1.5, -0.1}},
		{godot.NewVariant(godot.Vector2i{X: -3, Y: 7}), netroom.Vector2i{-3, 7}},
		{godot.NewVariant(godot.Vector3{X: 1, Y: 2, Z: 3.25}), netroom.Vector3{1, 2, 3.25}},
		{godot.NewVariant(godot.Vector3i{X: 1, Y: -2, Z: 3}), netroom.Vector3i{1, -2, 3}},
		{godot.NewVariant(godot.Vector4{X: 0.1, Y: 0.2, Z: 0.3, W: 0.4}), netroom.Vector4{0.1, 0.2, 0.3, 0.4}},
		{godot.NewVariant(godot.Color{R: 1, G: 0.5, A: 0.75}), netroom.Color{1, 0.5, 0, 0.75}},
		{godot.NewVariant(godot.Quaternion{Y: 0.6, W: 0.8}), netroom.Quaternion{0, 0.6, 0, 0.8}},
		{godot.NewVariant(godot.Rect2{Position: godot.Vector2{X: 10, Y: 20}, Size: godot.Vector2{X: 30.5, Y: 40}}),
			netroom.Rect2{10, 20, 30.5, 40}},
		{godot.NewVariant(godot.Basis{Rows: [3]godot.Vector3{{X: 1, Y: 2, Z: 3}, {X: 4, Y: 5, Z: 6}, {X: 7, Y: 8, Z: 9}}}),
			netroom.Basis{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{godot.NewVariant(godot.Transform2D{X: godot.Vector2{X: 1}, Y: godot.Vector2{Y: 2}, Origin: godot.Vector2{X: 320.5, Y: -12}}),
			netroom.Transform2D{1, 0, 0, 2, 320.5, -12}},
		{godot.NewVariant(godot.Transform3D{Basis: godot.Basis{Rows: [3]godot.Vector3{{X: 1, Y: 2, Z: 3}, {X: 4, Y: 5, Z: 6}, {X: 7, Y: 8, Z: 9}}},
			Origin: godot.Vector3{X: 10, Y: 11, Z: 12}}), netroom.Transform3D{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
	}
	for _, tc := range tests {
		typ := tc.v.Type()
		x, err := argFromVariant(tc.v, 1)
		require.NoError(t, err, "%s", typ)
		assert.Equal(t, tc.want, x, "%s", typ)
		// Through the wire and back to a Variant of the same type.
		raw, err := netroom.EncodeArgs([]any{x})
		require.NoError(t, err, "%s", typ)
		vals, err := netroom.DecodeArgs(raw)
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
	assert.ErrorIs(t, err, netroom.ErrBadArg)
	assert.ErrorContains(t, err, "Object")
	np := godot.NewNodePath("a/b")
	npv := godot.NewVariant(np)
	_, err = argFromVariant(npv, 1)
	assert.ErrorContains(t, err, "NodePath")
	npv.Destroy()
	np.Destroy()
	fakeengine.Destroy(room)
}
