package godot

// #include "gdx.h"
import "C"

import "unsafe"

// Object.get_indexed and set_indexed, through the Variant call path: a
// property of any type, by path ("health", "modulate:a", "sprite:frame"),
// for NetPredictor's synced properties.
var (
	mbObjectGetIndexed = engineMethod("Object", "get_indexed", 4006125091)
	mbObjectSetIndexed = engineMethod("Object", "set_indexed", 3500910842)
)

// GetIndexed returns the property at path (Object.get_indexed); Nil when
// there is none. Destroy the result.
func (o Object) GetIndexed(path NodePath) Variant {
	if o.ptr == nil || !mbObjectGetIndexed.ok(o.ptr) {
		return Variant{}
	}
	// A ptrcall: the NodePath goes as its 8 bytes, the Variant comes back
	// in the (zeroed, so Nil) return slot.
	return fromBlob[Variant](mbObjectGetIndexed.words(o.ptr, path.raw, 0, 0))
}

// SetIndexed sets the property at path to value (Object.set_indexed); the
// engine ignores a path that names no property. value stays yours.
func (o Object) SetIndexed(path NodePath, value Variant) {
	if o.ptr == nil || !mbObjectSetIndexed.ok(o.ptr) {
		return
	}
	var buf callArgs
	v := buf.slots()
	v[0] = newVariantOf(TypeNodePath, path)
	v[1] = value // borrowed bits: only v[0] is destroyed
	r := C.gdx_call(mbObjectSetIndexed.ptr, o.ptr, C.gdx_variants(buf), 2)
	v[0].Destroy()
	ret := *(*Variant)(unsafe.Pointer(&r.ret))
	ret.Destroy()
}
