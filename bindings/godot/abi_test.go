package godot

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCLayout checks gdx.h against the layouts of the GDExtension header
// (64-bit targets: the builtin sizes of Godot's extension_api.json).
// gdx.h asserts the same numbers at compile time; this test keeps the Go
// view honest too.
func TestCLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("skipped: layouts are documented for 64-bit targets only")
	}
	want := map[string]uintptr{
		"init": 32, "init.userdata": 8, "init.initialize": 16, "init.deinitialize": 24,
		"version": 24, "version.string": 16,
		"version2": 56, "version2.status": 16, "version2.timestamp": 40, "version2.string": 48,
		"call_error": 12, "call_error.argument": 4, "call_error.expected": 8,
		"property_info": 48, "property_info.name": 8, "property_info.class_name": 16,
		"property_info.hint": 24, "property_info.hint_string": 32, "property_info.usage": 40,
		"method_info": 88, "method_info.method_userdata": 8, "method_info.call_func": 16,
		"method_info.ptrcall_func": 24, "method_info.method_flags": 32, "method_info.has_return_value": 36,
		"method_info.return_value_info": 40, "method_info.return_value_metadata": 48,
		"method_info.argument_count": 52, "method_info.arguments_info": 56,
		"method_info.arguments_metadata": 64, "method_info.default_argument_count": 72,
		"method_info.default_arguments": 80,
		"binding_callbacks":             24, "binding_callbacks.free": 8, "binding_callbacks.reference": 16,
		"class_info4": 160, "class_info4.is_runtime": 3, "class_info4.icon_path": 8,
		"class_info4.set_func": 16, "class_info4.notification_func": 72, "class_info4.to_string_func": 80,
		"class_info4.create_instance_func": 104, "class_info4.free_instance_func": 112,
		"class_info4.recreate_instance_func": 120, "class_info4.get_virtual_func": 128,
		"class_info4.get_virtual_call_data_func": 136, "class_info4.call_virtual_with_data_func": 144,
		"class_info4.class_userdata": 152,
	}
	got := cLayout()
	require.Len(t, got, len(want), "every reported layout must have an expected value")
	for k, w := range want {
		assert.Equal(t, w, got[k], k)
	}
}

// TestGoLayout checks the Go mirrors of engine values against the builtin
// sizes of extension_api.json (build configuration float_64) and the
// member offsets it lists.
func TestGoLayout(t *testing.T) {
	tests := []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"Variant", unsafe.Sizeof(Variant{}), 24},
		{"String", unsafe.Sizeof(String{}), 8},
		{"StringName", unsafe.Sizeof(StringName{}), 8},
		{"NodePath", unsafe.Sizeof(NodePath{}), 8},
		{"Dictionary", unsafe.Sizeof(Dictionary{}), 8},
		{"Array", unsafe.Sizeof(Array{}), 8},
		{"PackedByteArray", unsafe.Sizeof(PackedByteArray{}), 16},
		{"PackedStringArray", unsafe.Sizeof(PackedStringArray{}), 16},
		{"Vector2", unsafe.Sizeof(Vector2{}), 8},
		{"Vector3", unsafe.Sizeof(Vector3{}), 12},
		{"Quaternion", unsafe.Sizeof(Quaternion{}), 16},
		{"Color", unsafe.Sizeof(Color{}), 16},
		{"Basis", unsafe.Sizeof(Basis{}), 36},
		{"Transform2D", unsafe.Sizeof(Transform2D{}), 24},
		{"Transform2D.origin", unsafe.Offsetof(Transform2D{}.Origin), 16},
		{"Transform3D", unsafe.Sizeof(Transform3D{}), 48},
		{"Transform3D.origin", unsafe.Offsetof(Transform3D{}.Origin), 36},
		{"Quaternion.w", unsafe.Offsetof(Quaternion{}.W), 12},
		{"Vector2i", unsafe.Sizeof(Vector2i{}), 8},
		{"Vector3i", unsafe.Sizeof(Vector3i{}), 12},
		{"Vector4", unsafe.Sizeof(Vector4{}), 16},
		{"Rect2", unsafe.Sizeof(Rect2{}), 16},
		{"Rect2.size", unsafe.Offsetof(Rect2{}.Size), 8},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.got, tc.name)
	}
}

// TestWrappersArePointers: Cast and the codecs reinterpret wrappers as one
// Object pointer, so every wrapper must be exactly that.
func TestWrappersArePointers(t *testing.T) {
	wrappers := map[string]uintptr{
		"Object": unsafe.Sizeof(Object{}), "RefCounted": unsafe.Sizeof(RefCounted{}),
		"Resource": unsafe.Sizeof(Resource{}), "PackedScene": unsafe.Sizeof(PackedScene{}),
		"Node": unsafe.Sizeof(Node{}), "CanvasItem": unsafe.Sizeof(CanvasItem{}),
		"Node2D": unsafe.Sizeof(Node2D{}), "Node3D": unsafe.Sizeof(Node3D{}),
		"CharacterBody2D": unsafe.Sizeof(CharacterBody2D{}), "CharacterBody3D": unsafe.Sizeof(CharacterBody3D{}),
		"RigidBody2D": unsafe.Sizeof(RigidBody2D{}), "RigidBody3D": unsafe.Sizeof(RigidBody3D{}),
	}
	for name, size := range wrappers {
		assert.Equal(t, unsafe.Sizeof(uintptr(0)), size, name)
	}
	p := unsafe.Pointer(new(int))
	n := wrapPtr[Node3D](p)
	assert.Equal(t, p, n.Ptr())
	assert.Equal(t, p, ptrOf(n))
	assert.Equal(t, p, n.AsObject().Ptr())
}
