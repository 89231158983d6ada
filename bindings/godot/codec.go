package godot

// #include "gdx.h"
import "C"

import (
	"sync"
	"unsafe"
)

// Argument metadata (GDExtensionClassMethodArgumentMetadata): descriptive
// only, the encoding never changes (ints travel as int64, floats as double).
const (
	metaNone        = 0
	metaInt32       = 3
	metaRealIsFloat = 9
)

// codec converts one Go type to and from the engine's two calling
// conventions. Ownership (see the package doc): fromPtr borrows engine types;
// fromVar returns a new owner (drop it after the call when owned is set);
// toPtr consumes v into an initialized return slot; toVar copies v into a new
// Variant and leaves v to its owner.
type codec[V any] struct {
	typ        VariantType
	class      string // class name for Object types
	hint       PropertyHint
	hintString string
	usage      PropertyUsage // extra usage bits (NIL_IS_VARIANT)
	meta       uint32
	owned      bool

	fromPtr func(p unsafe.Pointer) V
	toPtr   func(p unsafe.Pointer, v V)
	fromVar func(v Variant) (V, bool)
	toVar   func(v V) Variant
	drop    func(v V)
}

// typeInfo is the engine-facing description of a codec's type.
func (c *codec[V]) typeInfo(name string) argInfo {
	return argInfo{name: name, typ: c.typ, class: c.class, hint: c.hint, hintString: c.hintString,
		usage: c.usage, meta: c.meta}
}

// codecs caches the Object wrapper codecs by engine class name (*codec[W]).
var codecs sync.Map

// codecFor returns the codec of V. Every type of Convertible has one.
func codecFor[V any]() *codec[V] {
	var zero V
	switch any(zero).(type) {
	case bool:
		return any(boolCodec).(*codec[V])
	case int:
		return any(intCodec).(*codec[V])
	case int32:
		return any(int32Codec).(*codec[V])
	case int64:
		return any(int64Codec).(*codec[V])
	case float32:
		return any(float32Codec).(*codec[V])
	case float64:
		return any(float64Codec).(*codec[V])
	case string:
		return any(stringCodec).(*codec[V])
	case []byte:
		return any(bytesCodec).(*codec[V])
	case []string:
		return any(stringsCodec).(*codec[V])
	case Vector2:
		return any(vector2Codec).(*codec[V])
	case Vector3:
		return any(vector3Codec).(*codec[V])
	case Vector2i:
		return any(vector2iCodec).(*codec[V])
	case Vector3i:
		return any(vector3iCodec).(*codec[V])
	case Vector4:
		return any(vector4Codec).(*codec[V])
	case Rect2:
		return any(rect2Codec).(*codec[V])
	case Quaternion:
		return any(quaternionCodec).(*codec[V])
	case Color:
		return any(colorCodec).(*codec[V])
	case Basis:
		return any(basisCodec).(*codec[V])
	case Transform2D:
		return any(transform2DCodec).(*codec[V])
	case Transform3D:
		return any(transform3DCodec).(*codec[V])
	case StringName:
		return any(stringNameCodec).(*codec[V])
	case NodePath:
		return any(nodePathCodec).(*codec[V])
	case Dictionary:
		return any(dictionaryCodec).(*codec[V])
	case Array:
		return any(arrayCodec).(*codec[V])
	case Variant:
		return any(variantCodec).(*codec[V])
	}
	if name, ok := wrapperClass(any(zero)); ok {
		if c, ok := codecs.Load(name); ok {
			return c.(*codec[V])
		}
		c, _ := codecs.LoadOrStore(name, objectCodec[V](name))
		return c.(*codec[V])
	}
	return nil
}

// variantValue extracts the engine representation R of type t from v,
// converting with the engine's strict rules when v holds another type.
func variantValue[R any](t VariantType, v Variant) (R, bool) {
	var r R
	if v.Type() != t {
		c := C.gdx_variant_convert(C.uint32_t(t), *(*C.gdx_variant)(unsafe.Pointer(&v)))
		if c.ok == 0 {
			return r, false
		}
		conv := *(*Variant)(unsafe.Pointer(&c.value))
		C.gdx_variant_to(C.uint32_t(t), unsafe.Pointer(&r), unsafe.Pointer(&conv))
		conv.Destroy()
		return r, true
	}
	C.gdx_variant_to(C.uint32_t(t), unsafe.Pointer(&r), unsafe.Pointer(&v))
	return r, true
}

// newVariantOf wraps the engine representation r of type t in a new Variant.
func newVariantOf[R any](t VariantType, r R) Variant {
	var v Variant
	C.gdx_variant_from(C.uint32_t(t), unsafe.Pointer(&v), unsafe.Pointer(&r))
	return v
}

// rawCodec is the codec of a type whose engine representation R is plain
// bits (bool as u8, int64, double, float32 structs).
func rawCodec[V, R any](t VariantType, meta uint32, in func(R) V, out func(V) R) *codec[V] {
	return &codec[V]{
		typ:     t,
		meta:    meta,
		fromPtr: func(p unsafe.Pointer) V { return in(*(*R)(p)) },
		toPtr:   func(p unsafe.Pointer, v V) { *(*R)(p) = out(v) },
		fromVar: func(v Variant) (V, bool) {
			r, ok := variantValue[R](t, v)
			return in(r), ok
		},
		toVar: func(v V) Variant { return newVariantOf(t, out(v)) },
	}
}

func same[T any](v T) T { return v }

var (
	boolCodec = rawCodec(TypeBool, metaNone,
		func(b uint8) bool { return b != 0 },
		func(v bool) uint8 {
			if v {
				return 1
			}
			return 0
		})
	intCodec = rawCodec(TypeInt, metaNone,
		func(i int64) int { return int(i) }, func(v int) int64 { return int64(v) })
	int32Codec = rawCodec(TypeInt, metaInt32,
		func(i int64) int32 { return int32(i) }, func(v int32) int64 { return int64(v) })
	int64Codec   = rawCodec(TypeInt, metaNone, same[int64], same[int64])
	float32Codec = rawCodec(TypeFloat, metaRealIsFloat,
		func(f float64) float32 { return float32(f) }, func(v float32) float64 { return float64(v) })
	float64Codec     = rawCodec(TypeFloat, metaNone, same[float64], same[float64])
	vector2Codec     = rawCodec(TypeVector2, metaNone, same[Vector2], same[Vector2])
	vector3Codec     = rawCodec(TypeVector3, metaNone, same[Vector3], same[Vector3])
	vector2iCodec    = rawCodec(TypeVector2i, metaNone, same[Vector2i], same[Vector2i])
	vector3iCodec    = rawCodec(TypeVector3i, metaNone, same[Vector3i], same[Vector3i])
	vector4Codec     = rawCodec(TypeVector4, metaNone, same[Vector4], same[Vector4])
	rect2Codec       = rawCodec(TypeRect2, metaNone, same[Rect2], same[Rect2])
	quaternionCodec  = rawCodec(TypeQuaternion, metaNone, same[Quaternion], same[Quaternion])
	colorCodec       = rawCodec(TypeColor, metaNone, same[Color], same[Color])
	basisCodec       = rawCodec(TypeBasis, metaNone, same[Basis], same[Basis])
	transform2DCodec = rawCodec(TypeTransform2D, metaNone, same[Transform2D], same[Transform2D])
	transform3DCodec = rawCodec(TypeTransform3D, metaNone, same[Transform3D], same[Transform3D])
)

// refCodec is the codec of an engine-owned builtin (StringName, NodePath,
// Dictionary, Array): bits are the value, the engine counts references.
func refCodec[V any](t VariantType) *codec[V] {
	return &codec[V]{
		typ:     t,
		owned:   true,
		fromPtr: func(p unsafe.Pointer) V { return *(*V)(p) },
		toPtr: func(p unsafe.Pointer, v V) {
			C.gdx_destroy(C.uint32_t(t), p)
			*(*V)(p) = v
		},
		fromVar: func(v Variant) (V, bool) { return variantValue[V](t, v) },
		toVar:   func(v V) Variant { return newVariantOf(t, v) },
		drop:    func(v V) { destroyValue(t, unsafe.Pointer(&v)) },
	}
}

var (
	stringNameCodec = refCodec[StringName](TypeStringName)
	nodePathCodec   = refCodec[NodePath](TypeNodePath)
	dictionaryCodec = refCodec[Dictionary](TypeDictionary)
	arrayCodec      = refCodec[Array](TypeArray)
)

var stringCodec = &codec[string]{
	typ:     TypeString,
	fromPtr: goString,
	toPtr: func(p unsafe.Pointer, v string) {
		C.gdx_destroy(C.uint32_t(TypeString), p)
		*(*uint64)(p) = uint64(C.gdx_string_new(strPtr(v), C.gdx_int(len(v))))
	},
	fromVar: func(v Variant) (string, bool) {
		s, ok := variantValue[String](TypeString, v)
		if !ok {
			return "", false
		}
		defer s.Destroy()
		return s.String(), true
	},
	toVar: func(v string) Variant {
		s := NewString(v)
		defer s.Destroy()
		return newVariantOf(TypeString, s)
	},
}

var bytesCodec = &codec[[]byte]{
	typ:     TypePackedByteArray,
	fromPtr: func(p unsafe.Pointer) []byte { return (*PackedByteArray)(p).Bytes() },
	toPtr: func(p unsafe.Pointer, v []byte) {
		C.gdx_destroy(C.uint32_t(TypePackedByteArray), p)
		*(*PackedByteArray)(p) = NewPackedByteArray(v)
	},
	fromVar: func(v Variant) ([]byte, bool) {
		a, ok := variantValue[PackedByteArray](TypePackedByteArray, v)
		if !ok {
			return nil, false
		}
		defer a.Destroy()
		return a.Bytes(), true
	},
	toVar: func(v []byte) Variant {
		a := NewPackedByteArray(v)
		defer a.Destroy()
		return newVariantOf(TypePackedByteArray, a)
	},
}

var stringsCodec = &codec[[]string]{
	typ:     TypePackedStringArray,
	fromPtr: func(p unsafe.Pointer) []string { return (*PackedStringArray)(p).Strings() },
	toPtr: func(p unsafe.Pointer, v []string) {
		C.gdx_destroy(C.uint32_t(TypePackedStringArray), p)
		*(*PackedStringArray)(p) = NewPackedStringArray(v)
	},
	fromVar: func(v Variant) ([]string, bool) {
		a, ok := variantValue[PackedStringArray](TypePackedStringArray, v)
		if !ok {
			return nil, false
		}
		defer a.Destroy()
		return a.Strings(), true
	},
	toVar: func(v []string) Variant {
		a := NewPackedStringArray(v)
		defer a.Destroy()
		return newVariantOf(TypePackedStringArray, a)
	},
}

// variantCodec passes Variants through: any type is accepted.
var variantCodec = &codec[Variant]{
	typ:     TypeNil,
	usage:   UsageNilIsVariant,
	fromPtr: func(p unsafe.Pointer) Variant { return *(*Variant)(p) },
	toPtr: func(p unsafe.Pointer, v Variant) {
		C.gdx_variant_destroy(p)
		*(*Variant)(p) = v
	},
	fromVar: func(v Variant) (Variant, bool) { return v, true },
	toVar:   func(v Variant) Variant { return v.Copy() },
	drop:    func(v Variant) { v.Destroy() },
}

// objectCodec is the codec of an Object wrapper W (one pointer) of engine
// class name.
func objectCodec[W any](name string) *codec[W] {
	c := &codec[W]{
		typ:   TypeObject,
		class: name,
		fromPtr: func(p unsafe.Pointer) W {
			return wrapPtr[W](*(*unsafe.Pointer)(p))
		},
		toPtr: func(p unsafe.Pointer, v W) {
			obj := ptrOf(v)
			if obj != nil && isRefCounted(obj) {
				// The slot is a Ref<T> for the engine: take a reference.
				C.gdx_ref_set_object(p, obj)
				return
			}
			*(*unsafe.Pointer)(p) = obj
		},
		fromVar: func(v Variant) (W, bool) {
			obj, ok := variantValue[unsafe.Pointer](TypeObject, v)
			if !ok || (obj != nil && name != "Object" && !isA(obj, name)) {
				var zero W
				return zero, false
			}
			return wrapPtr[W](obj), true
		},
		toVar: func(v W) Variant { return newVariantOf(TypeObject, ptrOf(v)) },
	}
	switch name {
	case "Resource", "PackedScene":
		c.hint, c.hintString = HintResourceType, name
	case "Object", "RefCounted":
	default:
		c.hint, c.hintString = HintNodeType, name
	}
	return c
}

// wrapPtr builds the wrapper W (a struct holding one Object pointer) of p.
func wrapPtr[W any](p unsafe.Pointer) W { return *(*W)(unsafe.Pointer(&p)) }

// ptrOf returns the Object pointer inside the wrapper w.
func ptrOf[W any](w W) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&w)) }
