package godot

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bindings/godot/fakeengine"
)

const fakeChildEnv = "NEARZERO_FAKE_ENGINE_CHILD"

// TestFakeEngine runs TestFakeEngineChild in a child process: loading the
// fake engine sets this package's process-wide engine state for good.
func TestFakeEngine(t *testing.T) {
	if os.Getenv(fakeChildEnv) == "1" {
		t.Skip("skipped: this is the child process; TestFakeEngineChild runs here")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeEngineChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), fakeChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child process failed:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestFakeEngineChild", "child output:\n%s", out)
}

type fakeProbe struct {
	Node
	speed   float64
	label   string
	frames  int
	notes   []int32
	cleaned *bool
}

func (p *fakeProbe) Init()                     { p.speed = 1 }
func (p *fakeProbe) Ready()                    {}
func (p *fakeProbe) Process(delta float64)     { p.frames++ }
func (p *fakeProbe) OnNotification(what int32) { p.notes = append(p.notes, what) }

type fakeSpatial struct{ Node3D }

// indexOf returns the index of the first record with prefix, or -1.
func indexOf(records []string, prefix string) int {
	return slices.IndexFunc(records, func(r string) bool { return strings.HasPrefix(r, prefix) })
}

// hasRecord reports whether a record has kind (its first word) and
// contains every part.
func hasRecord(records []string, kind string, parts ...string) bool {
	return slices.ContainsFunc(records, func(r string) bool {
		if !strings.HasPrefix(r, kind+" ") {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(r, p) {
				return false
			}
		}
		return true
	})
}

func TestFakeEngineChild(t *testing.T) {
	if os.Getenv(fakeChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestFakeEngine starts")
	}
	cleaned := 0
	c := NewClass[fakeProbe]("FakeProbe")
	c.Group("Motion", "")
	Property(c, "speed", func(p *fakeProbe) float64 { return p.speed }, func(p *fakeProbe, v float64) { p.speed = v }).
		Range(0, 10, 0.5)
	Property(c, "label", func(p *fakeProbe) string { return p.label }, func(p *fakeProbe, v string) { p.label = v })
	c.Subgroup("Debug", "")
	Property(c, "frames", func(p *fakeProbe) int { return p.frames }, nil)
	Method2R(c, "add", func(_ *fakeProbe, a, b int64) int64 { return a + b }, "a", "b").Const()
	Method1R(c, "greet", func(p *fakeProbe, name string) string { return "hi " + name + " from " + p.label }, "name")
	hit := NewSignal2[int64, string](c, "hit", "damage", "label")
	Method1(c, "fire", func(p *fakeProbe, damage int64) { require.NoError(t, hit.Emit(p, damage, p.label)) }, "damage")
	unheard, jammed := NewSignal0(c, "unheard"), NewSignal0(c, "jammed")
	Method0(c, "fire_unheard", func(p *fakeProbe) { assert.NoError(t, unheard.Emit(p), "no listener is not an error") })
	Method0(c, "fire_jammed", func(p *fakeProbe) { assert.Equal(t, EngineError(31), jammed.Emit(p)) })
	Method0(c, "boom", func(*fakeProbe) { panic("boom") })
	Method0(c, "report", func(*fakeProbe) { PrintWarning("careful") })
	Method0(c, "cleanup_count", func(*fakeProbe) { cleaned++ })
	c.Constant("MAX", 10)
	c.EnumConstant("Mode", "MODE_A", 0)
	c.Docs(`<class name="FakeProbe" inherits="Node"></class>`)
	s := NewClass[fakeSpatial]("FakeSpatial").Runtime()
	require.NoError(t, c.Err())
	Register(c, s)
	var hooks []string
	OnSceneInit(func() error { hooks = append(hooks, "init"); return nil })
	OnSceneDeinit(func() { hooks = append(hooks, "deinit") })

	require.True(t, fakeengine.Load(), "entry symbol refused the fake engine: %v", fakeengine.Records())
	assert.Equal(t, uint32(LevelScene), fakeengine.MinimumLevel())
	for _, l := range []Level{LevelCore, LevelServers, LevelScene, LevelEditor} {
		fakeengine.Initialize(uint32(l))
	}
	rec := fakeengine.Records()
	t.Logf("registration records:\n%s", strings.Join(rec, "\n"))
	assert.Equal(t, -1, indexOf(rec, "missing"), "every interface function was found")
	assert.False(t, hasRecord(rec, "error"), "no error printed")
	assert.Equal(t, []string{"init"}, hooks)
	maj, min, _ := Version()
	assert.Equal(t, [2]int{4, 4}, [2]int{maj, min})

	t.Run("registration order and content", func(t *testing.T) {
		order := []string{
			"class FakeProbe extends Node runtime=0 notification=1",
			"method FakeProbe.get_speed flags=5 args=0 -> 3",
			"method FakeProbe.set_speed flags=1 args=1 [value:3 class= hint=0/ usage=6 meta=0]",
			"method FakeProbe.add flags=5 args=2 [a:2 class= hint=0/ usage=6 meta=0] [b:2 class= hint=0/ usage=6 meta=0] -> 2",
			"group FakeProbe.Motion prefix=",
			"property FakeProbe.speed:3 class= hint=1/0,10,0.5 usage=6 set=set_speed get=get_speed",
			"property FakeProbe.label:4 class= hint=0/ usage=6 set=set_label get=get_label",
			"subgroup FakeProbe.Debug prefix=",
			"property FakeProbe.frames:2 class= hint=0/ usage=268435460 set= get=get_frames",
			"signal FakeProbe.hit [damage:2 class= hint=0/ usage=6] [label:4 class= hint=0/ usage=6]",
			"constant FakeProbe..MAX=10 bitfield=0",
			"constant FakeProbe.Mode.MODE_A=0 bitfield=0",
			"class FakeSpatial extends Node3D runtime=1 notification=0",
			"docs <class name=\"FakeProbe\"",
		}
		last := -1
		for _, want := range order {
			i := indexOf(rec, want)
			if assert.GreaterOrEqual(t, i, 0, "missing record %q", want) {
				assert.Greater(t, i, last, "record %q out of order", want)
				last = i
			}
		}
		assert.Equal(t, -1, indexOf(rec, "method FakeProbe.set_frames"), "read-only property has no setter")
	})

	fakeengine.ResetRecords()
	obj := fakeengine.Construct("FakeProbe")
	require.NotNil(t, obj)
	p, ok := InstanceOf[fakeProbe](Object{obj})
	require.True(t, ok, "InstanceOf finds the Go value behind the engine object")
	assert.Equal(t, 1.0, p.speed, "Init ran")
	assert.Equal(t, obj, p.Ptr(), "the embedded Node is bound to the engine object")
	assert.Contains(t, fakeengine.Records(), "construct Node", "the engine parent is constructed first")
	assert.Equal(t, 1, InstanceCount())

	t.Run("ptrcall", func(t *testing.T) {
		v := 2.5
		require.True(t, fakeengine.Ptrcall("FakeProbe", "set_speed", obj, []unsafe.Pointer{unsafe.Pointer(&v)}, nil))
		assert.Equal(t, 2.5, p.speed)
		var got float64
		require.True(t, fakeengine.Ptrcall("FakeProbe", "get_speed", obj, nil, unsafe.Pointer(&got)))
		assert.Equal(t, 2.5, got)
		a, b := int64(40), int64(2)
		var sum int64
		require.True(t, fakeengine.Ptrcall("FakeProbe", "add", obj, []unsafe.Pointer{unsafe.Pointer(&a), unsafe.Pointer(&b)}, unsafe.Pointer(&sum)))
		assert.Equal(t, int64(42), sum)
	})

	t.Run("variant call", func(t *testing.T) {
		r, ok := fakeengine.Call("FakeProbe", "add", obj, 2, 3)
		require.True(t, ok)
		assert.Zero(t, r.Error)
		assert.Equal(t, uint32(TypeInt), r.Type)
		assert.Equal(t, int64(5), r.Int)

		r, _ = fakeengine.Call("FakeProbe", "set_label", obj, "probe")
		assert.Zero(t, r.Error)
		assert.Equal(t, "probe", p.label)
		r, _ = fakeengine.Call("FakeProbe", "greet", obj, "ana")
		assert.Equal(t, "hi ana from probe", r.String)

		r, _ = fakeengine.Call("FakeProbe", "set_speed", obj, 4) // int converts to float
		assert.Zero(t, r.Error)
		assert.Equal(t, 4.0, p.speed)

		r, _ = fakeengine.Call("FakeProbe", "add", obj, 1)
		assert.Equal(t, 4, r.Error, "too few arguments")
		assert.Equal(t, 2, r.Expected)
		r, _ = fakeengine.Call("FakeProbe", "add", obj, 1, 2, 3)
		assert.Equal(t, 3, r.Error, "too many arguments")
		r, _ = fakeengine.Call("FakeProbe", "add", obj, 1, "x")
		assert.Equal(t, 2, r.Error, "invalid argument")
		assert.Equal(t, 1, r.Argument)
		assert.Equal(t, int(TypeInt), r.Expected)
	})

	t.Run("virtuals", func(t *testing.T) {
		data := fakeengine.VirtualCallData(obj, "_process", 373806689)
		require.NotZero(t, data)
		delta := 0.016
		for range 3 {
			fakeengine.CallVirtual(obj, "_process", data, []unsafe.Pointer{unsafe.Pointer(&delta)}, nil)
		}
		assert.Equal(t, 3, p.frames)
		assert.NotZero(t, fakeengine.VirtualCallData(obj, "_ready", 3218959716))
		assert.Zero(t, fakeengine.VirtualCallData(obj, "_physics_process", 373806689), "not implemented")
		assert.Zero(t, fakeengine.VirtualCallData(obj, "_input", 3754044979), "not a known virtual")
		fakeengine.ResetRecords()
		assert.Zero(t, fakeengine.VirtualCallData(obj, "_process", 1), "hash mismatch")
		assert.True(t, hasRecord(fakeengine.Records(), "warning", "engine virtual _process has hash 1"))
		fakeengine.Notify(obj, 10)
		assert.Equal(t, []int32{10}, p.notes)
	})

	t.Run("signals", func(t *testing.T) {
		fakeengine.ResetRecords()
		r, _ := fakeengine.Call("FakeProbe", "fire", obj, 7)
		assert.Zero(t, r.Error)
		assert.Contains(t, fakeengine.Records(), "emit hit 7 probe")
		fakeengine.Call("FakeProbe", "fire_unheard", obj)
		fakeengine.Call("FakeProbe", "fire_jammed", obj)
		assert.Contains(t, fakeengine.Records(), "emit unheard")
		assert.Contains(t, fakeengine.Records(), "emit jammed")
	})

	t.Run("errors and panics reach the console with Go file and line", func(t *testing.T) {
		fakeengine.ResetRecords()
		r, _ := fakeengine.Call("FakeProbe", "report", obj)
		assert.Zero(t, r.Error)
		fakeengine.Call("FakeProbe", "boom", obj)
		var zero int64
		fakeengine.Ptrcall("FakeProbe", "boom", obj, nil, unsafe.Pointer(&zero))
		rec := fakeengine.Records()
		assert.True(t, hasRecord(rec, "warning", "fakeengine_test.go:", "| careful"), "%v", rec)
		// The reported location is where the panic happened, in this file.
		assert.True(t, hasRecord(rec, "error", "fakeengine_test.go:", "| Go panic in method call: boom"), "%v", rec)
		assert.True(t, hasRecord(rec, "error", "fakeengine_test.go:", "| Go panic in method ptrcall: boom"), "%v", rec)
	})

	t.Run("free", func(t *testing.T) {
		fakeengine.Destroy(obj)
		assert.Zero(t, InstanceCount())
		_, ok := instanceByHandle(1)
		assert.False(t, ok)
	})

	fakeengine.ResetRecords()
	for _, l := range []Level{LevelEditor, LevelScene, LevelServers, LevelCore} {
		fakeengine.Deinitialize(uint32(l))
	}
	rec = fakeengine.Records()
	assert.Equal(t, []string{"init", "deinit"}, hooks)
	spatial, probe := indexOf(rec, "unregister FakeSpatial"), indexOf(rec, "unregister FakeProbe")
	require.GreaterOrEqual(t, spatial, 0, "%v", rec)
	assert.Greater(t, probe, spatial, "classes are unregistered in reverse order")
	assert.Nil(t, classByHandle(1), "handles are forgotten at deinit")
}

// TestDoublePrecisionRefused runs TestDoublePrecisionChild in a child
// process (loading sets process-wide state).
func TestDoublePrecisionRefused(t *testing.T) {
	if os.Getenv(fakeChildEnv) == "1" {
		t.Skip("skipped: this is the child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDoublePrecisionChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), fakeChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child process failed:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestDoublePrecisionChild", "child output:\n%s", out)
}

// TestDoublePrecisionChild: on a double-precision engine build (real_t =
// double) the library says so and registers nothing, instead of reading
// every vector and transform wrong.
func TestDoublePrecisionChild(t *testing.T) {
	if os.Getenv(fakeChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestDoublePrecisionRefused starts")
	}
	Register(NewClass[fakeProbe]("DoubleProbe"))
	fakeengine.SetDouble(true)
	require.True(t, fakeengine.Load())
	for _, l := range []Level{LevelCore, LevelServers, LevelScene, LevelEditor} {
		fakeengine.Initialize(uint32(l))
	}
	rec := fakeengine.Records()
	assert.True(t, hasRecord(rec, "error", "double-precision"), "%v", rec)
	assert.Equal(t, -1, indexOf(rec, "class DoubleProbe"), "no class registered")
}
