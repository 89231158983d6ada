package godot

import (
	"sync"
	"unsafe"
)

// The hooks a registered class may implement (on its pointer type). Each
// engine virtual is found by name once per object; a class that lacks the
// method is reported as not overriding it, so the engine skips the call.
type (
	// Initer is called right after the engine object exists, before saved
	// properties are applied: set defaults here.
	Initer interface{ Init() }
	// Cleaner is called when the engine frees the object (after
	// NOTIFICATION_PREDELETE); release Go resources, do not call the engine
	// on the object itself.
	Cleaner interface{ Cleanup() }
	// Readier is the _ready virtual.
	Readier interface{ Ready() }
	// TreeEnterer is the _enter_tree virtual.
	TreeEnterer interface{ EnterTree() }
	// TreeExiter is the _exit_tree virtual.
	TreeExiter interface{ ExitTree() }
	// Processor is the _process virtual; delta is in seconds.
	Processor interface{ Process(delta float64) }
	// PhysicsProcessor is the _physics_process virtual; delta is in seconds.
	PhysicsProcessor interface{ PhysicsProcess(delta float64) }
	// ConfigurationWarner is the _get_configuration_warnings virtual (editor
	// only): each string is shown as a warning on the node.
	ConfigurationWarner interface{ ConfigurationWarnings() []string }
	// NotificationReceiver gets every notification (the engine's
	// notification callback); it costs a call per notification, so implement
	// it only when needed.
	NotificationReceiver interface{ OnNotification(what int32) }
)

type virtualKind int

const (
	vReady virtualKind = iota
	vEnterTree
	vExitTree
	vProcess
	vPhysicsProcess
	vConfigurationWarnings
	numVirtuals
)

// virtualDef names an engine virtual with its signature hash
// (extension_api.json; checked by TestVirtualHashes).
type virtualDef struct {
	name        string
	hash        uint32
	implemented func(v any) bool
}

var virtualDefs = [numVirtuals]virtualDef{
	vReady:                 {"_ready", 3218959716, func(v any) bool { _, ok := v.(Readier); return ok }},
	vEnterTree:             {"_enter_tree", 3218959716, func(v any) bool { _, ok := v.(TreeEnterer); return ok }},
	vExitTree:              {"_exit_tree", 3218959716, func(v any) bool { _, ok := v.(TreeExiter); return ok }},
	vProcess:               {"_process", 373806689, func(v any) bool { _, ok := v.(Processor); return ok }},
	vPhysicsProcess:        {"_physics_process", 373806689, func(v any) bool { _, ok := v.(PhysicsProcessor); return ok }},
	vConfigurationWarnings: {"_get_configuration_warnings", 1139954409, func(v any) bool { _, ok := v.(ConfigurationWarner); return ok }},
}

// virtualNames holds the interned StringNames of the virtuals, made at SCENE
// init: a name lookup is then one 8-byte comparison per virtual.
var virtualNames [numVirtuals]StringName

var hashWarned sync.Map // virtual name -> true, to warn once per virtual

// virtualFor answers the engine's get_virtual_call_data: the call data
// (kind+1) when ci overrides the virtual called name, 0 otherwise.
func virtualFor(ci *classInfo, name unsafe.Pointer, hash uint32) uintptr {
	bits := *(*uint64)(name)
	for k := range virtualDefs {
		if virtualNames[k].raw != bits || bits == 0 {
			continue
		}
		vd := &virtualDefs[k]
		switch {
		case ci.virtuals&(1<<k) == 0:
			return 0
		case hash != vd.hash:
			if _, dup := hashWarned.LoadOrStore(vd.name, true); !dup {
				PrintWarningf("godot: engine virtual %s has hash %d, this library was built for %d; not overriding it",
					vd.name, hash, vd.hash)
			}
			return 0
		case lib.editorHint && !ci.tool && virtualKind(k) != vConfigurationWarnings:
			return 0 // like a non-@tool script: no game logic in the editor
		}
		return uintptr(k) + 1
	}
	return 0
}

// callVirtual runs virtual kind on the Go value v; args and ret are the
// engine's ptrcall arguments and return slot.
func callVirtual(v any, kind virtualKind, args, ret unsafe.Pointer) {
	switch kind {
	case vReady:
		v.(Readier).Ready()
	case vEnterTree:
		v.(TreeEnterer).EnterTree()
	case vExitTree:
		v.(TreeExiter).ExitTree()
	case vProcess:
		v.(Processor).Process(*(*float64)(argAt(args, 0)))
	case vPhysicsProcess:
		v.(PhysicsProcessor).PhysicsProcess(*(*float64)(argAt(args, 0)))
	case vConfigurationWarnings:
		w := v.(ConfigurationWarner).ConfigurationWarnings()
		if ret != nil {
			stringsCodec.toPtr(ret, w) // ret holds an empty, constructed array
		}
	}
}
