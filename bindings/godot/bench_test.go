package godot

import (
	"testing"
	"unsafe"
)

// These measure the Go side of the engine's hot calls (handle lookup, type
// dispatch, argument decoding); the cgo transition itself is measured in the
// engine (see the package report). Both must not allocate.

func BenchmarkVirtualProcessDispatch(b *testing.B) {
	c := NewClass[busyNode]("BenchBusy")
	v := c.info.newValue(nil)
	h := instances.Add(instance{class: c.info, value: v})
	defer instances.Delete(h)
	delta := 1.0 / 60
	args := [1]unsafe.Pointer{unsafe.Pointer(&delta)}
	b.ReportAllocs()
	for b.Loop() {
		in, ok := instanceByHandle(uintptr(h))
		if !ok {
			b.Fatal("lost instance")
		}
		callVirtual(in.value, vProcess, unsafe.Pointer(&args[0]), nil)
	}
}

func BenchmarkMethodPtrcall(b *testing.B) {
	c := NewClass[busyNode]("BenchBusy")
	m := Method2R(c, "add", func(_ *busyNode, a, b int64) int64 { return a + b }, "a", "b").decl
	self := c.info.newValue(nil)
	x, y := int64(1), int64(2)
	var r int64
	args := [2]unsafe.Pointer{unsafe.Pointer(&x), unsafe.Pointer(&y)}
	b.ReportAllocs()
	for b.Loop() {
		m.ptrcall(self, unsafe.Pointer(&args[0]), unsafe.Pointer(&r))
	}
}
