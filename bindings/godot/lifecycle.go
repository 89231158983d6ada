package godot

// #include "gdx.h"
import "C"

import (
	"os"
	"strings"
	"sync"
	"unsafe"
)

// Level is a GDExtension initialization level.
type Level uint32

// Initialization levels, run in this order at start-up and in reverse at
// shutdown. Classes deriving from Node are registered at LevelScene.
const (
	LevelCore    Level = 0
	LevelServers Level = 1
	LevelScene   Level = 2
	LevelEditor  Level = 3 // editor builds only
)

// Registrant is a class declaration (a *Class[T]) to register.
type Registrant interface{ classInfo() *classInfo }

// lib is the library's state. Declarations (Register, OnSceneInit…) happen
// in package init; the engine then drives initialize/deinitialize on its main
// thread. mu guards the declaration lists against init-time races only.
var lib struct {
	mu          sync.Mutex
	declared    []*classInfo
	sceneInit   []func() error
	sceneDeinit []func()

	// Written at SCENE init on the main thread; read-only afterwards.
	registered []*classInfo
	// broken: nothing registered (the method table did not resolve, a
	// double-precision engine, or a first load into an editor run that
	// quits at once before 4.5).
	broken     bool
	editorHint bool
	// lateLoad: the editor loaded the library into a running session (the
	// first open of a project that has the addon), not at start-up.
	lateLoad bool
}

// Register queues classes for registration at SCENE init, in the given
// order (a parent before its children); they are unregistered in reverse
// order at SCENE deinit. Call it from an init function of the library.
func Register(classes ...Registrant) {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	for _, c := range classes {
		lib.declared = append(lib.declared, c.classInfo())
	}
}

// OnSceneInit adds f to run at SCENE init, on the main thread, after the
// classes are registered. An error is printed to the Godot console.
func OnSceneInit(f func() error) {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	lib.sceneInit = append(lib.sceneInit, f)
}

// OnSceneDeinit adds f to run at SCENE deinit, before the classes are
// unregistered; hooks run in reverse order of addition.
func OnSceneDeinit(f func()) {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	lib.sceneDeinit = append(lib.sceneDeinit, f)
}

// Version returns the running engine's version (0.0.0 before start-up).
func Version() (major, minor, patch int) {
	var a, b, c C.uint32_t
	C.gdx_godot_version(&a, &b, &c)
	return int(a), int(b), int(c)
}

// VersionString returns the engine's version text ("Godot Engine v4.4.1.stable…").
func VersionString() string { return C.GoString(C.gdx_godot_version_string()) }

// Loaded reports whether the engine has started this library; engine calls
// are valid only when it is true.
func Loaded() bool { return loaded() }

// LibraryPath returns the file path of this shared library as the engine
// loaded it.
func LibraryPath() string {
	if !loaded() {
		return ""
	}
	var s String
	C.gdx_library_path(unsafe.Pointer(&s))
	defer s.Destroy()
	return s.String()
}

// IsMainThread reports whether the caller runs on the engine's main thread
// (the thread that ran SCENE init). Goroutines never do: only code called
// back by the engine can.
func IsMainThread() bool { return C.gdx_is_main_thread() != 0 }

// EditorHint reports whether the library runs inside the editor (cached at
// SCENE init; IsEditorHint asks the engine).
func EditorHint() bool { return lib.editorHint }

func initialize(level Level) {
	switch level {
	case LevelScene:
		initScene()
	case LevelEditor:
		if lib.broken || lib.lateLoad {
			// Loaded into a running editor, the class reference waits for
			// the next start: the editor's documentation may be in use by
			// its loader thread now, and XML loaded here survives as
			// extension docs that a documentation pass queued before an
			// immediate quit (--import) merges into freed data (see
			// shutdown). The library loads at start-up from then on.
			return
		}
		for _, ci := range lib.registered {
			if ci.docs != "" {
				C.gdx_editor_help_load(strPtr(ci.docs), C.gdx_int(len(ci.docs)))
			}
		}
	}
}

func initScene() {
	C.gdx_record_main_thread()
	if err := resolveMethods(); err != nil {
		lib.broken = true
		PrintErrorf("godot: %v; this library registers no classes (is the engine older than 4.4?)", err)
		return
	}
	if HasFeature("double") {
		// Every struct here (Vector3, Transform3D…) is laid out for float
		// real_t: on a double build they would be read as garbage.
		lib.broken = true
		PrintError("godot: this Godot build uses double-precision floats (precision=double); this library " +
			"is built for single precision (the official Godot downloads) and registers no classes")
		return
	}
	if main, caller := MainThreadID(), CallerThreadID(); main != caller {
		PrintWarningf("godot: SCENE init ran on thread %d, not the main thread %d; IsMainThread is wrong", caller, main)
	}
	lib.editorHint = IsEditorHint()
	lib.lateLoad = lib.editorHint && HasMainLoop()
	if lib.lateLoad && C.gdx_has_shutdown_callback() == 0 && quitsAtOnce(os.Args) {
		// Before 4.5 there is no shutdown callback to unregister the
		// classes in time (see shutdown), and an editor run that quits at
		// once after its first scan (--import, an export) would crash in
		// its documentation pass. Such a run never instantiates them, and
		// every later run loads the library at start-up.
		lib.broken = true
		PrintWarning("godot: the editor loaded this library during its first scan of the project and quits at " +
			"once; its classes are registered from the next run on")
		return
	}
	for k := range virtualDefs {
		virtualNames[k] = NewStringName(virtualDefs[k].name)
	}
	lib.mu.Lock()
	declared := append([]*classInfo(nil), lib.declared...)
	hooks := append([]func() error(nil), lib.sceneInit...)
	lib.mu.Unlock()
	for _, ci := range declared {
		if err := ci.register(); err != nil {
			PrintErrorf("godot: %v", err)
			if ci.registered || ci.handle != 0 {
				lib.registered = append(lib.registered, ci) // still needs unregistering
			}
			continue
		}
		lib.registered = append(lib.registered, ci)
	}
	for _, f := range hooks {
		if err := f(); err != nil {
			PrintErrorf("godot: scene init: %v", err)
		}
	}
}

// shutdown runs when the engine shuts its main loop down (4.5+), before
// its last flush of deferred calls. In the editor it unregisters the
// classes already, when none of their objects is left: Godot's editor can
// have queued EditorHelp's documentation of extension classes when it
// quits right after loading an extension (the first open of a project,
// --import), and that call, run after the editor freed its documentation,
// crashes for every extension class still registered (godotengine/godot
// issue 111048). The SCENE deinit then finds nothing left to unregister.
func shutdown() {
	if !lib.editorHint || instances.Len() > 0 {
		return
	}
	unregisterAll()
}

// quitsAtOnce reports whether an editor's command line makes it quit once
// its first scan is done: --import, --quit, --quit-after and the exports.
// It reads the process's arguments (the engine's OS.get_cmdline_args
// lacks those it consumed), up to the user's (after "--" or "++").
func quitsAtOnce(args []string) bool {
	for i, a := range args {
		if i == 0 {
			continue // the program
		}
		switch {
		case a == "--" || a == "++":
			return false
		case a == "--import", a == "--quit", a == "-q", a == "--quit-after", strings.HasPrefix(a, "--export-"):
			return true
		}
	}
	return false
}

// unregisterAll unregisters the classes, children before parents.
func unregisterAll() {
	for i := len(lib.registered) - 1; i >= 0; i-- {
		lib.registered[i].unregister()
	}
	lib.registered = nil
}

func deinitialize(level Level) {
	if level != LevelScene {
		return
	}
	lib.mu.Lock()
	hooks := append([]func(){}, lib.sceneDeinit...)
	lib.mu.Unlock()
	for i := len(hooks) - 1; i >= 0; i-- {
		func() {
			defer catch("scene deinit hook")
			hooks[i]()
		}()
	}
	unregisterAll()
	for k := range virtualNames {
		virtualNames[k].Destroy()
	}
	classRegistry, methodRegistry = nil, nil
	forgetMethods()
	lib.broken = false
}
