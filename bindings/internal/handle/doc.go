// Package handle maps small integer handles to Go values, so that C code (the
// Godot engine) can hold a reference to a Go value without holding a Go
// pointer: cgo forbids C memory from keeping unpinned Go pointers, and Go's
// garbage collector cannot see references stored there.
//
// A Handle packs a slot index and the slot's generation, so a handle kept
// after its value was deleted never finds the value that reused the slot.
//
// Invariants: the zero Handle is never issued (C code reads 0 as "none");
// Get, Add and Delete are safe for concurrent use (the engine creates and
// frees objects on loader threads too); Get never allocates.
package handle
