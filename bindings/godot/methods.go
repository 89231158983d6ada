package godot

// #include "gdx.h"
import "C"

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// The engine methods this package calls, one row each: class, method and
// the hash of the signature we call. Every hash is that of
// extension_api.json (4.6-dev dump) and unchanged since 4.4 (checked against
// the engine's misc/extension_api_validation lists; testdata/engine_methods.json
// holds the signatures and the test recomputes each hash). Rows resolve at
// SCENE init; a NULL bind is reported by name and the library refuses to
// register its classes.
var (
	mbObjectGetClass = engineMethod("Object", "get_class", 201670096)
	// is_class took a String until 4.6 and takes a StringName from 4.7
	// (which keeps the old hash only as a compatibility bind).
	mbObjectIsClass      = engineMethodSince("Object", "is_class", 3927539163, 4, 7, 2619796661)
	mbObjectNotification = engineMethod("Object", "notification", 4023243586)
	mbObjectEmitSignal   = engineMethod("Object", "emit_signal", 4047867050) // vararg: call path only

	mbObjectNotifyPropertyListChanged = engineMethod("Object", "notify_property_list_changed", 3218959716)

	mbRefCountedReference   = engineMethod("RefCounted", "reference", 2240911060)
	mbRefCountedUnreference = engineMethod("RefCounted", "unreference", 2240911060)

	mbNodeGetParent         = engineMethod("Node", "get_parent", 3160264692)
	mbNodeGetNode           = engineMethod("Node", "get_node", 2734337346)
	mbNodeGetNodeOrNull     = engineMethod("Node", "get_node_or_null", 2734337346)
	mbNodeAddChild          = engineMethod("Node", "add_child", 3863233950)
	mbNodeQueueFree         = engineMethod("Node", "queue_free", 3218959716)
	mbNodeGetChildCount     = engineMethod("Node", "get_child_count", 894402480)
	mbNodeGetChild          = engineMethod("Node", "get_child", 541253412)
	mbNodeIsInsideTree      = engineMethod("Node", "is_inside_tree", 36873697)
	mbNodeSetProcess        = engineMethod("Node", "set_process", 2586408642)
	mbNodeSetPhysicsProcess = engineMethod("Node", "set_physics_process", 2586408642)
	mbNodeGetName           = engineMethod("Node", "get_name", 2002593661)
	mbNodeSetProcessMode    = engineMethod("Node", "set_process_mode", 1841290486)
	mbNodeSetProcessPrio    = engineMethod("Node", "set_process_priority", 1286410249)

	mbNodeSetPhysicsInterpolationMode = engineMethod("Node", "set_physics_interpolation_mode", 3202404928)
	mbNodeResetPhysicsInterpolation   = engineMethod("Node", "reset_physics_interpolation", 3218959716)
	// set_name took a String until 4.4 and takes a StringName from 4.5; 4.5+
	// still accepts the 4.4 hash as a compatibility bind, but builds without
	// deprecated APIs do not, so the row picks by the running version.
	mbNodeSetName                     = engineMethodSince("Node", "set_name", 83702148, 4, 5, 3304788590)
	mbNodeUpdateConfigurationWarnings = engineMethod("Node", "update_configuration_warnings", 3218959716)

	mbNode3DGetGlobalTransform = engineMethod("Node3D", "get_global_transform", 3229777777)
	mbNode3DSetGlobalTransform = engineMethod("Node3D", "set_global_transform", 2952846383)
	mbNode3DGetGlobalPosition  = engineMethod("Node3D", "get_global_position", 3360562783)
	mbNode3DSetGlobalPosition  = engineMethod("Node3D", "set_global_position", 3460891852)
	mbNode3DIsVisible          = engineMethod("Node3D", "is_visible", 36873697)
	mbNode3DSetVisible         = engineMethod("Node3D", "set_visible", 2586408642)

	mbCanvasItemIsVisible          = engineMethod("CanvasItem", "is_visible", 36873697)
	mbCanvasItemSetVisible         = engineMethod("CanvasItem", "set_visible", 2586408642)
	mbCanvasItemGetModulate        = engineMethod("CanvasItem", "get_modulate", 3444240500)
	mbCanvasItemSetModulate        = engineMethod("CanvasItem", "set_modulate", 2920490490)
	mbCanvasItemGetGlobalTransform = engineMethod("CanvasItem", "get_global_transform", 3814499831)

	mbNode2DGetGlobalPosition  = engineMethod("Node2D", "get_global_position", 3341600327)
	mbNode2DSetGlobalPosition  = engineMethod("Node2D", "set_global_position", 743155724)
	mbNode2DGetGlobalRotation  = engineMethod("Node2D", "get_global_rotation", 1740695150)
	mbNode2DSetGlobalRotation  = engineMethod("Node2D", "set_global_rotation", 373806689)
	mbNode2DSetGlobalTransform = engineMethod("Node2D", "set_global_transform", 2761652528)

	mbCharacterBody2DGetVelocity   = engineMethod("CharacterBody2D", "get_velocity", 3341600327)
	mbCharacterBody3DGetVelocity   = engineMethod("CharacterBody3D", "get_velocity", 3360562783)
	mbRigidBody2DGetLinearVelocity = engineMethod("RigidBody2D", "get_linear_velocity", 3341600327)
	mbRigidBody3DGetLinearVelocity = engineMethod("RigidBody3D", "get_linear_velocity", 3360562783)
	mbRigidBody2DSetLinearVelocity = engineMethod("RigidBody2D", "set_linear_velocity", 743155724)
	mbRigidBody3DSetLinearVelocity = engineMethod("RigidBody3D", "set_linear_velocity", 3460891852)
	mbRigidBody2DSetFreezeEnabled  = engineMethod("RigidBody2D", "set_freeze_enabled", 2586408642)
	mbRigidBody3DSetFreezeEnabled  = engineMethod("RigidBody3D", "set_freeze_enabled", 2586408642)

	mbPackedSceneInstantiate = engineMethod("PackedScene", "instantiate", 2628778455)
	mbResourceLoaderLoad     = engineMethod("ResourceLoader", "load", 3358495409)
	mbEngineIsEditorHint     = engineMethod("Engine", "is_editor_hint", 36873697)
	mbEngineGetMainLoop      = engineMethod("Engine", "get_main_loop", 1016888095)
	mbEngineGetPhysicsFrames = engineMethod("Engine", "get_physics_frames", 3905245786)
	mbEngineGetProcessFrames = engineMethod("Engine", "get_process_frames", 3905245786)
	mbEngineGetPhysicsTicks  = engineMethod("Engine", "get_physics_ticks_per_second", 3905245786)
	mbTimeGetTicksUsec       = engineMethod("Time", "get_ticks_usec", 3905245786)
	mbOSGetMainThreadID      = engineMethod("OS", "get_main_thread_id", 3905245786)
	mbOSGetThreadCallerID    = engineMethod("OS", "get_thread_caller_id", 3905245786)
	mbOSHasFeature           = engineMethod("OS", "has_feature", 3927539163)
	mbClassDBClassExists     = engineMethod("ClassDB", "class_exists", 2619796661)

	mbEngineDebuggerIsActive    = engineMethod("EngineDebugger", "is_active", 2240911060)
	mbEngineDebuggerSendMessage = engineMethod("EngineDebugger", "send_message", 1209351045)
	mbProjectSettingsGetSetting = engineMethod("ProjectSettings", "get_setting_with_override", 2760726917)
)

// Builtin-type methods (Variant::get_builtin_method_hash), same rules.
var (
	bmDictionarySize            = builtinMethod(TypeDictionary, "size", 3173160232)
	bmDictionaryHas             = builtinMethod(TypeDictionary, "has", 3680194679)
	bmDictionaryKeys            = builtinMethod(TypeDictionary, "keys", 4144163970)
	bmArraySize                 = builtinMethod(TypeArray, "size", 3173160232)
	bmArrayPushBack             = builtinMethod(TypeArray, "push_back", 3316032543)
	bmPackedByteArraySize       = builtinMethod(TypePackedByteArray, "size", 3173160232)
	bmPackedByteArrayResize     = builtinMethod(TypePackedByteArray, "resize", 848867239)
	bmPackedStringArraySize     = builtinMethod(TypePackedStringArray, "size", 3173160232)
	bmPackedStringArrayPushBack = builtinMethod(TypePackedStringArray, "push_back", 816187996)
)

// Singletons used by the wrappers, fetched at SCENE init; read-only afterwards.
var (
	engineSingleton, timeSingleton, osSingleton, resourceLoaderSingleton, classDBSingleton unsafe.Pointer
	engineDebuggerSingleton, projectSettingsSingleton                                      unsafe.Pointer

	singletonRows = []struct {
		name string
		ptr  *unsafe.Pointer
	}{
		{"Engine", &engineSingleton},
		{"Time", &timeSingleton},
		{"OS", &osSingleton},
		{"ResourceLoader", &resourceLoaderSingleton},
		{"ClassDB", &classDBSingleton},
		{"EngineDebugger", &engineDebuggerSingleton},
		{"ProjectSettings", &projectSettingsSingleton},
	}
)

// methodBind is one row of the engine method table.
type methodBind struct {
	Class, Method string
	Hash          uint32 // the hash on 4.4
	// NewHash, when set, replaces Hash from engine version NewSince on (a
	// signature change).
	NewHash  uint32
	NewSince [2]int

	ptr     unsafe.Pointer // MethodBind*, set at SCENE init; read-only afterwards
	usesNew bool           // NewHash was used; set at SCENE init
}

// builtinMethodBind is one row of the builtin method table.
type builtinMethodBind struct {
	Type   VariantType
	Method string
	Hash   uint32
	fn     unsafe.Pointer // set at SCENE init; read-only afterwards
}

var (
	methodTable  []*methodBind
	builtinTable []*builtinMethodBind
)

func engineMethod(class, method string, hash uint32) *methodBind {
	m := &methodBind{Class: class, Method: method, Hash: hash}
	methodTable = append(methodTable, m)
	return m
}

func engineMethodSince(class, method string, hash uint32, major, minor int, newHash uint32) *methodBind {
	m := engineMethod(class, method, hash)
	m.NewHash, m.NewSince = newHash, [2]int{major, minor}
	return m
}

func builtinMethod(t VariantType, method string, hash uint32) *builtinMethodBind {
	m := &builtinMethodBind{Type: t, Method: method, Hash: hash}
	builtinTable = append(builtinTable, m)
	return m
}

// errMissingMethods reports method binds the engine did not resolve.
var errMissingMethods = errors.New("engine methods not found")

// resolveMethods looks up every row; it names every failure at once.
func resolveMethods() error {
	var missing []string
	major, minor, _ := Version()
	for _, m := range methodTable {
		hash := m.Hash
		m.usesNew = m.NewHash != 0 && (major > m.NewSince[0] || major == m.NewSince[0] && minor >= m.NewSince[1])
		if m.usesNew {
			hash = m.NewHash
		}
		m.ptr = C.gdx_method_bind(strPtr(m.Class), C.gdx_int(len(m.Class)), strPtr(m.Method),
			C.gdx_int(len(m.Method)), C.gdx_int(hash))
		if m.ptr == nil {
			missing = append(missing, fmt.Sprintf("%s.%s (hash %d)", m.Class, m.Method, hash))
		}
	}
	for _, m := range builtinTable {
		m.fn = C.gdx_builtin_method(C.uint32_t(m.Type), strPtr(m.Method), C.gdx_int(len(m.Method)), C.gdx_int(m.Hash))
		if m.fn == nil {
			missing = append(missing, fmt.Sprintf("%s.%s (hash %d)", m.Type, m.Method, m.Hash))
		}
	}
	for _, row := range singletonRows {
		sn := NewStringName(row.name)
		*row.ptr = C.gdx_singleton(unsafe.Pointer(&sn))
		sn.Destroy()
		if *row.ptr == nil {
			missing = append(missing, "singleton "+row.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", errMissingMethods, strings.Join(missing, ", "))
	}
	return nil
}

// forgetMethods clears the resolved pointers at SCENE deinit.
func forgetMethods() {
	for _, m := range methodTable {
		m.ptr = nil
	}
	for _, m := range builtinTable {
		m.fn = nil
	}
	for _, row := range singletonRows {
		*row.ptr = nil
	}
}

// ok reports whether m can be called on obj, and prints why not.
func (m *methodBind) ok(obj unsafe.Pointer) bool {
	switch {
	case m.ptr == nil:
		printAt(2, levelError, "godot: "+m.Class+"."+m.Method+" called before SCENE init or not found")
		return false
	case obj == nil:
		printAt(2, levelError, "godot: "+m.Class+"."+m.Method+" called on a null object")
		return false
	}
	return true
}

// words ptrcalls m with up to three word-sized arguments (see word*) and
// returns the return slot. Nothing crosses into C by address, so the call
// allocates nothing whatever the engine does meanwhile.
func (m *methodBind) words(obj unsafe.Pointer, a0, a1, a2 uint64) C.gdx_blob {
	if !m.ok(obj) {
		return C.gdx_blob{}
	}
	return C.gdx_ptrcall_words(m.ptr, obj, C.uint64_t(a0), C.uint64_t(a1), C.uint64_t(a2))
}

// value ptrcalls m with one argument of up to 48 bytes (a vector, colour or
// transform, made with toBlob).
func (m *methodBind) value(obj unsafe.Pointer, a0 C.gdx_blob) C.gdx_blob {
	if !m.ok(obj) {
		return C.gdx_blob{}
	}
	return C.gdx_ptrcall_blob(m.ptr, obj, a0)
}

// Word encodings of ptrcall arguments (little-endian targets): bool in the
// low byte, ints as int64, floats as double, pointers and 8-byte opaque
// values (String, StringName, NodePath) as their bits.
func wordPtr(p unsafe.Pointer) uint64 { return uint64(uintptr(p)) }

func wordBool(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func wordFloat(f float64) uint64 { return math.Float64bits(f) }

// toBlob and fromBlob move a value of at most 48 bytes in and out of a blob.
func toBlob[T any](v T) (b C.gdx_blob) {
	if unsafe.Sizeof(v) > unsafe.Sizeof(b) {
		panic("godot: value too large for a ptrcall blob")
	}
	*(*T)(unsafe.Pointer(&b)) = v
	return b
}

func fromBlob[T any](b C.gdx_blob) T { return *(*T)(unsafe.Pointer(&b)) }

// blobPtr reads the Object* (or other pointer) a ptrcall returned.
func blobPtr(b C.gdx_blob) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&b)) }

// callBuiltin calls a builtin-type method on base.
func callBuiltin(m *builtinMethodBind, base, a0, a1, ret unsafe.Pointer, argc int) {
	if m.fn == nil {
		return
	}
	C.gdx_builtin_call(m.fn, base, a0, a1, ret, C.int32_t(argc))
}
