package godot

// #include "gdx.h"
import "C"

import "unsafe"

// String is an engine String: an opaque, reference-counted 8-byte handle.
// A String you create is yours: call Destroy when done. Copying the Go value
// does not copy the engine value (use Copy for a second owner).
type String struct{ raw uint64 }

// NewString returns an engine String holding s (UTF-8).
func NewString(s string) String {
	return String{uint64(C.gdx_string_new(strPtr(s), C.gdx_int(len(s))))}
}

// String returns s as a Go string (allocates).
func (s String) String() string { return goString(unsafe.Pointer(&s)) }

// AppendTo appends the UTF-8 bytes of s to b and returns the extended slice;
// it allocates only when b lacks capacity.
func (s String) AppendTo(b []byte) []byte { return appendString(b, unsafe.Pointer(&s)) }

// Copy returns a second reference to the same text.
func (s String) Copy() String {
	var r String
	C.gdx_construct(C.uint32_t(TypeString), 1, unsafe.Pointer(&r), unsafe.Pointer(&s))
	return r
}

// Destroy releases s; s is empty afterwards.
func (s *String) Destroy() { destroyValue(TypeString, unsafe.Pointer(s)); s.raw = 0 }

// StringName is an engine StringName: an interned string, compared by
// identity, 8 bytes. Cache the ones used every frame (a method or signal name)
// instead of building them per call. Destroy when done.
type StringName struct{ raw uint64 }

// NewStringName returns the interned StringName of s.
func NewStringName(s string) StringName {
	return StringName{uint64(C.gdx_string_name_new(strPtr(s), C.gdx_int(len(s))))}
}

// String returns n as a Go string (allocates).
func (n StringName) String() string {
	if n.raw == 0 {
		return ""
	}
	var s String
	C.gdx_construct(C.uint32_t(TypeString), 2, unsafe.Pointer(&s), unsafe.Pointer(&n))
	defer s.Destroy()
	return s.String()
}

// IsEmpty reports whether n is the empty name (an empty StringName holds no data).
func (n StringName) IsEmpty() bool { return n.raw == 0 }

// Equal reports whether n and m name the same string (interned: one comparison).
func (n StringName) Equal(m StringName) bool { return n.raw == m.raw }

// Copy returns a second reference to the same name.
func (n StringName) Copy() StringName {
	var r StringName
	C.gdx_construct(C.uint32_t(TypeStringName), 1, unsafe.Pointer(&r), unsafe.Pointer(&n))
	return r
}

// Destroy releases n; n is empty afterwards.
func (n *StringName) Destroy() { destroyValue(TypeStringName, unsafe.Pointer(n)); n.raw = 0 }

// NodePath is an engine NodePath (8 bytes, reference counted). Destroy when done.
type NodePath struct{ raw uint64 }

// NewNodePath parses s ("../Player", "%Spawn", "Body:position") into a NodePath.
func NewNodePath(s string) NodePath {
	var r NodePath
	if s == "" {
		return r // the empty NodePath holds no data
	}
	str := NewString(s)
	defer str.Destroy()
	C.gdx_construct(C.uint32_t(TypeNodePath), 2, unsafe.Pointer(&r), unsafe.Pointer(&str))
	return r
}

// String returns p as text (allocates).
func (p NodePath) String() string {
	if p.raw == 0 {
		return ""
	}
	var s String
	C.gdx_construct(C.uint32_t(TypeString), 3, unsafe.Pointer(&s), unsafe.Pointer(&p))
	defer s.Destroy()
	return s.String()
}

// IsEmpty reports whether p is the empty path.
func (p NodePath) IsEmpty() bool { return p.raw == 0 }

// Copy returns a second reference to the same path.
func (p NodePath) Copy() NodePath {
	var r NodePath
	C.gdx_construct(C.uint32_t(TypeNodePath), 1, unsafe.Pointer(&r), unsafe.Pointer(&p))
	return r
}

// Destroy releases p; p is empty afterwards.
func (p *NodePath) Destroy() { destroyValue(TypeNodePath, unsafe.Pointer(p)); p.raw = 0 }

// goString converts the engine String at p to a Go string.
func goString(p unsafe.Pointer) string {
	n := int(C.gdx_string_utf8(p, nil, 0))
	if n <= 0 {
		return ""
	}
	buf := make([]byte, n)
	C.gdx_string_utf8(p, (*C.char)(unsafe.Pointer(&buf[0])), C.gdx_int(n))
	return unsafe.String(&buf[0], n)
}

// appendString appends the UTF-8 of the engine String at p to b.
func appendString(b []byte, p unsafe.Pointer) []byte {
	n := int(C.gdx_string_utf8(p, nil, 0))
	if n <= 0 {
		return b
	}
	start := len(b)
	b = grow(b, n)
	C.gdx_string_utf8(p, (*C.char)(unsafe.Pointer(&b[start])), C.gdx_int(n))
	return b
}

// grow extends b by n bytes, reallocating only when capacity is short.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// destroyValue runs the engine destructor of an owned builtin value.
func destroyValue(t VariantType, p unsafe.Pointer) {
	if *(*uint64)(p) == 0 && t != TypePackedByteArray && t != TypePackedStringArray {
		return // empty String/StringName/NodePath/Dictionary/Array: nothing to release
	}
	// By value, like Variant.Destroy: the engine value is only a reference.
	var b C.gdx_blob
	if t == TypePackedByteArray || t == TypePackedStringArray {
		*(*[2]uint64)(unsafe.Pointer(&b)) = *(*[2]uint64)(p)
	} else {
		*(*uint64)(unsafe.Pointer(&b)) = *(*uint64)(p)
	}
	C.gdx_destroy_value(C.uint32_t(t), b)
}
