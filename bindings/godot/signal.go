package godot

// #include "gdx.h"
import "C"

import "unsafe"

// maxSignalArgs bounds the arguments of one emission: they travel by value
// in a fixed array (the signal name plus these), so emitting never allocates.
const maxSignalArgs = C.GDX_MAX_CALL_ARGS - 1

// callArgs is the Variant array of one Variant-path engine call.
type callArgs C.gdx_variants

// slots views the array as Variants.
func (a *callArgs) slots() *[C.GDX_MAX_CALL_ARGS]Variant {
	return (*[C.GDX_MAX_CALL_ARGS]Variant)(unsafe.Pointer(a))
}

// emit calls Object.emit_signal with the first n Variants of args (the
// signal name first).
func emit(obj unsafe.Pointer, args *callArgs, n int) error {
	if !mbObjectEmitSignal.ok(obj) {
		return &CallError{Code: 5}
	}
	r := C.gdx_call(mbObjectEmitSignal.ptr, obj, C.gdx_variants(*args), C.gdx_int(n))
	ret := *(*Variant)(unsafe.Pointer(&r.ret))
	defer ret.Destroy()
	if r.error.error != 0 {
		return &CallError{Code: int(r.error.error), Argument: int(r.error.argument), Expected: int(r.error.expected)}
	}
	switch code, _ := int64Codec.fromVar(ret); code {
	case errOK, errUnavailable, errCantAcquireResource:
		// ERR_UNAVAILABLE: nobody is connected (the engine prints its own
		// error for a signal that does not exist). ERR_CANT_ACQUIRE_RESOURCE:
		// the object's signals are blocked. Neither is the emitter's fault.
		return nil
	default:
		return EngineError(code)
	}
}

// Godot Error codes emit treats as success.
const (
	errOK                  = 0
	errUnavailable         = 2
	errCantAcquireResource = 28
)

func (c *Class[T]) addSignal(name string, args ...argInfo) *signalDecl {
	s := &signalDecl{name: name, args: args}
	if c.info.claim(name, "signal") {
		for i, a := range args {
			if !isIdentifier(a.name) {
				c.info.fail("signal %s: argument %d name %q is not an identifier", name, i, a.name)
			}
		}
		c.info.signals = append(c.info.signals, s)
	}
	return s
}

// Signal0 is a declared signal without arguments.
type Signal0 struct{ decl *signalDecl }

// NewSignal0 declares the signal name on c.
func NewSignal0[T any](c *Class[T], name string) *Signal0 {
	return &Signal0{c.addSignal(name)}
}

// Emit emits the signal from o (an instance of the declaring class).
func (s *Signal0) Emit(o Objecter) error {
	var buf callArgs
	buf.slots()[0] = s.decl.nameVar
	return emit(o.AsObject().ptr, &buf, 1)
}

// Signal1 is a declared signal with one argument of type A.
type Signal1[A Convertible] struct {
	decl *signalDecl
	c0   *codec[A]
}

// NewSignal1 declares the signal name(arg0 A) on c.
func NewSignal1[A Convertible, T any](c *Class[T], name, arg0 string) *Signal1[A] {
	c0 := codecFor[A]()
	return &Signal1[A]{c.addSignal(name, infoOf(c.info, c0, "signal "+name+" argument", arg0)), c0}
}

// Emit emits the signal from o with a (which stays yours).
func (s *Signal1[A]) Emit(o Objecter, a A) error {
	var buf callArgs
	v := buf.slots()
	v[0], v[1] = s.decl.nameVar, s.c0.toVar(a)
	err := emit(o.AsObject().ptr, &buf, 2)
	v[1].Destroy()
	return err
}

// Signal2 is a declared signal with arguments of types A and B.
type Signal2[A, B Convertible] struct {
	decl *signalDecl
	c0   *codec[A]
	c1   *codec[B]
}

// NewSignal2 declares the signal name(arg0 A, arg1 B) on c.
func NewSignal2[A, B Convertible, T any](c *Class[T], name, arg0, arg1 string) *Signal2[A, B] {
	c0, c1 := codecFor[A](), codecFor[B]()
	return &Signal2[A, B]{c.addSignal(name,
		infoOf(c.info, c0, "signal "+name+" argument", arg0),
		infoOf(c.info, c1, "signal "+name+" argument", arg1)), c0, c1}
}

// Emit emits the signal from o with a and b (which stay yours).
func (s *Signal2[A, B]) Emit(o Objecter, a A, b B) error {
	var buf callArgs
	v := buf.slots()
	v[0], v[1], v[2] = s.decl.nameVar, s.c0.toVar(a), s.c1.toVar(b)
	err := emit(o.AsObject().ptr, &buf, 3)
	v[1].Destroy()
	v[2].Destroy()
	return err
}

// Signal3 is a declared signal with arguments of types A, B and C.
type Signal3[A, B, C Convertible] struct {
	decl *signalDecl
	c0   *codec[A]
	c1   *codec[B]
	c2   *codec[C]
}

// NewSignal3 declares the signal name(arg0 A, arg1 B, arg2 C) on c.
func NewSignal3[A, B, C Convertible, T any](c *Class[T], name, arg0, arg1, arg2 string) *Signal3[A, B, C] {
	c0, c1, c2 := codecFor[A](), codecFor[B](), codecFor[C]()
	return &Signal3[A, B, C]{c.addSignal(name,
		infoOf(c.info, c0, "signal "+name+" argument", arg0),
		infoOf(c.info, c1, "signal "+name+" argument", arg1),
		infoOf(c.info, c2, "signal "+name+" argument", arg2)), c0, c1, c2}
}

// Emit emits the signal from o with a, b and c (which stay yours).
func (s *Signal3[A, B, C]) Emit(o Objecter, a A, b B, c C) error {
	var buf callArgs
	v := buf.slots()
	v[0], v[1], v[2], v[3] = s.decl.nameVar, s.c0.toVar(a), s.c1.toVar(b), s.c2.toVar(c)
	err := emit(o.AsObject().ptr, &buf, 4)
	v[1].Destroy()
	v[2].Destroy()
	v[3].Destroy()
	return err
}
