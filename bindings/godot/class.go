package godot

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"
)

// PropertyHint is Godot's PropertyHint: how the inspector edits a value.
type PropertyHint uint32

// Property hints (the subset with a use here; others keep their engine numbers).
const (
	HintNone            PropertyHint = 0
	HintRange           PropertyHint = 1  // "min,max[,step][,or_greater][,or_less][,suffix:m]"
	HintEnum            PropertyHint = 2  // "A,B,C" or "A:0,B:5"
	HintEnumSuggestion  PropertyHint = 3  // like HintEnum, free text allowed
	HintExpEasing       PropertyHint = 4  // an easing curve
	HintFlags           PropertyHint = 6  // "A,B,C" bit flags
	HintFile            PropertyHint = 13 // "*.png,*.jpg"
	HintDir             PropertyHint = 14
	HintResourceType    PropertyHint = 17 // "PackedScene"
	HintMultilineText   PropertyHint = 18
	HintPlaceholderText PropertyHint = 20 // greyed text shown while empty
	HintColorNoAlpha    PropertyHint = 21
	HintNodePathTypes   PropertyHint = 26 // NodePath limited to "Node3D,Node2D"
	HintNodeType        PropertyHint = 34 // "Node3D"
)

// PropertyUsage is Godot's PropertyUsageFlags: where a property shows and
// whether it is saved.
type PropertyUsage uint32

// Property usage flags.
const (
	UsageNone         PropertyUsage = 0
	UsageStorage      PropertyUsage = 2 // saved in scenes
	UsageEditor       PropertyUsage = 4 // shown in the inspector
	UsageDefault      PropertyUsage = UsageStorage | UsageEditor
	UsageGroup        PropertyUsage = 64
	UsageCategory     PropertyUsage = 128
	UsageSubgroup     PropertyUsage = 256
	UsageClassIsEnum  PropertyUsage = 65536 // an int typed as the enum class_name names
	UsageNilIsVariant PropertyUsage = 131072
	UsageReadOnly     PropertyUsage = 268435456 // greyed out in the inspector
)

const (
	methodFlagNormal = 1
	methodFlagConst  = 4
)

// argInfo describes one argument, return value, property or signal
// argument to the engine (GDExtensionPropertyInfo plus metadata).
type argInfo struct {
	name       string
	typ        VariantType
	class      string
	hint       PropertyHint
	hintString string
	usage      PropertyUsage
	meta       uint32
}

// typeName is the argument's type as the docs show it.
func (a argInfo) typeName() string {
	switch {
	case a.typ == TypeObject:
		return a.class
	case a.typ == TypeNil && a.usage&UsageNilIsVariant != 0:
		return "Variant"
	case a.usage&UsageClassIsEnum != 0:
		return a.class
	}
	return a.typ.String()
}

// methodDecl is a method callable from the engine. Its two entry points
// receive the instance's Go value, the engine's argument array (pointers to
// encoded values for ptrcall, pointers to Variants for call) and the
// return slot (nil when the caller ignores it).
type methodDecl struct {
	name  string
	args  []argInfo
	ret   *argInfo
	flags uint32
	// defaults are the values of the last len(defaults) arguments when a
	// call leaves them out (Method.Defaults).
	defaults []any

	ptrcall func(self any, args, ret unsafe.Pointer)
	// call returns the index of an argument it could not convert, or -1.
	call func(self any, args, ret unsafe.Pointer) int

	handle uintptr // set at registration
}

type propertyDecl struct {
	info           argInfo
	getter, setter string
	getterDecl     *methodDecl
	setterDecl     *methodDecl
	ci             *classInfo
}

type groupDecl struct {
	name, prefix string
	sub          bool
}

type signalDecl struct {
	name    string
	args    []argInfo
	nameVar Variant // StringName Variant, made at registration
}

type constDecl struct {
	enum, name string
	value      int64
	bitfield   bool
}

// classInfo is the type-erased declaration of a class plus its engine state.
// Written by declarations (package init) and SCENE init; read-only while the
// engine runs.
type classInfo struct {
	name, parent string
	icon, docs   string
	tool         bool
	runtime      bool
	abstract     bool

	newValue      func(obj unsafe.Pointer) any // a *T bound to obj
	virtuals      uint32                       // bit k set when virtual k is implemented
	notifications bool

	members []any // *groupDecl and *propertyDecl in declaration order
	methods []*methodDecl
	signals []*signalDecl
	consts  []constDecl
	names   map[string]string // member name -> kind, for duplicate checks
	errs    []error

	handle           uintptr
	nameSN, parentSN StringName
	registered       bool
}

func (ci *classInfo) fail(format string, args ...any) {
	ci.errs = append(ci.errs, fmt.Errorf("class %s: "+format, append([]any{ci.name}, args...)...))
}

// claim records a member name, reporting a clash.
func (ci *classInfo) claim(name, kind string) bool {
	if !isIdentifier(name) {
		ci.fail("%s name %q is not an identifier", kind, name)
		return false
	}
	if prev, ok := ci.names[name]; ok {
		ci.fail("%s %q clashes with %s %q", kind, name, prev, name)
		return false
	}
	ci.names[name] = kind
	return true
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// base is what a registered class's Go type gets by embedding an engine
// wrapper (Node, Node3D…): the engine class it extends and the slot its
// engine object is bound to.
type base interface {
	className() string
	setPtr(p unsafe.Pointer)
	AsObject() Object
}

// Class declares an engine class whose instances are Go values of type T.
// Build it with NewClass, add members, then pass it to Register. A
// declaration is plain Go data: it can be built and inspected (Describe, Err)
// without the engine.
type Class[T any] struct{ info *classInfo }

// NewClass declares the engine class name for the Go type T. T must embed
// the wrapper of the engine class it extends (godot.Node, godot.Node3D,
// godot.Node2D…); that wrapper is bound to the instance's engine object
// before any callback, so T's methods can call engine methods on itself.
//
// Optional methods of *T are hooked up by name: Init() after creation, before
// properties are set (set defaults here); Cleanup() when the engine frees the
// object; Ready(), EnterTree(), ExitTree(), Process(delta float64),
// PhysicsProcess(delta float64), ConfigurationWarnings() []string (the
// engine virtuals _ready…); OnNotification(what int32).
func NewClass[T any, PT interface {
	*T
	base
}](name string) *Class[T] {
	probe := PT(new(T))
	ci := &classInfo{name: name, parent: probe.className(), names: map[string]string{}}
	if !isIdentifier(name) {
		ci.fail("name %q is not an identifier", name)
	}
	ci.newValue = func(obj unsafe.Pointer) any {
		v := PT(new(T))
		v.setPtr(obj)
		return v
	}
	for k, vd := range virtualDefs {
		if vd.implemented(any(probe)) {
			ci.virtuals |= 1 << k
		}
	}
	_, ci.notifications = any(probe).(NotificationReceiver)
	return &Class[T]{info: ci}
}

// classInfo lets Register accept any *Class[T].
func (c *Class[T]) classInfo() *classInfo { return c.info }

// Name returns the engine class name.
func (c *Class[T]) Name() string { return c.info.name }

// Parent returns the engine class it extends.
func (c *Class[T]) Parent() string { return c.info.parent }

// Tool makes the class run its virtuals (Ready, Process…) and notifications
// inside the editor too, like a GDScript @tool script. By default only
// ConfigurationWarnings, properties and methods run in the editor.
func (c *Class[T]) Tool() *Class[T] { c.info.tool = true; return c }

// Runtime makes the class a runtime class (4.3+): in the editor its nodes
// are inert placeholders, which also means no configuration warnings.
func (c *Class[T]) Runtime() *Class[T] { c.info.runtime = true; return c }

// Abstract makes the class a base for others: it cannot be instantiated.
func (c *Class[T]) Abstract() *Class[T] { c.info.abstract = true; return c }

// Icon sets the editor icon (a res:// path to an SVG). The .gdextension
// [icons] section does the same and also works for the Create Node dialog.
func (c *Class[T]) Icon(path string) *Class[T] { c.info.icon = path; return c }

// Docs sets the class reference as Godot's doc XML (<class name=…>); the
// editor loads it at EDITOR init so F1 and the inspector tooltips show it.
func (c *Class[T]) Docs(xml string) *Class[T] { c.info.docs = xml; return c }

// Group starts an inspector group: properties declared after it (whose
// names start with prefix, when prefix is not empty) show under name.
func (c *Class[T]) Group(name, prefix string) *Class[T] {
	c.info.members = append(c.info.members, &groupDecl{name: name, prefix: prefix})
	return c
}

// Subgroup starts a subgroup inside the current group.
func (c *Class[T]) Subgroup(name, prefix string) *Class[T] {
	c.info.members = append(c.info.members, &groupDecl{name: name, prefix: prefix, sub: true})
	return c
}

// Constant declares an integer constant of the class (Class.NAME in GDScript).
func (c *Class[T]) Constant(name string, value int64) *Class[T] {
	return c.constant("", name, value, false)
}

// EnumConstant declares a constant that belongs to the class enum enum.
func (c *Class[T]) EnumConstant(enum, name string, value int64) *Class[T] {
	return c.constant(enum, name, value, false)
}

// BitfieldConstant declares a flag of the class bitfield enum.
func (c *Class[T]) BitfieldConstant(enum, name string, value int64) *Class[T] {
	return c.constant(enum, name, value, true)
}

func (c *Class[T]) constant(enum, name string, value int64, bitfield bool) *Class[T] {
	if enum != "" && !isIdentifier(enum) {
		c.info.fail("enum name %q is not an identifier", enum)
	}
	if c.info.claim(name, "constant") {
		c.info.consts = append(c.info.consts, constDecl{enum: enum, name: name, value: value, bitfield: bitfield})
	}
	return c
}

// Err returns the declaration's errors (bad names, clashes, types without a
// Variant mapping), or nil. Register refuses a class with errors.
func (c *Class[T]) Err() error { return errors.Join(c.info.errs...) }

// Describe returns a readable summary of the declaration, one member a line.
func (c *Class[T]) Describe() string {
	ci := c.info
	var b strings.Builder
	fmt.Fprintf(&b, "class %s extends %s\n", ci.name, ci.parent)
	var virt []string
	for k, vd := range virtualDefs {
		if ci.virtuals&(1<<k) != 0 {
			virt = append(virt, vd.name)
		}
	}
	if len(virt) > 0 {
		fmt.Fprintf(&b, "  virtuals %s\n", strings.Join(virt, ", "))
	}
	for _, m := range ci.members {
		switch m := m.(type) {
		case *groupDecl:
			kind := "group"
			if m.sub {
				kind = "subgroup"
			}
			fmt.Fprintf(&b, "  %s %q prefix %q\n", kind, m.name, m.prefix)
		case *propertyDecl:
			fmt.Fprintf(&b, "  property %s: %s", m.info.name, m.info.typeName())
			if m.info.hint != HintNone {
				fmt.Fprintf(&b, " hint %d %q", m.info.hint, m.info.hintString)
			}
			fmt.Fprintf(&b, " usage %d get %s", m.info.usage, m.getter)
			if m.setter != "" {
				fmt.Fprintf(&b, " set %s", m.setter)
			}
			b.WriteByte('\n')
		}
	}
	for _, m := range ci.methods {
		fmt.Fprintf(&b, "  method %s(%s)", m.name, joinArgsDefaults(m.args, m.defaults))
		if m.ret != nil {
			fmt.Fprintf(&b, " -> %s", m.ret.typeName())
		}
		if m.flags&methodFlagConst != 0 {
			b.WriteString(" const")
		}
		b.WriteByte('\n')
	}
	for _, s := range ci.signals {
		fmt.Fprintf(&b, "  signal %s(%s)\n", s.name, joinArgs(s.args))
	}
	for _, k := range ci.consts {
		fmt.Fprintf(&b, "  const %s = %d", k.name, k.value)
		if k.enum != "" {
			fmt.Fprintf(&b, " (enum %s)", k.enum)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// joinArgsDefaults is joinArgs with " = value" after the arguments that
// have a default (the last len(defaults)).
func joinArgsDefaults(args []argInfo, defaults []any) string {
	parts := make([]string, len(args))
	first := len(args) - len(defaults)
	for i, a := range args {
		parts[i] = a.name + ": " + a.typeName()
		if i >= first {
			parts[i] += fmt.Sprintf(" = %v", defaults[i-first])
		}
	}
	return strings.Join(parts, ", ")
}

func joinArgs(args []argInfo) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.name + ": " + a.typeName()
	}
	return strings.Join(parts, ", ")
}

// Method is a declared method; its setters refine the declaration.
type Method struct{ decl *methodDecl }

// Const marks the method as not changing the object (shown as const).
func (m *Method) Const() *Method { m.decl.flags |= methodFlagConst; return m }

// Defaults gives the method's last len(vals) arguments default values,
// which the engine fills in when a call leaves them out (GDScript
// room.create_room() for create_room(max_players = 0)). Each value is a
// bool, int, int64, float64 or string of its argument's type.
func (m *Method) Defaults(vals ...any) *Method {
	m.decl.defaults = vals
	return m
}

// defaultVariant converts a default argument value for the engine.
func defaultVariant(v any) (Variant, bool) {
	switch v := v.(type) {
	case bool:
		return NewVariant(v), true
	case int:
		return NewVariant(int64(v)), true
	case int64:
		return NewVariant(v), true
	case float64:
		return NewVariant(v), true
	case string:
		return NewVariant(v), true
	}
	return Variant{}, false
}

func (ci *classInfo) addMethod(name string, args []argInfo, ret *argInfo) *methodDecl {
	m := &methodDecl{name: name, args: args, ret: ret, flags: methodFlagNormal}
	if ci.claim(name, "method") {
		for i, a := range args {
			if !isIdentifier(a.name) {
				ci.fail("method %s: argument %d name %q is not an identifier", name, i, a.name)
			}
		}
		ci.methods = append(ci.methods, m)
	}
	return m
}

// PropertyDecl is a declared property; its setters refine the declaration.
type PropertyDecl struct{ decl *propertyDecl }

// Property declares an inspector property name of type V, served by get
// and (unless nil, which makes it read-only) set. It also declares the
// accessor methods get_<name> and set_<name>, which GDScript can call. A
// read-only property shows greyed out and is not saved.
func Property[T any, V Convertible](c *Class[T], name string, get func(*T) V, set func(*T, V)) *PropertyDecl {
	cv := codecFor[V]()
	p := &propertyDecl{info: cv.typeInfo(name), getter: "get_" + name, ci: c.info}
	if set == nil {
		p.info.usage |= UsageEditor | UsageReadOnly
	} else {
		p.info.usage |= UsageDefault
		p.setter = "set_" + name
	}
	if !c.info.claim(name, "property") {
		return &PropertyDecl{p}
	}
	if get == nil {
		c.info.fail("property %s: nil getter", name)
		return &PropertyDecl{p}
	}
	p.getterDecl = Method0R(c, p.getter, get).Const().decl
	if set != nil {
		p.setterDecl = Method1(c, p.setter, set, "value").decl
	}
	c.info.members = append(c.info.members, p)
	return &PropertyDecl{p}
}

// Hint sets the inspector hint and its hint string.
func (p *PropertyDecl) Hint(h PropertyHint, hintString string) *PropertyDecl {
	p.decl.info.hint, p.decl.info.hintString = h, hintString
	return p
}

// Range limits a number in the inspector to [min, max] in steps of step;
// extra adds "or_greater", "or_less", "exp", "suffix:ms"…
func (p *PropertyDecl) Range(min, max, step float64, extra ...string) *PropertyDecl {
	return p.Hint(HintRange, RangeHint(min, max, step, extra...))
}

// Enum shows an integer as a drop-down of names (values 0, 1, 2… or "Name:5").
func (p *PropertyDecl) Enum(names ...string) *PropertyDecl {
	return p.Hint(HintEnum, strings.Join(names, ","))
}

// Usage replaces the usage flags (UsageDefault for writable properties).
func (p *PropertyDecl) Usage(u PropertyUsage) *PropertyDecl {
	p.decl.info.usage = u | p.decl.info.usage&UsageNilIsVariant
	return p
}

// RangeHint formats a HintRange hint string: "min,max,step[,extra…]".
func RangeHint(min, max, step float64, extra ...string) string {
	parts := []string{formatNumber(min), formatNumber(max)}
	if step != 0 {
		parts = append(parts, formatNumber(step))
	}
	return strings.Join(append(parts, extra...), ",")
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
