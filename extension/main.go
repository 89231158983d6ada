// Command extension is the nearzero GDExtension library: built with
// -buildmode=c-shared (./build.sh addon) into
// godot_project/addons/nearzero/bin/, loaded by Godot 4.4+ through
// nearzero.gdextension (entry symbol nearzero_init, from bindings/godot).
// It registers two nodes:
//
//	NetRoom       the connection to the room server and the seat in a room
//	              (client/netroom.Room, the game-side room): signals for
//	              every room event, spawns a scene per remote player.
//	NetPredictor  on the owning player's machine, samples its root each
//	              physics frame and sends (entity.Local, netcode/sender);
//	              on every other machine, draws its root where the remote
//	              entity is now (entity.Remote, netcode/predict).
//
// This package is thin glue: it moves values between engine objects and
// client/netroom (NetRoom's model) and client/entity (NetPredictor's),
// where every decision is made and tested without the engine.
//
// # Invariants
//
//   - Engine calls happen only in engine callbacks on the main thread; the
//     network runs in client/serverlink's and client/direct's goroutines, which hand data over to be
//     applied in _process and _physics_process. A callback on another
//     thread (a node in a process thread group, a scene built on a loader
//     thread) touches no shared state: onMainThread refuses it with an
//     error printed once; what Init and Cleanup share is under globalMu.
//   - After emitting a signal the node checks it still exists (a handler
//     may free() it) before touching anything of it.
//   - A panic in any goroutine is recovered and becomes a room_error
//     signal and a log line (client/serverlink, client/netroom); one in a callback is
//     recovered by bindings/godot and printed.
//   - One Go runtime per process and no reload (reloadable = false).
//   - All times are on one process clock (procClock), which the network
//     client also stamps arrivals with; physics frames get their time from
//     one FrameClock.
//   - No allocation per frame on the remote entity's path (_process of a
//     remote NetPredictor), nor on the local one's (_physics_process), up
//     to the bytes handed to the sockets (client/serverlink's
//     TestSendPathDoesNotAllocate).
package main

import (
	"log/slog"
	"os"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/netcode/version"
)

// offThread remembers which callbacks were refused off the main thread,
// so each is reported once, not every frame.
var offThread sync.Map // where -> struct{}

// onMainThread reports whether the caller runs on the engine's main
// thread. When not, it prints once per callback why it is refused: the
// nodes share their Room and the process lists without locks, and the
// engine may only be called from the main thread for scene work.
func onMainThread(where string) bool {
	if godot.IsMainThread() {
		return true
	}
	if _, seen := offThread.LoadOrStore(where, struct{}{}); !seen {
		offThreadCount.Add(1)
		godot.PrintErrorf("nearzero: %s ran on a thread other than the main thread and was skipped; "+
			"nearzero nodes must run on the main thread: set their Process Thread Group to Main Thread "+
			"(or Inherit under a main-thread parent) and add them to the tree from the main thread", where)
	}
	return false
}

// offThreadCount counts the distinct refusals (tests read it).
var offThreadCount atomic.Int64

// Process-wide state: procClock is safe anywhere; models and closing are
// guarded by globalMu (Init and Cleanup may run on a loader thread); the
// rest is touched on the engine's main thread only.
var (
	globalMu sync.Mutex

	// procClock is the local clock of every Room and NetPredictor.
	procClock = realtime.NewWall()
	// physClock stamps physics frames; every NetPredictor and
	// NetRoom.physics_server_time share it.
	physClock entity.FrameClock
	// rooms are the NetRoom nodes inside the tree, for NetPredictors that
	// find none above them; models are the Rooms of live NetRoom nodes, and
	// closing those that said goodbye: both are waited for at shutdown.
	rooms   []*NetRoom
	models  []*netroom.Room
	closing []*netroom.Room
)

// roomsInTree returns the NetRooms inside the tree (main thread).
func roomsInTree() []*NetRoom { return rooms }

// retire lists m among the Rooms saying goodbye, once, and forgets those
// that have finished, so scene changes do not grow the list.
func retire(m *netroom.Room) {
	globalMu.Lock()
	defer globalMu.Unlock()
	closing = slices.DeleteFunc(closing, func(c *netroom.Room) bool { return c == m || c.Idle() })
	closing = append(closing, m)
}

// logger returns the logger of the network code. It writes warnings and
// errors to the process's stderr (the terminal Godot runs in), not to the
// engine's console: the client logs from its goroutines, which must never
// call the engine. What a player should see arrives as signals instead.
func logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).
		With("nearzero", "net")
}

// physicsNow returns the time of the current physics frame. The step is
// the wall time between physics frames, 1/physics_ticks_per_second: the
// _physics_process delta is scaled by Engine.time_scale, stamps are not.
func physicsNow() time.Duration {
	return physClock.At(godot.PhysicsFrames(), procClock.Now(), physicsStep())
}

// physicsStep returns the wall time between physics frames.
func physicsStep() time.Duration {
	return time.Second / time.Duration(max(godot.PhysicsTicksPerSecond(), 1))
}

// allocSample reads the Go heap's allocation count (made once: reading
// it then allocates nothing).
var allocSample = []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}

// goAllocs returns how many heap objects Go has allocated since start-up:
// a debug figure to check that frames allocate nothing.
func goAllocs() uint64 {
	metrics.Read(allocSample)
	if allocSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return allocSample[0].Value.Uint64()
}

// seconds converts a duration to float seconds for GDScript.
func seconds(d time.Duration) float64 { return d.Seconds() }

// duration converts float seconds from GDScript to a duration.
func duration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func init() {
	godot.Register(netRoomClass, netPredictorClass)
	godot.OnSceneInit(func() error {
		godot.Printf("nearzero %s loaded (Godot %s)", version.Version, godot.VersionString())
		return nil
	})
	godot.OnSceneDeinit(func() {
		// Let the goodbyes in flight finish so the server sees a clean
		// leave rather than a dropped connection (bounded).
		deadline := time.Now().Add(2 * time.Second)
		globalMu.Lock()
		all := append(slices.Clone(models), closing...)
		models, closing = nil, nil
		globalMu.Unlock()
		for _, m := range all {
			m.Close()
			m.Wait(time.Until(deadline))
		}
	})
}

func main() {}
