package godot

import "unsafe"

// Method0 to Method3 and Method0R to Method3R (declare_gen.go) are written
// out per arity, since Go generics have no variadic type parameters, by
// bindings/internal/gendeclare from one template (go generate). Each method
// gets a ptrcall entry (typed GDScript, other extensions: arguments are
// pointers to encoded values, borrowed) and a call entry (untyped GDScript,
// call(), Callables: arguments are Variants, converted strictly, engine
// types dropped after the call). The helpers they share follow.

//go:generate go run ../internal/gendeclare -o declare_gen.go

// argAt returns the i-th pointer of the engine's argument array.
func argAt(args unsafe.Pointer, i int) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(args, uintptr(i)*unsafe.Sizeof(uintptr(0))))
}

// argVar converts the i-th Variant argument.
func argVar[A any](c *codec[A], args unsafe.Pointer, i int) (A, bool) {
	return c.fromVar(*(*Variant)(argAt(args, i)))
}

// dropArg releases a converted Variant argument of an engine type.
func dropArg[A any](c *codec[A], a A) {
	if c.owned && c.drop != nil {
		c.drop(a)
	}
}

// retPtr stores a ptrcall return value, which the slot takes over.
func retPtr[R any](c *codec[R], ret unsafe.Pointer, r R) {
	if ret != nil {
		c.toPtr(ret, r)
	} else if c.drop != nil {
		c.drop(r)
	}
}

// retVar stores a call-path return value into the Nil Variant at ret.
func retVar[R any](c *codec[R], ret unsafe.Pointer, r R) {
	if ret != nil {
		*(*Variant)(ret) = c.toVar(r)
	}
	if c.drop != nil {
		c.drop(r)
	}
}

// infoOf returns the engine description of type V, or records an error.
func infoOf[V any](ci *classInfo, c *codec[V], what, name string) argInfo {
	if c == nil {
		var zero V
		ci.fail("%s %s: type %T has no Variant mapping", what, name, zero)
		return argInfo{name: name}
	}
	return c.typeInfo(name)
}
