package godot

import "strings"

// ClassEnum is an integer enum of a declared class (MotionProfile of
// NetPredictor): its values are class constants (NetPredictor.CHARACTER in
// GDScript), and properties, method arguments and returns and signal
// arguments typed with it show the enum's name in the editor, the docs and
// typed GDScript, as the engine's own enums do.
type ClassEnum struct {
	ci         *classInfo
	name       string
	names      []string
	values     []int64
	registered bool
}

// Enum declares the class enum name; add its values with Value.
func (c *Class[T]) Enum(name string) *ClassEnum {
	if !isIdentifier(name) {
		c.info.fail("enum name %q is not an identifier", name)
	}
	return &ClassEnum{ci: c.info, name: name}
}

// Value declares the constant name = value of the enum.
func (e *ClassEnum) Value(name string, value int64) *ClassEnum {
	if e.ci.claim(name, "constant") {
		e.ci.consts = append(e.ci.consts, constDecl{enum: e.name, name: name, value: value})
		e.names, e.values = append(e.names, name), append(e.values, value)
	}
	return e
}

// Name returns the enum's qualified name ("NetRoom.Status").
func (e *ClassEnum) Name() string { return e.ci.name + "." + e.name }

// typed returns info typed as the enum: an int whose class_name is the
// enum's qualified name, flagged CLASS_IS_ENUM.
func (e *ClassEnum) typed(info argInfo) argInfo {
	if info.typ != TypeInt {
		e.ci.fail("%s: only an integer can have the enum type %s", info.name, e.Name())
		return info
	}
	info.class = e.Name()
	if info.usage == 0 {
		info.usage = UsageDefault // what registration would give it, as the engine's enum arguments have
	}
	info.usage |= UsageClassIsEnum
	return info
}

// hintString is the inspector drop-down of the enum: "Label:value,…",
// each label the constant's name without prefix, capitalised.
func (e *ClassEnum) hintString(prefix string) string {
	parts := make([]string, len(e.names))
	for i, n := range e.names {
		label := strings.ReplaceAll(strings.TrimPrefix(n, prefix), "_", " ")
		label = strings.ToUpper(label[:1]) + strings.ToLower(label[1:])
		parts[i] = label + ":" + formatNumber(float64(e.values[i]))
	}
	return strings.Join(parts, ",")
}

// OfEnum types the property with the class enum e (an int property), with
// an inspector drop-down of its values; prefix is cut from the constant
// names to make the labels ("PROFILE_" turns PROFILE_VEHICLE into
// Vehicle).
func (p *PropertyDecl) OfEnum(e *ClassEnum, prefix string) *PropertyDecl {
	d := p.decl
	d.info = e.typed(d.info)
	d.info.hint, d.info.hintString = HintEnum, e.hintString(prefix)
	if d.getterDecl != nil && d.getterDecl.ret != nil {
		*d.getterDecl.ret = e.typed(*d.getterDecl.ret)
	}
	if d.setterDecl != nil && len(d.setterDecl.args) == 1 {
		d.setterDecl.args[0] = e.typed(d.setterDecl.args[0])
	}
	return p
}

// Getter renames the property's getter method (get_<name> by default):
// the engine names boolean getters is_<name> (visible, is_visible()).
func (p *PropertyDecl) Getter(name string) *PropertyDecl {
	d := p.decl
	if d.getterDecl == nil || name == d.getter {
		return p
	}
	delete(d.ci.names, d.getter)
	if !d.ci.claim(name, "method") {
		return p
	}
	d.getter, d.getterDecl.name = name, name
	return p
}

// ReturnEnum types the method's integer return value with the class enum e.
func (m *Method) ReturnEnum(e *ClassEnum) *Method {
	if m.decl.ret != nil {
		*m.decl.ret = e.typed(*m.decl.ret)
	}
	return m
}

// ArgEnum types the method's integer argument i with the class enum e.
func (m *Method) ArgEnum(i int, e *ClassEnum) *Method {
	if i >= 0 && i < len(m.decl.args) {
		m.decl.args[i] = e.typed(m.decl.args[i])
	}
	return m
}

// ReturnClass narrows an object return value to the class name (a class
// of this library, say), so typed GDScript and the docs see that class
// rather than the Go wrapper's engine class.
func (m *Method) ReturnClass(name string) *Method {
	if m.decl.ret != nil && m.decl.ret.typ == TypeObject {
		m.decl.ret.class = name
	}
	return m
}

// argEnum types argument i of a signal with the class enum e.
func (s *signalDecl) argEnum(i int, e *ClassEnum) {
	if i >= 0 && i < len(s.args) {
		s.args[i] = e.typed(s.args[i])
	}
}

// ArgEnum types the signal's integer argument with the class enum e.
func (s *Signal1[A]) ArgEnum(e *ClassEnum) *Signal1[A] { s.decl.argEnum(0, e); return s }

// ArgEnum types the signal's integer argument i (0 or 1) with the class enum e.
func (s *Signal2[A, B]) ArgEnum(i int, e *ClassEnum) *Signal2[A, B] { s.decl.argEnum(i, e); return s }

// ArgEnum types the signal's integer argument i (0 to 2) with the class enum e.
func (s *Signal3[A, B, C]) ArgEnum(i int, e *ClassEnum) *Signal3[A, B, C] {
	s.decl.argEnum(i, e)
	return s
}
