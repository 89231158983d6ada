package godot

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// infoFor returns the engine description codecFor gives V.
func infoFor[V Convertible](t *testing.T) argInfo {
	t.Helper()
	c := codecFor[V]()
	require.NotNil(t, c)
	require.NotNil(t, c.fromPtr)
	require.NotNil(t, c.toPtr)
	require.NotNil(t, c.fromVar)
	require.NotNil(t, c.toVar)
	return c.typeInfo("x")
}

func TestCodecTypes(t *testing.T) {
	tests := []struct {
		name  string
		info  argInfo
		typ   VariantType
		class string
		hint  PropertyHint
		meta  uint32
		usage PropertyUsage
	}{
		{"bool", infoFor[bool](t), TypeBool, "", HintNone, metaNone, 0},
		{"int", infoFor[int](t), TypeInt, "", HintNone, metaNone, 0},
		{"int32", infoFor[int32](t), TypeInt, "", HintNone, metaInt32, 0},
		{"int64", infoFor[int64](t), TypeInt, "", HintNone, metaNone, 0},
		{"float32", infoFor[float32](t), TypeFloat, "", HintNone, metaRealIsFloat, 0},
		{"float64", infoFor[float64](t), TypeFloat, "", HintNone, metaNone, 0},
		{"string", infoFor[string](t), TypeString, "", HintNone, metaNone, 0},
		{"[]byte", infoFor[[]byte](t), TypePackedByteArray, "", HintNone, metaNone, 0},
		{"[]string", infoFor[[]string](t), TypePackedStringArray, "", HintNone, metaNone, 0},
		{"Vector2", infoFor[Vector2](t), TypeVector2, "", HintNone, metaNone, 0},
		{"Vector3", infoFor[Vector3](t), TypeVector3, "", HintNone, metaNone, 0},
		{"Vector2i", infoFor[Vector2i](t), TypeVector2i, "", HintNone, metaNone, 0},
		{"Vector3i", infoFor[Vector3i](t), TypeVector3i, "", HintNone, metaNone, 0},
		{"Vector4", infoFor[Vector4](t), TypeVector4, "", HintNone, metaNone, 0},
		{"Rect2", infoFor[Rect2](t), TypeRect2, "", HintNone, metaNone, 0},
		{"Quaternion", infoFor[Quaternion](t), TypeQuaternion, "", HintNone, metaNone, 0},
		{"Color", infoFor[Color](t), TypeColor, "", HintNone, metaNone, 0},
		{"Basis", infoFor[Basis](t), TypeBasis, "", HintNone, metaNone, 0},
		{"Transform2D", infoFor[Transform2D](t), TypeTransform2D, "", HintNone, metaNone, 0},
		{"Transform3D", infoFor[Transform3D](t), TypeTransform3D, "", HintNone, metaNone, 0},
		{"StringName", infoFor[StringName](t), TypeStringName, "", HintNone, metaNone, 0},
		{"NodePath", infoFor[NodePath](t), TypeNodePath, "", HintNone, metaNone, 0},
		{"Dictionary", infoFor[Dictionary](t), TypeDictionary, "", HintNone, metaNone, 0},
		{"Array", infoFor[Array](t), TypeArray, "", HintNone, metaNone, 0},
		{"Variant", infoFor[Variant](t), TypeNil, "", HintNone, metaNone, UsageNilIsVariant},
		{"Object", infoFor[Object](t), TypeObject, "Object", HintNone, metaNone, 0},
		{"Node", infoFor[Node](t), TypeObject, "Node", HintNodeType, metaNone, 0},
		{"Node3D", infoFor[Node3D](t), TypeObject, "Node3D", HintNodeType, metaNone, 0},
		{"Node2D", infoFor[Node2D](t), TypeObject, "Node2D", HintNodeType, metaNone, 0},
		{"CanvasItem", infoFor[CanvasItem](t), TypeObject, "CanvasItem", HintNodeType, metaNone, 0},
		{"CharacterBody2D", infoFor[CharacterBody2D](t), TypeObject, "CharacterBody2D", HintNodeType, metaNone, 0},
		{"CharacterBody3D", infoFor[CharacterBody3D](t), TypeObject, "CharacterBody3D", HintNodeType, metaNone, 0},
		{"RigidBody2D", infoFor[RigidBody2D](t), TypeObject, "RigidBody2D", HintNodeType, metaNone, 0},
		{"RigidBody3D", infoFor[RigidBody3D](t), TypeObject, "RigidBody3D", HintNodeType, metaNone, 0},
		{"RefCounted", infoFor[RefCounted](t), TypeObject, "RefCounted", HintNone, metaNone, 0},
		{"Resource", infoFor[Resource](t), TypeObject, "Resource", HintResourceType, metaNone, 0},
		{"PackedScene", infoFor[PackedScene](t), TypeObject, "PackedScene", HintResourceType, metaNone, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.typ, tc.info.typ)
			assert.Equal(t, tc.class, tc.info.class)
			assert.Equal(t, tc.hint, tc.info.hint)
			assert.Equal(t, tc.meta, tc.info.meta)
			assert.Equal(t, tc.usage, tc.info.usage)
			if tc.hint != HintNone {
				assert.Equal(t, tc.class, tc.info.hintString)
			}
		})
	}
}

// ptrRoundTrip writes v into an engine-encoded slot of type R and reads it back.
func ptrRoundTrip[V Convertible, R any](t *testing.T, v V) (V, R) {
	t.Helper()
	c := codecFor[V]()
	var slot R
	c.toPtr(unsafe.Pointer(&slot), v)
	return c.fromPtr(unsafe.Pointer(&slot)), slot
}

func TestCodecPtrEncoding(t *testing.T) {
	t.Run("bool is one byte", func(t *testing.T) {
		got, raw := ptrRoundTrip[bool, uint8](t, true)
		assert.True(t, got)
		assert.Equal(t, uint8(1), raw)
		got, raw = ptrRoundTrip[bool, uint8](t, false)
		assert.False(t, got)
		assert.Equal(t, uint8(0), raw)
	})
	t.Run("int32 travels as int64", func(t *testing.T) {
		got, raw := ptrRoundTrip[int32, int64](t, -7)
		assert.Equal(t, int32(-7), got)
		assert.Equal(t, int64(-7), raw)
	})
	t.Run("int travels as int64", func(t *testing.T) {
		got, raw := ptrRoundTrip[int, int64](t, 1<<40)
		assert.Equal(t, 1<<40, got)
		assert.Equal(t, int64(1<<40), raw)
	})
	t.Run("float32 travels as double", func(t *testing.T) {
		got, raw := ptrRoundTrip[float32, float64](t, 1.5)
		assert.Equal(t, float32(1.5), got)
		assert.Equal(t, 1.5, raw)
	})
	t.Run("Transform3D is raw", func(t *testing.T) {
		tr := Transform3D{Basis: IdentityBasis, Origin: Vector3{1, 2, 3}}
		got, raw := ptrRoundTrip[Transform3D, Transform3D](t, tr)
		assert.Equal(t, tr, got)
		assert.Equal(t, tr, raw)
	})
	t.Run("object pointer", func(t *testing.T) {
		p := unsafe.Pointer(new(int64))
		got, raw := ptrRoundTrip[Node3D, unsafe.Pointer](t, wrapPtr[Node3D](p))
		assert.Equal(t, p, got.Ptr())
		assert.Equal(t, p, raw)
	})
}

func TestCodecUnsupported(t *testing.T) {
	assert.Nil(t, codecFor[complex128]())
	assert.Nil(t, codecFor[*int]())
	ci := NewClass[plainNode]("X").info
	info := infoOf(ci, codecFor[complex64](), "method m argument", "a")
	assert.Equal(t, "a", info.name)
	require.Len(t, ci.errs, 1)
	assert.Contains(t, ci.errs[0].Error(), "complex64 has no Variant mapping")
}

// TestBeforeLoad: before the engine loads (unit tests), the helpers behind
// engine values return empty values instead of calling a NULL interface
// function.
func TestBeforeLoad(t *testing.T) {
	require.False(t, Loaded())
	tests := []struct {
		name string
		f    func() any
		want any
	}{
		{"Variant.String", func() any { return Variant{}.String() }, ""},
		{"[]byte Variant", func() any { v := NewVariant([]byte{1, 2}); defer v.Destroy(); return v.Type() }, TypeNil},
		{"PackedByteArray", func() any { a := NewPackedByteArray([]byte{1, 2}); defer a.Destroy(); return a.Len() }, 0},
		{"PackedStringArray", func() any {
			a := NewPackedStringArray([]string{"a"})
			defer a.Destroy()
			return a.Strings()
		}, []string(nil)},
		{"Dictionary.Get", func() any { _, ok := DictionaryGet[int64](Dictionary{}, "k"); return ok }, false},
		{"Array.At", func() any { _, ok := ArrayAt[int64](Array{}, 0); return ok }, false},
		{"StringName.String", func() any { return NewStringName("x").String() }, ""},
		{"NodePath.String", func() any { return NewNodePath("../x").String() }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.f())
		})
	}
}
