package godot

// #include "gdx.h"
import "C"

import (
	"sync"
	"unsafe"
)

// Object is a pointer to an engine object. It is valid only while the
// engine object lives: keep an ObjectID across frames, goroutines or
// anything that may free the object, and look it up again. The zero Object is
// null. Wrappers of subclasses (Node, Node3D…) embed it, so every wrapper is
// one pointer and converts freely with Cast.
type Object struct{ ptr unsafe.Pointer }

// ObjectFromPtr wraps a raw engine Object* (for interop with other C code).
func ObjectFromPtr(p unsafe.Pointer) Object { return Object{p} }

// Ptr returns the raw engine Object* (for interop with other C code).
func (o Object) Ptr() unsafe.Pointer { return o.ptr }

// IsNull reports whether o points at no object.
func (o Object) IsNull() bool { return o.ptr == nil }

// AsObject returns o; every wrapper and every registered class has it, so
// they all satisfy Objecter.
func (o Object) AsObject() Object { return o }

// Objecter is anything that is an engine object: a wrapper, or a pointer
// to a registered class value (which embeds one).
type Objecter interface{ AsObject() Object }

// ID returns o's instance ID (0 for null).
func (o Object) ID() ObjectID { return ObjectID(C.gdx_object_id(o.ptr)) }

// ObjectID names an engine object by number; it stays safe to hold after the
// object is freed (Object then returns null).
type ObjectID uint64

// Object returns the live object with this ID, or a null Object once it was
// freed.
func (id ObjectID) Object() Object { return Object{C.gdx_object_from_id(C.uint64_t(id))} }

// setPtr binds a registered class value to its engine object; it is reached
// through embedding, which is how NewClass finds the engine base class.
func (o *Object) setPtr(p unsafe.Pointer) { o.ptr = p }

func (Object) className() string { return "Object" }

// RefCounted is an engine object with a reference count (resources).
type RefCounted struct{ Object }

func (RefCounted) className() string { return "RefCounted" }

// Resource is a loadable engine resource (a RefCounted).
type Resource struct{ RefCounted }

func (Resource) className() string { return "Resource" }

// PackedScene is a saved scene that can be instantiated.
type PackedScene struct{ Resource }

func (PackedScene) className() string { return "PackedScene" }

// Node is a scene-tree node.
type Node struct{ Object }

func (Node) className() string { return "Node" }

// CanvasItem is the base of 2D nodes (visibility, modulate).
type CanvasItem struct{ Node }

func (CanvasItem) className() string { return "CanvasItem" }

// Node2D is a 2D node with a transform.
type Node2D struct{ CanvasItem }

func (Node2D) className() string { return "Node2D" }

// Node3D is a 3D node with a transform.
type Node3D struct{ Node }

func (Node3D) className() string { return "Node3D" }

// CharacterBody2D is a 2D kinematic body moved by script.
type CharacterBody2D struct{ Node2D }

func (CharacterBody2D) className() string { return "CharacterBody2D" }

// CharacterBody3D is a 3D kinematic body moved by script.
type CharacterBody3D struct{ Node3D }

func (CharacterBody3D) className() string { return "CharacterBody3D" }

// RigidBody2D is a 2D body moved by the physics engine.
type RigidBody2D struct{ Node2D }

func (RigidBody2D) className() string { return "RigidBody2D" }

// RigidBody3D is a 3D body moved by the physics engine.
type RigidBody3D struct{ Node3D }

func (RigidBody3D) className() string { return "RigidBody3D" }

// Wrapper lists the engine class wrappers Cast converts between.
type Wrapper interface {
	Object | RefCounted | Resource | PackedScene | Node | CanvasItem | Node2D | Node3D |
		CharacterBody2D | CharacterBody3D | RigidBody2D | RigidBody3D
}

// wrapperClass returns the engine class name of a wrapper value.
func wrapperClass(v any) (string, bool) {
	w, ok := v.(interface{ className() string })
	if !ok {
		return "", false
	}
	switch v.(type) {
	case Object, RefCounted, Resource, PackedScene, Node, CanvasItem, Node2D, Node3D,
		CharacterBody2D, CharacterBody3D, RigidBody2D, RigidBody3D:
		return w.className(), true
	}
	return "", false
}

// Cast returns o as the wrapper W when the object is of W's engine class (or
// a subclass); false otherwise, and for a null o.
func Cast[W Wrapper](o Objecter) (W, bool) {
	var zero W
	obj := o.AsObject().ptr
	if obj == nil {
		return zero, false
	}
	name, _ := wrapperClass(any(zero))
	if name != "Object" && !isA(obj, name) {
		return zero, false
	}
	return wrapPtr[W](obj), true
}

// isA reports whether obj is of the named engine class or a subclass: a
// cast by class tag until 4.6, Object.is_class from 4.7 (where class tags
// are deprecated).
func isA(obj unsafe.Pointer, name string) bool {
	if !loaded() {
		return false
	}
	if C.gdx_has_class_tags() == 0 {
		return Object{obj}.IsClass(name)
	}
	return C.gdx_cast_to(obj, classTag(name)) != nil
}

// classKnown reports whether the engine's ClassDB has the named class.
func classKnown(name string) bool {
	if !loaded() {
		return false
	}
	if C.gdx_has_class_tags() == 0 {
		return ClassExists(name)
	}
	return classTag(name) != nil
}

var classTags struct {
	sync.Mutex
	m map[string]unsafe.Pointer // engine class name -> class tag; lives for the process
}

// classTag returns the engine's tag of the named class (nil when unknown).
func classTag(name string) unsafe.Pointer {
	classTags.Lock()
	defer classTags.Unlock()
	if t, ok := classTags.m[name]; ok {
		return t
	}
	sn := NewStringName(name)
	t := C.gdx_class_tag(unsafe.Pointer(&sn))
	sn.Destroy()
	if classTags.m == nil {
		classTags.m = map[string]unsafe.Pointer{}
	}
	if t != nil {
		classTags.m[name] = t
	}
	return t
}

func isRefCounted(obj unsafe.Pointer) bool { return isA(obj, "RefCounted") }

// InstanceOf returns the Go value of a registered class T behind o; false
// when o is null, not one of this library's objects, or of another class.
func InstanceOf[T any](o Objecter) (*T, bool) {
	obj := o.AsObject().ptr
	if obj == nil {
		return nil, false
	}
	inst, ok := instanceByHandle(uintptr(C.gdx_object_binding(obj)))
	if !ok {
		return nil, false
	}
	v, ok := inst.value.(*T)
	return v, ok
}

// RefWrapper lists the wrappers of reference-counted classes.
type RefWrapper interface {
	RefCounted | Resource | PackedScene
}

// Ref keeps one reference to a reference-counted object (a loaded resource)
// so the engine does not free it while Go holds it. The zero Ref is empty.
// Use it in a property setter: r.Set(v) takes a reference to the new value
// and releases the old one.
type Ref[W RefWrapper] struct{ w W }

// Set makes r hold w (which may be null), releasing what it held before.
func (r *Ref[W]) Set(w W) {
	if ptrOf(w) == ptrOf(r.w) {
		return
	}
	if p := ptrOf(w); p != nil {
		RefCounted{Object{p}}.Reference()
	}
	r.Release()
	r.w = w
}

// Get returns the held object (null when empty); it stays valid while r holds it.
func (r *Ref[W]) Get() W { return r.w }

// Release drops the held reference; r is empty afterwards.
func (r *Ref[W]) Release() {
	if p := ptrOf(r.w); p != nil {
		RefCounted{Object{p}}.Release()
	}
	var zero W
	r.w = zero
}
