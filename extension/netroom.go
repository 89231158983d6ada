package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/protocol"
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
	inTree      bool
	applying    bool // inside apply: a signal handler may free the node
}

var (
	netRoomClass = godot.NewClass[NetRoom]("NetRoom").Icon(iconPath("NetRoom")).Docs(netRoomDocs)

	sigConnected       = godot.NewSignal0(netRoomClass, "connected")
	sigDisconnected    = godot.NewSignal1[string](netRoomClass, "disconnected", "reason")
	sigReconnecting    = godot.NewSignal1[string](netRoomClass, "reconnecting", "reason")
	sigReconnected     = godot.NewSignal0(netRoomClass, "reconnected")
	sigClockSynced     = godot.NewSignal0(netRoomClass, "clock_synced")
	sigRoomJoined      = godot.NewSignal2[string, int64](netRoomClass, "room_joined", "code", "slot")
	sigRoomLeft        = godot.NewSignal0(netRoomClass, "room_left")
	sigRoomError       = godot.NewSignal2[int64, string](netRoomClass, "room_error", "code", "message")
	sigPlayerJoined    = godot.NewSignal2[int64, string](netRoomClass, "player_joined", "slot", "name")
	sigPlayerLeft      = godot.NewSignal1[int64](netRoomClass, "player_left", "slot")
	sigPlayerUpdated   = godot.NewSignal1[int64](netRoomClass, "player_updated", "slot")
	sigHostChanged     = godot.NewSignal1[int64](netRoomClass, "host_changed", "slot")
	sigPhaseChanged    = godot.NewSignal2[string, float64](netRoomClass, "phase_changed", "phase", "next_phase_time")
	sigResults         = godot.NewSignal1[godot.Dictionary](netRoomClass, "results", "results")
	sigNotice          = godot.NewSignal2[string, string](netRoomClass, "notice", "kind", "text")
	sigPlayerSpawned   = godot.NewSignal2[int64, godot.Node](netRoomClass, "player_spawned", "slot", "node")
	sigPlayerDespawned = godot.NewSignal1[int64](netRoomClass, "player_despawned", "slot")
)

// roomErrors are the error codes a script is likely to test, as constants
// of the NetRoom.RoomError enum.
var roomErrors = []struct {
	name string
	code protocol.Code
}{
	{"ERROR_LOCAL", netroom.CodeLocal},
	{"ERROR_UPDATE_REQUIRED", protocol.CodeUpdateRequired},
	{"ERROR_SESSION_REPLACED", protocol.CodeSessionReplaced},
	{"ERROR_ROOM_FULL", protocol.CodeRoomFull},
	{"ERROR_ROOM_NOT_FOUND", protocol.CodeRoomNotFound},
	{"ERROR_SERVER_FULL", protocol.CodeServerFull},
	{"ERROR_DRAINING", protocol.CodeDraining},
	{"ERROR_NOT_HOST", protocol.CodeNotHost},
	{"ERROR_WRONG_PHASE", protocol.CodeWrongPhase},
	{"ERROR_NOT_READY", protocol.CodeNotReady},
	{"ERROR_BAD_NAME", protocol.CodeBadName},
}

func init() {
	c := netRoomClass
	godot.Property(c, "server_address", func(n *NetRoom) string { return n.server },
		func(n *NetRoom, v string) { n.server = v; n.model.SetServer(v); n.UpdateConfigurationWarnings() }).
		Hint(godot.HintPlaceholderText, "ws://127.0.0.1:8787/ws or host:port")
	godot.Property(c, "display_name", func(n *NetRoom) string { return n.name },
		func(n *NetRoom, v string) { n.name = v; _ = n.model.SetName(v) })
	godot.Property(c, "player_scene", func(n *NetRoom) godot.PackedScene { return n.scene.Get() },
		func(n *NetRoom, v godot.PackedScene) { n.scene.Set(v); n.UpdateConfigurationWarnings() })
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

	c.Group("Status", "")
	godot.Property(c, "status", func(n *NetRoom) string { return n.model.Status().String() }, nil)
	godot.Property(c, "room_code", func(n *NetRoom) string { return n.model.Code() }, nil)
	godot.Property(c, "invite_link", func(n *NetRoom) string { return n.model.Invite() }, nil)
	godot.Property(c, "local_slot", func(n *NetRoom) int64 { return int64(n.model.Slot()) }, nil)
	godot.Property(c, "host_slot", func(n *NetRoom) int64 { return int64(n.model.Host()) }, nil)
	godot.Property(c, "is_host", func(n *NetRoom) bool { return n.model.InRoom() && n.model.Host() == n.model.Slot() }, nil)
	godot.Property(c, "phase", func(n *NetRoom) string { return string(n.model.Phase()) }, nil)
	godot.Property(c, "is_synced", func(n *NetRoom) bool { return n.model.Synced() }, nil)
	godot.Property(c, "rtt_ms", func(n *NetRoom) float64 { return float64(n.model.RTT()) / float64(time.Millisecond) }, nil)

	c.Group("Debug", "debug_")
	godot.Property(c, "debug_go_allocations", func(n *NetRoom) int64 { return int64(goAllocs()) }, nil)

	godot.Method0(c, "connect_to_server", func(n *NetRoom) { _ = n.model.Connect() })
	godot.Method0(c, "disconnect_from_server", func(n *NetRoom) { n.model.Disconnect() })
	godot.Method0(c, "create_room", func(n *NetRoom) { _ = n.model.Create() })
	godot.Method1(c, "join_room", func(n *NetRoom, code string) { _ = n.model.Join(code) }, "code")
	godot.Method0(c, "leave_room", func(n *NetRoom) { _ = n.model.Leave() })
	godot.Method1(c, "set_ready", func(n *NetRoom, ready bool) { _ = n.model.SetReady(ready) }, "ready")
	godot.Method1(c, "report_loaded", func(n *NetRoom, progress float64) { _ = n.model.ReportLoaded(progress) }, "progress")
	godot.Method0(c, "report_in_position", func(n *NetRoom) { _ = n.model.ReportInPosition() })
	godot.Method0(c, "start_round", func(n *NetRoom) { _ = n.model.Start() })
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

	for _, e := range roomErrors {
		c.EnumConstant("RoomError", e.name, int64(e.code))
	}
}

// Init makes the model: it exists from creation, so NetPredictors can bind
// to it whatever order the tree readies in.
func (n *NetRoom) Init() {
	n.spawnPath = godot.NewNodePath("..")
	m, err := netroom.New(netroom.Config{Clock: procClock, Log: logger()})
	if err != nil {
		godot.PrintErrorf("NetRoom: %v", err)
		m, _ = netroom.New(netroom.Config{Clock: procClock})
	}
	n.model = m
	models = append(models, m)
}

// Cleanup closes the model (leaving the room) when the node is freed.
func (n *NetRoom) Cleanup() {
	if i := slices.Index(models, n.model); i >= 0 {
		models = slices.Delete(models, i, i+1)
	}
	if n.model.Status() != netroom.StatusDisconnected {
		retire(n.model)
	}
	n.model.Close()
	n.scene.Release()
	n.spawnPath.Destroy()
}

// EnterTree lists the node for NetPredictors that find no NetRoom above.
func (n *NetRoom) EnterTree() {
	n.inTree = true
	rooms = append(rooms, n)
}

// ExitTree leaves the room and disconnects: a NetRoom out of the tree
// draws nothing.
func (n *NetRoom) ExitTree() {
	n.inTree = false
	if i := slices.Index(rooms, n); i >= 0 {
		rooms = slices.Delete(rooms, i, i+1)
	}
	if n.model.Status() != netroom.StatusDisconnected {
		n.model.Quit()
		retire(n.model)
		if !n.applying { // a handler freeing the node: the events go with it
			n.apply(n.model.Update(procClock.Now())) // despawns and signals
		}
	}
}

// Process applies what the network brought since the last frame: signals,
// spawns, and the states for the NetPredictors.
func (n *NetRoom) Process(delta float64) {
	n.apply(n.model.Update(procClock.Now()))
	n.model.Route()
}

// PhysicsProcess fixes the physics frame's time early in the frame.
func (n *NetRoom) PhysicsProcess(delta float64) { physicsNow() }

func (n *NetRoom) applyLag() {
	if !n.lagOn {
		n.model.SetLag(client.LagConfig{})
		return
	}
	n.model.SetLag(client.LagConfig{
		Latency: time.Duration(n.lagLatency * float64(time.Millisecond)),
		Jitter:  time.Duration(n.lagJitter * float64(time.Millisecond)),
		Loss:    n.lagLoss / 100,
	})
}

func (n *NetRoom) serverTime() float64 {
	t, _ := n.model.ServerTime(procClock.Now())
	return seconds(t)
}

func (n *NetRoom) physicsServerTime() float64 {
	t, _ := n.model.ServerTime(physicsNow())
	return seconds(t)
}

// apply turns the model's events into signals and spawns. The events are
// the model's buffer, valid until its next Update: ExitTree does not update
// while apply runs.
func (n *NetRoom) apply(evs []netroom.Event) {
	n.applying = true
	defer func() { n.applying = false }()
	for i := range evs {
		e := &evs[i]
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
		case netroom.EventLeft:
			err = sigRoomLeft.Emit(n)
		case netroom.EventError:
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
			err = sigPhaseChanged.Emit(n, string(e.Phase), seconds(e.Next))
		case netroom.EventResults:
			d := resultsDict(e.Results)
			err = sigResults.Emit(n, d)
			d.Destroy()
		case netroom.EventNotice:
			err = sigNotice.Emit(n, e.Text, e.Detail)
		case netroom.EventSpawn:
			n.spawn(e.Slot)
		case netroom.EventDespawn:
			n.despawn(e.Slot)
		}
		if err != nil {
			godot.PrintErrorf("NetRoom: signal %s: %v", e.Kind, err)
		}
	}
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
func (n *NetRoom) spawn(slot int) {
	scene := n.scene.Get()
	if scene.IsNull() {
		if !n.warnedScene {
			n.warnedScene = true
			godot.PrintWarning("NetRoom: no player_scene set; remote players are not drawn")
		}
		return
	}
	parent := n.spawnParent()
	if parent.IsNull() {
		godot.PrintErrorf("NetRoom: spawn_path %q is not a node; player %d not spawned", n.spawnPath.String(), slot)
		return
	}
	inst := scene.Instantiate()
	if inst.IsNull() {
		godot.PrintErrorf("NetRoom: player_scene did not instantiate; player %d not spawned", slot)
		return
	}
	inst.SetName(fmt.Sprintf("Player%d", slot))
	if bindPredictors(inst, n, slot) == 0 {
		godot.PrintWarningf("NetRoom: player_scene has no NetPredictor; player %d will not move", slot)
	}
	parent.AddChild(inst)
	n.spawned[slot] = inst.ID()
	if err := sigPlayerSpawned.Emit(n, int64(slot), inst); err != nil {
		godot.PrintErrorf("NetRoom: signal player_spawned: %v", err)
	}
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

func (n *NetRoom) despawn(slot int) {
	id := n.spawned[slot]
	n.spawned[slot] = 0
	if node, ok := godot.Cast[godot.Node](id.Object()); ok {
		node.QueueFree()
	}
	if err := sigPlayerDespawned.Emit(n, int64(slot)); err != nil {
		godot.PrintErrorf("NetRoom: signal player_despawned: %v", err)
	}
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
	s := netroom.RoomSetup{Server: n.server, HasPlayerScene: !n.scene.Get().IsNull()}
	if !n.spawnPath.IsEmpty() && n.IsInsideTree() {
		s.SpawnPath = n.spawnPath.String()
		s.SpawnPathOK = !n.GetNodeOrNull(n.spawnPath).IsNull()
	}
	return netroom.RoomWarnings(s)
}
