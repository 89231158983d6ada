package main

import (
	"time"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// mode is what a NetPredictor does.
type mode uint8

const (
	// modeUnbound: no NetRoom found yet (looked for again each second).
	modeUnbound mode = iota
	// modeLocal: the owning player's entity: sample and send.
	modeLocal
	// modeRemote: a remote player's entity, bound by the NetRoom that
	// spawned its scene: draw it.
	modeRemote
	// modeFed: no room; push_state feeds it: draw it.
	modeFed
)

func (m mode) String() string {
	return [...]string{"unbound", "local", "remote", "fed"}[m]
}

// rootKind is what the root node is.
type rootKind uint8

const (
	rootNone rootKind = iota
	root3D
	root2D
)

// velKind says where the root's velocity comes from.
type velKind uint8

const (
	velDerived velKind = iota // from positions (netcode/sender)
	velCharacter3D
	velRigid3D
	velCharacter2D
	velRigid2D
)

// roomSearchEvery is how many physics frames an unbound NetPredictor waits
// between looks for a NetRoom.
const roomSearchEvery = 60

// NetPredictor is the node of one networked entity: the engine side of a
// netroom.Local (owning machine) or netroom.Remote (everyone else).
type NetPredictor struct {
	godot.Node

	rootPath, roomPath godot.NodePath

	// Settings (inspector).
	profile    netroom.Profile
	pcfg       predict.Config // TeleportDistance and Width 0: per dimension
	sendRate   float64
	applyVis   bool
	ghostAlpha float64
	anim       int64
	input      int64
	extrasSet  bool

	// Binding.
	mode    mode
	room    *netroom.Room
	slot    int
	remote  *netroom.Remote
	local   *netroom.Local
	dirty   bool // settings changed since remote/local were made
	search  int  // physics frames until the next room search
	pushSeq wire.Seq
	ready   bool

	// Root.
	kind    rootKind
	vel     velKind
	rootID  godot.ObjectID
	root3   godot.Node3D
	root2   godot.Node2D
	scale3  [3]float32
	scale2  [2]float32
	modul   godot.Color // the 2D root's own modulate, for ghosts
	visible bool        // the root's visible flag, as read at resolve or last applied

	// Debug figures.
	frameUsec float64
	states    uint64
	cfgErr    error
}

var (
	netPredictorClass = godot.NewClass[NetPredictor]("NetPredictor").Icon(iconPath("NetPredictor")).Docs(netPredictorDocs)

	sigGhostChanged  = godot.NewSignal1[bool](netPredictorClass, "ghost_changed", "ghost")
	sigHiddenChanged = godot.NewSignal1[bool](netPredictorClass, "hidden_changed", "hidden")
	sigSnapped       = godot.NewSignal0(netPredictorClass, "snapped")
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fromMs(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// msProperty declares a duration setting shown in milliseconds.
func msProperty(name string, field func(*NetPredictor) *time.Duration, max float64, then func(*NetPredictor)) {
	godot.Property(netPredictorClass, name,
		func(p *NetPredictor) float64 { return ms(*field(p)) },
		func(p *NetPredictor, v float64) {
			*field(p) = fromMs(max0(v))
			if then != nil {
				then(p)
			}
			p.changed()
		}).Range(1, max, 1, "or_greater", "suffix:ms")
}

func max0(v float64) float64 { return max(v, 0) }

func init() {
	c := netPredictorClass
	godot.Property(c, "root_path", func(p *NetPredictor) godot.NodePath { return p.rootPath.Copy() },
		func(p *NetPredictor, v godot.NodePath) {
			p.rootPath.Destroy()
			p.rootPath = v.Copy()
			p.kind = rootNone
			if p.ready && p.IsInsideTree() {
				// A new root at run time: Ready resolved the old one, and
				// its dimension may differ.
				p.resolveRoot()
				p.dirty = true
			}
			p.UpdateConfigurationWarnings()
		}).Hint(godot.HintNodePathTypes, "Node3D,Node2D")
	godot.Property(c, "room_path", func(p *NetPredictor) godot.NodePath { return p.roomPath.Copy() },
		func(p *NetPredictor, v godot.NodePath) {
			p.roomPath.Destroy()
			p.roomPath = v.Copy()
			p.UpdateConfigurationWarnings()
		}).Hint(godot.HintNodePathTypes, "NetRoom")
	godot.Property(c, "send_rate", func(p *NetPredictor) float64 { return p.sendRate },
		func(p *NetPredictor, v float64) { p.sendRate = v; p.changed() }).
		Range(1, sender.MaxRate, 1, "suffix:Hz")

	c.Group("Prediction", "")
	godot.Property(c, "motion_profile", func(p *NetPredictor) int64 { return int64(p.profile) },
		(*NetPredictor).setProfile).Enum("Vehicle", "Character", "Custom")
	keepProfile := func(p *NetPredictor) {
		if c, t, ok := p.profile.Preset(); ok && (c != p.pcfg.PredictionCap || t != p.pcfg.SmoothingTau) {
			p.profile = netroom.ProfileCustom
			p.NotifyPropertyListChanged()
		}
	}
	msProperty("prediction_cap_ms", func(p *NetPredictor) *time.Duration { return &p.pcfg.PredictionCap }, 2000, keepProfile)
	msProperty("coast_until_ms", func(p *NetPredictor) *time.Duration { return &p.pcfg.CoastUntil }, 5000, nil)
	msProperty("path_margin_ms", func(p *NetPredictor) *time.Duration { return &p.pcfg.PathMargin }, 500, nil)
	msProperty("direct_outage_ms", func(p *NetPredictor) *time.Duration { return &p.pcfg.DirectOutage }, 1000, nil)

	c.Group("Smoothing", "")
	msProperty("smoothing_tau_ms", func(p *NetPredictor) *time.Duration { return &p.pcfg.SmoothingTau }, 1000, keepProfile)
	godot.Property(c, "teleport_distance", func(p *NetPredictor) float64 { return p.pcfg.TeleportDistance },
		func(p *NetPredictor, v float64) { p.pcfg.TeleportDistance = max0(v); p.changed() }).
		Range(0, 1000, 0.01, "or_greater")

	c.Group("Visibility", "")
	msProperty("ghost_after_ms", func(p *NetPredictor) *time.Duration { return &p.pcfg.GhostAfter }, 5000, nil)
	msProperty("hide_after_ms", func(p *NetPredictor) *time.Duration { return &p.pcfg.HideAfter }, 10000, nil)
	msProperty("contact_trust_ms", func(p *NetPredictor) *time.Duration { return &p.pcfg.ContactTrust }, 2000, nil)
	godot.Property(c, "entity_width", func(p *NetPredictor) float64 { return p.pcfg.Width },
		func(p *NetPredictor, v float64) { p.pcfg.Width = max0(v); p.changed() }).
		Range(0, 100, 0.01, "or_greater")
	godot.Property(c, "apply_visibility", func(p *NetPredictor) bool { return p.applyVis },
		func(p *NetPredictor, v bool) { p.applyVis = v })
	godot.Property(c, "ghost_alpha", func(p *NetPredictor) float64 { return p.ghostAlpha },
		func(p *NetPredictor, v float64) { p.ghostAlpha = min(max(v, 0), 1) }).Range(0, 1, 0.01)

	c.Group("Extras", "")
	godot.Property(c, "anim_state", (*NetPredictor).animState,
		func(p *NetPredictor, v int64) { p.anim = min(max(v, 0), 255); p.applyExtras() }).Range(0, 255, 1)
	godot.Property(c, "input_bits", (*NetPredictor).inputBits,
		func(p *NetPredictor, v int64) { p.input = min(max(v, 0), 255); p.applyExtras() }).Range(0, 255, 1)

	c.Group("Debug", "")
	godot.Property(c, "is_local", func(p *NetPredictor) bool { return p.mode == modeLocal }, nil)
	godot.Property(c, "slot", func(p *NetPredictor) int64 { return int64(p.ownerSlot()) }, nil)
	godot.Property(c, "is_ghost", func(p *NetPredictor) bool { return p.remote != nil && p.remote.Ghost() }, nil)
	godot.Property(c, "is_hidden", func(p *NetPredictor) bool { return p.remote != nil && p.remote.Hidden() }, nil)
	godot.Property(c, "collidable", func(p *NetPredictor) bool {
		return p.mode == modeLocal || (p.remote != nil && p.remote.Pose().Collidable)
	}, nil)
	godot.Property(c, "debug_age_ms", func(p *NetPredictor) float64 { return ms(p.pose().Age) }, nil)
	godot.Property(c, "debug_since_arrival_ms", func(p *NetPredictor) float64 { return ms(p.pose().SinceArrival) }, nil)
	godot.Property(c, "debug_correction", func(p *NetPredictor) float64 { return p.pose().Correction }, nil)
	godot.Property(c, "debug_path", func(p *NetPredictor) string {
		if p.remote == nil {
			return ""
		}
		return p.pose().Path.String()
	}, nil)
	godot.Property(c, "debug_jitter_ms", func(p *NetPredictor) float64 { return ms(p.pose().Jitter) }, nil)
	godot.Property(c, "debug_past_cap", func(p *NetPredictor) bool { return p.pose().PastCap }, nil)
	godot.Property(c, "debug_states", func(p *NetPredictor) int64 { return int64(p.states) }, nil)
	godot.Property(c, "debug_frame_usec", func(p *NetPredictor) float64 { return p.frameUsec }, nil)

	godot.Method0(c, "teleport", func(p *NetPredictor) {
		if p.local != nil {
			p.local.Teleport()
		}
	})
	godot.Method3(c, "push_state", func(p *NetPredictor, localTime float64, tr godot.Transform3D, vel godot.Vector3) {
		p.push(localTime, vec3From(tr.Origin), quatFrom(tr.Basis.Quaternion()), vec3From(vel))
	}, "local_time", "transform", "velocity")
	godot.Method3(c, "push_state_2d", func(p *NetPredictor, localTime float64, tr godot.Transform2D, vel godot.Vector2) {
		p.push(localTime, vec2From(tr.Origin), geom.Angle2D(float64(tr.Rotation())), vec2From(vel))
	}, "local_time", "transform", "velocity")
	godot.Method0R(c, "get_room", func(p *NetPredictor) godot.Node {
		if r := p.findRoom(); r != nil && r.model == p.room {
			return r.Node
		}
		return godot.Node{}
	}).Const()
}

// Init sets the defaults: the netcode packages' defaults, so the
// inspector shows the same numbers.
func (p *NetPredictor) Init() {
	p.rootPath = godot.NewNodePath("..")
	p.pcfg = predict.DefaultConfig(false)
	p.pcfg.TeleportDistance, p.pcfg.Width = 0, 0 // per dimension, at bind
	p.profile = netroom.ProfileVehicle
	p.sendRate = sender.DefaultRate
	p.applyVis = true
	p.ghostAlpha = 0.5
	p.slot = -1
	p.visible = true
}

// Cleanup releases the engine values the node holds.
func (p *NetPredictor) Cleanup() {
	p.rootPath.Destroy()
	p.roomPath.Destroy()
}

func (p *NetPredictor) setProfile(v int64) {
	p.profile = netroom.Profile(v)
	if c, t, ok := p.profile.Preset(); ok {
		p.pcfg.PredictionCap, p.pcfg.SmoothingTau = c, t
	}
	p.NotifyPropertyListChanged()
	p.changed()
}

// changed marks the settings as changed: the predictor or sender is
// rebuilt before its next use (its buffered samples are dropped).
func (p *NetPredictor) changed() {
	p.dirty = true
	p.UpdateConfigurationWarnings()
}

// bindRemote is called by the NetRoom that spawned this node's scene,
// before the scene enters the tree.
func (p *NetPredictor) bindRemote(room *netroom.Room, slot int) {
	p.mode, p.room, p.slot = modeRemote, room, slot
}

func (p *NetPredictor) ownerSlot() int {
	switch p.mode {
	case modeRemote:
		return p.slot
	case modeLocal:
		return p.room.Slot()
	}
	return -1
}

func (p *NetPredictor) pose() predict.Pose {
	if p.remote == nil {
		return predict.Pose{}
	}
	return p.remote.Pose()
}

func (p *NetPredictor) animState() int64 {
	if p.remote != nil {
		return int64(p.remote.Pose().Anim)
	}
	return p.anim
}

func (p *NetPredictor) inputBits() int64 {
	if p.remote != nil {
		return int64(p.remote.Pose().Input)
	}
	return p.input
}

func (p *NetPredictor) applyExtras() {
	p.extrasSet = true
	if p.local != nil {
		p.local.SetExtras(uint8(p.anim), uint8(p.input))
	}
}

// Ready finds the root and, unless a NetRoom bound this node as a remote
// player's, the NetRoom to send through.
func (p *NetPredictor) Ready() {
	p.ready = true
	p.resolveRoot()
	if p.mode == modeUnbound {
		if r := p.findRoom(); r != nil {
			p.mode, p.room = modeLocal, r.model
		}
	}
	p.build()
}

// ExitTree unbinds a remote entity from its room.
func (p *NetPredictor) ExitTree() {
	if p.mode == modeRemote && p.room != nil {
		p.room.Unbind(p.slot, p.remote)
	}
}

// EnterTree binds a remote entity again after a reparent.
func (p *NetPredictor) EnterTree() {
	if p.ready && p.mode == modeRemote && p.room != nil && p.remote != nil {
		_ = p.room.Bind(p.slot, p.remote)
	}
}

// resolveRoot finds the node root_path points to and what it is.
func (p *NetPredictor) resolveRoot() {
	p.kind, p.vel, p.rootID = rootNone, velDerived, 0
	node := p.GetNodeOrNull(p.rootPath)
	if node.IsNull() {
		godot.PrintErrorf("NetPredictor %s: root_path %q is not a node", p.Name(), p.rootPath.String())
		return
	}
	p.rootID = node.ID()
	if n3, ok := godot.Cast[godot.Node3D](node); ok {
		p.kind, p.root3, p.visible = root3D, n3, n3.IsVisible()
		b := n3.GlobalTransform().Basis
		for i := range 3 {
			p.scale3[i] = length3(b.Column(i))
		}
		if _, ok := godot.Cast[godot.CharacterBody3D](node); ok {
			p.vel = velCharacter3D
		} else if _, ok := godot.Cast[godot.RigidBody3D](node); ok {
			p.vel = velRigid3D
		}
		return
	}
	if n2, ok := godot.Cast[godot.Node2D](node); ok {
		p.kind, p.root2, p.visible = root2D, n2, n2.IsVisible()
		t := n2.GlobalTransform()
		p.scale2 = [2]float32{length2(t.X), length2(t.Y)}
		p.modul = n2.Modulate()
		if _, ok := godot.Cast[godot.CharacterBody2D](node); ok {
			p.vel = velCharacter2D
		} else if _, ok := godot.Cast[godot.RigidBody2D](node); ok {
			p.vel = velRigid2D
		}
		return
	}
	godot.PrintErrorf("NetPredictor %s: root %s is a %s, not a Node3D or Node2D", p.Name(), node.Name(), node.ClassName())
}

// rootAlive reports whether the root still exists.
func (p *NetPredictor) rootAlive() bool {
	return p.kind != rootNone && !p.rootID.Object().IsNull()
}

// findRoom returns the NetRoom this node sends through: room_path when
// set; else the nearest NetRoom that is an ancestor or a child of an
// ancestor; else the only NetRoom in the tree.
func (p *NetPredictor) findRoom() *NetRoom {
	if !p.roomPath.IsEmpty() {
		r, _ := godot.InstanceOf[NetRoom](p.GetNodeOrNull(p.roomPath))
		return r
	}
	if r := roomAbove(p.Node); r != nil {
		return r
	}
	if len(rooms) == 1 {
		return rooms[0]
	}
	return nil
}

// roomAbove returns the nearest NetRoom that is an ancestor of n or a
// child of one.
func roomAbove(n godot.Node) *NetRoom {
	for a := n.Parent(); !a.IsNull(); a = a.Parent() {
		if r, ok := godot.InstanceOf[NetRoom](a); ok {
			return r
		}
		for i := range a.ChildCount() {
			if r, ok := godot.InstanceOf[NetRoom](a.Child(i)); ok {
				return r
			}
		}
	}
	return nil
}

// predictConfig is the predictor configuration for the root's dimension.
func (p *NetPredictor) predictConfig() predict.Config {
	cfg := p.pcfg
	cfg.Dim2D = p.kind == root2D
	return cfg
}

// build makes the Remote or Local for the current mode and settings.
func (p *NetPredictor) build() {
	p.dirty = false
	switch p.mode {
	case modeRemote, modeFed:
		rem, err := netroom.NewRemote(p.predictConfig())
		if err != nil {
			p.reportConfig(err)
			rem, _ = netroom.NewRemote(predict.Config{Dim2D: p.kind == root2D})
		}
		if p.mode == modeRemote && p.room != nil {
			p.room.Unbind(p.slot, p.remote)
			_ = p.room.Bind(p.slot, rem)
		}
		p.remote = rem
		p.setVisible(false) // hidden until data arrives
	case modeLocal:
		loc, err := netroom.NewLocal(sender.Config{Dim2D: p.kind == root2D, Rate: p.sendRate})
		if err != nil {
			p.reportConfig(err)
			loc, _ = netroom.NewLocal(sender.Config{Dim2D: p.kind == root2D})
		}
		if p.extrasSet {
			loc.SetExtras(uint8(p.anim), uint8(p.input))
		}
		p.local = loc
	}
}

func (p *NetPredictor) reportConfig(err error) {
	if p.cfgErr == nil || p.cfgErr.Error() != err.Error() {
		godot.PrintErrorf("NetPredictor %s: %v; using the defaults", p.Name(), err)
	}
	p.cfgErr = err
}

// Process draws a remote entity: route what arrived, ask the predictor
// where it is now, place the root there.
func (p *NetPredictor) Process(delta float64) {
	if p.mode != modeRemote && p.mode != modeFed {
		return
	}
	start := procClock.Now()
	if p.dirty {
		p.build()
	}
	if p.room != nil {
		p.room.Route()
	}
	pose, ch := p.remote.Frame(start)
	if !p.rootAlive() {
		return
	}
	if pose.Valid {
		p.place(&pose)
	}
	if ch != 0 {
		p.signal(ch)
	}
	p.states = p.remote.Added()
	p.frameUsec = float64(procClock.Now()-start) / float64(time.Microsecond)
}

// place moves the root to the pose, keeping its scale.
func (p *NetPredictor) place(pose *predict.Pose) {
	switch p.kind {
	case root3D:
		p.root3.SetGlobalTransform(godot.Transform3D{Basis: scaledBasis(pose.Rot, p.scale3), Origin: vec3To(pose.Pos)})
	case root2D:
		p.root2.SetGlobalTransform(scaledTransform2D(pose.Rot.Angle2D(), pose.Pos, p.scale2))
	}
}

// signal emits what changed and applies it to the root.
func (p *NetPredictor) signal(ch netroom.Change) {
	if ch&netroom.ChangeHidden != 0 {
		hidden := p.remote.Hidden()
		p.setVisible(!hidden)
		emitOrPrint(sigHiddenChanged.Emit(p, hidden), "hidden_changed")
	}
	if ch&netroom.ChangeGhost != 0 {
		ghost := p.remote.Ghost()
		if p.applyVis && p.kind == root2D {
			m := p.modul
			if ghost {
				m.A *= float32(p.ghostAlpha)
			}
			p.root2.SetModulate(m)
		}
		emitOrPrint(sigGhostChanged.Emit(p, ghost), "ghost_changed")
	}
	if ch&netroom.ChangeSnapped != 0 {
		emitOrPrint(sigSnapped.Emit(p), "snapped")
	}
}

func emitOrPrint(err error, name string) {
	if err != nil {
		godot.PrintErrorf("NetPredictor: signal %s: %v", name, err)
	}
}

func (p *NetPredictor) setVisible(on bool) {
	if !p.applyVis || on == p.visible || !p.rootAlive() {
		return
	}
	p.visible = on
	switch p.kind {
	case root3D:
		p.root3.SetVisible(on)
	case root2D:
		p.root2.SetVisible(on)
	}
}

// PhysicsProcess samples the local entity at the end of the physics frame
// and sends when a state is due.
func (p *NetPredictor) PhysicsProcess(delta float64) {
	if p.mode == modeUnbound {
		if p.search--; p.search > 0 {
			return
		}
		p.search = roomSearchEvery
		if r := p.findRoom(); r != nil {
			p.mode, p.room = modeLocal, r.model
			p.build()
		}
		return
	}
	if p.mode != modeLocal || !p.rootAlive() {
		return
	}
	start := procClock.Now()
	if p.dirty {
		p.build()
	}
	pos, rot, vel, hasVel := p.sample()
	t := physicsNow()
	if p.vel == velRigid3D || p.vel == velRigid2D {
		// The physics server steps rigid bodies after the physics
		// callbacks: what this frame reads is the previous step's result.
		t -= physicsStep()
	}
	p.local.Sample(t, pos, rot, vel, hasVel)
	if st, ok := p.local.Poll(max(p.room.Slot(), 0)); ok && p.room.InRoom() {
		if p.room.SendState(st) == nil {
			p.states++
		}
	}
	p.frameUsec = float64(procClock.Now()-start) / float64(time.Microsecond)
}

// sample reads the root's pose and, for physics bodies, its velocity.
func (p *NetPredictor) sample() (pos geom.Vec3, rot geom.Quat, vel geom.Vec3, hasVel bool) {
	switch p.kind {
	case root3D:
		t := p.root3.GlobalTransform()
		pos, rot = vec3From(t.Origin), quatFrom(t.Basis.Quaternion())
	case root2D:
		t := p.root2.GlobalTransform()
		pos, rot = vec2From(t.Origin), geom.Angle2D(float64(t.Rotation()))
	}
	// The wrappers are one pointer each: the body cast once at resolve time
	// (the caller checked that the root is alive).
	switch p.vel {
	case velCharacter3D:
		vel, hasVel = vec3From(godot.CharacterBody3D{Node3D: p.root3}.Velocity()), true
	case velRigid3D:
		vel, hasVel = vec3From(godot.RigidBody3D{Node3D: p.root3}.LinearVelocity()), true
	case velCharacter2D:
		vel, hasVel = vec2From(godot.CharacterBody2D{Node2D: p.root2}.Velocity()), true
	case velRigid2D:
		vel, hasVel = vec2From(godot.RigidBody2D{Node2D: p.root2}.LinearVelocity()), true
	}
	return pos, rot, vel, hasVel
}

// push feeds a state by hand (custom transports, tests, benchmarks): a
// NetPredictor with no room starts drawing from these.
func (p *NetPredictor) push(localTime float64, pos geom.Vec3, rot geom.Quat, vel geom.Vec3) {
	if p.mode == modeUnbound {
		p.mode = modeFed
		if p.kind == rootNone {
			p.resolveRoot()
		}
		p.build()
	}
	if p.remote == nil {
		godot.PrintError("NetPredictor: push_state on the local player's entity is ignored")
		return
	}
	p.pushSeq++
	p.remote.AddSample(predict.PathServer, predict.Sample{
		Time: duration(localTime), Seq: p.pushSeq, Pos: pos, Vel: vel, Rot: rot,
	}, procClock.Now())
}

// ConfigurationWarnings are shown on the node in the editor.
func (p *NetPredictor) ConfigurationWarnings() []string {
	s := netroom.PredictorSetup{
		RootPath: p.rootPath.String(),
		RoomPath: p.roomPath.String(),
		Send:     sender.Config{Rate: p.sendRate},
	}
	kind := rootNone
	if !p.rootPath.IsEmpty() {
		if node := p.GetNodeOrNull(p.rootPath); !node.IsNull() {
			s.RootFound, s.RootClass, s.RootName = true, node.ClassName(), node.Name()
			if _, ok := godot.Cast[godot.Node3D](node); ok {
				s.RootSpatial, kind = true, root3D
			} else if _, ok := godot.Cast[godot.Node2D](node); ok {
				s.RootSpatial, kind = true, root2D
			}
		}
	}
	s.Predict = p.pcfg
	s.Predict.Dim2D = kind == root2D
	if p.roomPath.IsEmpty() {
		s.RoomFound = roomAbove(p.Node) != nil
	} else {
		_, s.RoomFound = godot.InstanceOf[NetRoom](p.GetNodeOrNull(p.roomPath))
	}
	return netroom.PredictorWarnings(s)
}
