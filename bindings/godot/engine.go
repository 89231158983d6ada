package godot

// #include "gdx.h"
import "C"

import "fmt"

// Typed wrappers of the engine methods in methods.go. Each is one ptrcall
// whose arguments and result cross by value: no allocation unless it
// returns a Go string. Calling one on a null object prints an error and
// returns the zero value.

// ClassName returns the engine class name of o (Object.get_class).
func (o Object) ClassName() string {
	s := fromBlob[String](mbObjectGetClass.words(o.ptr, 0, 0, 0))
	defer s.Destroy()
	return s.String()
}

// IsClass reports whether o is of the named class or a subclass (Object.is_class).
func (o Object) IsClass(name string) bool {
	if mbObjectIsClass.usesNew { // 4.7+: StringName argument
		sn := NewStringName(name)
		defer sn.Destroy()
		return fromBlob[bool](mbObjectIsClass.words(o.ptr, sn.raw, 0, 0))
	}
	s := NewString(name) // until 4.6: String argument
	defer s.Destroy()
	return fromBlob[bool](mbObjectIsClass.words(o.ptr, s.raw, 0, 0))
}

// ClassExists reports whether ClassDB has the named class (ClassDB.class_exists).
func ClassExists(name string) bool {
	sn := NewStringName(name)
	defer sn.Destroy()
	return fromBlob[bool](mbClassDBClassExists.words(classDBSingleton, sn.raw, 0, 0))
}

// Notification sends notification what to o (Object.notification).
func (o Object) Notification(what int32) {
	mbObjectNotification.words(o.ptr, uint64(int64(what)), wordBool(false), 0)
}

// NotifyPropertyListChanged tells the editor that o's properties changed
// (Object.notify_property_list_changed): the inspector re-reads them, so a
// setter that changes other properties shows their new values.
func (o Object) NotifyPropertyListChanged() {
	mbObjectNotifyPropertyListChanged.words(o.ptr, 0, 0, 0)
}

// EmitSignal emits the signal name with args (Object.emit_signal, through
// the Variant call path since it is vararg). The args stay yours. Declared
// signals (Signal1…) are the typed way; this serves any signal.
func (o Object) EmitSignal(name StringName, args ...Variant) error {
	if len(args) > maxSignalArgs {
		return fmt.Errorf("emit %s: %d arguments, at most %d: %w", name.String(), len(args), maxSignalArgs, errTooManyArgs)
	}
	var buf callArgs
	v := buf.slots()
	v[0] = newVariantOf(TypeStringName, name)
	copy(v[1:], args) // borrowed bits: only v[0] is destroyed
	err := emit(o.ptr, &buf, len(args)+1)
	v[0].Destroy()
	if err != nil {
		return fmt.Errorf("emit %s: %w", name.String(), err)
	}
	return nil
}

// Reference adds a reference to r (RefCounted.reference).
func (r RefCounted) Reference() bool {
	return fromBlob[bool](mbRefCountedReference.words(r.ptr, 0, 0, 0))
}

// Release drops one reference and frees the object when it was the last
// (RefCounted.unreference, then object_destroy).
func (r RefCounted) Release() {
	if r.ptr == nil {
		return
	}
	if fromBlob[bool](mbRefCountedUnreference.words(r.ptr, 0, 0, 0)) {
		C.gdx_object_destroy(r.ptr)
	}
}

// Parent returns n's parent, or a null Node at the root or outside a tree.
func (n Node) Parent() Node {
	return Node{Object{blobPtr(mbNodeGetParent.words(n.ptr, 0, 0, 0))}}
}

// GetNode returns the node at path relative to n; the engine prints an
// error and it returns a null Node when there is none (Node.get_node).
func (n Node) GetNode(path NodePath) Node {
	return Node{Object{blobPtr(mbNodeGetNode.words(n.ptr, path.raw, 0, 0))}}
}

// GetNodeOrNull returns the node at path relative to n, or a null Node,
// quietly (Node.get_node_or_null).
func (n Node) GetNodeOrNull(path NodePath) Node {
	return Node{Object{blobPtr(mbNodeGetNodeOrNull.words(n.ptr, path.raw, 0, 0))}}
}

// AddChild adds child under n (Node.add_child, readable-name off, not internal).
func (n Node) AddChild(child Objecter) {
	mbNodeAddChild.words(n.ptr, wordPtr(child.AsObject().ptr), wordBool(false), 0)
}

// QueueFree deletes n at the end of the frame (Node.queue_free).
func (n Node) QueueFree() { mbNodeQueueFree.words(n.ptr, 0, 0, 0) }

// ChildCount returns the number of non-internal children.
func (n Node) ChildCount() int {
	return int(fromBlob[int64](mbNodeGetChildCount.words(n.ptr, wordBool(false), 0, 0)))
}

// Child returns non-internal child i (negative counts from the end), or a
// null Node when out of range.
func (n Node) Child(i int) Node {
	return Node{Object{blobPtr(mbNodeGetChild.words(n.ptr, uint64(int64(i)), wordBool(false), 0))}}
}

// IsInsideTree reports whether n is in the scene tree.
func (n Node) IsInsideTree() bool { return fromBlob[bool](mbNodeIsInsideTree.words(n.ptr, 0, 0, 0)) }

// SetProcess turns the per-frame _process callback on or off.
func (n Node) SetProcess(on bool) { mbNodeSetProcess.words(n.ptr, wordBool(on), 0, 0) }

// SetPhysicsProcess turns the per-physics-frame callback on or off.
func (n Node) SetPhysicsProcess(on bool) { mbNodeSetPhysicsProcess.words(n.ptr, wordBool(on), 0, 0) }

// Name returns n's name (allocates).
func (n Node) Name() string {
	sn := fromBlob[StringName](mbNodeGetName.words(n.ptr, 0, 0, 0))
	defer sn.Destroy()
	return sn.String()
}

// SetName renames n (Node.set_name). Siblings keep unique names: the engine
// adds a number on a clash.
func (n Node) SetName(name string) {
	if mbNodeSetName.usesNew { // 4.5+: StringName argument
		sn := NewStringName(name)
		defer sn.Destroy()
		mbNodeSetName.words(n.ptr, sn.raw, 0, 0)
		return
	}
	s := NewString(name) // 4.4: String argument
	defer s.Destroy()
	mbNodeSetName.words(n.ptr, s.raw, 0, 0)
}

// Node.ProcessMode values (SetProcessMode).
const (
	ProcessModeInherit  = 0
	ProcessModePausable = 1
	ProcessModeAlways   = 3
)

// SetProcessMode sets when n processes (Node.process_mode):
// ProcessModeAlways keeps it running while the tree is paused.
func (n Node) SetProcessMode(mode int64) { mbNodeSetProcessMode.words(n.ptr, uint64(mode), 0, 0) }

// SetProcessPriority sets n's place in the frame's _process calls
// (Node.process_priority): lower runs first; nodes of equal priority run
// in tree order.
func (n Node) SetProcessPriority(priority int64) {
	mbNodeSetProcessPrio.words(n.ptr, uint64(priority), 0, 0)
}

// Node.PhysicsInterpolationMode values (SetPhysicsInterpolationMode).
const (
	PhysicsInterpolationInherit = 0
	PhysicsInterpolationOn      = 1
	PhysicsInterpolationOff     = 2
)

// SetPhysicsInterpolationMode sets whether the engine interpolates n
// between physics ticks when physics interpolation is enabled.
func (n Node) SetPhysicsInterpolationMode(mode int64) {
	mbNodeSetPhysicsInterpolationMode.words(n.ptr, uint64(mode), 0, 0)
}

// ResetPhysicsInterpolation makes the engine draw n at its current
// transform from now on, instead of interpolating from where it was (call
// it after a teleport).
func (n Node) ResetPhysicsInterpolation() { mbNodeResetPhysicsInterpolation.words(n.ptr, 0, 0, 0) }

// UpdateConfigurationWarnings asks the editor to re-read the node's warnings.
func (n Node) UpdateConfigurationWarnings() { mbNodeUpdateConfigurationWarnings.words(n.ptr, 0, 0, 0) }

// GlobalTransform returns the node's transform in world space.
func (n Node3D) GlobalTransform() Transform3D {
	return fromBlob[Transform3D](mbNode3DGetGlobalTransform.words(n.ptr, 0, 0, 0))
}

// SetGlobalTransform places the node in world space.
func (n Node3D) SetGlobalTransform(t Transform3D) { mbNode3DSetGlobalTransform.value(n.ptr, toBlob(t)) }

// GlobalPosition returns the node's origin in world space.
func (n Node3D) GlobalPosition() Vector3 {
	return fromBlob[Vector3](mbNode3DGetGlobalPosition.words(n.ptr, 0, 0, 0))
}

// SetGlobalPosition moves the node's origin in world space.
func (n Node3D) SetGlobalPosition(v Vector3) { mbNode3DSetGlobalPosition.value(n.ptr, toBlob(v)) }

// IsVisible reports the node's own visible flag.
func (n Node3D) IsVisible() bool { return fromBlob[bool](mbNode3DIsVisible.words(n.ptr, 0, 0, 0)) }

// SetVisible shows or hides the node and its children.
func (n Node3D) SetVisible(on bool) { mbNode3DSetVisible.words(n.ptr, wordBool(on), 0, 0) }

// IsVisible reports the item's own visible flag.
func (c CanvasItem) IsVisible() bool {
	return fromBlob[bool](mbCanvasItemIsVisible.words(c.ptr, 0, 0, 0))
}

// SetVisible shows or hides the item and its children.
func (c CanvasItem) SetVisible(on bool) { mbCanvasItemSetVisible.words(c.ptr, wordBool(on), 0, 0) }

// Modulate returns the item's colour multiplier.
func (c CanvasItem) Modulate() Color {
	return fromBlob[Color](mbCanvasItemGetModulate.words(c.ptr, 0, 0, 0))
}

// SetModulate sets the item's colour multiplier (alpha < 1 makes it see-through).
func (c CanvasItem) SetModulate(col Color) { mbCanvasItemSetModulate.value(c.ptr, toBlob(col)) }

// GlobalTransform returns the item's transform in canvas space.
func (c CanvasItem) GlobalTransform() Transform2D {
	return fromBlob[Transform2D](mbCanvasItemGetGlobalTransform.words(c.ptr, 0, 0, 0))
}

// GlobalPosition returns the node's origin in canvas space.
func (n Node2D) GlobalPosition() Vector2 {
	return fromBlob[Vector2](mbNode2DGetGlobalPosition.words(n.ptr, 0, 0, 0))
}

// SetGlobalPosition moves the node's origin in canvas space.
func (n Node2D) SetGlobalPosition(v Vector2) { mbNode2DSetGlobalPosition.value(n.ptr, toBlob(v)) }

// GlobalRotation returns the node's rotation in canvas space, radians.
func (n Node2D) GlobalRotation() float64 {
	return fromBlob[float64](mbNode2DGetGlobalRotation.words(n.ptr, 0, 0, 0))
}

// SetGlobalRotation sets the node's rotation in canvas space, radians.
func (n Node2D) SetGlobalRotation(radians float64) {
	mbNode2DSetGlobalRotation.words(n.ptr, wordFloat(radians), 0, 0)
}

// SetGlobalTransform places the node in canvas space.
func (n Node2D) SetGlobalTransform(t Transform2D) { mbNode2DSetGlobalTransform.value(n.ptr, toBlob(t)) }

// Velocity returns the body's velocity (CharacterBody2D.velocity).
func (b CharacterBody2D) Velocity() Vector2 {
	return fromBlob[Vector2](mbCharacterBody2DGetVelocity.words(b.ptr, 0, 0, 0))
}

// Velocity returns the body's velocity (CharacterBody3D.velocity).
func (b CharacterBody3D) Velocity() Vector3 {
	return fromBlob[Vector3](mbCharacterBody3DGetVelocity.words(b.ptr, 0, 0, 0))
}

// LinearVelocity returns the body's linear velocity.
func (b RigidBody2D) LinearVelocity() Vector2 {
	return fromBlob[Vector2](mbRigidBody2DGetLinearVelocity.words(b.ptr, 0, 0, 0))
}

// LinearVelocity returns the body's linear velocity.
func (b RigidBody3D) LinearVelocity() Vector3 {
	return fromBlob[Vector3](mbRigidBody3DGetLinearVelocity.words(b.ptr, 0, 0, 0))
}

// SetLinearVelocity sets the body's linear velocity.
func (b RigidBody3D) SetLinearVelocity(v Vector3) {
	mbRigidBody3DSetLinearVelocity.value(b.ptr, toBlob(v))
}

// SetLinearVelocity sets the body's linear velocity.
func (b RigidBody2D) SetLinearVelocity(v Vector2) {
	mbRigidBody2DSetLinearVelocity.value(b.ptr, toBlob(v))
}

// SetFreezeEnabled freezes the body (it stops simulating and follows
// where it is placed, per its freeze_mode) or lets it simulate again.
func (b RigidBody3D) SetFreezeEnabled(on bool) {
	mbRigidBody3DSetFreezeEnabled.words(b.ptr, wordBool(on), 0, 0)
}

// SetFreezeEnabled freezes the body or lets it simulate again.
func (b RigidBody2D) SetFreezeEnabled(on bool) {
	mbRigidBody2DSetFreezeEnabled.words(b.ptr, wordBool(on), 0, 0)
}

// Instantiate builds a new node tree from the scene; the caller adds it to
// the tree (or frees it).
func (s PackedScene) Instantiate() Node {
	const editStateDisabled = 0
	return Node{Object{blobPtr(mbPackedSceneInstantiate.words(s.ptr, editStateDisabled, 0, 0))}}
}

// Load loads the resource at path (ResourceLoader.load, cached). The result
// holds one reference: Release it when done.
func Load(path string) (Resource, error) {
	p := NewString(path)
	defer p.Destroy()
	const cacheModeReuse = 1
	var typeHint String // empty
	obj := blobPtr(mbResourceLoaderLoad.words(resourceLoaderSingleton, p.raw, typeHint.raw, cacheModeReuse))
	if obj == nil {
		return Resource{}, fmt.Errorf("load %q: %w", path, errLoadFailed)
	}
	return Resource{RefCounted{Object{obj}}}, nil
}

// IsEditorHint reports whether the code runs inside the editor
// (Engine.is_editor_hint), as opposed to a running game.
func IsEditorHint() bool { return fromBlob[bool](mbEngineIsEditorHint.words(engineSingleton, 0, 0, 0)) }

// HasMainLoop reports whether the engine's main loop exists yet
// (Engine.get_main_loop): not while the engine starts up, yes once a
// library is loaded into a running editor or game.
func HasMainLoop() bool {
	return blobPtr(mbEngineGetMainLoop.words(engineSingleton, 0, 0, 0)) != nil
}

// PhysicsFrames returns the number of physics frames since start-up.
func PhysicsFrames() uint64 {
	return fromBlob[uint64](mbEngineGetPhysicsFrames.words(engineSingleton, 0, 0, 0))
}

// PhysicsTicksPerSecond returns the physics frames per second of wall
// time (Engine.physics_ticks_per_second; 60 by default). The delta passed
// to _physics_process is its inverse times Engine.time_scale.
func PhysicsTicksPerSecond() int {
	return int(fromBlob[int64](mbEngineGetPhysicsTicks.words(engineSingleton, 0, 0, 0)))
}

// ProcessFrames returns the number of process frames since start-up.
func ProcessFrames() uint64 {
	return fromBlob[uint64](mbEngineGetProcessFrames.words(engineSingleton, 0, 0, 0))
}

// TicksUsec returns the engine's monotonic clock in microseconds since
// start-up (Time.get_ticks_usec).
func TicksUsec() uint64 { return fromBlob[uint64](mbTimeGetTicksUsec.words(timeSingleton, 0, 0, 0)) }

// MainThreadID returns the engine's ID of its main thread (OS.get_main_thread_id).
func MainThreadID() uint64 { return fromBlob[uint64](mbOSGetMainThreadID.words(osSingleton, 0, 0, 0)) }

// HasFeature reports whether the running engine has the feature tag
// (OS.has_feature): "double" for double-precision builds, "editor"…
func HasFeature(tag string) bool {
	s := NewString(tag)
	defer s.Destroy()
	return fromBlob[bool](mbOSHasFeature.words(osSingleton, s.raw, 0, 0))
}

// CallerThreadID returns the engine's ID of the calling thread
// (OS.get_thread_caller_id).
func CallerThreadID() uint64 {
	return fromBlob[uint64](mbOSGetThreadCallerID.words(osSingleton, 0, 0, 0))
}

// DebuggerActive reports whether a debugger is attached to the game: it
// runs from the editor, or with --remote-debug (EngineDebugger.is_active).
func DebuggerActive() bool {
	return fromBlob[bool](mbEngineDebuggerIsActive.words(engineDebuggerSingleton, 0, 0, 0))
}

// DebuggerSend sends message ("prefix:name") with data to the attached
// debugger (EngineDebugger.send_message), where an EditorDebuggerPlugin
// that captures the prefix receives it. Check DebuggerActive first: the
// engine prints an error when none is attached.
func DebuggerSend(message string, data Array) {
	m := NewString(message)
	defer m.Destroy()
	mbEngineDebuggerSendMessage.words(engineDebuggerSingleton, m.raw, uint64(data.raw), 0)
}

// ProjectSetting returns the project setting name, with its feature-tag
// overrides (ProjectSettings.get_setting_with_override): Nil when unset.
// Destroy the result.
func ProjectSetting(name string) Variant {
	sn := NewStringName(name)
	defer sn.Destroy()
	return fromBlob[Variant](mbProjectSettingsGetSetting.words(projectSettingsSingleton, uint64(sn.raw), 0, 0))
}
