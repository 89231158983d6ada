# One player of TestGodotFriction (test/godot/friction_test.go): what a
# second ported game met (issue 33), in the engine. Arguments after "--":
#   --nz-server=URL  --nz-role=a|b  --nz-out=DIR  --nz-code=CODE (b)
# a creates a room of two (create_room(2)), moves its own entity in
# _process (a warning is expected), sends a Dictionary whose keys are not
# in sorted order and a Rect2i (refused: the message names it), owns the
# shared ball and resets it (reset_to) 3 s after b joined, and moves the
# left paddle (player_slot 0, entity_id 1); it stops when DIR/stop exists.
# b joins; in room_joined it sets player_scene and calls spawn_players()
# (the class reference's example), reads local_slot, records the
# Dictionary's key order, the ball's drawn jumps and the left paddle; a
# second NetRoom of b joins the full room; b writes DIR/b.json.
extends Node3D

@onready var room: NetRoom = $NetRoom
@onready var extra: NetRoom = $Extra
@onready var me: Node3D = $Me
@onready var ball: Node3D = $Ball
@onready var ball_net: NetPredictor = $Ball/NetPredictor
@onready var left: Node3D = $Left
@onready var right: Node3D = $Right

var args := {}
var role := ""
var out_dir := ""
var sent := false
var done := false
var joined_at := -1.0
var elapsed := 0.0
var reset_done := false
var ball_base := Vector3.ZERO
var ball_base_t := 0.0
var last_ball := Vector3.INF
var owned_once := false
var got := {"joined_slot": -99, "spawn_ret": -1, "spawned": {}, "dict_keys": [], "ball_jumps": [], "ball_frames": 0,
	"left_local": true, "left_y": [], "extra_error": 0, "errors": [], "player_nodes": 0}


func _ready() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-"):
			var kv := a.substr(5).split("=", true, 1)
			args[kv[0]] = kv[1] if kv.size() > 1 else ""
	role = args.get("role", "")
	out_dir = args.get("out", "")
	for r in [room, extra]:
		r.server_address = args.get("server", "")
		r.direct_links = false
	room.display_name = role
	room.room_joined.connect(_on_joined)
	room.room_error.connect(func(code, message): _log("room_error %d %s" % [code, message]); got["errors"].append([code, message]))
	room.connection_error.connect(func(reason, message): _log("connection_error %d %s" % [reason, message]))
	room.event_received.connect(_on_event)
	room.player_spawned.connect(func(slot, _node): got["spawned"][str(slot)] = got["spawned"].get(str(slot), 0) + 1)
	extra.room_error.connect(func(code, message): _log("extra room_error %d %s" % [code, message]); got["extra_error"] = code)
	if role == "a":
		room.create_room(2)
	else:
		room.join_room(args.get("code", ""))


func _log(msg: String) -> void:
	print("NZ_%s: %s" % [role.to_upper(), msg])


func _on_joined(code: String, slot: int) -> void:
	_log("room_joined %s slot %d local_slot %d" % [code, slot, room.local_slot])
	got["joined_slot"] = room.local_slot
	joined_at = elapsed
	if role == "a":
		var f := FileAccess.open(out_dir.path_join("code.txt"), FileAccess.WRITE)
		f.store_string(code)
		f.close()
		return
	# The class reference's example, from a handler: each player spawned once.
	room.player_scene = preload("res://tests/remote_player.tscn")
	got["spawn_ret"] = room.spawn_players()
	extra.join_room(code)  # a third player in a room of two


func _on_event(slot: int, name: String, ev_args: Array) -> void:
	_log("event %d %s %s" % [slot, name, str(ev_args)])
	if name == "dict":
		for k in ev_args[0].keys():
			got["dict_keys"].append(str(k))


func _physics_process(delta: float) -> void:
	var t := room.local_time()
	if role == "a":
		if ball_net.is_owner():
			if not owned_once:
				owned_once = true  # the host's claim was granted: the ball rolls from here
				ball_base_t = t
			ball.position = ball_base + Vector3(5.0 * (t - ball_base_t), 0, 0)
		left.position.y = sin(t)
	else:
		right.position.y = cos(t)


func _process(delta: float) -> void:
	elapsed += delta
	if role == "a":
		# Moved in _process: NetPredictor samples at the end of the physics
		# frame and says so once.
		me.position = Vector3(3.0 * cos(elapsed), 0, 3.0 * sin(elapsed))
		if not sent and room.get_players().size() == 2 and room.is_synced():
			sent = true
			joined_at = elapsed
			room.send_event("dict", [{"zeta": 1, "alpha": 2, 3: "c", 1: "a"}])
			room.send_event("rect", [Rect2i(1, 2, 3, 4)])  # refused here
		if sent and not reset_done and elapsed - joined_at > 3.0:
			reset_done = true
			ball_base = Vector3(-10, 0, 0)
			ball_base_t = room.local_time()
			ball_net.reset_to(Transform3D(Basis(), ball_base))
			_log("reset the ball")
		if FileAccess.file_exists(out_dir.path_join("stop")) and not done:
			done = true
			room.leave_room()
			await get_tree().create_timer(0.3).timeout
			get_tree().quit(0)
		return
	if done or joined_at < 0:
		return
	if not ball_net.is_hidden():
		got["ball_frames"] += 1
		if last_ball != Vector3.INF and ball.position.distance_to(last_ball) > 3.0:
			got["ball_jumps"].append([last_ball.x, ball.position.x])
		last_ball = ball.position
	got["left_local"] = $Left/NetPredictor.is_local()
	if not $Left/NetPredictor.is_hidden():
		got["left_y"].append(left.position.y)
	if elapsed - joined_at > 8.0:
		done = true
		got["player_nodes"] = get_children().filter(func(n): return n.name.begins_with("Player")).size()
		var f := FileAccess.open(out_dir.path_join("b.json"), FileAccess.WRITE)
		f.store_string(JSON.stringify(got))
		f.close()
		_log("wrote b.json")
		room.leave_room()
		await get_tree().create_timer(0.3).timeout
		get_tree().quit(0)
