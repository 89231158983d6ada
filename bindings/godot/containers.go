package godot

// #include "gdx.h"
import "C"

import "unsafe"

// Dictionary is an engine Dictionary (8 bytes, reference counted, shared by
// copies like in GDScript). Make one with NewDictionary; the zero value is
// not a dictionary. Destroy when done.
type Dictionary struct{ raw uint64 }

// NewDictionary returns a new empty Dictionary.
func NewDictionary() Dictionary {
	var d Dictionary
	C.gdx_construct(C.uint32_t(TypeDictionary), 0, unsafe.Pointer(&d), nil)
	return d
}

// Len returns the number of entries.
func (d Dictionary) Len() int {
	if d.raw == 0 {
		return 0
	}
	var n int64
	callBuiltin(bmDictionarySize, unsafe.Pointer(&d), nil, nil, unsafe.Pointer(&n), 0)
	return int(n)
}

// Set stores a copy of value under a copy of key (both stay yours).
func (d Dictionary) Set(key, value Variant) {
	if d.raw == 0 {
		return
	}
	slot := C.gdx_dictionary_at(unsafe.Pointer(&d), unsafe.Pointer(&key))
	if slot == nil {
		return
	}
	C.gdx_variant_destroy(slot)
	C.gdx_variant_copy(slot, unsafe.Pointer(&value))
}

// Get returns a copy of the value under key; false when key is absent.
func (d Dictionary) Get(key Variant) (Variant, bool) {
	if d.raw == 0 {
		return Variant{}, false
	}
	var has bool
	callBuiltin(bmDictionaryHas, unsafe.Pointer(&d), unsafe.Pointer(&key), nil, unsafe.Pointer(&has), 1)
	if !has {
		return Variant{}, false
	}
	slot := C.gdx_dictionary_at(unsafe.Pointer(&d), unsafe.Pointer(&key))
	var r Variant
	C.gdx_variant_copy(unsafe.Pointer(&r), slot)
	return r, true
}

// Keys returns the keys in insertion order (a new Array; Destroy it).
func (d Dictionary) Keys() Array {
	var a Array
	if d.raw == 0 {
		return NewArray()
	}
	callBuiltin(bmDictionaryKeys, unsafe.Pointer(&d), nil, nil, unsafe.Pointer(&a), 0)
	return a
}

// Copy returns a second reference to the same dictionary (not a deep copy).
func (d Dictionary) Copy() Dictionary {
	var r Dictionary
	C.gdx_construct(C.uint32_t(TypeDictionary), 1, unsafe.Pointer(&r), unsafe.Pointer(&d))
	return r
}

// Destroy releases d.
func (d *Dictionary) Destroy() { destroyValue(TypeDictionary, unsafe.Pointer(d)); d.raw = 0 }

// DictionarySet stores value under the String key (both converted).
func DictionarySet[V Convertible](d Dictionary, key string, value V) {
	k := NewVariant(key)
	v := NewVariant(value)
	d.Set(k, v)
	k.Destroy()
	v.Destroy()
}

// DictionaryGet returns the value under the String key converted to V;
// false when absent or of another type.
func DictionaryGet[V Convertible](d Dictionary, key string) (V, bool) {
	k := NewVariant(key)
	defer k.Destroy()
	v, ok := d.Get(k)
	if !ok {
		var zero V
		return zero, false
	}
	defer v.Destroy()
	return VariantAs[V](v)
}

// Array is an engine Array of Variants (8 bytes, reference counted, shared
// by copies). Make one with NewArray; Destroy when done.
type Array struct{ raw uint64 }

// NewArray returns a new empty Array.
func NewArray() Array {
	var a Array
	C.gdx_construct(C.uint32_t(TypeArray), 0, unsafe.Pointer(&a), nil)
	return a
}

// Len returns the number of elements.
func (a Array) Len() int {
	if a.raw == 0 {
		return 0
	}
	var n int64
	callBuiltin(bmArraySize, unsafe.Pointer(&a), nil, nil, unsafe.Pointer(&n), 0)
	return int(n)
}

// Append adds a copy of v at the end.
func (a Array) Append(v Variant) {
	if a.raw == 0 {
		return
	}
	callBuiltin(bmArrayPushBack, unsafe.Pointer(&a), unsafe.Pointer(&v), nil, nil, 1)
}

// At returns a copy of element i; false when i is out of range.
func (a Array) At(i int) (Variant, bool) {
	if i < 0 || i >= a.Len() {
		return Variant{}, false
	}
	slot := C.gdx_array_at(unsafe.Pointer(&a), C.gdx_int(i))
	if slot == nil {
		return Variant{}, false
	}
	var r Variant
	C.gdx_variant_copy(unsafe.Pointer(&r), slot)
	return r, true
}

// Copy returns a second reference to the same array (not a deep copy).
func (a Array) Copy() Array {
	var r Array
	C.gdx_construct(C.uint32_t(TypeArray), 1, unsafe.Pointer(&r), unsafe.Pointer(&a))
	return r
}

// Destroy releases a.
func (a *Array) Destroy() { destroyValue(TypeArray, unsafe.Pointer(a)); a.raw = 0 }

// ArrayAppend appends v converted to a Variant.
func ArrayAppend[V Convertible](a Array, v V) {
	x := NewVariant(v)
	a.Append(x)
	x.Destroy()
}

// ArrayAt returns element i converted to V; false when out of range or of
// another type.
func ArrayAt[V Convertible](a Array, i int) (V, bool) {
	v, ok := a.At(i)
	if !ok {
		var zero V
		return zero, false
	}
	defer v.Destroy()
	return VariantAs[V](v)
}

// PackedByteArray is an engine PackedByteArray (16 bytes, copy-on-write).
// Destroy when done.
type PackedByteArray struct{ raw [2]uint64 }

// NewPackedByteArray returns an engine array holding a copy of b.
func NewPackedByteArray(b []byte) PackedByteArray {
	var a PackedByteArray
	C.gdx_construct(C.uint32_t(TypePackedByteArray), 0, unsafe.Pointer(&a), nil)
	if len(b) == 0 {
		return a
	}
	n := int64(len(b))
	var rc int64
	callBuiltin(bmPackedByteArrayResize, unsafe.Pointer(&a), unsafe.Pointer(&n), nil, unsafe.Pointer(&rc), 1)
	if p := C.gdx_packed_byte_array_ptr(unsafe.Pointer(&a), 0); p != nil {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(p)), len(b)), b)
	}
	return a
}

// Len returns the number of bytes.
func (a PackedByteArray) Len() int {
	var n int64
	callBuiltin(bmPackedByteArraySize, unsafe.Pointer(&a), nil, nil, unsafe.Pointer(&n), 0)
	return int(n)
}

// AppendTo appends the bytes of a to b; it allocates only when b is short.
func (a PackedByteArray) AppendTo(b []byte) []byte {
	n := a.Len()
	if n == 0 {
		return b
	}
	p := C.gdx_packed_byte_array_ptr(unsafe.Pointer(&a), 0)
	if p == nil {
		return b
	}
	return append(b, unsafe.Slice((*byte)(unsafe.Pointer(p)), n)...)
}

// Bytes returns a copy of the bytes.
func (a PackedByteArray) Bytes() []byte { return a.AppendTo(nil) }

// Destroy releases a.
func (a *PackedByteArray) Destroy() {
	destroyValue(TypePackedByteArray, unsafe.Pointer(a))
	*a = PackedByteArray{}
}

// PackedStringArray is an engine PackedStringArray (16 bytes). Destroy when done.
type PackedStringArray struct{ raw [2]uint64 }

// NewPackedStringArray returns an engine array holding copies of ss.
func NewPackedStringArray(ss []string) PackedStringArray {
	var a PackedStringArray
	C.gdx_construct(C.uint32_t(TypePackedStringArray), 0, unsafe.Pointer(&a), nil)
	for _, s := range ss {
		a.Append(s)
	}
	return a
}

// Append adds s at the end.
func (a *PackedStringArray) Append(s string) {
	str := NewString(s)
	var ok bool
	callBuiltin(bmPackedStringArrayPushBack, unsafe.Pointer(a), unsafe.Pointer(&str), nil, unsafe.Pointer(&ok), 1)
	str.Destroy()
}

// Len returns the number of strings.
func (a PackedStringArray) Len() int {
	var n int64
	callBuiltin(bmPackedStringArraySize, unsafe.Pointer(&a), nil, nil, unsafe.Pointer(&n), 0)
	return int(n)
}

// Strings returns the strings as Go strings.
func (a PackedStringArray) Strings() []string {
	n := a.Len()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		if p := C.gdx_packed_string_array_at(unsafe.Pointer(&a), C.gdx_int(i)); p != nil {
			out[i] = goString(p)
		}
	}
	return out
}

// Destroy releases a.
func (a *PackedStringArray) Destroy() {
	destroyValue(TypePackedStringArray, unsafe.Pointer(a))
	*a = PackedStringArray{}
}
