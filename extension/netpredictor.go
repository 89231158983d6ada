package main

import (
	"time"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
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

// NetPredictor is the node of one networked entity: engine glue around a
// entity.Predictor, which decides everything. The node reads the root,
// places it, applies the model's visibility effects and emits signals.
type NetPredictor struct {
	godot.Node

	m *entity.Predictor

	rootPath, roomPath godot.NodePath
	visualPath         godot.NodePath // drawn the room's input delay late (netpredictor_delay.go)
	delayed            delayedVisuals
	self               godot.ObjectID // to notice a handler freeing the node
	ready              bool

	// Root.
	vel     velKind
	rootID  godot.ObjectID
	root3   godot.Node3D
	root2   godot.Node2D
	scale3  [3]float32
	scale2  [2]float32
	modul   godot.Color // the 2D root's own modulate, for ghosts
	visible bool        // the root's visible flag, as read at resolve or last applied

	frameUsec float64
	synced    syncedProps // synced.go
}

var (
	netPredictorClass = godot.NewClass[NetPredictor]("NetPredictor").Icon(iconPath("NetPredictor")).Docs(netPredictorDocs)

	// motionProfile's values are entity's Profile numbers; AUTO (the
	// default) came last so scenes saved with 0-2 keep their meaning.
	motionProfile = netPredictorClass.Enum("MotionProfile").
			Value("VEHICLE", int64(entity.ProfileVehicle)).
			Value("CHARACTER", int64(entity.ProfileCharacter)).
			Value("CUSTOM", int64(entity.ProfileCustom)).
			Value("AUTO", int64(entity.ProfileAuto))

	sigGhostChanged  = godot.NewSignal1[bool](netPredictorClass, "ghost_changed", "ghost")
	sigHiddenChanged = godot.NewSignal1[bool](netPredictorClass, "hidden_changed", "hidden")
	sigSnapped       = godot.NewSignal0(netPredictorClass, "snapped")
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fromMs(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func max0(v float64) float64 { return max(v, 0) }

// setConfig changes one prediction setting through the model.
func (p *NetPredictor) setConfig(change func(*predict.Config)) {
	cfg := p.m.Config()
	change(&cfg)
	if p.m.SetConfig(cfg) {
		p.NotifyPropertyListChanged() // the profile became Custom
	}
	p.UpdateConfigurationWarnings()
}

// msProperty declares a duration setting shown in milliseconds.
func msProperty(name string, field func(*predict.Config) *time.Duration, max float64) {
	godot.Property(netPredictorClass, name,
		func(p *NetPredictor) float64 {
			cfg := p.m.Config()
			return ms(*field(&cfg))
		},
		func(p *NetPredictor, v float64) {
			p.setConfig(func(c *predict.Config) { *field(c) = fromMs(max0(v)) })
		}).Range(1, max, 1, "or_greater", "suffix:ms")
}

func init() {
	c := netPredictorClass
	godot.Property(c, "root_path", func(p *NetPredictor) godot.NodePath { return p.rootPath.Copy() },
		func(p *NetPredictor, v godot.NodePath) {
			p.rootPath.Destroy()
			p.rootPath = v.Copy()
			if p.ready && p.IsInsideTree() && onMainThread("NetPredictor.root_path") {
				p.resolveRoot() // a new root at run time; its dimension may differ
			}
			p.UpdateConfigurationWarnings()
		}).Hint(godot.HintNodePathTypes, "Node3D,Node2D")
	godot.Property(c, "room_path", func(p *NetPredictor) godot.NodePath { return p.roomPath.Copy() },
		func(p *NetPredictor, v godot.NodePath) {
			p.roomPath.Destroy()
			p.roomPath = v.Copy()
			p.UpdateConfigurationWarnings()
		}).Hint(godot.HintNodePathTypes, "NetRoom")
	godot.Property(c, "visual_path", func(p *NetPredictor) godot.NodePath { return p.visualPath.Copy() },
		func(p *NetPredictor, v godot.NodePath) {
			p.visualPath.Destroy()
			p.visualPath = v.Copy()
		}).Hint(godot.HintNodePathTypes, "Node3D,Node2D")
	godot.Property(c, "send_rate", func(p *NetPredictor) float64 { return p.m.SendRate() },
		func(p *NetPredictor, v float64) { p.m.SetSendRate(v); p.UpdateConfigurationWarnings() }).
		Range(1, sender.MaxRate, 1, "suffix:Hz")

	c.Group("Prediction", "")
	godot.Property(c, "motion_profile", func(p *NetPredictor) int64 { return int64(p.m.Profile()) },
		func(p *NetPredictor, v int64) {
			p.m.SetProfile(entity.Profile(v))
			p.NotifyPropertyListChanged()
			p.UpdateConfigurationWarnings()
		}).OfEnum(motionProfile, "")
	msProperty("prediction_cap_ms", func(c *predict.Config) *time.Duration { return &c.PredictionCap }, 2000)
	msProperty("coast_until_ms", func(c *predict.Config) *time.Duration { return &c.CoastUntil }, 5000)
	msProperty("path_margin_ms", func(c *predict.Config) *time.Duration { return &c.PathMargin }, 500)
	msProperty("direct_outage_ms", func(c *predict.Config) *time.Duration { return &c.DirectOutage }, 1000)

	c.Group("Smoothing", "")
	msProperty("smoothing_tau_ms", func(c *predict.Config) *time.Duration { return &c.SmoothingTau }, 1000)
	godot.Property(c, "teleport_distance", func(p *NetPredictor) float64 { return p.m.Config().TeleportDistance },
		func(p *NetPredictor, v float64) {
			p.setConfig(func(c *predict.Config) { c.TeleportDistance = max0(v) })
		}).
		Range(0, 1000, 0.01, "or_greater")

	c.Group("Visibility", "")
	msProperty("ghost_after_ms", func(c *predict.Config) *time.Duration { return &c.GhostAfter }, 5000)
	msProperty("hide_after_ms", func(c *predict.Config) *time.Duration { return &c.HideAfter }, 10000)
	msProperty("contact_trust_ms", func(c *predict.Config) *time.Duration { return &c.ContactTrust }, 2000)
	godot.Property(c, "entity_width", func(p *NetPredictor) float64 { return p.m.Config().Width },
		func(p *NetPredictor, v float64) { p.setConfig(func(c *predict.Config) { c.Width = max0(v) }) }).
		Range(0, 100, 0.01, "or_greater")
	godot.Property(c, "apply_visibility", func(p *NetPredictor) bool { return p.m.ApplyVisibility() },
		func(p *NetPredictor, v bool) { p.m.SetApplyVisibility(v) })
	godot.Property(c, "ghost_alpha", func(p *NetPredictor) float64 { return p.m.GhostAlpha() },
		func(p *NetPredictor, v float64) { p.m.SetGhostAlpha(v) }).Range(0, 1, 0.01)

	c.Group("Extras", "")
	godot.Property(c, "anim_state", func(p *NetPredictor) int64 { a, _ := p.m.Extras(); return a },
		func(p *NetPredictor, v int64) { _, in := p.m.Extras(); p.m.SetExtras(v, in) }).Range(0, 255, 1)
	godot.Property(c, "input_bits", func(p *NetPredictor) int64 { _, in := p.m.Extras(); return in },
		func(p *NetPredictor, v int64) { a, _ := p.m.Extras(); p.m.SetExtras(a, v) }).Range(0, 255, 1)

	c.Group("Debug", "")
	godot.Property(c, "local", func(p *NetPredictor) bool { return p.m.IsLocal() }, nil).Getter("is_local")
	godot.Property(c, "slot", func(p *NetPredictor) int64 { return int64(p.m.Slot()) }, nil)
	godot.Property(c, "ghost", func(p *NetPredictor) bool { return p.m.Ghost() }, nil).Getter("is_ghost")
	godot.Property(c, "hidden", func(p *NetPredictor) bool { return p.m.Hidden() }, nil).Getter("is_hidden")
	godot.Property(c, "collidable", func(p *NetPredictor) bool { return p.m.Collidable() }, nil).Getter("is_collidable")
	godot.Property(c, "debug_age_ms", func(p *NetPredictor) float64 { return ms(p.m.Pose().Age) }, nil)
	godot.Property(c, "debug_since_arrival_ms", func(p *NetPredictor) float64 { return ms(p.m.Pose().SinceArrival) }, nil)
	godot.Property(c, "debug_correction", func(p *NetPredictor) float64 { return p.m.Pose().Correction }, nil)
	godot.Property(c, "debug_path", func(p *NetPredictor) string {
		if !p.m.Draws() {
			return ""
		}
		return p.m.Pose().Path.String()
	}, nil)
	godot.Property(c, "debug_direct_pair", func(p *NetPredictor) string { return p.m.DirectPair() }, nil)
	godot.Property(c, "debug_jitter_ms", func(p *NetPredictor) float64 { return ms(p.m.Jitter()) }, nil)
	godot.Property(c, "debug_past_cap", func(p *NetPredictor) bool { return p.m.Pose().PastCap }, nil)
	godot.Property(c, "debug_states", func(p *NetPredictor) int64 { return int64(p.m.States()) }, nil)
	godot.Property(c, "debug_prediction_distance", func(p *NetPredictor) float64 { return p.m.PredictionDistance() }, nil)
	godot.Property(c, "debug_frame_usec", func(p *NetPredictor) float64 { return p.frameUsec }, nil)
	godot.Property(c, "debug_input_delay_ms", func(p *NetPredictor) float64 { return ms(p.m.InputDelay()) }, nil)
	godot.Property(c, "debug_render_lag_ms", func(p *NetPredictor) float64 { return ms(p.m.RenderLag()) }, nil)

	godot.Method0(c, "teleport", func(p *NetPredictor) { p.m.Teleport() })
	godot.Method1(c, "reset_to", func(p *NetPredictor, tr godot.Transform3D) {
		p.resetTo(entity.Reset{Pos: vec3From(tr.Origin), Rot: quatFrom(tr.Basis.Quaternion())})
	}, "transform")
	godot.Method1(c, "reset_to_2d", func(p *NetPredictor, tr godot.Transform2D) {
		p.resetTo(entity.Reset{Pos: vec2From(tr.Origin), Rot: geom.Angle2D(float64(tr.Rotation()))})
	}, "transform")
	godot.Property(c, "player_slot", func(p *NetPredictor) int64 { return int64(p.m.PlayerSlot()) },
		func(p *NetPredictor, v int64) {
			draws := p.m.Draws()
			if err := p.m.SetPlayerSlot(int(v)); err != nil {
				godot.PrintErrorf("NetPredictor %s: %v", p.Name(), err)
			}
			if p.ready && onMainThread("NetPredictor.player_slot") {
				p.modeChanged(draws)
			}
		}).Range(-1, 255, 1)
	godot.Method3(c, "push_state", func(p *NetPredictor, localTime float64, tr godot.Transform3D, vel godot.Vector3) {
		p.push(localTime, vec3From(tr.Origin), quatFrom(tr.Basis.Quaternion()), vec3From(vel))
	}, "local_time", "transform", "velocity")
	godot.Method3(c, "push_state_2d", func(p *NetPredictor, localTime float64, tr godot.Transform2D, vel godot.Vector2) {
		p.push(localTime, vec2From(tr.Origin), geom.Angle2D(float64(tr.Rotation())), vec2From(vel))
	}, "local_time", "transform", "velocity")
	// The comparison markers: where snap-on-arrival and an interpolation
	// buffer would draw this entity (client/entity/figures.go).
	godot.Method0R(c, "get_newest_state_position", func(p *NetPredictor) godot.Vector3 {
		pos, _ := p.m.NewestStatePosition()
		return vec3To(pos)
	}).Const()
	godot.Method0R(c, "get_drawn_velocity", func(p *NetPredictor) godot.Vector3 {
		return vec3To(p.m.Pose().Vel)
	}).Const()
	godot.Method1R(c, "get_interpolated_position", func(p *NetPredictor, delayMs float64) godot.Vector3 {
		pos, _ := p.m.InterpolatedPosition(procClock.Now(), fromMs(max0(delayMs)))
		return vec3To(pos)
	}, "delay_ms").Const()
	godot.Method0R(c, "get_room", func(p *NetPredictor) godot.Node {
		if r := p.findRoom(); r != nil && r.model == p.m.Room() {
			return r.Node
		}
		return godot.Node{}
	}).Const().ReturnClass("NetRoom")
}

// Init sets the defaults (the model's: the netcode packages').
func (p *NetPredictor) Init() {
	p.m = entity.NewPredictor()
	p.rootPath = godot.NewNodePath("..")
	p.visible = true
	p.self = p.ID()
}

// Cleanup releases the engine values the node holds.
func (p *NetPredictor) Cleanup() {
	p.synced.release()
	p.rootPath.Destroy()
	p.roomPath.Destroy()
	p.visualPath.Destroy()
}

// alive reports whether the node still exists: a signal handler may have
// freed it (free(), not queue_free()), and then nothing of it may be touched.
func (p *NetPredictor) alive() bool { return !p.self.Object().IsNull() }

// bindRemote is called by the NetRoom that spawned this node's scene,
// before the scene enters the tree.
func (p *NetPredictor) bindRemote(room *netroom.Room, slot int) { p.m.BindRemote(room, slot) }

// Ready finds the root and, unless a NetRoom bound this node as a remote
// player's, the NetRoom to send through.
func (p *NetPredictor) Ready() {
	if !onMainThread("NetPredictor._ready") {
		return
	}
	p.ready = true
	p.resolveRoot()
	var room *netroom.Room
	if r := p.findRoom(); r != nil {
		room = r.model
	}
	p.m.Ready(room)
	p.afterBind()
}

// afterBind applies what binding decided: a drawn root is hidden until its
// first state and not interpolated by the engine (it is placed every
// rendered frame); errors are reported.
func (p *NetPredictor) afterBind() {
	if p.m.Draws() && p.rootAlive() {
		p.root().SetPhysicsInterpolationMode(godot.PhysicsInterpolationOff)
		if p.m.HideUntilData() {
			p.setVisible(false)
		}
		if p.m.Mode() == entity.ModeShared {
			p.handOverBody() // frozen until ours
		}
	}
	p.reportErrors()
}

// reportErrors prints the model's errors (a second entity for one player
// also reaches the NetRoom's room_error signal through the Room).
func (p *NetPredictor) reportErrors() {
	for _, err := range p.m.Errors() {
		godot.PrintErrorf("NetPredictor %s: %v", p.Name(), err)
	}
}

// ExitTree unbinds the entity from its room.
func (p *NetPredictor) ExitTree() {
	if onMainThread("NetPredictor._exit_tree") {
		p.m.ExitTree()
	}
}

// EnterTree binds the entity again after a reparent.
func (p *NetPredictor) EnterTree() {
	if p.ready && onMainThread("NetPredictor._enter_tree") {
		p.m.EnterTree()
		p.reportErrors()
	}
}

// root returns the root as a Node (valid when rootAlive).
func (p *NetPredictor) root() godot.Node {
	if p.m.Dim() == entity.Dim2D {
		return p.root2.Node
	}
	return p.root3.Node
}

// resolveRoot finds the node root_path points to and what it is.
func (p *NetPredictor) resolveRoot() {
	p.vel, p.rootID = velDerived, 0
	node := p.GetNodeOrNull(p.rootPath)
	if node.IsNull() {
		p.m.SetDim(entity.DimNone)
		godot.PrintErrorf("NetPredictor %s: root_path %q is not a node", p.Name(), p.rootPath.String())
		return
	}
	p.rootID = node.ID()
	if n3, ok := godot.Cast[godot.Node3D](node); ok {
		p.m.SetDim(entity.Dim3D)
		p.root3, p.visible = n3, n3.IsVisible()
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
		p.m.SetDim(entity.Dim2D)
		p.root2, p.visible = n2, n2.IsVisible()
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
	p.m.SetDim(entity.DimNone)
	godot.PrintErrorf("NetPredictor %s: root %s is a %s, not a Node3D or Node2D", p.Name(), node.Name(), node.ClassName())
}

// rootAlive reports whether the root still exists.
func (p *NetPredictor) rootAlive() bool {
	return p.m.Dim() != entity.DimNone && !p.rootID.Object().IsNull()
}

// findRoom returns the NetRoom this node sends through: room_path when
// set, else entity.FindRoom's choice.
func (p *NetPredictor) findRoom() *NetRoom {
	if !p.roomPath.IsEmpty() {
		r, _ := godot.InstanceOf[NetRoom](p.GetNodeOrNull(p.roomPath))
		return r
	}
	r, _ := entity.FindRoom[godot.Node, *NetRoom](sceneTree{}, p.Node, roomsInTree())
	return r
}

// sceneTree is the engine's scene tree as entity.FindRoom walks it.
type sceneTree struct{}

func (sceneTree) Parent(n godot.Node) (godot.Node, bool) { a := n.Parent(); return a, !a.IsNull() }
func (sceneTree) ChildCount(n godot.Node) int            { return n.ChildCount() }
func (sceneTree) Child(n godot.Node, i int) godot.Node   { return n.Child(i) }
func (sceneTree) RoomOf(n godot.Node) (*NetRoom, bool)   { return godot.InstanceOf[NetRoom](n) }

// Process draws a remote entity: the model routes what arrived and says
// where it is now; the root goes there, and the changes become signals.
// Our own entity is drawn the room's input delay late (drawDelayed).
func (p *NetPredictor) Process(delta float64) {
	if !onMainThread("NetPredictor._process") || !p.syncOwner() {
		return
	}
	p.syncSlot()
	if !p.m.Draws() {
		p.watchLocal()
		p.drawDelayed()
		return
	}
	if len(p.delayed.nodes) > 0 {
		p.delayed.restore(p.m.Dim()) // a shared object no longer ours
	}
	start := procClock.Now()
	pose, ch := p.m.Frame(start)
	p.reportErrors()
	if !p.rootAlive() {
		return
	}
	if pose.Valid {
		p.place(&pose)
	}
	if ch != 0 {
		p.apply(ch)
	}
	p.frameUsec = float64(procClock.Now()-start) / float64(time.Microsecond)
}

// place moves the root to the pose, keeping its scale.
func (p *NetPredictor) place(pose *predict.Pose) {
	switch p.m.Dim() {
	case entity.Dim3D:
		p.root3.SetGlobalTransform(godot.Transform3D{Basis: scaledBasis(pose.Rot, p.scale3), Origin: vec3To(pose.Pos)})
	case entity.Dim2D:
		p.root2.SetGlobalTransform(scaledTransform2D(pose.Rot.Angle2D(), pose.Pos, p.scale2))
	}
}

// apply applies the model's effects for ch to the root, then emits the
// signals; after each emission it stops if a handler freed the node or
// the root.
func (p *NetPredictor) apply(ch entity.Change) {
	e := p.m.EffectsOf(ch, p.visible)
	if e.SetVisible {
		p.setVisible(e.Visible)
	}
	if e.SetAlpha && p.m.Dim() == entity.Dim2D {
		m := p.modul
		m.A *= float32(e.Alpha)
		p.root2.SetModulate(m)
	}
	if e.ResetInterpolation {
		p.root().ResetPhysicsInterpolation()
	}
	if ch&entity.ChangeHidden != 0 && !p.emitted(sigHiddenChanged.Emit(p, p.m.Hidden()), "hidden_changed") {
		return
	}
	if ch&entity.ChangeGhost != 0 && !p.emitted(sigGhostChanged.Emit(p, p.m.Ghost()), "ghost_changed") {
		return
	}
	if ch&entity.ChangeSnapped != 0 {
		p.emitted(sigSnapped.Emit(p), "snapped")
	}
}

// emitted reports an emission error and whether the node and its root
// survived the handlers.
func (p *NetPredictor) emitted(err error, name string) bool {
	if !p.alive() {
		return false // freed by a handler: p's engine object is gone
	}
	if err != nil {
		godot.PrintErrorf("NetPredictor: signal %s: %v", name, err)
	}
	return p.rootAlive()
}

func (p *NetPredictor) setVisible(on bool) {
	if on == p.visible || !p.rootAlive() {
		return
	}
	p.visible = on
	switch p.m.Dim() {
	case entity.Dim3D:
		p.root3.SetVisible(on)
	case entity.Dim2D:
		p.root2.SetVisible(on)
	}
}

// PhysicsProcess samples the local entity at the end of the physics frame
// and sends when a state is due; an unbound one looks for a NetRoom once a
// second.
func (p *NetPredictor) PhysicsProcess(delta float64) {
	if !onMainThread("NetPredictor._physics_process") || !p.syncOwner() {
		return
	}
	p.syncSlot()
	if p.m.Draws() {
		return
	}
	if p.m.SearchDue() {
		if r := p.findRoom(); r != nil {
			p.m.BindLocal(r.model)
			p.reportErrors()
		}
		return
	}
	if !p.m.IsLocal() || !p.rootAlive() {
		return
	}
	start := procClock.Now()
	pos, rot, vel, hasVel := p.sample()
	t := physicsNow()
	if p.vel == velRigid3D || p.vel == velRigid2D {
		// The physics server steps rigid bodies after the physics
		// callbacks: what this frame reads is the previous step's result.
		t -= physicsStep()
	}
	p.m.Sample(t, pos, rot, vel, hasVel)
	p.syncProps() // synced.go
	p.reportErrors()
	p.frameUsec = float64(procClock.Now()-start) / float64(time.Microsecond)
}

// sample reads the root's pose and, for physics bodies, its velocity.
func (p *NetPredictor) sample() (pos geom.Vec3, rot geom.Quat, vel geom.Vec3, hasVel bool) {
	switch p.m.Dim() {
	case entity.Dim3D:
		t := p.root3.GlobalTransform()
		pos, rot = vec3From(t.Origin), quatFrom(t.Basis.Quaternion())
	case entity.Dim2D:
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
	if !onMainThread("NetPredictor.push_state") {
		return
	}
	wasDrawn := p.m.Draws()
	if !wasDrawn && p.m.Dim() == entity.DimNone {
		p.resolveRoot()
	}
	if err := p.m.Push(duration(localTime), pos, rot, vel, procClock.Now()); err != nil {
		godot.PrintErrorf("NetPredictor %s: %v", p.Name(), err)
		return
	}
	if !wasDrawn {
		p.afterBind()
	}
}

// ConfigurationWarnings are shown on the node in the editor.
func (p *NetPredictor) ConfigurationWarnings() []string {
	s := entity.PredictorSetup{
		RootPath: p.rootPath.String(),
		RoomPath: p.roomPath.String(),
		Send:     sender.Config{Rate: p.m.SendRate()},
	}
	dim2D := false
	if !p.rootPath.IsEmpty() {
		if node := p.GetNodeOrNull(p.rootPath); !node.IsNull() {
			s.RootFound, s.RootClass, s.RootName = true, node.ClassName(), node.Name()
			if _, ok := godot.Cast[godot.Node3D](node); ok {
				s.RootSpatial = true
			} else if _, ok := godot.Cast[godot.Node2D](node); ok {
				s.RootSpatial, dim2D = true, true
			}
		}
	}
	s.Predict = p.m.Config()
	s.Predict.Dim2D = dim2D
	if p.roomPath.IsEmpty() {
		_, s.RoomFound = entity.FindRoom[godot.Node, *NetRoom](sceneTree{}, p.Node, nil)
	} else {
		_, s.RoomFound = godot.InstanceOf[NetRoom](p.GetNodeOrNull(p.roomPath))
	}
	out := append(entity.PredictorWarnings(s), entity.SyncedWarnings(p.synced.paths)...) // synced.go
	id, shared := p.m.Entity()
	return append(out, entity.EntityWarnings(id, shared, s.RootClass, len(p.synced.paths) > 0)...)
}

// syncSlot follows the room for a node standing for a player slot
// (player_slot): local, drawn or idle as the room's seats say.
func (p *NetPredictor) syncSlot() {
	draws := p.m.Draws()
	if p.m.SyncSlot() {
		p.modeChanged(draws)
	}
}

// modeChanged hands the root over after the entity started or stopped
// being drawn (player_slot): a drawn root is hidden until its first state
// and not interpolated by the engine; one that stops being drawn is shown
// again and interpolated as the project says.
func (p *NetPredictor) modeChanged(drew bool) {
	p.reportErrors()
	now := p.m.Draws()
	if now == drew || !p.rootAlive() {
		return
	}
	if now {
		p.afterBind()
		return
	}
	p.root().SetPhysicsInterpolationMode(godot.PhysicsInterpolationInherit)
	if p.m.ApplyVisibility() {
		p.setVisible(true)
	}
}

// resetTo places the root at r and has every other player draw one jump
// there (entity.Predictor.ResetTo); a shared object the host does not own
// yet is placed once its claim is granted (placeReset).
func (p *NetPredictor) resetTo(r entity.Reset) {
	if !onMainThread("NetPredictor.reset_to") {
		return
	}
	now, err := p.m.ResetTo(r)
	if err != nil {
		godot.PrintErrorf("NetPredictor %s: %v", p.Name(), err)
		return
	}
	if now {
		p.placeAt(r)
	}
}

// placeReset places a reset that waited for a shared object's claim.
func (p *NetPredictor) placeReset() {
	if r, ok := p.m.TakeReset(); ok {
		p.placeAt(r)
	}
}

// placeAt moves the root to r at once (no engine interpolation across the
// jump).
func (p *NetPredictor) placeAt(r entity.Reset) {
	if !p.rootAlive() {
		return
	}
	pose := predict.Pose{Pos: r.Pos, Rot: r.Rot}
	p.place(&pose)
	p.root().ResetPhysicsInterpolation()
}

// watchLocal tells the model where a local root is at a rendered frame,
// to warn once when it keeps moving between physics frames (moved in
// _process). Roots the physics engine moves (rigid bodies) are not
// watched: they move between the callbacks by design.
func (p *NetPredictor) watchLocal() {
	if !p.m.IsLocal() || p.vel == velRigid3D || p.vel == velRigid2D || !p.rootAlive() {
		return
	}
	var pos geom.Vec3
	switch p.m.Dim() {
	case entity.Dim3D:
		pos = vec3From(p.root3.GlobalTransform().Origin)
	case entity.Dim2D:
		pos = vec2From(p.root2.GlobalTransform().Origin)
	}
	if w, ok := p.m.RenderedAt(pos); ok {
		godot.PrintWarningf("NetPredictor %s: %s", p.Name(), w)
	}
}
