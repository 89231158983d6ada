package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/version"
)

// NetRoom is the node of a player's connection and seat: the engine side
// of a netroom.Room.
type NetRoom struct {
	godot.Node

	model *netroom.Room // made in Init; closed at ExitTree/Cleanup

	server      string
	name        string
	scene       godot.Ref[godot.PackedScene]
	spawnPath   godot.NodePath
	lagOn       bool
	lagLatency  float64 // ms
	lagJitter   float64 // ms
	lagLoss     float64 // percent
	spawned     [netroom.MaxSlots]godot.ObjectID
	warnedScene bool
	// spawnPending: player_scene was set; the players without a scene
	// get one at the next _process.
	spawnPending bool
	inTree       bool
	applying     bool           // inside apply: a signal handler may free the node
	self         godot.ObjectID // to notice a handler freeing the node
	lan          lanHosting     // hosting.go: the embedded server and UDP relays
	delayMode    int64          // input_delay_mode as set (netroom_delay.go)
	delayMS      float64        // input_delay_ms as set
	ents         roomEntities   // netroom_spawn.go: spawned entities
	dbg          debugFeed      // debugger.go: samples for the editor's debugger
	// settingsRev counts lag setting changes; noEffectChecked is the one
	// warnNoEffect last checked, noEffectWarned what it printed.
	settingsRev, noEffectChecked uint64
	noEffectWarned               []string
}

var (
	netRoomClass = godot.NewClass[NetRoom]("NetRoom").Icon(iconPath("NetRoom")).Docs(netRoomDocs)

	statusEnum = netRoomClass.Enum("Status").
			Value("STATUS_DISCONNECTED", int64(netroom.StatusDisconnected)).
			Value("STATUS_CONNECTING", int64(netroom.StatusConnecting)).
			Value("STATUS_CONNECTED", int64(netroom.StatusConnected)).
			Value("STATUS_RECONNECTING", int64(netroom.StatusReconnecting))
	phaseEnum = newPhaseEnum()
	roomError = newRoomErrorEnum()
	// inputDelayMode's values index inputDelayModes.
	inputDelayMode = netRoomClass.Enum("InputDelayMode").
			Value("INPUT_DELAY_OFF", 0).
			Value("INPUT_DELAY_FIXED", 1).
			Value("INPUT_DELAY_ADAPTIVE", 2)
	connError = newConnErrorEnum()

	sigConnected       = godot.NewSignal0(netRoomClass, "connected")
	sigDisconnected    = godot.NewSignal1[string](netRoomClass, "disconnected", "reason")
	sigReconnecting    = godot.NewSignal1[string](netRoomClass, "reconnecting", "reason")
	sigReconnected     = godot.NewSignal0(netRoomClass, "reconnected")
	sigClockSynced     = godot.NewSignal0(netRoomClass, "clock_synced")
	sigRoomJoined      = godot.NewSignal2[string, int64](netRoomClass, "room_joined", "code", "slot")
	sigRoomLeft        = godot.NewSignal0(netRoomClass, "room_left")
	sigRoomError       = godot.NewSignal2[int64, string](netRoomClass, "room_error", "code", "message").ArgEnum(0, roomError)
	sigConnError       = godot.NewSignal2[int64, string](netRoomClass, "connection_error", "reason", "message").ArgEnum(0, connError)
	sigPlayerJoined    = godot.NewSignal2[int64, string](netRoomClass, "player_joined", "slot", "name")
	sigPlayerLeft      = godot.NewSignal1[int64](netRoomClass, "player_left", "slot")
	sigPlayerUpdated   = godot.NewSignal1[int64](netRoomClass, "player_updated", "slot")
	sigHostChanged     = godot.NewSignal1[int64](netRoomClass, "host_changed", "slot")
	sigPhaseChanged    = godot.NewSignal2[int64, float64](netRoomClass, "phase_changed", "phase", "next_phase_time").ArgEnum(0, phaseEnum)
	sigResults         = godot.NewSignal1[godot.Dictionary](netRoomClass, "results", "results")
	sigNotice          = godot.NewSignal2[string, string](netRoomClass, "notice", "kind", "text")
	sigPlayerSpawned   = godot.NewSignal2[int64, godot.Node](netRoomClass, "player_spawned", "slot", "node")
	sigPlayerDespawned = godot.NewSignal1[int64](netRoomClass, "player_despawned", "slot")
)

// roomErrors are the NetRoom.RoomError enum: ERROR_LOCAL, then every
// protocol error code a room_error may carry, named after it (4012
// implausible is ERROR_IMPLAUSIBLE). TestRoomErrorsComplete checks that
// none is missing.
var roomErrors = func() []struct {
	name string
	code protocol.Code
} {
	out := []struct {
		name string
		code protocol.Code
	}{{"ERROR_LOCAL", netroom.CodeLocal}}
	for _, c := range protocol.Codes() {
		if c >= 4000 && c != protocol.CodeRedirect { // a redirect is followed, never reported
			out = append(out, struct {
				name string
				code protocol.Code
			}{"ERROR_" + strings.ToUpper(c.String()), c})
		}
	}
	return out
}()

// newConnErrorEnum declares NetRoom.ConnectionError: CONNECTION_ and the
// reason's name, in netroom.ConnErrors' order.
func newConnErrorEnum() *godot.ClassEnum {
	e := netRoomClass.Enum("ConnectionError")
	for _, c := range netroom.ConnErrors {
		e.Value("CONNECTION_"+strings.ToUpper(c.String()), int64(c))
	}
	return e
}

// newPhaseEnum declares NetRoom.Phase: PHASE_NONE (-1, not in a room)
// then the room phases in netroom.Phases' order.
func newPhaseEnum() *godot.ClassEnum {
	e := netRoomClass.Enum("Phase").Value("PHASE_NONE", -1)
	for i, ph := range netroom.Phases {
		e.Value("PHASE_"+strings.ToUpper(string(ph)), int64(i))
	}
	return e
}

// newRoomErrorEnum declares NetRoom.RoomError from roomErrors.
func newRoomErrorEnum() *godot.ClassEnum {
	e := netRoomClass.Enum("RoomError")
	for _, re := range roomErrors {
		e.Value(re.name, int64(re.code))
	}
	return e
}

func init() {
	c := netRoomClass
	godot.Property(c, "server_address", func(n *NetRoom) string { return n.server },
		func(n *NetRoom, v string) { n.server = v; n.model.SetServer(v); n.UpdateConfigurationWarnings() }).
		Hint(godot.HintPlaceholderText, "ws://127.0.0.1:8787/ws or host:port")
	godot.Property(c, "server_datagrams", func(n *NetRoom) bool { return n.model.ServerDatagrams() },
		func(n *NetRoom, v bool) { n.model.SetServerDatagrams(v) })
	godot.Property(c, "display_name", func(n *NetRoom) string { return n.name },
		func(n *NetRoom, v string) { n.name = v; _ = n.model.SetName(v) })
	godot.Property(c, "player_scene", func(n *NetRoom) godot.PackedScene { return n.scene.Get() },
		func(n *NetRoom, v godot.PackedScene) {
			n.scene.Set(v)
			// Players already in the room get theirs at the next _process,
			// not inside the setter: a setter may run mid-scene-load.
			n.spawnPending = !v.IsNull()
			n.UpdateConfigurationWarnings()
		})
	godot.Method0R(c, "spawn_players", func(n *NetRoom) int64 { return int64(n.spawnPlayers()) })
	godot.Property(c, "spawn_path", func(n *NetRoom) godot.NodePath { return n.spawnPath.Copy() },
		func(n *NetRoom, v godot.NodePath) {
			n.spawnPath.Destroy()
			n.spawnPath = v.Copy()
			n.UpdateConfigurationWarnings()
		})

	c.Group("Lag Simulator", "lag_")
	godot.Property(c, "lag_enabled", func(n *NetRoom) bool { return n.lagOn },
		func(n *NetRoom, v bool) { n.lagOn = v; n.applyLag() })
	godot.Property(c, "lag_latency_ms", func(n *NetRoom) float64 { return n.lagLatency },
		func(n *NetRoom, v float64) { n.lagLatency = max(v, 0); n.applyLag() }).
		Range(0, 1000, 1, "or_greater", "suffix:ms")
	godot.Property(c, "lag_jitter_ms", func(n *NetRoom) float64 { return n.lagJitter },
		func(n *NetRoom, v float64) { n.lagJitter = max(v, 0); n.applyLag() }).
		Range(0, 500, 1, "or_greater", "suffix:ms")
	godot.Property(c, "lag_loss_percent", func(n *NetRoom) float64 { return n.lagLoss },
		func(n *NetRoom, v float64) { n.lagLoss = min(max(v, 0), 100); n.applyLag() }).
		Range(0, 100, 0.1, "suffix:%")

	registerDirect(c)
	registerInputDelay(c)

	c.Group("Status", "")
	godot.Property(c, "status", func(n *NetRoom) int64 { return int64(n.model.Status()) }, nil).OfEnum(statusEnum, "STATUS_")
	godot.Property(c, "room_code", func(n *NetRoom) string { return n.model.Code() }, nil)
	godot.Property(c, "invite_link", func(n *NetRoom) string { return n.model.Invite() }, nil)
	godot.Property(c, "local_slot", func(n *NetRoom) int64 { return int64(n.model.Slot()) }, nil)
	godot.Property(c, "host_slot", func(n *NetRoom) int64 { return int64(n.model.Host()) }, nil)
	godot.Property(c, "host", func(n *NetRoom) bool { return n.model.InRoom() && n.model.Host() == n.model.Slot() }, nil).
		Getter("is_host")
	godot.Property(c, "phase", func(n *NetRoom) int64 { return int64(netroom.PhaseIndex(n.model.Phase())) }, nil).
		OfEnum(phaseEnum, "PHASE_")
	godot.Property(c, "synced", func(n *NetRoom) bool { return n.model.Synced() }, nil).Getter("is_synced")
	godot.Property(c, "rtt_ms", func(n *NetRoom) float64 { return float64(n.model.RTT()) / float64(time.Millisecond) }, nil)
	godot.Property(c, "server_datagram_up", func(n *NetRoom) bool { return n.model.ServerDatagramUp() }, nil).
		Getter("is_server_datagram_up")
	godot.Property(c, "jitter_ms", func(n *NetRoom) float64 { j, _, _ := n.model.LinkFigures(); return ms(j) }, nil)
	godot.Property(c, "loss_percent", func(n *NetRoom) float64 { _, l, _ := n.model.LinkFigures(); return 100 * l }, nil)
	godot.Property(c, "clock_offset_ms", func(n *NetRoom) float64 {
		off, _ := n.model.ClockOffset(procClock.Now())
		return ms(off)
	}, nil)
	godot.Property(c, "local_server_running", func(n *NetRoom) bool { return n.lan.serverRunning() }, nil).
		Getter("is_local_server_running")
	godot.Property(c, "local_server_address", func(n *NetRoom) string { return n.lan.serverAddress() }, nil)

	godot.Property(c, "version", func(n *NetRoom) string { return version.Version }, nil)

	c.Group("Debug", "debug_")
	godot.Property(c, "debug_go_allocations", func(n *NetRoom) int64 { return int64(goAllocs()) }, nil)

	godot.Method0(c, "connect_to_server", func(n *NetRoom) { _ = n.model.Connect() })
	godot.Method0(c, "disconnect_from_server", func(n *NetRoom) { n.model.Disconnect() })
	godot.Method1(c, "create_room", func(n *NetRoom, maxPlayers int64) { _ = n.model.CreateSized(int(maxPlayers)) },
		"max_players").Defaults(int64(0))
	godot.Method1(c, "join_room", func(n *NetRoom, code string) { _ = n.model.Join(code) }, "code")
	godot.Method0(c, "leave_room", func(n *NetRoom) { _ = n.model.Leave() })
	godot.Method1(c, "set_ready", func(n *NetRoom, ready bool) { _ = n.model.SetReady(ready) }, "ready")
	godot.Method1(c, "report_loaded", func(n *NetRoom, progress float64) { _ = n.model.ReportLoaded(progress) }, "progress")
	godot.Method0(c, "report_in_position", func(n *NetRoom) { _ = n.model.ReportInPosition() })
	godot.Method0(c, "start_round", func(n *NetRoom) { _ = n.model.Start() })
	godot.Method1(c, "kick", func(n *NetRoom, slot int64) {
		if err := n.model.Kick(int(slot)); err != nil {
			godot.PrintError("NetRoom.kick: " + err.Error())
		}
	}, "slot")
	godot.Method1(c, "vote_restart", func(n *NetRoom, restart bool) { _ = n.model.Vote(restart) }, "restart")
	godot.Method1(c, "finish_round", func(n *NetRoom, score float64) { _ = n.model.Finish(score) }, "score")
	godot.Method0R(c, "server_time", (*NetRoom).serverTime).Const()
	godot.Method0R(c, "physics_server_time", (*NetRoom).physicsServerTime).Const()
	godot.Method0R(c, "local_time", func(n *NetRoom) float64 { return seconds(procClock.Now()) }).Const()
	godot.Method1R(c, "time_until", func(n *NetRoom, serverTime float64) float64 {
		return serverTime - n.serverTime()
	}, "server_time").Const()
	godot.Method0R(c, "get_players", (*NetRoom).players).Const()
	godot.Method1R(c, "get_player", func(n *NetRoom, slot int64) godot.Dictionary {
		p, ok := n.model.Player(int(slot))
		if !ok {
			return godot.NewDictionary()
		}
		return n.playerDict(p)
	}, "slot").Const()
	godot.Method1R(c, "get_player_node", func(n *NetRoom, slot int64) godot.Node {
		if slot < 0 || slot >= netroom.MaxSlots {
			return godot.Node{}
		}
		node, _ := godot.Cast[godot.Node](n.spawned[slot].Object())
		return node
	}, "slot").Const()
	godot.Method0R(c, "get_identity_token", func(n *NetRoom) string { return n.model.Token() }).Const()
	godot.Method1(c, "set_identity_token", func(n *NetRoom, token string) { n.model.SetToken(token) }, "token")
}

// Init makes the model: it exists from creation, so NetPredictors can bind
// to it whatever order the tree readies in.
// It may run on a loader thread: it touches only its own node and, under
// globalMu, the list of models.
func (n *NetRoom) Init() {
	n.spawnPath = godot.NewNodePath("..")
	n.self = n.ID()
	// Keep the connection served while the game is paused, like Godot's
	// own multiplayer (the inspector shows it; a scene may change it).
	n.SetProcessMode(godot.ProcessModeAlways)
	// Route the frame's states before any NetPredictor draws, wherever
	// the node sits in the tree (NetPredictor.Frame routes nothing).
	n.SetProcessPriority(netroom.ProcessPriority)
	m, err := netroom.New(netroom.Config{Options: serverlink.Options{Clock: procClock, Log: logger()}, Dial: dialer})
	if err != nil {
		godot.PrintErrorf("NetRoom: %v", err)
		m, _ = netroom.New(netroom.Config{Options: serverlink.Options{Clock: procClock}})
	}
	n.model = m
	globalMu.Lock()
	models = append(models, m)
	globalMu.Unlock()
}

// dialer connects NetRooms to the server (tests replace it with a fake
// link; nil is netroom's default, the real server link).
var dialer netroom.Dialer

// alive reports whether the node still exists: a signal handler may have
// freed it (free(), not queue_free()), and then nothing of it may be touched.
func (n *NetRoom) alive() bool { return !n.self.Object().IsNull() }

// Cleanup closes the model (leaving the room) when the node is freed.
func (n *NetRoom) Cleanup() {
	globalMu.Lock()
	if i := slices.Index(models, n.model); i >= 0 {
		models = slices.Delete(models, i, i+1)
	}
	globalMu.Unlock()
	if n.model.Status() != netroom.StatusDisconnected {
		retire(n.model)
	}
	n.model.Close()
	n.lan.stop()
	n.scene.Release()
	n.spawnPath.Destroy()
}

// EnterTree lists the node for NetPredictors that find no NetRoom above.
func (n *NetRoom) EnterTree() {
	if !onMainThread("NetRoom._enter_tree") {
		return
	}
	n.inTree = true
	rooms = append(rooms, n)
}

// ExitTree leaves the room and disconnects: a NetRoom out of the tree
// draws nothing. It emits no signal: the node is leaving (freed, a scene
// change, the game quitting), and a handler could no longer touch the
// tree. What it spawned is freed quietly.
func (n *NetRoom) ExitTree() {
	if !onMainThread("NetRoom._exit_tree") {
		return
	}
	n.inTree = false
	defer n.lan.stop() // after the goodbye below is on its way
	if i := slices.Index(rooms, n); i >= 0 {
		rooms = slices.Delete(rooms, i, i+1)
	}
	if n.model.Status() != netroom.StatusDisconnected {
		n.model.Quit()
		retire(n.model)
		if !n.applying { // a handler freeing the node: the events go with it
			n.leave(n.model.Update(procClock.Now()))
		}
	}
}

// leave applies the last events of a NetRoom leaving the tree without
// signals: the nodes it spawned for others are freed, nothing else.
func (n *NetRoom) leave(evs []netroom.Event) {
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case netroom.EventDespawn:
			n.freeSpawned(n.spawned[e.Slot])
			n.spawned[e.Slot] = 0
		case netroom.EventEntityDespawned:
			k := netroom.KeyOf(e.Slot, e.Entity)
			n.freeSpawned(n.ents.remote[k])
			delete(n.ents.remote, k)
		case netroom.EventLeft:
			n.ents.local = nil
		}
	}
}

// freeSpawned queues a spawned node's free, if it still exists.
func (n *NetRoom) freeSpawned(id godot.ObjectID) {
	if node, ok := godot.Cast[godot.Node](id.Object()); ok {
		node.QueueFree()
	}
}

// Process applies what the network brought since the last frame: signals,
// spawns, and the states for the NetPredictors.
func (n *NetRoom) Process(delta float64) {
	if !onMainThread("NetRoom._process") {
		return
	}
	if !n.apply(n.model.Update(procClock.Now())) {
		return // freed by a signal handler
	}
	n.warnNoEffect()
	n.despawnFreed() // netroom_spawn.go
	if n.spawnPending {
		n.spawnPending = false
		n.spawnPlayers()
		if !n.alive() {
			return // freed by a player_spawned handler
		}
	}
	n.model.Route()
	n.debugTick() // debugger.go: the editor's nearzero tab, when attached
	if !n.warnedScene {
		if slot, ok := n.model.Undrawn(procClock.Now()); ok && n.scene.Get().IsNull() {
			n.warnedScene = true
			godot.PrintWarningf("NetRoom: player %d's states have arrived for %v with nothing to draw them: set player_scene (players already in the room spawn when it is set) or bind a NetPredictor to slot %d", slot, netroom.UndrawnAfter, slot)
		}
	}
}

// spawnPlayers spawns player_scene for every remote player in the room
// without a live one (netroom.Room.MissingSpawns) and returns how many it
// spawned.
func (n *NetRoom) spawnPlayers() int {
	if n.scene.Get().IsNull() || !n.IsInsideTree() {
		return 0
	}
	count := 0
	for _, slot := range n.model.MissingSpawns(func(slot int) bool { return !n.spawned[slot].Object().IsNull() }) {
		err := n.spawn(slot)
		if !n.alive() {
			return count
		}
		if err != nil {
			godot.PrintErrorf("NetRoom: signal player_spawned: %v", err)
		}
		if !n.spawned[slot].Object().IsNull() {
			count++
		}
	}
	return count
}

// PhysicsProcess fixes the physics frame's time early in the frame.
func (n *NetRoom) PhysicsProcess(delta float64) {
	if onMainThread("NetRoom._physics_process") {
		physicsNow()
	}
}

// applyLag applies the lag simulator settings, live on the open connection.
// The UDP relays (hosting.go) get the same settings.
func (n *NetRoom) applyLag() {
	n.settingsRev++
	var cfg serverlink.LagConfig
	if n.lagOn {
		cfg = serverlink.LagConfig{
			Latency: time.Duration(n.lagLatency * float64(time.Millisecond)),
			Jitter:  time.Duration(n.lagJitter * float64(time.Millisecond)),
			Loss:    n.lagLoss / 100,
		}
	}
	n.lan.setLag(cfg)
	_ = n.model.SetLag(cfg) // an error reaches room_error
}

func (n *NetRoom) serverTime() float64 {
	t, _ := n.model.ServerTime(procClock.Now())
	return seconds(t)
}

func (n *NetRoom) physicsServerTime() float64 {
	t, _ := n.model.ServerTime(physicsNow())
	return seconds(t)
}

// apply turns the model's events into signals and spawns, and reports
// whether the node still exists: a handler that frees it ends the loop, and
// nothing of the node is touched after. The events are the model's buffer,
// valid until its next Update: ExitTree does not update while apply runs.
func (n *NetRoom) apply(evs []netroom.Event) bool {
	n.applying = true
	// n's Go value outlives its engine object, so this write is safe even
	// after a free; only engine calls on n are not. Each signal's handlers
	// read the room as that event left it (netroom.View).
	defer func() { n.applying = false; n.model.ClearView() }()
	for i := range evs {
		e := &evs[i]
		n.model.SetView(e.View)
		var err error
		switch e.Kind {
		case netroom.EventConnected:
			err = sigConnected.Emit(n)
		case netroom.EventDisconnected:
			err = sigDisconnected.Emit(n, e.Text)
		case netroom.EventReconnecting:
			err = sigReconnecting.Emit(n, e.Text)
		case netroom.EventReconnected:
			err = sigReconnected.Emit(n)
		case netroom.EventSynced:
			err = sigClockSynced.Emit(n)
		case netroom.EventJoined:
			err = sigRoomJoined.Emit(n, e.Text, int64(e.Slot))
		case netroom.EventError:
			if e.Internal {
				godot.PrintErrorf("NetRoom: %s", e.Text) // a bug: also in the console, for a report
			}
			err = sigRoomError.Emit(n, int64(e.Code), e.Text)
		case netroom.EventPlayerJoined:
			err = sigPlayerJoined.Emit(n, int64(e.Slot), e.Text)
		case netroom.EventPlayerLeft:
			err = sigPlayerLeft.Emit(n, int64(e.Slot))
		case netroom.EventPlayerUpdated:
			err = sigPlayerUpdated.Emit(n, int64(e.Slot))
		case netroom.EventHostChanged:
			err = sigHostChanged.Emit(n, int64(e.Slot))
		case netroom.EventPhaseChanged:
			err = sigPhaseChanged.Emit(n, int64(netroom.PhaseIndex(e.Phase)), seconds(e.Next))
		case netroom.EventResults:
			d := resultsDict(e.Results)
			err = sigResults.Emit(n, d)
			d.Destroy()
		case netroom.EventNotice:
			err = sigNotice.Emit(n, e.Text, e.Detail)
		case netroom.EventSpawn:
			if n.spawned[e.Slot].Object().IsNull() { // a handler's spawn_players() may have spawned it
				err = n.spawn(e.Slot)
			}
		case netroom.EventConnectionError:
			err = sigConnError.Emit(n, int64(e.Conn), e.Text)
		case netroom.EventDespawn:
			err = n.despawn(e.Slot)
		case netroom.EventGameEvent, netroom.EventChat, netroom.EventHit, netroom.EventProp:
			err = n.emitGameEvent(e) // events.go
		case netroom.EventEntitySpawned:
			err = n.spawnRemoteEntity(e) // netroom_spawn.go
		case netroom.EventEntityDespawned:
			err = n.despawnRemoteEntity(e)
		case netroom.EventLeft:
			n.ents.local = nil // our spawns end with the room
			err = sigRoomLeft.Emit(n)
		}
		if !n.alive() {
			return false // n's engine object is freed: no more engine calls on it
		}
		if err != nil {
			godot.PrintErrorf("NetRoom: signal %s: %v", e.Kind, err)
		}
	}
	return true
}

// spawnParent returns the node spawned scenes go under.
func (n *NetRoom) spawnParent() godot.Node {
	if n.spawnPath.IsEmpty() {
		return n.Parent()
	}
	return n.GetNodeOrNull(n.spawnPath)
}

// spawn instantiates the player scene for slot, binds its NetPredictors
// to that player, and adds it under spawn_path.
// It returns the error of the player_spawned emission.
func (n *NetRoom) spawn(slot int) error {
	scene := n.scene.Get()
	if scene.IsNull() {
		return nil // spawned when player_scene is set; Process warns if states go undrawn
	}
	parent := n.spawnParent()
	if parent.IsNull() {
		godot.PrintErrorf("NetRoom: spawn_path %q is not a node; player %d not spawned", n.spawnPath.String(), slot)
		return nil
	}
	inst := scene.Instantiate()
	if inst.IsNull() {
		godot.PrintErrorf("NetRoom: player_scene did not instantiate; player %d not spawned", slot)
		return nil
	}
	inst.SetName(fmt.Sprintf("Player%d", slot))
	if bindPredictors(inst, n, slot) == 0 {
		godot.PrintWarningf("NetRoom: player_scene has no NetPredictor; player %d will not move", slot)
	}
	n.spawned[slot] = inst.ID()
	parent.AddChild(inst) // runs the scene's _ready, which may free n
	if !n.alive() {
		return nil
	}
	n.applyKeptProps(slot, 0) // synced.go: values that came before the scene
	for _, p := range predictorsIn(inst, nil) {
		if id, shared := p.m.Entity(); id != 0 && !shared {
			n.applyKeptProps(slot, id) // a second entity in the player's scene
		}
	}
	return sigPlayerSpawned.Emit(n, int64(slot), inst)
}

// bindPredictors binds every NetPredictor in the tree at node to slot.
func bindPredictors(node godot.Node, room *NetRoom, slot int) int {
	count := 0
	if p, ok := godot.InstanceOf[NetPredictor](node); ok {
		p.bindRemote(room.model, slot)
		count++
	}
	for i := range node.ChildCount() {
		count += bindPredictors(node.Child(i), room, slot)
	}
	return count
}

// despawn frees slot's scene and returns the error of the
// player_despawned emission.
func (n *NetRoom) despawn(slot int) error {
	n.freeSpawned(n.spawned[slot])
	n.spawned[slot] = 0
	return sigPlayerDespawned.Emit(n, int64(slot))
}

// players returns the seats as an Array of Dictionaries.
func (n *NetRoom) players() godot.Array {
	a := godot.NewArray()
	for _, p := range n.model.Players() {
		d := n.playerDict(p)
		v := godot.NewVariant(d)
		a.Append(v)
		v.Destroy()
		d.Destroy()
	}
	return a
}

func (n *NetRoom) playerDict(p protocol.PlayerState) godot.Dictionary {
	d := godot.NewDictionary()
	godot.DictionarySet(d, "slot", int64(p.Slot))
	godot.DictionarySet(d, "name", p.Name)
	godot.DictionarySet(d, "user", p.User)
	godot.DictionarySet(d, "connected", p.Connected)
	godot.DictionarySet(d, "loaded", p.Loaded)
	godot.DictionarySet(d, "ready", p.Ready)
	godot.DictionarySet(d, "participant", p.Participant)
	godot.DictionarySet(d, "in_position", p.InPosition)
	godot.DictionarySet(d, "finished", p.Finished)
	godot.DictionarySet(d, "voted", p.Voted)
	godot.DictionarySet(d, "is_host", p.Slot == n.model.Host())
	godot.DictionarySet(d, "is_local", p.Slot == n.model.Slot())
	return d
}

// resultsDict converts a round's results for the results signal.
func resultsDict(r *protocol.Results) godot.Dictionary {
	d := godot.NewDictionary()
	godot.DictionarySet(d, "code", r.Code)
	godot.DictionarySet(d, "round", int64(r.Round))
	godot.DictionarySet(d, "aborted", r.Aborted)
	godot.DictionarySet(d, "start_time", seconds(protocol.DurationUS(r.StartUS)))
	godot.DictionarySet(d, "end_time", seconds(protocol.DurationUS(r.EndUS)))
	godot.DictionarySet(d, "round_limit", seconds(protocol.DurationUS(r.RoundUS)))
	players := godot.NewArray()
	for _, p := range r.Players {
		pd := godot.NewDictionary()
		godot.DictionarySet(pd, "slot", int64(p.Slot))
		godot.DictionarySet(pd, "user", p.User)
		godot.DictionarySet(pd, "name", p.Name)
		godot.DictionarySet(pd, "status", p.Status)
		godot.DictionarySet(pd, "time", seconds(protocol.DurationUS(p.TimeUS)))
		godot.DictionarySet(pd, "score", p.Score)
		godot.DictionarySet(pd, "place", int64(p.Place))
		v := godot.NewVariant(pd)
		players.Append(v)
		v.Destroy()
		pd.Destroy()
	}
	godot.DictionarySet(d, "players", players)
	players.Destroy()
	return d
}

// ConfigurationWarnings are shown on the node in the editor.
func (n *NetRoom) ConfigurationWarnings() []string {
	s := n.setup()
	if !n.spawnPath.IsEmpty() && n.IsInsideTree() {
		s.SpawnPath = n.spawnPath.String()
		s.SpawnPathOK = !n.GetNodeOrNull(n.spawnPath).IsNull()
	}
	if n.IsInsideTree() {
		for _, e := range n.ents.scenes {
			// Only entries naming a parent: the others use spawn_path, warned above.
			if scene, path := netroom.ParseSpawnable(e); scene != "" && path != "" {
				if parent, _ := n.entityParent(scene); parent.IsNull() {
					s.LostParents = append(s.LostParents, e)
				}
			}
		}
	}
	return netroom.RoomWarnings(s)
}

// setup is what the model's warnings need of the node's settings.
func (n *NetRoom) setup() netroom.RoomSetup {
	return netroom.RoomSetup{Server: n.server, HasPlayerScene: !n.scene.Get().IsNull(),
		Lag:   netroom.LagConfig{Latency: fromMs(n.lagLatency), Jitter: fromMs(n.lagJitter), Loss: n.lagLoss / 100},
		LagOn: n.lagOn, DirectLag: n.model.DirectLag(), DirectLagApart: n.model.DirectLagApart()}
}

// warnNoEffect prints, once each, the settings a running game set that
// have no effect as the others stand (netroom.NoEffect): a game that set
// direct_lag_latency_ms alone had it ignored without a word. Checked each
// frame, cheaply, so that settings made in any order settle first.
func (n *NetRoom) warnNoEffect() {
	if n.noEffectChecked == n.settingsRev {
		return
	}
	n.noEffectChecked = n.settingsRev
	for _, w := range netroom.NoEffect(n.setup()) {
		if !slices.Contains(n.noEffectWarned, w) {
			n.noEffectWarned = append(n.noEffectWarned, w)
			godot.PrintWarning("NetRoom " + n.Name() + ": " + w)
		}
	}
}
