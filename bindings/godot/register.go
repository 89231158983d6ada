package godot

// #include <stdlib.h>
// #include "gdx.h"
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// arena holds the C memory of one registration call: the engine copies
// everything it is given, so it is all released right after.
type arena struct {
	blocks   []unsafe.Pointer
	strings  []unsafe.Pointer // engine Strings to destroy
	names    []unsafe.Pointer // engine StringNames to destroy
	variants []unsafe.Pointer // Variants to destroy (default arguments)
}

func (a *arena) alloc(size uintptr) unsafe.Pointer {
	p := C.calloc(1, C.size_t(size))
	if p == nil {
		panic("godot: out of C memory")
	}
	a.blocks = append(a.blocks, p)
	return p
}

func (a *arena) stringName(s string) unsafe.Pointer {
	p := a.alloc(8)
	*(*uint64)(p) = uint64(C.gdx_string_name_new(strPtr(s), C.gdx_int(len(s))))
	a.names = append(a.names, p)
	return p
}

func (a *arena) string(s string) unsafe.Pointer {
	p := a.alloc(8)
	*(*uint64)(p) = uint64(C.gdx_string_new(strPtr(s), C.gdx_int(len(s))))
	a.strings = append(a.strings, p)
	return p
}

// propertyInfos returns a C array of PropertyInfo for infos (nil if empty).
func (a *arena) propertyInfos(infos []argInfo) *C.gdx_property_info {
	if len(infos) == 0 {
		return nil
	}
	arr := unsafe.Slice((*C.gdx_property_info)(a.alloc(uintptr(len(infos))*C.sizeof_gdx_property_info)), len(infos))
	for i, in := range infos {
		p := &arr[i]
		p._type = C.uint32_t(in.typ)
		p.name = a.stringName(in.name)
		p.class_name = a.stringName(in.class)
		p.hint = C.uint32_t(in.hint)
		p.hint_string = a.string(in.hintString)
		usage := in.usage
		if usage == 0 {
			usage = UsageDefault
		}
		p.usage = C.uint32_t(usage)
	}
	return &arr[0]
}

func (a *arena) free() {
	for _, p := range a.strings {
		C.gdx_destroy(C.uint32_t(TypeString), p)
	}
	for _, p := range a.names {
		C.gdx_destroy(C.uint32_t(TypeStringName), p)
	}
	for _, p := range a.variants {
		C.gdx_variant_destroy(p)
	}
	for _, p := range a.blocks {
		C.free(p)
	}
	*a = arena{}
}

// Registries of handles given to the engine as userdata. Written at SCENE
// init (main thread) only, read-only afterwards.
var (
	classRegistry  []*classInfo  // class handle = index+1
	methodRegistry []*methodDecl // method handle = index+1
)

func classByHandle(h uintptr) *classInfo {
	if h == 0 || h > uintptr(len(classRegistry)) {
		return nil
	}
	return classRegistry[h-1]
}

func methodByHandle(h uintptr) *methodDecl {
	if h == 0 || h > uintptr(len(methodRegistry)) {
		return nil
	}
	return methodRegistry[h-1]
}

// register declares ci to the engine: the class, then its methods
// (properties need their accessors), properties and groups in declaration
// order, signals and constants.
func (ci *classInfo) register() error {
	if len(ci.errs) > 0 {
		return fmt.Errorf("not registered: %w", errors.Join(ci.errs...))
	}
	if !classKnown(ci.parent) {
		return fmt.Errorf("class %s: parent class %s is not in ClassDB", ci.name, ci.parent)
	}
	classRegistry = append(classRegistry, ci)
	ci.handle = uintptr(len(classRegistry))
	ci.nameSN, ci.parentSN = NewStringName(ci.name), NewStringName(ci.parent)

	var a arena
	defer a.free()
	var icon unsafe.Pointer
	if ci.icon != "" {
		icon = a.string(ci.icon)
	}
	var flags C.uint32_t
	if ci.runtime {
		flags |= C.GDX_CLASS_RUNTIME
	}
	if ci.abstract {
		flags |= C.GDX_CLASS_ABSTRACT
	}
	if ci.notifications {
		flags |= C.GDX_CLASS_NOTIFICATION
	}
	// The class name travels from C memory: a pointer into classInfo (which
	// holds Go pointers) fails cgo's pointer check.
	cls := a.alloc(8)
	*(*StringName)(cls) = ci.nameSN
	parent := ci.parentSN
	C.gdx_register_class(cls, unsafe.Pointer(&parent), icon, flags, C.uintptr_t(ci.handle))
	if !classKnown(ci.name) {
		return fmt.Errorf("class %s: the engine refused it (see the error above)", ci.name)
	}
	ci.registered = true

	for _, m := range ci.methods {
		methodRegistry = append(methodRegistry, m)
		m.handle = uintptr(len(methodRegistry))
		mi := (*C.gdx_method_info)(a.alloc(C.sizeof_gdx_method_info))
		mi.name = a.stringName(m.name)
		mi.method_flags = C.uint32_t(m.flags)
		if m.ret != nil {
			mi.has_return_value = 1
			mi.return_value_info = a.propertyInfos([]argInfo{*m.ret})
			mi.return_value_metadata = C.uint32_t(m.ret.meta)
		}
		mi.argument_count = C.uint32_t(len(m.args))
		mi.arguments_info = a.propertyInfos(m.args)
		if n := len(m.defaults); n > 0 {
			if n > len(m.args) {
				return fmt.Errorf("class %s: method %s: %d defaults for %d arguments", ci.name, m.name, n, len(m.args))
			}
			// The engine copies the values: the arena and the Variants
			// go after registration.
			ptrs := unsafe.Slice((*unsafe.Pointer)(a.alloc(uintptr(n)*unsafe.Sizeof(unsafe.Pointer(nil)))), n)
			for i, d := range m.defaults {
				v, ok := defaultVariant(d)
				if !ok {
					return fmt.Errorf("class %s: method %s: default %v (%T) is not a bool, int, float or string", ci.name, m.name, d, d)
				}
				slot := a.alloc(unsafe.Sizeof(Variant{}))
				*(*Variant)(slot) = v
				a.variants = append(a.variants, slot)
				ptrs[i] = slot
			}
			mi.default_argument_count = C.uint32_t(n)
			mi.default_arguments = &ptrs[0]
		}
		if len(m.args) > 0 {
			metas := unsafe.Slice((*C.uint32_t)(a.alloc(uintptr(len(m.args))*4)), len(m.args))
			for i, arg := range m.args {
				metas[i] = C.uint32_t(arg.meta)
			}
			mi.arguments_metadata = &metas[0]
		}
		C.gdx_register_method(cls, mi, C.uintptr_t(m.handle))
	}
	for _, mem := range ci.members {
		switch mem := mem.(type) {
		case *groupDecl:
			sub := C.int(0)
			if mem.sub {
				sub = 1
			}
			C.gdx_register_group(cls, a.string(mem.name), a.string(mem.prefix), sub)
		case *propertyDecl:
			C.gdx_register_property(cls, a.propertyInfos([]argInfo{mem.info}),
				a.stringName(mem.setter), a.stringName(mem.getter))
		}
	}
	for _, s := range ci.signals {
		C.gdx_register_signal(cls, a.stringName(s.name), a.propertyInfos(s.args), C.gdx_int(len(s.args)))
		sn := NewStringName(s.name)
		s.nameVar = newVariantOf(TypeStringName, sn)
		sn.Destroy()
	}
	for _, k := range ci.consts {
		bitfield := C.int(0)
		if k.bitfield {
			bitfield = 1
		}
		C.gdx_register_constant(cls, a.stringName(k.enum), a.stringName(k.name), C.gdx_int(k.value), bitfield)
	}
	return nil
}

// unregister removes ci from the engine and drops its engine values.
func (ci *classInfo) unregister() {
	if ci.registered {
		name := ci.nameSN
		C.gdx_unregister_class(unsafe.Pointer(&name))
		ci.registered = false
	}
	for _, s := range ci.signals {
		s.nameVar.Destroy()
	}
	ci.nameSN.Destroy()
	ci.parentSN.Destroy()
}
