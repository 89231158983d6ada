package godot

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type plainNode struct{ Node }

type busyNode struct {
	Node
	speed    float64
	frames   int
	physics  float64
	ready    bool
	cleaned  bool
	warnings []string
}

func (b *busyNode) Ready()                          { b.ready = true }
func (b *busyNode) Process(delta float64)           { b.frames++ }
func (b *busyNode) PhysicsProcess(delta float64)    { b.physics += delta }
func (b *busyNode) ConfigurationWarnings() []string { return b.warnings }
func (b *busyNode) Cleanup()                        { b.cleaned = true }

type spatial struct{ Node3D }

func (s *spatial) EnterTree() {}
func (s *spatial) ExitTree()  {}

type flat struct{ Node2D }

type body struct{ CharacterBody3D }

type listener struct{ Node }

func (l *listener) OnNotification(what int32) {}

func TestNewClassParentAndVirtuals(t *testing.T) {
	bit := func(ks ...virtualKind) (m uint32) {
		for _, k := range ks {
			m |= 1 << k
		}
		return m
	}
	tests := []struct {
		name     string
		class    Registrant
		parent   string
		virtuals uint32
		notify   bool
	}{
		{"plain Node", NewClass[plainNode]("Plain"), "Node", 0, false},
		{"Node with hooks", NewClass[busyNode]("Busy"), "Node",
			bit(vReady, vProcess, vPhysicsProcess, vConfigurationWarnings), false},
		{"Node3D", NewClass[spatial]("Spatial"), "Node3D", bit(vEnterTree, vExitTree), false},
		{"Node2D", NewClass[flat]("Flat"), "Node2D", 0, false},
		{"CharacterBody3D", NewClass[body]("Body"), "CharacterBody3D", 0, false},
		{"notifications", NewClass[listener]("Listener"), "Node", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ci := tc.class.classInfo()
			assert.Equal(t, tc.parent, ci.parent)
			assert.Equal(t, tc.virtuals, ci.virtuals)
			assert.Equal(t, tc.notify, ci.notifications)
			assert.Empty(t, ci.errs)
		})
	}
}

func TestNewValueBindsObject(t *testing.T) {
	c := NewClass[spatial]("Spatial")
	obj := unsafe.Pointer(new(int64))
	v, ok := c.info.newValue(obj).(*spatial)
	require.True(t, ok)
	assert.Equal(t, obj, v.Ptr(), "the embedded Node3D must point at the engine object")
	assert.Equal(t, obj, v.AsObject().Ptr())
}

func TestDeclarationErrors(t *testing.T) {
	get := func(*plainNode) int64 { return 0 }
	set := func(*plainNode, int64) {}
	tests := []struct {
		name    string
		declare func(c *Class[plainNode])
		wantErr string
	}{
		{"valid", func(c *Class[plainNode]) {
			Property(c, "speed", get, set)
			Method0(c, "go_", func(*plainNode) {})
			NewSignal1[int64](c, "hit", "damage")
			c.Constant("MAX", 3)
		}, ""},
		{"bad class name", nil, `name "1x" is not an identifier`},
		{"method clash", func(c *Class[plainNode]) {
			Method0(c, "run", func(*plainNode) {})
			Method0(c, "run", func(*plainNode) {})
		}, `method "run" clashes with method "run"`},
		{"property accessor clash", func(c *Class[plainNode]) {
			Method0(c, "get_speed", func(*plainNode) {})
			Property(c, "speed", get, set)
		}, `method "get_speed" clashes`},
		{"signal vs constant", func(c *Class[plainNode]) {
			NewSignal0(c, "done")
			c.Constant("done", 1)
		}, `constant "done" clashes with signal "done"`},
		{"bad argument name", func(c *Class[plainNode]) {
			Method1(c, "f", func(*plainNode, int64) {}, "a b")
		}, `argument 0 name "a b"`},
		{"nil getter", func(c *Class[plainNode]) {
			Property[plainNode, int64](c, "x", nil, nil)
		}, "nil getter"},
		{"bad enum name", func(c *Class[plainNode]) {
			c.EnumConstant("My Enum", "A", 0)
		}, `enum name "My Enum"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "Ok"
			if tc.name == "bad class name" {
				name = "1x"
			}
			c := NewClass[plainNode](name)
			if tc.declare != nil {
				tc.declare(c)
			}
			if tc.wantErr == "" {
				assert.NoError(t, c.Err())
				return
			}
			require.Error(t, c.Err())
			assert.Contains(t, c.Err().Error(), tc.wantErr)
		})
	}
}

func TestPropertyDeclaresAccessors(t *testing.T) {
	c := NewClass[busyNode]("Busy")
	Property(c, "speed", func(b *busyNode) float64 { return b.speed }, func(b *busyNode, v float64) { b.speed = v }).
		Range(0, 10, 0.5, "suffix:m/s")
	Property(c, "frames", func(b *busyNode) int { return b.frames }, nil)
	require.NoError(t, c.Err())

	names := map[string]*methodDecl{}
	for _, m := range c.info.methods {
		names[m.name] = m
	}
	require.Contains(t, names, "get_speed")
	require.Contains(t, names, "set_speed")
	require.Contains(t, names, "get_frames")
	assert.NotContains(t, names, "set_frames", "read-only properties have no setter")
	assert.NotZero(t, names["get_speed"].flags&methodFlagConst, "getters are const")

	require.Len(t, c.info.members, 2)
	speed := c.info.members[0].(*propertyDecl)
	assert.Equal(t, TypeFloat, speed.info.typ)
	assert.Equal(t, HintRange, speed.info.hint)
	assert.Equal(t, "0,10,0.5,suffix:m/s", speed.info.hintString)
	assert.Equal(t, UsageDefault, speed.info.usage)
	frames := c.info.members[1].(*propertyDecl)
	assert.Equal(t, TypeInt, frames.info.typ)
	assert.Equal(t, UsageEditor|UsageReadOnly, frames.info.usage)
	assert.Empty(t, frames.setter)

	// The accessors work through the ptrcall path on plain memory.
	b := &busyNode{}
	v := 7.5
	names["set_speed"].ptrcall(b, argv(unsafe.Pointer(&v)), nil)
	assert.Equal(t, 7.5, b.speed)
	var got float64
	names["get_speed"].ptrcall(b, nil, unsafe.Pointer(&got))
	assert.Equal(t, 7.5, got)
}

// argv builds an engine-style argument array (pointers to values).
func argv(ps ...unsafe.Pointer) unsafe.Pointer {
	if len(ps) == 0 {
		return nil
	}
	return unsafe.Pointer(&ps[0])
}

func TestMethodPtrcall(t *testing.T) {
	c := NewClass[busyNode]("Busy")
	add := Method2R(c, "add", func(_ *busyNode, a, b int64) int64 { return a + b }, "a", "b").Const()
	scale := Method2R(c, "scale", func(_ *busyNode, v Vector3, k float32) Vector3 {
		return Vector3{v.X * k, v.Y * k, v.Z * k}
	}, "v", "k")
	flip := Method1R(c, "flip", func(_ *busyNode, b bool) bool { return !b }, "b")
	var calls int
	touch := Method3(c, "touch", func(b *busyNode, x int32, y float64, z Transform2D) {
		calls++
		b.speed = float64(x) + y + float64(z.Origin.X)
	}, "x", "y", "z")
	require.NoError(t, c.Err())

	self := &busyNode{}
	a, b := int64(40), int64(2)
	var sum int64
	add.decl.ptrcall(self, argv(unsafe.Pointer(&a), unsafe.Pointer(&b)), unsafe.Pointer(&sum))
	assert.Equal(t, int64(42), sum)
	assert.NotZero(t, add.decl.flags&methodFlagConst)

	v, k := Vector3{1, 2, 3}, 2.0 // float32 travels as double
	var out Vector3
	scale.decl.ptrcall(self, argv(unsafe.Pointer(&v), unsafe.Pointer(&k)), unsafe.Pointer(&out))
	assert.Equal(t, Vector3{2, 4, 6}, out)
	assert.Equal(t, uint32(metaRealIsFloat), scale.decl.args[1].meta)

	in, res := uint8(1), uint8(7)
	flip.decl.ptrcall(self, argv(unsafe.Pointer(&in)), unsafe.Pointer(&res))
	assert.Equal(t, uint8(0), res)

	x, y := int64(3), 0.5 // int32 travels as int64
	z := Transform2D{Origin: Vector2{X: 10}}
	touch.decl.ptrcall(self, argv(unsafe.Pointer(&x), unsafe.Pointer(&y), unsafe.Pointer(&z)), nil)
	assert.Equal(t, 1, calls)
	assert.Equal(t, 13.5, self.speed)
	assert.Equal(t, uint32(metaInt32), touch.decl.args[0].meta)

	// A caller that ignores the result passes a nil return slot.
	assert.NotPanics(t, func() { add.decl.ptrcall(self, argv(unsafe.Pointer(&a), unsafe.Pointer(&b)), nil) })
}

// withVirtualNames installs stand-in interned names for the virtuals.
func withVirtualNames(t *testing.T) {
	t.Helper()
	saved := virtualNames
	for k := range virtualNames {
		virtualNames[k] = StringName{raw: uint64(0x1000 + k)}
	}
	t.Cleanup(func() { virtualNames = saved })
}

func TestVirtualLookup(t *testing.T) {
	withVirtualNames(t)
	hashWarned.Clear() // the warning is printed once per process
	var out bytes.Buffer
	saved := fallbackOut
	fallbackOut = &out
	t.Cleanup(func() { fallbackOut = saved; lib.editorHint = false })

	busy := NewClass[busyNode]("Busy").info
	tool := NewClass[busyNode]("BusyTool").Tool().info
	name := func(k virtualKind) unsafe.Pointer { return unsafe.Pointer(&virtualNames[k].raw) }
	unknown := uint64(0x9999)

	tests := []struct {
		name   string
		class  *classInfo
		vname  unsafe.Pointer
		hash   uint32
		editor bool
		want   uintptr
	}{
		{"implemented", busy, name(vProcess), 373806689, false, uintptr(vProcess) + 1},
		{"ready", busy, name(vReady), 3218959716, false, uintptr(vReady) + 1},
		{"not implemented", busy, name(vEnterTree), 3218959716, false, 0},
		{"unknown virtual", busy, unsafe.Pointer(&unknown), 1, false, 0},
		{"hash mismatch", busy, name(vProcess), 12345, false, 0},
		{"editor skips game logic", busy, name(vProcess), 373806689, true, 0},
		{"editor keeps warnings", busy, name(vConfigurationWarnings), 1139954409, true, uintptr(vConfigurationWarnings) + 1},
		{"tool runs in editor", tool, name(vProcess), 373806689, true, uintptr(vProcess) + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib.editorHint = tc.editor
			assert.Equal(t, tc.want, virtualFor(tc.class, tc.vname, tc.hash))
		})
	}
	assert.Contains(t, out.String(), "_process has hash 12345")
}

func TestCallVirtual(t *testing.T) {
	b := &busyNode{}
	callVirtual(b, vReady, nil, nil)
	assert.True(t, b.ready)
	delta := 0.25
	callVirtual(b, vProcess, argv(unsafe.Pointer(&delta)), nil)
	callVirtual(b, vProcess, argv(unsafe.Pointer(&delta)), nil)
	assert.Equal(t, 2, b.frames)
	callVirtual(b, vPhysicsProcess, argv(unsafe.Pointer(&delta)), nil)
	assert.Equal(t, 0.25, b.physics)
}

func TestInstanceLifecycle(t *testing.T) {
	c := NewClass[busyNode]("Busy")
	v := c.info.newValue(nil).(*busyNode)
	h := instances.Add(instance{class: c.info, value: v})
	got, ok := instanceByHandle(uintptr(h))
	require.True(t, ok)
	assert.Same(t, v, got.value.(*busyNode))

	freeInstance(uintptr(h))
	assert.True(t, v.cleaned, "Cleanup runs when the engine frees the object")
	_, ok = instanceByHandle(uintptr(h))
	assert.False(t, ok)
	assert.NotPanics(t, func() { freeInstance(uintptr(h)) }, "a second free is ignored")
}

func TestRegistryHandles(t *testing.T) {
	assert.Nil(t, classByHandle(0))
	assert.Nil(t, classByHandle(99))
	assert.Nil(t, methodByHandle(0))
	assert.Nil(t, methodByHandle(99))
}

func TestIsIdentifier(t *testing.T) {
	for s, want := range map[string]bool{
		"speed": true, "_ready": true, "MAX_2": true, "NetRoom": true,
		"": false, "2x": false, "a-b": false, "a b": false, "é": false,
	} {
		assert.Equal(t, want, isIdentifier(s), "%q", s)
	}
}
