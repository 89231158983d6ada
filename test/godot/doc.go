// Package godottest holds the engine integration test of the Godot addon
// (integration_test.go). It runs only when the environment variable GODOT
// names a Godot 4.4+ binary, and skips, saying so, otherwise:
//
//	GODOT=/path/to/godot go test ./test/godot/ -v
//
// It builds the addon (./build.sh addon), imports a copy of godot_project/
// headless, checks what ClassDB says about NetRoom and NetPredictor, times
// 64 remote NetPredictors in the engine, then runs a room server in-process
// on 127.0.0.1:0 and two headless Godot processes in one room: one moves
// its entity on a circle as a function of the synced server time, the other
// records where it draws it; the test prints the error and bounds it. It
// does so twice: on plain loopback, and with NetRoom's lag simulator adding
// 50 ms (± 5 ms) each way on both players' links, so states are about
// 100 ms old when they arrive.
//
// character_test.go does the same with a character that turns and stops at
// once (tests/char_peer.tscn), 50 and 75 ms one way on every path, and
// prints the error and pops of nearzero and of snap on arrival.
//
// port_test.go plays the porting example (godot_project/examples/port/):
// the same small game on Godot's ENet stack and on nearzero, two processes
// each, which must agree on its outcome; TestPortExampleLines, which needs
// no Godot, counts the lines of both versions for the addon README.
//
// friction_test.go checks, between two headless processes
// (tests/friction_peer.tscn), what the second ported game met: one spawn
// from a handler, the slot a handler reads, Dictionary order, Rect2i
// named, a room of two, the host's reset drawn as one jump, a paddle
// placed for slot 0, the moved-in-_process warning; and a host_local game
// killed (tests/crash_peer.tscn) heard as CONNECTION_LOST. debugger_test.go
// (TestGodotDebuggerTab, also needs xvfb-run) opens the editor with the
// addon's plugin, runs tests/debug_cost.tscn from it, opens Debugger >
// nearzero through a test plugin (testdata/nz_shot), saves a screenshot
// and the CSV (NZ_SHOT_KEEP=DIR keeps them) and prices the samples.
//
// # Invariants
//
//   - Loopback only; every process it starts is killed at the end; the
//     repository's godot_project/ is never written (except its git-ignored
//     bin/ by build.sh), and Godot's user and editor data go to a
//     temporary directory.
//   - Bounded: each step has its own time-out, the whole test a few minutes.
package godottest
