package godot

// #include "gdx.h"
import "C"

import "unsafe"

// Variant is an engine Variant: 24 opaque bytes (a type tag and a payload).
// The zero Variant is Nil. A Variant that holds a reference-counted value
// (String, Array, Dictionary, an Object that is RefCounted…) owns one
// reference: Destroy it when done, and Copy it for a second owner.
type Variant struct{ raw [3]uint64 }

// Type returns the Variant's type.
func (v Variant) Type() VariantType { return VariantType(C.gdx_variant_type(unsafe.Pointer(&v))) }

// IsNil reports whether v is Nil.
func (v Variant) IsNil() bool { return v.Type() == TypeNil }

// Copy returns a second owner of the same value.
func (v Variant) Copy() Variant {
	var r Variant
	C.gdx_variant_copy(unsafe.Pointer(&r), unsafe.Pointer(&v))
	return r
}

// Destroy releases v; v is Nil afterwards.
func (v *Variant) Destroy() {
	if v.raw != [3]uint64{} {
		// By value: destroying a bitwise copy releases the same reference,
		// and no Go pointer crosses (which would move v to the heap).
		C.gdx_variant_destroy_value(*(*C.gdx_variant)(unsafe.Pointer(v)))
	}
	*v = Variant{}
}

// String formats v the way GDScript's str() does (allocates).
func (v Variant) String() string {
	var s String
	C.gdx_variant_stringify(unsafe.Pointer(&v), unsafe.Pointer(&s))
	defer s.Destroy()
	return s.String()
}

// Convert returns a new Variant of type t holding v converted with the
// engine's strict rules (an Array to a PackedFloat32Array and back, int
// to float); false when the engine does not convert v to t.
func (v Variant) Convert(t VariantType) (Variant, bool) {
	if v.Type() == t {
		return v.Copy(), true
	}
	c := C.gdx_variant_convert(C.uint32_t(t), *(*C.gdx_variant)(unsafe.Pointer(&v)))
	if c.ok == 0 {
		return Variant{}, false
	}
	return *(*Variant)(unsafe.Pointer(&c.value)), true
}

// Convertible lists the Go types that map onto a Variant type: method
// arguments and returns, property values, signal arguments and the generic
// Variant, Dictionary and Array helpers take these.
//
// Go-native types (bool, integers, floats, string, []byte, []string, the
// math structs) are converted by value. Engine types (StringName, NodePath,
// Dictionary, Array, Variant) follow the ownership rule of the package doc.
// Object wrappers are borrowed pointers.
type Convertible interface {
	bool | int | int32 | int64 | float32 | float64 | string | []byte | []string |
		Vector2 | Vector3 | Quaternion | Color | Basis | Transform2D | Transform3D |
		Vector2i | Vector3i | Vector4 | Rect2 |
		StringName | NodePath | Dictionary | Array | Variant |
		Object | RefCounted | Resource | PackedScene | Node | CanvasItem | Node2D | Node3D |
		CharacterBody2D | CharacterBody3D | RigidBody2D | RigidBody3D
}

// NewVariant returns a Variant holding a copy of v; Destroy it when done.
func NewVariant[V Convertible](v V) Variant { return codecFor[V]().toVar(v) }

// VariantAs converts v to V, with the engine's strict conversions (int to
// float, String to StringName…); false when v holds something else. An
// engine type (StringName, Dictionary…) comes back as a new owner.
func VariantAs[V Convertible](v Variant) (V, bool) { return codecFor[V]().fromVar(v) }
