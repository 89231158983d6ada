package apihash

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// seed is Godot's HASH_MURMUR3_SEED.
const seed = 0x7F07C65

// mix is one MurmurHash3 32-bit block step with h as the running state.
func mix(v, h uint32) uint32 {
	v *= 0xcc9e2d51
	v = v<<15 | v>>17
	v *= 0x1b873593
	h ^= v
	h = h<<13 | h>>19
	return h*5 + 0xe6546b64
}

// finish is the MurmurHash3 finalizer (fmix32).
func finish(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// StringHash is Godot's String::hash: djb2 (h*33 + c) over the code points.
func StringHash(s string) uint32 {
	h := uint32(5381)
	for _, r := range s {
		h = h*33 + uint32(r)
	}
	return h
}

// variantTypes lists the Variant::Type order of the builtin type names.
var variantTypes = []string{
	"Nil", "bool", "int", "float", "String", "Vector2", "Vector2i", "Rect2", "Rect2i",
	"Vector3", "Vector3i", "Transform2D", "Vector4", "Vector4i", "Plane", "Quaternion",
	"AABB", "Basis", "Transform3D", "Projection", "Color", "StringName", "NodePath", "RID",
	"Object", "Callable", "Signal", "Dictionary", "Array", "PackedByteArray",
	"PackedInt32Array", "PackedInt64Array", "PackedFloat32Array", "PackedFloat64Array",
	"PackedStringArray", "PackedVector2Array", "PackedVector3Array", "PackedColorArray",
	"PackedVector4Array",
}

// Variant type numbers used below.
const (
	typeNil        = 0
	typeBool       = 1
	typeInt        = 2
	typeFloat      = 3
	typeString     = 4
	typeObject     = 24
	typeDictionary = 27
	typeArray      = 28
)

// TypeOf resolves an extension_api.json type name to its Variant type number
// and the class name a PropertyInfo of it carries ("" for none).
func TypeOf(name string) (variant uint32, class string) {
	switch {
	case name == "Variant":
		return typeNil, ""
	case name == "Object":
		// A class method's Object argument is the class Object, so its
		// PropertyInfo carries the class name too.
		return typeObject, "Object"
	case strings.HasPrefix(name, "enum::"):
		return typeInt, strings.TrimPrefix(name, "enum::")
	case strings.HasPrefix(name, "bitfield::"):
		return typeInt, strings.TrimPrefix(name, "bitfield::")
	case strings.HasPrefix(name, "typedarray::"):
		return typeArray, ""
	case strings.HasPrefix(name, "typeddictionary::"):
		return typeDictionary, ""
	}
	for i, n := range variantTypes {
		if n == name {
			return uint32(i), ""
		}
	}
	return typeObject, name
}

// Arg is one argument of a class method.
type Arg struct {
	// Type is the extension_api.json type name.
	Type string `json:"type"`
	// Default is the JSON default_value literal; nil when the argument has none.
	Default *string `json:"default_value,omitempty"`
}

// Method is the signature of a class method, as extension_api.json gives it.
type Method struct {
	// Return is the return type name; "" for void.
	Return string
	Args   []Arg
	Const  bool
	Vararg bool
}

// MethodHash returns the hash of a class method with signature m.
func MethodHash(m Method) (uint32, error) {
	hasReturn := m.Return != ""
	h := mix(b2u(hasReturn), seed)
	h = mix(uint32(len(m.Args)), h)
	if hasReturn {
		h = mixType(m.Return, h)
	}
	var defaults []uint32
	for _, a := range m.Args {
		h = mixType(a.Type, h)
		if a.Default != nil {
			dh, err := defaultHash(a.Type, *a.Default)
			if err != nil {
				return 0, err
			}
			defaults = append(defaults, dh)
		}
	}
	h = mix(uint32(len(defaults)), h)
	for _, dh := range defaults {
		h = mix(dh, h)
	}
	h = mix(b2u(m.Const), h)
	h = mix(b2u(m.Vararg), h)
	return finish(h), nil
}

func mixType(name string, h uint32) uint32 {
	t, class := TypeOf(name)
	h = mix(t, h)
	if class != "" {
		h = mix(StringHash(class), h)
	}
	return h
}

// Builtin is the signature of a method of a builtin type (String, Array…).
type Builtin struct {
	// Return is the return type name; "" for void.
	Return string
	// Args are the argument type names.
	Args                  []string
	Const, Static, Vararg bool
}

// BuiltinHash returns the hash of a builtin-type method with signature b.
func BuiltinHash(b Builtin) uint32 {
	h := mix(b2u(b.Const), seed)
	h = mix(b2u(b.Static), h)
	h = mix(b2u(b.Vararg), h)
	h = mix(b2u(b.Return != ""), h)
	if b.Return != "" {
		t, _ := TypeOf(b.Return)
		h = mix(t, h)
	}
	h = mix(uint32(len(b.Args)), h)
	for _, a := range b.Args {
		t, _ := TypeOf(a)
		h = mix(t, h)
	}
	return finish(h)
}

// defaultHash is Variant::hash of a default argument, for the literal forms
// of bool, int, float, String and null.
func defaultHash(typ, lit string) (uint32, error) {
	t, _ := TypeOf(typ)
	switch {
	case lit == "null" && t == typeObject:
		// A null Ref<T> or Object* default is an OBJECT Variant: its hash mixes
		// the zero pointer.
		return intHash(0), nil
	case lit == "null":
		return 0, nil
	case t == typeBool:
		switch lit {
		case "true":
			return 1, nil
		case "false":
			return 0, nil
		}
	case t == typeInt || t == typeFloat:
		// The default is whatever Variant the engine bound: an integer literal
		// is an int Variant even for a float argument (Timer.start(-1)).
		if v, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return intHash(uint64(v)), nil
		}
		if v, err := strconv.ParseFloat(lit, 64); err == nil {
			return floatHash(v), nil
		}
	case t == typeString:
		if s, err := strconv.Unquote(lit); err == nil {
			return StringHash(s), nil
		}
	}
	return 0, fmt.Errorf("apihash: default value %s of type %s is not supported", lit, typ)
}

// intHash is Godot's hash_one_uint64 (Thomas Wang's 64-to-32-bit mix).
func intHash(v uint64) uint32 {
	v = ^v + v<<18
	v ^= v >> 31
	v *= 21
	v ^= v >> 11
	v += v << 6
	v ^= v >> 22
	return uint32(v)
}

// floatHash is hash_murmur3_one_double: +0/-0 and NaNs hash alike.
func floatHash(f float64) uint32 {
	switch {
	case f == 0:
		f = 0
	case math.IsNaN(f):
		f = math.NaN()
	}
	bits := math.Float64bits(f)
	return mix(uint32(bits>>32), mix(uint32(bits), seed))
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
