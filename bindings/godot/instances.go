package godot

// #include "gdx.h"
import "C"

import (
	"unsafe"

	"github.com/nearzero/nearzero/bindings/internal/handle"
)

// instance is the Go side of one engine object of a registered class.
type instance struct {
	class *classInfo
	value any // *T
}

// instances maps the handles given to the engine (object_set_instance and
// the instance binding) to Go values. Safe from any thread: the engine
// creates objects on loader threads too.
var instances handle.Table[instance]

func instanceByHandle(h uintptr) (instance, bool) { return instances.Get(handle.Handle(h)) }

// InstanceCount returns how many objects of this library's classes are alive.
func InstanceCount() int { return instances.Len() }

// createInstance builds the engine parent object, the Go value and the
// handle that ties them; it backs both the engine's create_instance and
// New.
func createInstance(ci *classInfo, notify bool) (obj unsafe.Pointer) {
	// Engine values go to C from locals: a pointer into a Go struct that
	// holds Go pointers (classInfo) fails cgo's pointer check.
	parent, name := ci.parentSN, ci.nameSN
	obj = C.gdx_construct_object(unsafe.Pointer(&parent))
	if obj == nil {
		PrintErrorf("godot: could not construct %s as the base of %s", ci.parent, ci.name)
		return nil
	}
	v := ci.newValue(obj)
	h := instances.Add(instance{class: ci, value: v})
	C.gdx_object_bind(obj, unsafe.Pointer(&name), C.uintptr_t(h))
	if in, ok := v.(Initer); ok {
		func() {
			defer catch(ci.name + ".Init")
			in.Init()
		}()
	}
	if notify {
		Object{obj}.Notification(0) // NOTIFICATION_POSTINITIALIZE
	}
	return obj
}

// freeInstance forgets the Go value of a freed engine object.
func freeInstance(h uintptr) {
	inst, ok := instances.Delete(handle.Handle(h))
	if !ok {
		return
	}
	if c, ok := inst.value.(Cleaner); ok {
		defer catch(inst.class.name + ".Cleanup")
		c.Cleanup()
	}
}

// New creates an object of the registered class c (as ClassDB.instantiate
// would) and returns its Go value; it is not in the tree until added.
func New[T any](c *Class[T]) (*T, error) {
	if !c.info.registered {
		return nil, errNotRegistered(c.info.name)
	}
	name := c.info.nameSN
	obj := C.gdx_construct_object(unsafe.Pointer(&name)) // calls create_instance
	v, ok := InstanceOf[T](Object{obj})
	if !ok {
		return nil, errNotRegistered(c.info.name)
	}
	Object{obj}.Notification(0)
	return v, nil
}
