# A car, in one of three roles:
#  - yours (main.gd sets `mine`): arcade physics from the keyboard, a
#    gamepad or the bot; its NetPredictor samples and sends it.
#  - a remote copy NetRoom spawned (car.tscn in nearzero mode): its
#    NetPredictor places it every frame; it collides only while the
#    NetPredictor says `collidable` and its owner is not ghosted.
#  - a car of Godot's own stack (car_enet.tscn, `enet`): spawned by a
#    MultiplayerSpawner, its transform replicated by a
#    MultiplayerSynchronizer from the peer that owns it (authority). The
#    owner's copy follows your car; everyone else's copy is drawn where the
#    synchronizer last put it (snap on arrival).
extends CharacterBody3D

## Your car was put back on the track (the reset key, or the bot stuck).
signal was_reset(reason: String)
## Your car is solid again after a reset (clear of every other car).
signal was_cleared

const TOP_SPEED := 30.0
const OFFROAD_TOP := 13.0
const ACCEL := 14.0
const BRAKE := 28.0
const REVERSE_TOP := 8.0
const STEER := 2.1
const GRIP := 7.0
const DRIFT_GRIP := 1.4
const GRAVITY := 22.0
const RESET_SPEED := 10.0

const LAYER_WORLD := 1
const LAYER_CARS := 2

## True on the car this machine drives (set before it enters the tree).
var mine := false
## Godot stack car (car_enet.tscn).
@export var enet := false
## The owner's room slot (replicated on spawn in ENet mode).
@export var slot := -1
## Ghosted after a reset until clear of every other car (replicated in ENet
## mode; sent as anim_state bit 0 in nearzero mode).
@export var ghosted := false

var bot := false
var bot_speed := 1.0
## Off: your car never hits other cars (measurement runs).
var collide_cars := true
var bot_lane := 0.0
var controls_enabled := false
var track  # track.gd
## The car this ENet copy follows when it is ours (set by main.gd).
var follow: Node3D

# Race progress (your car only).
var track_index := -1
var next_cp := 1
var lap := 0
var passed := 0          # checkpoints passed this round
var finished := false
var stuck_reason := ""   # "" or why the reset hint shows
var _stuck_for := 0.0
var _clear_for := 0.0
var _bot_stuck := 0.0

var net: NetPredictor
## Set by main.gd for --nz-record-inputs=PATH: every physics frame with the
## controls on, the inputs go there in the bench's CSV (bench/internal/netbench
## inputs.go: t_s,client,throttle,brake,steer,heading_rad,jump), as client
## "a" (the bench's vehicle), time 0 at the first frame, a line per change.
var input_log: FileAccess
var _input_frames := 0
var _input_last := ""
var _mats: Array[StandardMaterial3D] = []
var _alpha := 1.0
var _label: Label3D
## What is drawn of the car (its meshes and name tag), a child of the body:
## with the room's input delay, NetPredictor draws it that late on the
## owner's machine while the body drives on time; the camera follows it.
var visual: Node3D
var color := Color.WHITE


func _enter_tree() -> void:
	# Godot's documented pattern: the node is named after the peer that owns
	# it, and that peer is its multiplayer authority (the synchronizer's too).
	if enet and name.is_valid_int():
		set_multiplayer_authority(name.to_int())


func _ready() -> void:
	net = get_node_or_null("NetPredictor") as NetPredictor
	if enet:
		mine = is_multiplayer_authority()
	add_to_group("cars")
	if net and not mine:
		net.ghost_changed.connect(func(_g): _update_alpha())
		if net.slot >= 0:
			slot = net.slot
	_build_body()
	collision_layer = LAYER_CARS
	collision_mask = LAYER_WORLD | LAYER_CARS
	if not mine:
		collision_mask = 0
	if enet and mine:
		# Our own replicated copy only carries the transform: your car is
		# drawn by the scene, not by this node.
		visible = false
		collision_layer = 0
	set_color(color)


func set_color(c: Color) -> void:
	color = c
	if _mats.size() > 0:
		_mats[0].albedo_color = Color(c, _mats[0].albedo_color.a)


func set_label(text: String) -> void:
	if _label:
		_label.text = text


func _build_body() -> void:
	visual = Node3D.new()
	visual.name = "Visual"
	add_child(visual)
	var body_mat := StandardMaterial3D.new()
	body_mat.albedo_color = color
	body_mat.roughness = 0.4
	var dark := StandardMaterial3D.new()
	dark.albedo_color = Color(0.08, 0.08, 0.1)
	var glass := StandardMaterial3D.new()
	glass.albedo_color = Color(0.6, 0.8, 0.95)
	_mats = [body_mat, dark, glass]
	_add_box(Vector3(1.9, 0.55, 4.0), Vector3(0, 0.45, 0), body_mat)
	_add_box(Vector3(1.6, 0.5, 1.9), Vector3(0, 0.95, 0.3), glass)
	_add_box(Vector3(1.9, 0.12, 0.5), Vector3(0, 0.95, 1.85), body_mat)  # spoiler
	for x in [-0.95, 0.95]:
		for z in [-1.3, 1.3]:
			var w := MeshInstance3D.new()
			var cm := CylinderMesh.new()
			cm.top_radius = 0.38
			cm.bottom_radius = 0.38
			cm.height = 0.3
			cm.material = dark
			w.mesh = cm
			w.rotation = Vector3(0, 0, PI / 2)
			w.position = Vector3(x, 0.38, z)
			visual.add_child(w)
	_label = Label3D.new()
	_label.billboard = BaseMaterial3D.BILLBOARD_ENABLED
	_label.position = Vector3(0, 2.3, 0)
	_label.font_size = 48
	_label.outline_size = 12
	_label.no_depth_test = true
	_label.visible = not mine
	visual.add_child(_label)


func _add_box(size: Vector3, pos: Vector3, mat: Material) -> void:
	var mi := MeshInstance3D.new()
	var bm := BoxMesh.new()
	bm.size = size
	bm.material = mat
	mi.mesh = bm
	mi.position = pos
	visual.add_child(mi)


func _update_alpha() -> void:
	var a := 1.0
	if ghosted or (net and not mine and net.is_ghost()):
		a = 0.35
	if a == _alpha:
		return
	_alpha = a
	for m in _mats:
		m.transparency = BaseMaterial3D.TRANSPARENCY_ALPHA if a < 1.0 else BaseMaterial3D.TRANSPARENCY_DISABLED
		m.albedo_color.a = a


## Whether other cars may hit this remote copy now.
func is_solid() -> bool:
	if mine or ghosted or not visible:
		return false
	if net:
		return net.is_collidable() and (net.anim_state & 1) == 0
	return true


func _physics_process(delta: float) -> void:
	if not mine:
		if net:
			ghosted = (net.anim_state & 1) != 0
		collision_layer = LAYER_CARS if is_solid() else 0
		_update_alpha()
		return
	if enet:
		# Our own ENet copy: the synchronizer replicates what this copies.
		if is_instance_valid(follow):
			global_transform = follow.global_transform
			ghosted = follow.ghosted
		return
	_drive(delta)
	_track_progress(delta)
	_update_ghost(delta)
	_update_alpha()
	if net:
		net.anim_state = 1 if ghosted else 0


func _inputs() -> Vector4:
	# x throttle, y brake, z steer (right positive), w handbrake
	if not controls_enabled:
		return Vector4(0, 1, 0, 0)
	if bot:
		return _bot_inputs()
	return Vector4(Input.get_action_strength("accelerate"), Input.get_action_strength("brake"),
		Input.get_action_strength("steer_right") - Input.get_action_strength("steer_left"),
		Input.get_action_strength("handbrake"))


func _drive(delta: float) -> void:
	var inp := _inputs()
	if input_log and controls_enabled:
		_log_input(inp)
	var fwd := -global_basis.z
	fwd.y = 0
	fwd = fwd.normalized()
	var hv := Vector3(velocity.x, 0, velocity.z)
	var fs := hv.dot(fwd)
	var lat := hv - fwd * fs
	var top := TOP_SPEED if on_road() else OFFROAD_TOP
	if inp.x > 0.0:
		if fs < top:
			fs = min(fs + ACCEL * inp.x * delta * (1.0 - 0.5 * clamp(fs / top, 0.0, 1.0)), top)
	if fs > top:
		fs = move_toward(fs, top, 18.0 * delta)
	if inp.y > 0.0:
		if fs > 0.3:
			fs = max(fs - BRAKE * inp.y * delta, 0.0)
		elif inp.x <= 0.0:
			fs = max(fs - ACCEL * 0.6 * inp.y * delta, -REVERSE_TOP)
	fs = move_toward(fs, 0.0, (0.8 + abs(fs) * 0.03) * delta)
	# Steering: needs speed, softer when fast, reversed in reverse.
	var s: float = abs(fs)
	var rate: float = STEER * inp.z * clamp(s / 5.0, 0.0, 1.0) * (1.0 - 0.4 * clamp(s / TOP_SPEED, 0.0, 1.0))
	if inp.w > 0.5:
		rate *= 1.35
	rotate_y(-rate * sign(fs) * delta)
	# Momentum: the velocity keeps its direction and the tyres pull the
	# sideways part out at the grip rate (less with the handbrake).
	var grip := DRIFT_GRIP if inp.w > 0.5 else GRIP
	lat = lat * exp(-grip * delta)
	hv = fwd * fs + lat
	velocity = Vector3(hv.x, velocity.y - GRAVITY * delta, hv.z)
	if is_on_floor() and velocity.y < 0:
		velocity.y = -1.0
	var before := velocity
	move_and_slide()
	for i in get_slide_collision_count():
		var c := get_slide_collision(i)
		var n := c.get_normal()
		if abs(n.y) < 0.6:
			# A bump: bounce a little off trees and other cars.
			var into := before.dot(n)
			if into < 0:
				velocity -= n * into * 0.35
				velocity *= 0.8
	if global_position.y < -20:
		reset_to_checkpoint("fell")


func _log_input(inp: Vector4) -> void:
	# The bench steers left for positive steer, this car right; the
	# handbrake has no bench input (the bot never pulls it).
	var t := float(_input_frames) / Engine.physics_ticks_per_second
	_input_frames += 1
	var vals := "%.4f,%.4f,%.4f" % [inp.x, inp.y, -inp.z + 0.0]
	if vals == _input_last:
		return
	_input_last = vals
	input_log.store_line("%.6f,a,%s,0,0" % [t, vals])
	if _input_frames % 60 == 0:
		input_log.flush()


func on_road() -> bool:
	if track == null or track_index < 0:
		return true
	return abs(track.lateral_offset(global_position, track_index)) <= track.half_width + 1.5


func _track_progress(delta: float) -> void:
	if track == null:
		return
	track_index = track.nearest_index(global_position, track_index)
	if not controls_enabled or finished:
		stuck_reason = ""
		_stuck_for = 0
		return
	var n: int = track.checkpoints.size()
	var cp_i: int = track.checkpoints[next_cp % n]
	var ahead := posmod(track_index - cp_i, track.points.size())
	if ahead < 8:
		passed += 1
		if next_cp % n == 0:
			lap += 1
		next_cp = (next_cp + 1) % n
	# Stuck: stopped after a crash, wrong way, or off the track for a while.
	var speed := Vector3(velocity.x, 0, velocity.z).length()
	var fwd := -global_basis.z
	var reason := ""
	if fwd.dot(track.tangents[track_index]) < -0.3 and speed > 2.0:
		reason = "Wrong way!"
	elif abs(track.lateral_offset(global_position, track_index)) > track.half_width + 4.0:
		reason = "Off the track"
	elif speed < 1.5:
		reason = "Stuck?"
	if reason != "":
		_stuck_for += delta
	else:
		_stuck_for = 0
	stuck_reason = reason if _stuck_for > 1.5 else ""
	if bot and _stuck_for > 3.0:
		reset_to_checkpoint("bot: " + reason)


## The reset key: back to the last checkpoint passed, facing forward, at a
## safe speed, ghosted until clear of every other car.
func reset_to_checkpoint(why := "key") -> void:
	if track == null:
		return
	var n: int = track.checkpoints.size()
	var t: Transform3D = track.checkpoint_transform(posmod(next_cp - 1, n))
	global_transform = t
	velocity = -t.basis.z * RESET_SPEED
	track_index = track.nearest_index(global_position)
	ghosted = true
	_clear_for = 0.0
	_stuck_for = 0.0
	stuck_reason = ""
	if net:
		net.teleport()
	reset_physics_interpolation()
	was_reset.emit(why)


func place(t: Transform3D) -> void:
	global_transform = t
	velocity = Vector3.ZERO
	if track:
		track_index = track.nearest_index(global_position)
	if net:
		net.teleport()
	reset_physics_interpolation()


func reset_race() -> void:
	next_cp = 1
	lap = 0
	passed = 0
	finished = false
	ghosted = false
	stuck_reason = ""
	_stuck_for = 0


func _update_ghost(delta: float) -> void:
	if not ghosted:
		collision_mask = LAYER_WORLD | LAYER_CARS if collide_cars else LAYER_WORLD
		return
	var clear := true
	for other in get_tree().get_nodes_in_group("cars"):
		if other != self and other.visible and other.global_position.distance_to(global_position) < 7.0:
			clear = false
	_clear_for = _clear_for + delta if clear else 0.0
	if _clear_for > 1.0:
		ghosted = false
		was_cleared.emit()
	collision_mask = LAYER_WORLD if ghosted or not collide_cars else LAYER_WORLD | LAYER_CARS


func _bot_inputs() -> Vector4:
	if track == null or track_index < 0:
		return Vector4(1, 0, 0, 0)
	var speed := Vector3(velocity.x, 0, velocity.z).length()
	var target: Vector3 = track.point_ahead(track_index, 9.0 + speed * 0.5, bot_lane)
	var to := target - global_position
	to.y = 0
	var fwd := -global_basis.z
	fwd.y = 0
	var ang := fwd.signed_angle_to(to.normalized(), Vector3.UP)  # left positive
	var steer: float = clamp(-ang * 2.5, -1.0, 1.0)
	# Look further ahead for the corner's sharpness and lift for it.
	var far: Vector3 = track.point_ahead(track_index, 30.0, bot_lane) - global_position
	far.y = 0
	var bend: float = abs(fwd.signed_angle_to(far.normalized(), Vector3.UP))
	var throttle := bot_speed
	var brake := 0.0
	if speed > TOP_SPEED * bot_speed:
		throttle = 0.0
	if bend > 0.6 and speed > 19.0:
		throttle = 0.0
		brake = 0.6
	elif bend > 0.35 and speed > 24.0:
		throttle = 0.0
	return Vector4(throttle, brake, steer, 0)
