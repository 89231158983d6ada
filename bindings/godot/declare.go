package godot

import "unsafe"

// Code below is written out per arity (Go generics have no variadic type
// parameters). Each method gets a ptrcall entry (typed GDScript, other
// extensions: arguments are pointers to encoded values, borrowed) and a call
// entry (untyped GDScript, call(), Callables: arguments are Variants,
// converted strictly, engine types dropped after the call).

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

// Method0 declares a method name with 0 arguments.
func Method0[T any](c *Class[T], name string, f func(*T)) *Method {
	var args []argInfo
	m := c.info.addMethod(name, args, nil)
	m.ptrcall = func(self any, args, ret unsafe.Pointer) {
		f(self.(*T))
	}
	m.call = func(self any, args, ret unsafe.Pointer) int {
		f(self.(*T))
		return -1
	}
	return &Method{m}
}

// Method0R declares a method name with 0 arguments and a return value.
func Method0R[T any, R Convertible](c *Class[T], name string, f func(*T) R) *Method {
	cr := codecFor[R]()
	var args []argInfo
	ri := infoOf(c.info, cr, "method "+name+" return", "")
	m := c.info.addMethod(name, args, &ri)
	if cr == nil {
		return &Method{m}
	}
	m.ptrcall = func(self any, args, ret unsafe.Pointer) {
		retPtr(cr, ret, f(self.(*T)))
	}
	m.call = func(self any, args, ret unsafe.Pointer) int {
		r := f(self.(*T))
		retVar(cr, ret, r)
		return -1
	}
	return &Method{m}
}

// Method1 declares a method name with 1 argument
// (arg0 name the argument for docs and the editor).
func Method1[T any, A Convertible](c *Class[T], name string, f func(*T, A), arg0 string) *Method {
	c0 := codecFor[A]()
	args := []argInfo{infoOf(c.info, c0, "method "+name+" argument", arg0)}
	m := c.info.addMethod(name, args, nil)
	if c0 == nil {
		return &Method{m}
	}
	m.ptrcall = func(self any, args, ret unsafe.Pointer) {
		f(self.(*T), c0.fromPtr(argAt(args, 0)))
	}
	m.call = func(self any, args, ret unsafe.Pointer) int {
		a0, ok := argVar(c0, args, 0)
		if !ok {
			return 0
		}
		f(self.(*T), a0)
		dropArg(c0, a0)
		return -1
	}
	return &Method{m}
}

// Method1R declares a method name with 1 argument and a return value
// (arg0 name the argument for docs and the editor).
func Method1R[T any, A, R Convertible](c *Class[T], name string, f func(*T, A) R, arg0 string) *Method {
	c0 := codecFor[A]()
	cr := codecFor[R]()
	args := []argInfo{infoOf(c.info, c0, "method "+name+" argument", arg0)}
	ri := infoOf(c.info, cr, "method "+name+" return", "")
	m := c.info.addMethod(name, args, &ri)
	if c0 == nil || cr == nil {
		return &Method{m}
	}
	m.ptrcall = func(self any, args, ret unsafe.Pointer) {
		retPtr(cr, ret, f(self.(*T), c0.fromPtr(argAt(args, 0))))
	}
	m.call = func(self any, args, ret unsafe.Pointer) int {
		a0, ok := argVar(c0, args, 0)
		if !ok {
			return 0
		}
		r := f(self.(*T), a0)
		dropArg(c0, a0)
		retVar(cr, ret, r)
		return -1
	}
	return &Method{m}
}

// Method2 declares a method name with 2 arguments
// (arg0, arg1 names the arguments for docs and the editor).
func Method2[T any, A, B Convertible](c *Class[T], name string, f func(*T, A, B), arg0, arg1 string) *Method {
	c0 := codecFor[A]()
	c1 := codecFor[B]()
	args := []argInfo{infoOf(c.info, c0, "method "+name+" argument", arg0), infoOf(c.info, c1, "method "+name+" argument", arg1)}
	m := c.info.addMethod(name, args, nil)
	if c0 == nil || c1 == nil {
		return &Method{m}
	}
	m.ptrcall = func(self any, args, ret unsafe.Pointer) {
		f(self.(*T), c0.fromPtr(argAt(args, 0)), c1.fromPtr(argAt(args, 1)))
	}
	m.call = func(self any, args, ret unsafe.Pointer) int {
		a0, ok := argVar(c0, args, 0)
		if !ok {
			return 0
		}
		a1, ok := argVar(c1, args, 1)
		if !ok {
			dropArg(c0, a0)
			return 1
		}
		f(self.(*T), a0, a1)
		dropArg(c0, a0)
		dropArg(c1, a1)
		return -1
	}
	return &Method{m}
}

// Method2R declares a method name with 2 arguments and a return value
// (arg0, arg1 names the arguments for docs and the editor).
func Method2R[T any, A, B, R Convertible](c *Class[T], name string, f func(*T, A, B) R, arg0, arg1 string) *Method {
	c0 := codecFor[A]()
	c1 := codecFor[B]()
	cr := codecFor[R]()
	args := []argInfo{infoOf(c.info, c0, "method "+name+" argument", arg0), infoOf(c.info, c1, "method "+name+" argument", arg1)}
	ri := infoOf(c.info, cr, "method "+name+" return", "")
	m := c.info.addMethod(name, args, &ri)
	if c0 == nil || c1 == nil || cr == nil {
		return &Method{m}
	}
	m.ptrcall = func(self any, args, ret unsafe.Pointer) {
		retPtr(cr, ret, f(self.(*T), c0.fromPtr(argAt(args, 0)), c1.fromPtr(argAt(args, 1))))
	}
	m.call = func(self any, args, ret unsafe.Pointer) int {
		a0, ok := argVar(c0, args, 0)
		if !ok {
			return 0
		}
		a1, ok := argVar(c1, args, 1)
		if !ok {
			dropArg(c0, a0)
			return 1
		}
		r := f(self.(*T), a0, a1)
		dropArg(c0, a0)
		dropArg(c1, a1)
		retVar(cr, ret, r)
		return -1
	}
	return &Method{m}
}

// Method3 declares a method name with 3 arguments
// (arg0, arg1, arg2 names the arguments for docs and the editor).
func Method3[T any, A, B, C Convertible](c *Class[T], name string, f func(*T, A, B, C), arg0, arg1, arg2 string) *Method {
	c0 := codecFor[A]()
	c1 := codecFor[B]()
	c2 := codecFor[C]()
	args := []argInfo{infoOf(c.info, c0, "method "+name+" argument", arg0), infoOf(c.info, c1, "method "+name+" argument", arg1), infoOf(c.info, c2, "method "+name+" argument", arg2)}
	m := c.info.addMethod(name, args, nil)
	if c0 == nil || c1 == nil || c2 == nil {
		return &Method{m}
	}
	m.ptrcall = func(self any, args, ret unsafe.Pointer) {
		f(self.(*T), c0.fromPtr(argAt(args, 0)), c1.fromPtr(argAt(args, 1)), c2.fromPtr(argAt(args, 2)))
	}
	m.call = func(self any, args, ret unsafe.Pointer) int {
		a0, ok := argVar(c0, args, 0)
		if !ok {
			return 0
		}
		a1, ok := argVar(c1, args, 1)
		if !ok {
			dropArg(c0, a0)
			return 1
		}
		a2, ok := argVar(c2, args, 2)
		if !ok {
			dropArg(c0, a0)
			dropArg(c1, a1)
			return 2
		}
		f(self.(*T), a0, a1, a2)
		dropArg(c0, a0)
		dropArg(c1, a1)
		dropArg(c2, a2)
		return -1
	}
	return &Method{m}
}

// Method3R declares a method name with 3 arguments and a return value
// (arg0, arg1, arg2 names the arguments for docs and the editor).
func Method3R[T any, A, B, C, R Convertible](c *Class[T], name string, f func(*T, A, B, C) R, arg0, arg1, arg2 string) *Method {
	c0 := codecFor[A]()
	c1 := codecFor[B]()
	c2 := codecFor[C]()
	cr := codecFor[R]()
	args := []argInfo{infoOf(c.info, c0, "method "+name+" argument", arg0), infoOf(c.info, c1, "method "+name+" argument", arg1), infoOf(c.info, c2, "method "+name+" argument", arg2)}
	ri := infoOf(c.info, cr, "method "+name+" return", "")
	m := c.info.addMethod(name, args, &ri)
	if c0 == nil || c1 == nil || c2 == nil || cr == nil {
		return &Method{m}
	}
	m.ptrcall = func(self any, args, ret unsafe.Pointer) {
		retPtr(cr, ret, f(self.(*T), c0.fromPtr(argAt(args, 0)), c1.fromPtr(argAt(args, 1)), c2.fromPtr(argAt(args, 2))))
	}
	m.call = func(self any, args, ret unsafe.Pointer) int {
		a0, ok := argVar(c0, args, 0)
		if !ok {
			return 0
		}
		a1, ok := argVar(c1, args, 1)
		if !ok {
			dropArg(c0, a0)
			return 1
		}
		a2, ok := argVar(c2, args, 2)
		if !ok {
			dropArg(c0, a0)
			dropArg(c1, a1)
			return 2
		}
		r := f(self.(*T), a0, a1, a2)
		dropArg(c0, a0)
		dropArg(c1, a1)
		dropArg(c2, a2)
		retVar(cr, ret, r)
		return -1
	}
	return &Method{m}
}
