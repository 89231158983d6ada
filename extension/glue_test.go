package main

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/bindings/godot/fakeengine"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/version"
	"github.com/nearzero/nearzero/netcode/wire"
)

// These tests drive the glue itself on bindings/godot/fakeengine: the real
// entry symbol, class registration, virtuals, methods and signals, on a
// small fake scene tree. Loading the fake sets process-wide state, so each
// runs in a child process.

const glueChildEnv = "NEARZERO_GLUE_CHILD"

func runChild(t *testing.T, name string) {
	t.Helper()
	if os.Getenv(glueChildEnv) == "1" {
		t.Skip("skipped: this is a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), glueChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child process failed:\n%s", out)
	require.Contains(t, string(out), "--- PASS: "+name, "child output:\n%s", out)
}

func TestGlue(t *testing.T) { runChild(t, "TestGlueChild") }

// glueLink is a scriptable netroom.ServerLink for NetRoom on the fake engine.
type glueLink struct {
	mu     sync.Mutex
	events []serverlink.Event
	lag    []serverlink.LagConfig
}

func (l *glueLink) Create(context.Context, *protocol.Settings) (*protocol.Joined, error) {
	return &protocol.Joined{}, nil
}
func (l *glueLink) Join(context.Context, string) (*protocol.Joined, error) {
	return &protocol.Joined{}, nil
}
func (l *glueLink) Leave(context.Context) error              { return nil }
func (l *glueLink) Send(protocol.Message) error              { return nil }
func (l *glueLink) SendState(*wire.State) error              { return nil }
func (l *glueLink) Synced() bool                             { return true }
func (l *glueLink) RTT() time.Duration                       { return time.Millisecond }
func (l *glueLink) Token() string                            { return "tok" }
func (l *glueLink) Close(context.Context) error              { return nil }
func (l *glueLink) ServerTime(t time.Duration) time.Duration { return t }
func (l *glueLink) LocalTime(t time.Duration) time.Duration  { return t }
func (l *glueLink) PollStates(dst []serverlink.RemoteState) []serverlink.RemoteState {
	return dst
}
func (l *glueLink) PollEvents(dst []serverlink.Event) []serverlink.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	dst = append(dst, l.events...)
	l.events = nil
	return dst
}
func (l *glueLink) SetLag(c serverlink.LagConfig) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lag = append(l.lag, c)
	return nil
}
func (l *glueLink) push(m protocol.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, serverlink.Event{Kind: serverlink.EventMessage, Msg: m})
}

// node makes an engine node of class named name.
func node(t *testing.T, class, name string) unsafe.Pointer {
	t.Helper()
	obj := fakeengine.Construct(class)
	require.NotNil(t, obj, class)
	fakeengine.SetName(obj, name)
	return obj
}

// virtual calls the virtual name (no arguments but delta for the process ones).
func virtual(t *testing.T, obj unsafe.Pointer, name string) {
	t.Helper()
	hash := uint32(3218959716)
	var args []unsafe.Pointer
	if strings.Contains(name, "process") {
		hash = 373806689
		delta := 1.0 / 60
		args = []unsafe.Pointer{unsafe.Pointer(&delta)}
	}
	data := fakeengine.VirtualCallData(obj, name, hash)
	require.NotZero(t, data, name)
	fakeengine.CallVirtual(obj, name, data, args, nil)
}

// since returns the records from index from on.
func since(from int) []string { return fakeengine.Records()[from:] }

func contains(rec []string, part string) bool {
	return slices.ContainsFunc(rec, func(r string) bool { return strings.Contains(r, part) })
}

func TestGlueChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestGlue starts")
	}
	// The engine's main thread is the one that ran SCENE init: keep this
	// goroutine on it (and so no t.Run, whose goroutines may move).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	link := &glueLink{}
	dialer = func(ctx context.Context, url string, opts *serverlink.Options) (netroom.ServerLink, error) {
		return link, nil
	}

	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene, godot.LevelEditor} {
		fakeengine.Initialize(uint32(l))
	}
	rec := fakeengine.Records()
	require.False(t, contains(rec, "missing interface"), "%v", rec)

	{ // registration
		assert.True(t, contains(rec, "print nearzero "+version.Version+" loaded"), "the load line names the version")
		for _, want := range []string{
			"constant NetPredictor.MotionProfile.VEHICLE=0",
			"constant NetPredictor.MotionProfile.CHARACTER=1",
			"constant NetPredictor.MotionProfile.CUSTOM=2",
			"constant NetRoom.Status.STATUS_RECONNECTING=3",
			"constant NetRoom.Phase.PHASE_LOBBY=0",
			"constant NetRoom.RoomError.ERROR_ROOM_FULL=4004",
			"property NetPredictor.motion_profile:2 class=NetPredictor.MotionProfile hint=2/Vehicle:0,Character:1,Custom:2,Auto:3 usage=65542",
			"property NetRoom.status:2 class=NetRoom.Status hint=2/Disconnected:0,Connecting:1,Connected:2,Reconnecting:3",
			"property NetPredictor.local:1 class= hint=0/ usage=268435460 set= get=is_local",
			"property NetRoom.synced:1 class= hint=0/ usage=268435460 set= get=is_synced",
			"signal NetRoom.room_error [code:2 class=NetRoom.RoomError hint=0/ usage=65542]",
			"signal NetRoom.phase_changed [phase:2 class=NetRoom.Phase hint=0/ usage=65542]",
			"method NetPredictor.get_room flags=5 args=0 -> 24 class=NetRoom",
			"property NetRoom.version:4",
		} {
			assert.True(t, contains(rec, want), "missing %q", want)
		}
	}

	// A NetRoom made (as a scene loader would) but not yet in the tree:
	// it processes while paused.
	fakeengine.ResetRecords()
	roomObj := fakeengine.Construct("NetRoom")
	assert.True(t, contains(since(0), "process_mode"), "%v", since(0))
	assert.True(t, slices.ContainsFunc(since(0), func(r string) bool { return strings.HasSuffix(r, " 3") }),
		"PROCESS_MODE_ALWAYS by default")
	assert.True(t, slices.ContainsFunc(since(0), func(r string) bool {
		return strings.HasPrefix(r, "process_priority ") && strings.HasSuffix(r, " "+strconv.Itoa(netroom.ProcessPriority))
	}), "routes before the NetPredictors draw: %v", since(0))
	r, ok := fakeengine.Call("NetRoom", "get_version", roomObj)
	require.True(t, ok)
	assert.Equal(t, version.Version, r.String)

	{ // a fed predictor draws, signals, survives a free in a handler
		// No NetRoom in the tree yet: the predictor stays unbound until
		// push_state feeds it.
		world := node(t, "Node", "World")
		ghost := node(t, "Node2D", "Ghost")
		pred := node(t, "NetPredictor", "Net")
		fakeengine.AddChild(world, ghost)
		fakeengine.AddChild(ghost, pred)
		fakeengine.SetInTree(world, true)
		virtual(t, pred, "_ready")
		r, _ := fakeengine.Call("NetPredictor", "is_local", pred)
		assert.Zero(t, r.Int)

		now, _ := fakeengine.Call("NetRoom", "local_time", roomObj)
		from := len(fakeengine.Records())
		push2D(t, pred, now.Float, 100, 50)
		assert.True(t, contains(since(from), "interpolation_mode Ghost 2"), "a drawn root is not interpolated: %v", since(from))
		assert.True(t, contains(since(from), "visible Ghost false"), "hidden until data")
		from = len(fakeengine.Records())
		virtual(t, pred, "_process")
		got := since(from)
		assert.True(t, contains(got, "transform2d Ghost 100 50"), "%v", got)
		assert.True(t, contains(got, "visible Ghost true"))
		assert.True(t, contains(got, "reset_interpolation Ghost"), "shown: drawn from where it is")
		assert.True(t, contains(got, "emit hidden_changed false"))
		assert.True(t, fakeengine.Visible(ghost))

		// A handler that frees the node in hidden_changed: nothing of it
		// is touched after.
		pred2 := node(t, "NetPredictor", "Net2")
		fakeengine.AddChild(ghost, pred2)
		fakeengine.SetInTree(world, true)
		virtual(t, pred2, "_ready")
		push2D(t, pred2, now.Float, 1, 2)
		id := fakeengine.ObjectID(pred2)
		before := godot.InstanceCount()
		fakeengine.FreeOnSignal("hidden_changed")
		from = len(fakeengine.Records())
		virtual(t, pred2, "_process")
		got = since(from)
		assert.True(t, contains(got, "destroy Net2"), "%v", got)
		assert.False(t, fakeengine.Alive(id))
		assert.Equal(t, before-1, godot.InstanceCount(), "Cleanup ran")
		assert.False(t, contains(got, "error"), "no error after the free: %v", got)
	}

	{ // room signals, typed, and a free in a handler
		main := node(t, "Node", "Main")
		fakeengine.AddChild(main, roomObj)
		fakeengine.SetName(roomObj, "Room")
		player := node(t, "Node3D", "Player")
		local := node(t, "NetPredictor", "Local")
		second := node(t, "NetPredictor", "Second")
		fakeengine.AddChild(main, player)
		fakeengine.AddChild(player, local)
		fakeengine.AddChild(player, second)
		fakeengine.SetInTree(main, true)
		virtual(t, roomObj, "_enter_tree")
		virtual(t, local, "_ready")
		r, _ := fakeengine.Call("NetPredictor", "is_local", local)
		assert.Equal(t, int64(1), r.Int, "found the NetRoom beside its ancestor")

		from := len(fakeengine.Records())
		virtual(t, second, "_ready")
		assert.True(t, contains(since(from), "already has an entity"), "a second entity for one player: %v", since(from))

		_, ok := fakeengine.Call("NetRoom", "set_server_address", roomObj, "127.0.0.1:1")
		require.True(t, ok)
		fakeengine.Call("NetRoom", "set_lag_latency_ms", roomObj, 40.0)
		fakeengine.Call("NetRoom", "create_room", roomObj)
		from = len(fakeengine.Records())
		deadline := time.Now().Add(5 * time.Second)
		for !contains(since(from), "emit connected") && time.Now().Before(deadline) {
			virtual(t, roomObj, "_process")
			time.Sleep(time.Millisecond)
		}
		got := since(from)
		assert.True(t, contains(got, "emit room_error 0"), "the second entity reaches room_error: %v", got)
		require.True(t, contains(got, "emit connected"), "%v", got)

		r, _ = fakeengine.Call("NetRoom", "get_status", roomObj)
		assert.Equal(t, int64(netroom.StatusConnected), r.Int, "status is the Status enum")

		// Live lag settings reach the open connection.
		link.mu.Lock()
		link.lag = nil
		link.mu.Unlock()
		fakeengine.Call("NetRoom", "set_lag_enabled", roomObj, true)
		fakeengine.Call("NetRoom", "set_lag_latency_ms", roomObj, 80.0)
		link.mu.Lock()
		assert.Equal(t, []serverlink.LagConfig{{Latency: 40 * time.Millisecond}, {Latency: 80 * time.Millisecond}}, link.lag,
			"applied on the open connection")
		link.mu.Unlock()

		joined := &protocol.Joined{Code: "ABCDEF", Slot: 0, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
			Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{{Slot: 0, Name: "Ann"}}}}
		link.push(joined)
		link.push(&protocol.Error{Code: protocol.CodeRoomFull, Message: "full"})
		from = len(fakeengine.Records())
		virtual(t, roomObj, "_process")
		got = since(from)
		assert.True(t, contains(got, "emit room_joined ABCDEF 0"), "%v", got)
		assert.True(t, contains(got, "emit phase_changed 0 0"), "phase_changed carries PHASE_LOBBY: %v", got)
		assert.True(t, contains(got, "emit room_error 4004 full"), "%v", got)
		r, _ = fakeengine.Call("NetRoom", "get_phase", roomObj)
		assert.Equal(t, int64(0), r.Int)
		r, _ = fakeengine.Call("NetRoom", "is_host", roomObj)
		assert.Equal(t, int64(1), r.Int)

		// A handler frees the NetRoom in player_updated: the rest of the
		// frame's events are dropped, and nothing of it is touched.
		id := fakeengine.ObjectID(roomObj)
		st := joined.Room
		st.Rev = 2
		st.Players = []protocol.PlayerState{{Slot: 0, Name: "Ann", Ready: true}}
		link.push(&st)
		link.push(&protocol.Notice{Kind: "info", Text: "after"})
		fakeengine.FreeOnSignal("player_updated")
		from = len(fakeengine.Records())
		virtual(t, roomObj, "_process")
		got = since(from)
		assert.True(t, contains(got, "destroy Room"), "%v", got)
		assert.False(t, fakeengine.Alive(id))
		assert.False(t, contains(got, "emit notice"), "no emission from a freed node: %v", got)
	}

	{ // leaving the tree (a scene change, the game quitting) emits nothing
		main := node(t, "Node", "Main2")
		room := fakeengine.Construct("NetRoom")
		fakeengine.SetName(room, "Room2")
		fakeengine.AddChild(main, room)
		fakeengine.SetInTree(main, true)
		virtual(t, room, "_enter_tree")
		fakeengine.Call("NetRoom", "set_server_address", room, "127.0.0.1:1")
		fakeengine.Call("NetRoom", "create_room", room)
		from := len(fakeengine.Records())
		deadline := time.Now().Add(5 * time.Second)
		for !contains(since(from), "emit connected") && time.Now().Before(deadline) {
			virtual(t, room, "_process")
			time.Sleep(time.Millisecond)
		}
		link.push(&protocol.Joined{Code: "ABCDEF", Slot: 0, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
			Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{{Slot: 0, Name: "Ann"}}}})
		virtual(t, room, "_process")
		require.True(t, contains(since(from), "emit room_joined"), "%v", since(from))

		from = len(fakeengine.Records())
		virtual(t, room, "_exit_tree")
		got := since(from)
		assert.False(t, contains(got, "emit "), "no signal while leaving the tree: %v", got)
		r, _ := fakeengine.Call("NetRoom", "get_status", room)
		assert.Equal(t, int64(netroom.StatusDisconnected), r.Int, "left and disconnected all the same")
	}

	{ // one lag setting covers every link unless the direct links are set apart
		room := fakeengine.Construct("NetRoom")
		fakeengine.Call("NetRoom", "set_lag_enabled", room, true)
		fakeengine.Call("NetRoom", "set_lag_latency_ms", room, 50.0)
		fakeengine.Call("NetRoom", "set_direct_lag_latency_ms", room, 5.0)
		n, ok := godot.InstanceOf[NetRoom](godot.ObjectFromPtr(room))
		require.True(t, ok)
		r, _ := fakeengine.Call("NetRoom", "get_direct_lag_apart", room)
		assert.Zero(t, r.Int, "together by default")
		r, _ = fakeengine.Call("NetRoom", "get_direct_lag_latency_ms", room)
		assert.Equal(t, 5.0, r.Float, "the own setting is kept")
		assert.False(t, n.model.DirectLagApart())
		fakeengine.Call("NetRoom", "set_direct_lag_apart", room, true)
		assert.True(t, n.model.DirectLagApart())
		assert.Equal(t, 5*time.Millisecond, n.model.DirectLag().Latency)
	}

	{ // callbacks off the main thread are refused once
		n := node(t, "Node3D", "Worker")
		pred := node(t, "NetPredictor", "Net")
		fakeengine.AddChild(n, pred)
		from := len(fakeengine.Records())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // a thread of its own: a process thread group's worker
			defer runtime.UnlockOSThread()
			for range 3 {
				virtual(t, pred, "_physics_process")
			}
		}()
		wg.Wait()
		var refusals []string
		for _, r := range since(from) {
			if strings.Contains(r, "other than the main thread") {
				refusals = append(refusals, r)
			}
		}
		assert.Len(t, refusals, 1, "printed once: %v", since(from))
	}
}

// push2D calls push_state_2d(localTime, Transform2D at (x, y), zero velocity).
func push2D(t *testing.T, pred unsafe.Pointer, localTime float64, x, y float32) {
	t.Helper()
	tr := godot.Transform2D{X: godot.Vector2{X: 1}, Y: godot.Vector2{Y: 1}, Origin: godot.Vector2{X: x, Y: y}}
	var vel godot.Vector2
	ok := fakeengine.Ptrcall("NetPredictor", "push_state_2d", pred,
		[]unsafe.Pointer{unsafe.Pointer(&localTime), unsafe.Pointer(&tr), unsafe.Pointer(&vel)}, nil)
	require.True(t, ok)
}
