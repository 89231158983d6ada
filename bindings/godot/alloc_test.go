package godot

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// withFakeBinds gives the method table non-nil binds. Before the engine
// loads, the C helpers return zeroes without calling anything, so the Go side
// and the cgo crossing can be measured on their own.
func withFakeBinds(t *testing.T) {
	t.Helper()
	fake := unsafe.Pointer(new(uint64))
	saved := make([]unsafe.Pointer, len(methodTable))
	for i, m := range methodTable {
		saved[i], m.ptr = m.ptr, fake
	}
	savedEngine, savedTime := engineSingleton, timeSingleton
	engineSingleton, timeSingleton = fake, fake
	t.Cleanup(func() {
		for i, m := range methodTable {
			m.ptr = saved[i]
		}
		engineSingleton, timeSingleton = savedEngine, savedTime
	})
}

// TestHotPathsDoNotAllocate covers what a node does every frame: read and
// write transforms and velocities, toggle visibility, read the clocks, emit a
// signal with scalar and string arguments, check the thread.
func TestHotPathsDoNotAllocate(t *testing.T) {
	withFakeBinds(t)
	obj := unsafe.Pointer(new(uint64))
	n3 := wrapPtr[Node3D](obj)
	n2 := wrapPtr[Node2D](obj)
	body := wrapPtr[CharacterBody3D](obj)
	rigid := wrapPtr[RigidBody2D](obj)
	c := NewClass[busyNode]("AllocProbe")
	sig := NewSignal2[bool, float64](c, "changed", "on", "value")
	named := NewSignal1[string](c, "named", "name")
	tr := Transform3D{Basis: IdentityBasis, Origin: Vector3{1, 2, 3}}

	tests := map[string]func(){
		"Node3D transform": func() { n3.SetGlobalTransform(n3.GlobalTransform()) },
		"Node3D position":  func() { n3.SetGlobalPosition(n3.GlobalPosition()) },
		"Node3D visible":   func() { n3.SetVisible(!n3.IsVisible()) },
		"Node2D pose": func() {
			n2.SetGlobalPosition(n2.GlobalPosition())
			n2.SetGlobalRotation(n2.GlobalRotation())
			n2.SetGlobalTransform(n2.GlobalTransform())
		},
		"velocities":     func() { _, _ = body.Velocity(), rigid.LinearVelocity() },
		"set transform":  func() { n3.SetGlobalTransform(tr) },
		"clocks":         func() { _, _ = PhysicsFrames(), TicksUsec() },
		"parent":         func() { _ = n3.Parent() },
		"main thread":    func() { _ = IsMainThread() },
		"signal scalars": func() { _ = sig.Emit(n3, true, 0.5) },
		"signal string":  func() { _ = named.Emit(n3, "ghost") },
	}
	for name, f := range tests {
		assert.Zero(t, testing.AllocsPerRun(100, f), name)
	}
}
