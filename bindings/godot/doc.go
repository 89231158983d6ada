// Package godot is nearzero's own small, typed binding to Godot's
// GDExtension C interface (Godot 4.4 and later), written in Go with cgo. A
// c-shared library built from a main package that imports it is a
// GDExtension: the .gdextension file names the entry symbol nearzero_init.
//
// # Declaring a class
//
// A class is a Go struct that embeds the wrapper of the engine class it
// extends; its hooks are ordinary methods, found by name:
//
//	type Greeter struct {
//		godot.Node            // extends Node; bound to the engine object
//		speed float64
//	}
//
//	var (
//		greeter = godot.NewClass[Greeter]("Greeter")
//		greeted = godot.NewSignal1[string](greeter, "greeted", "name")
//	)
//
//	func init() {
//		greeter.Group("Motion", "")
//		godot.Property(greeter, "speed",
//			func(g *Greeter) float64 { return g.speed },
//			func(g *Greeter, v float64) { g.speed = v }).Range(0, 10, 0.1, "suffix:m/s")
//		godot.Method1R(greeter, "greet", (*Greeter).Greet, "name")
//		greeter.Constant("MAX_SPEED", 10)
//		godot.Register(greeter)
//	}
//
//	func (g *Greeter) Init()                  { g.speed = 1 }      // defaults
//	func (g *Greeter) Ready()                 { godot.Print("ready") }
//	func (g *Greeter) Process(delta float64)  { /* every frame */ }
//	func (g *Greeter) Greet(name string) string {
//		greeted.Emit(g, name)
//		return "hello " + name + " from " + g.Parent().Name()
//	}
//
// Integer enums of the class (Greeter.Mood) are declared with Enum and
// Value; OfEnum, ArgEnum and ReturnEnum type properties, arguments, returns
// and signal arguments with them, as the engine's own enums are typed.
// Getter renames a property's getter (is_<name> for booleans, the engine's
// way), ReturnClass narrows an object return to a class of the library.
//
// Register queues the class; it is registered at SCENE init (with its
// methods, then properties and groups in order, signals and constants) and
// unregistered at SCENE deinit, children before parents. OnSceneInit and
// OnSceneDeinit add library hooks around that.
//
// # Ownership
//
// Engine values (String, StringName, NodePath, Dictionary, Array, the
// Packed arrays, Variant) are opaque bits in Go memory that hold engine
// references: whoever creates one Destroys it, and Copy makes a second owner.
// Across a method or property call: arguments of these types are borrowed
// for the call (Copy to keep one); returned values are handed to the engine
// (return x.Copy() to keep your own). Go-native types (bool, ints, floats,
// string, []byte, []string, the math structs) are plain copies. Object
// wrappers (Object, Node, Node3D…) are borrowed pointers: keep an ObjectID
// across frames, or anything that may free the object.
//
// # Threads
//
// The engine calls back on its main thread for scene processing, but
// loader threads create objects too. Goroutines must never call the engine;
// IsMainThread tells. Every callback from C recovers panics and prints them
// with print_error (Go file and line), because a panic unwinding into C
// would abort the editor. PrintError, PrintWarning and NewLogHandler report
// to the Godot console with the Go file and line.
//
// # Invariants
//
//   - C memory never holds a Go pointer: classes, methods and instances are
//     integer handles (package handle) into Go tables.
//   - Every interface function and engine method bind is resolved once
//     (entry symbol, SCENE init) from the tables in gdx.c and methods.go; a
//     NULL bind is reported by name and no class is registered.
//   - Hot paths do not allocate: virtual dispatch (_process), engine
//     ptrcalls with stack argument arrays, signal emission with scalar
//     arguments through cached StringName Variants.
//   - gdx.h holds this package's own declarations of the C interface, with
//     compile-time layout asserts; gdx.c holds every C definition.
//   - No Go pointer to memory holding Go pointers crosses into C: engine
//     values go from locals, C memory or by value (cgo's pointer check
//     panics otherwise, and pointer arguments of C calls that may call back
//     move their pointee to the heap).
//
// # Testing without the engine
//
// fakeengine is a small C stand-in for the engine's interface: the
// tests load the real entry symbol with it, check what gets registered and
// drive the C callbacks (create, free, virtuals, call, ptrcall, signals,
// panics) as the engine would. The real engine is exercised by the
// extension's integration test when GODOT names a binary.
package godot
