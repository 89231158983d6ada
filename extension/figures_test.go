package main

import (
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/bindings/godot/fakeengine"
)

func TestFiguresGlue(t *testing.T) { runChild(t, "TestFiguresGlueChild") }

// TestFiguresGlueChild reads the comparison markers of a fed 2D
// NetPredictor on the fake engine: Vector3(x, y, 0).
func TestFiguresGlueChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestFiguresGlue starts")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene, godot.LevelEditor} {
		fakeengine.Initialize(uint32(l))
	}
	world := node(t, "Node", "World")
	body := node(t, "Node2D", "Body")
	pred := node(t, "NetPredictor", "Net")
	fakeengine.AddChild(world, body)
	fakeengine.AddChild(body, pred)
	fakeengine.SetInTree(world, true)
	virtual(t, pred, "_ready")

	var zero godot.Vector3
	require.True(t, fakeengine.Ptrcall("NetPredictor", "get_newest_state_position", pred, nil, unsafe.Pointer(&zero)))
	assert.Equal(t, godot.Vector3{}, zero, "nothing received")

	roomObj := fakeengine.Construct("NetRoom")
	now, _ := fakeengine.Call("NetRoom", "local_time", roomObj)
	push2D(t, pred, now.Float-0.2, 10, 5)
	push2D(t, pred, now.Float-0.1, 20, 5)
	push2D(t, pred, now.Float, 30, 5)
	virtual(t, pred, "_process")

	var newest, interp godot.Vector3
	require.True(t, fakeengine.Ptrcall("NetPredictor", "get_newest_state_position", pred, nil, unsafe.Pointer(&newest)))
	assert.Equal(t, godot.Vector3{X: 30, Y: 5}, newest)
	delay := 1000.0 // clamped to the oldest
	require.True(t, fakeengine.Ptrcall("NetPredictor", "get_interpolated_position", pred,
		[]unsafe.Pointer{unsafe.Pointer(&delay)}, unsafe.Pointer(&interp)))
	assert.Equal(t, godot.Vector3{X: 10, Y: 5}, interp)
	r, ok := fakeengine.Call("NetPredictor", "get_debug_prediction_distance", pred)
	require.True(t, ok)
	assert.GreaterOrEqual(t, r.Float, 0.0)
	for _, prop := range []string{"get_jitter_ms", "get_loss_percent", "get_clock_offset_ms"} {
		r, ok := fakeengine.Call("NetRoom", prop, roomObj)
		require.True(t, ok, prop)
		assert.Zero(t, r.Float, "%s: nothing received, not synced", prop)
	}
}
