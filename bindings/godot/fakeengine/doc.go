// Package fakeengine is a tiny stand-in for Godot's GDExtension interface,
// for tests of package godot: it calls the binding's real entry symbol,
// records what the binding registers and prints, and drives the binding's C
// callbacks (create/free, virtuals, method call and ptrcall) the way the
// engine does. It models only what the binding uses and is not thread-safe.
//
// Invariants: loading it sets the binding's process-wide engine state, so a
// test that uses it runs in its own process; it never runs Godot code.
package fakeengine
