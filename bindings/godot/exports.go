package godot

// Callbacks from the engine. Each one recovers panics (a Go panic unwinding
// into C would abort the engine) and reports them with print_error. This
// file's preamble may only hold declarations (cgo copies it into
// _cgo_export.h, which gdx.c includes).

// #include "gdx.h"
import "C"

import "unsafe"

//export nzInitialize
func nzInitialize(level C.uint32_t) {
	defer catch("initialize")
	initialize(Level(level))
}

//export nzDeinitialize
func nzDeinitialize(level C.uint32_t) {
	defer catch("deinitialize")
	deinitialize(Level(level))
}

//export nzShutdown
func nzShutdown() {
	defer catch("shutdown")
	shutdown()
}

//export nzCreateInstance
func nzCreateInstance(class C.uintptr_t, notify C.gdx_bool) (obj unsafe.Pointer) {
	defer catch("create_instance")
	ci := classByHandle(uintptr(class))
	if ci == nil {
		return nil
	}
	return createInstance(ci, notify != 0)
}

//export nzFreeInstance
func nzFreeInstance(class, inst C.uintptr_t) {
	defer catch("free_instance")
	freeInstance(uintptr(inst))
}

//export nzVirtualCallData
func nzVirtualCallData(class C.uintptr_t, name unsafe.Pointer, hash C.uint32_t) C.uintptr_t {
	defer catch("get_virtual_call_data")
	ci := classByHandle(uintptr(class))
	if ci == nil || name == nil {
		return 0
	}
	return C.uintptr_t(virtualFor(ci, name, uint32(hash)))
}

//export nzCallVirtual
func nzCallVirtual(inst, data C.uintptr_t, args *unsafe.Pointer, ret unsafe.Pointer) {
	defer catch("virtual call")
	in, ok := instanceByHandle(uintptr(inst))
	if !ok || data == 0 || data > C.uintptr_t(numVirtuals) {
		return
	}
	callVirtual(in.value, virtualKind(data-1), unsafe.Pointer(args), ret)
}

//export nzNotification
func nzNotification(inst C.uintptr_t, what C.int32_t, reversed C.gdx_bool) {
	defer catch("notification")
	in, ok := instanceByHandle(uintptr(inst))
	if !ok || (lib.editorHint && !in.class.tool) {
		return
	}
	if r, ok := in.value.(NotificationReceiver); ok {
		r.OnNotification(int32(what))
	}
}

//export nzMethodCall
func nzMethodCall(method, inst C.uintptr_t, args *unsafe.Pointer, argc C.gdx_int, ret unsafe.Pointer, err *C.gdx_call_error) {
	defer catch("method call")
	m := methodByHandle(uintptr(method))
	in, ok := instanceByHandle(uintptr(inst))
	switch {
	case m == nil:
		err.error = 1 // INVALID_METHOD
		return
	case !ok:
		err.error = 5 // INSTANCE_IS_NULL
		return
	case int(argc) < len(m.args)-len(m.defaults):
		err.error, err.expected = 4, C.int32_t(len(m.args)-len(m.defaults)) // TOO_FEW_ARGUMENTS
		return
	case int(argc) > len(m.args):
		err.error, err.expected = 3, C.int32_t(len(m.args)) // TOO_MANY_ARGUMENTS
		return
	}
	argp := unsafe.Pointer(args)
	if missing := len(m.args) - int(argc); missing > 0 {
		// The engine hands an extension's Variant calls over as they came
		// (GDScript's room.create_room()): the defaults are ours to fill
		// in, as the engine does for its own methods.
		full := make([]unsafe.Pointer, len(m.args))
		copy(full, unsafe.Slice(args, int(argc)))
		vals := make([]Variant, missing)
		for i := range vals {
			vals[i], _ = defaultVariant(m.defaults[len(m.defaults)-missing+i])
			full[int(argc)+i] = unsafe.Pointer(&vals[i])
		}
		defer func() {
			for i := range vals {
				vals[i].Destroy()
			}
		}()
		argp = unsafe.Pointer(&full[0])
	}
	if bad := m.call(in.value, argp, ret); bad >= 0 {
		err.error, err.argument, err.expected = 2, C.int32_t(bad), C.int32_t(m.args[bad].typ) // INVALID_ARGUMENT
	}
}

//export nzMethodPtrcall
func nzMethodPtrcall(method, inst C.uintptr_t, args *unsafe.Pointer, ret unsafe.Pointer) {
	defer catch("method ptrcall")
	m := methodByHandle(uintptr(method))
	in, ok := instanceByHandle(uintptr(inst))
	if m == nil || !ok {
		return
	}
	m.ptrcall(in.value, unsafe.Pointer(args), ret)
}
