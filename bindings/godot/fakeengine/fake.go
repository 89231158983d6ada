package fakeengine

/*
#cgo CFLAGS: -I${SRCDIR}/.. -std=gnu11 -O1 -Wall
#include <stdlib.h>
#include "fake.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Load calls the binding's entry symbol with the fake interface; it reports
// whether the entry accepted it.
func Load() bool { return C.fake_load() != 0 }

// MinimumLevel returns the minimum initialization level the entry asked for.
func MinimumLevel() uint32 { return uint32(C.fake_minimum_level()) }

// Initialize runs the binding's initialize callback for level.
func Initialize(level uint32) { C.fake_initialize(C.uint32_t(level)) }

// Deinitialize runs the binding's deinitialize callback for level.
func Deinitialize(level uint32) { C.fake_deinitialize(C.uint32_t(level)) }

// Records returns what the fake engine recorded (registrations, prints,
// constructions, emissions) in order.
func Records() []string {
	n := int(C.fake_record_count())
	out := make([]string, n)
	for i := range out {
		out[i] = C.GoString(C.fake_record(C.int(i)))
	}
	return out
}

// ResetRecords forgets the records so far.
func ResetRecords() { C.fake_record_reset() }

// Construct instantiates class as ClassDB would (notify=false).
func Construct(class string) unsafe.Pointer {
	cs := C.CString(class)
	defer C.free(unsafe.Pointer(cs))
	return C.fake_construct(cs)
}

// Destroy frees obj as object_destroy would.
func Destroy(obj unsafe.Pointer) { C.fake_destroy(obj) }

// VirtualCallData asks obj's class for the call data of virtual name (0:
// not overridden). It is an integer, never a pointer.
func VirtualCallData(obj unsafe.Pointer, name string, hash uint32) uintptr {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return uintptr(C.fake_virtual(obj, cs, C.uint32_t(hash)))
}

// CallVirtual calls virtual name on obj with ptrcall-encoded args.
func CallVirtual(obj unsafe.Pointer, name string, data uintptr, args []unsafe.Pointer, ret unsafe.Pointer) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	argv, done := pinArgs(args)
	defer done()
	C.fake_call_virtual(obj, cs, C.uintptr_t(data), argv, ret)
}

// Notify sends notification what to obj's extension instance.
func Notify(obj unsafe.Pointer, what int32) { C.fake_notify(obj, C.int32_t(what)) }

// Ptrcall calls a registered method through its ptrcall entry.
func Ptrcall(class, method string, obj unsafe.Pointer, args []unsafe.Pointer, ret unsafe.Pointer) bool {
	c, m := C.CString(class), C.CString(method)
	defer C.free(unsafe.Pointer(c))
	defer C.free(unsafe.Pointer(m))
	argv, done := pinArgs(args)
	defer done()
	var p runtime.Pinner
	defer p.Unpin()
	if ret != nil {
		p.Pin(ret)
	}
	return C.fake_method_ptrcall(c, m, obj, argv, ret) != 0
}

// Arg is one Variant argument of Call: a bool, an int64, a float64 or a
// string.
type Arg any

// Result is the outcome of Call.
type Result struct {
	Error, Argument, Expected int
	Type                      uint32
	Int                       int64
	Float                     float64
	String                    string
}

// Call calls a registered method through its Variant entry.
func Call(class, method string, obj unsafe.Pointer, args ...Arg) (Result, bool) {
	c, m := C.CString(class), C.CString(method)
	defer C.free(unsafe.Pointer(c))
	defer C.free(unsafe.Pointer(m))
	n := len(args)
	vars := C.malloc(C.size_t(24 * (n + 1)))
	ptrs := (*[64]unsafe.Pointer)(C.malloc(C.size_t(8 * (n + 1))))
	defer C.free(vars)
	defer C.free(unsafe.Pointer(ptrs))
	for i, a := range args {
		v := unsafe.Add(vars, 24*i)
		switch a := a.(type) {
		case bool:
			b := 0
			if a {
				b = 1
			}
			C.fake_variant_bool(v, C.int(b))
		case int:
			C.fake_variant_int(v, C.int64_t(a))
		case int64:
			C.fake_variant_int(v, C.int64_t(a))
		case float64:
			C.fake_variant_float(v, C.double(a))
		case string:
			cs := C.CString(a)
			C.fake_variant_string(v, cs)
			C.free(unsafe.Pointer(cs))
		}
		ptrs[i] = v
	}
	ret := unsafe.Add(vars, 24*n)
	var ce C.gdx_call_error
	ok := C.fake_method_call(c, m, obj, (*unsafe.Pointer)(unsafe.Pointer(ptrs)), C.gdx_int(n), ret, &ce) != 0
	r := Result{Error: int(ce.error), Argument: int(ce.argument), Expected: int(ce.expected),
		Type: uint32(C.fake_variant_get_type(ret)), Int: int64(C.fake_variant_get_int(ret)),
		Float:  float64(C.fake_variant_get_float(ret)),
		String: C.GoString(C.fake_variant_get_string(ret))}
	C.fake_variant_destroy(ret)
	for i := range args {
		C.fake_variant_destroy(unsafe.Add(vars, 24*i))
	}
	return r, ok
}

// StringText reads an engine String the fake made (a ptrcall String return).
func StringText(s unsafe.Pointer) string { return C.GoString(C.fake_string_text(s)) }

// DestroyString releases an engine String the fake made.
func DestroyString(s unsafe.Pointer) { C.fake_string_destroy(s) }

// pinArgs pins the pointees of args and returns a C-side view of the array.
func pinArgs(args []unsafe.Pointer) (*unsafe.Pointer, func()) {
	if len(args) == 0 {
		return nil, func() {}
	}
	var p runtime.Pinner
	for _, a := range args {
		p.Pin(a)
	}
	arr := (*[64]unsafe.Pointer)(C.malloc(C.size_t(8 * len(args))))
	copy(arr[:len(args)], args)
	return &arr[0], func() {
		C.free(unsafe.Pointer(arr))
		p.Unpin()
	}
}

// SetDouble makes OS.has_feature("double") answer on: a double-precision
// engine build.
func SetDouble(on bool) {
	v := 0
	if on {
		v = 1
	}
	C.fake_set_double(C.int(v))
}

// SetDebugger makes EngineDebugger.is_active answer on: a game run from
// the editor. EngineDebugger.send_message is recorded either way, as
// "debugger send_message MESSAGE N" (N: the data Array's size).
func SetDebugger(on bool) {
	v := 0
	if on {
		v = 1
	}
	C.fake_set_debugger(C.int(v))
}

// FreeOnSignal makes the next emission of signal name free the emitting
// object during the emission, as a handler calling free() would.
func FreeOnSignal(name string) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	C.fake_free_on_signal(cs)
}

// ReadOnSignal makes every emission of signal ("": any) call the
// no-argument method cls.method on the emitter, as a handler reading a
// property would, and record "read in SIGNAL: METHOD = N" (its int
// result). An empty method stops it.
func ReadOnSignal(signal, cls, method string) {
	cs, cc, cm := C.CString(signal), C.CString(cls), C.CString(method)
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(cc))
	defer C.free(unsafe.Pointer(cm))
	C.fake_read_on_signal(cs, cc, cm)
}

// SetName names obj (node names for NodePaths and records).
func SetName(obj unsafe.Pointer, name string) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	C.fake_set_name(obj, cs)
}

// AddChild makes child a child of parent.
func AddChild(parent, child unsafe.Pointer) { C.fake_add_child(parent, child) }

// SetInTree marks root and everything under it as inside the scene tree
// (is_inside_tree); the fake sends no notifications: call the virtuals.
func SetInTree(root unsafe.Pointer, on bool) {
	v := 0
	if on {
		v = 1
	}
	C.fake_set_in_tree(root, C.int(v))
}

// ObjectID returns obj's instance ID.
func ObjectID(obj unsafe.Pointer) uint64 { return uint64(C.fake_object_id(obj)) }

// Alive reports whether the object with id still exists.
func Alive(id uint64) bool { return C.fake_alive(C.uint64_t(id)) != 0 }

// Visible returns a node's visible flag.
func Visible(obj unsafe.Pointer) bool { return C.fake_visible(obj) != 0 }

// Transform returns a node's global transform as 12 floats: a 3D one
// (basis rows, then origin), or a 2D one in the first 6 (x, y, origin).
func Transform(obj unsafe.Pointer) [12]float32 {
	var out [12]float32
	p := C.malloc(48)
	defer C.free(p)
	C.fake_xform(obj, (*C.float)(p))
	copy(out[:], unsafe.Slice((*float32)(p), 12))
	return out
}
