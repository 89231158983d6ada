// Command extension is the nearzero GDExtension library: built with
// -buildmode=c-shared (./build.sh addon) into
// godot_project/addons/nearzero/bin/, loaded by Godot 4.4+ through
// nearzero.gdextension (entry symbol nearzero_init, from bindings/godot).
// It registers two nodes:
//
//	NetRoom       the connection to the room server and the seat in a room
//	              (client/netroom.Room): signals for every room event, spawns
//	              a scene per remote player.
//	NetPredictor  on the owning player's machine, samples its root each
//	              physics frame and sends (netroom.Local, netcode/sender);
//	              on every other machine, draws its root where the remote
//	              entity is now (netroom.Remote, netcode/predict).
//
// This package is thin glue: it moves values between engine objects and
// client/netroom, where every decision is made and tested without the
// engine.
//
// # Invariants
//
//   - Engine calls happen only in engine callbacks (the main thread); the
//     network runs in client's goroutines, which hand data over to
//     be applied in _process and _physics_process.
//   - One Go runtime per process and no reload (reloadable = false).
//   - All times are on one process clock (procClock), which the network
//     client also stamps arrivals with; physics frames get their time from
//     one FrameClock.
//   - No allocation per frame on the remote entity's path (_process of a
//     remote NetPredictor), nor on the local one's (_physics_process).
package main

import (
	"log/slog"
	"os"
	"runtime/metrics"
	"slices"
	"time"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/netroom"
)

// Process-wide state, touched only on the engine's main thread (except
// procClock, which is safe anywhere).
var (
	// procClock is the local clock of every Room and NetPredictor.
	procClock = netroom.NewWallClock()
	// physClock stamps physics frames; every NetPredictor and
	// NetRoom.physics_server_time share it.
	physClock netroom.FrameClock
	// rooms are the NetRoom nodes inside the tree, for NetPredictors that
	// find none above them; models are the Rooms of live NetRoom nodes, and
	// closing those that said goodbye: both are waited for at shutdown.
	rooms   []*NetRoom
	models  []*netroom.Room
	closing []*netroom.Room
)

// retire lists m among the Rooms saying goodbye, once, and forgets those
// that have finished, so scene changes do not grow the list.
func retire(m *netroom.Room) {
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
	godot.OnSceneDeinit(func() {
		// Let the goodbyes in flight finish so the server sees a clean
		// leave rather than a dropped connection (bounded).
		deadline := time.Now().Add(2 * time.Second)
		for _, m := range append(models, closing...) {
			m.Close()
			m.Wait(time.Until(deadline))
		}
		models, closing = nil, nil
	})
}

func main() {}
