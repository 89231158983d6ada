# One player of the GODOT integration test (test/godot). Arguments after "--":
#   --nz-server=ws://127.0.0.1:PORT/ws   the room server
#   --nz-role=mover|watcher              mover creates the room and moves on a
#                                        circle; watcher joins and records
#   --nz-out=DIR                         where to write code.txt (mover) and
#                                        track.json (watcher); the mover stops
#                                        when DIR/stop exists
#   --nz-code=CODE                       the room to join (watcher)
#   --nz-seconds=S                       how long the watcher records
#   --nz-radius=R --nz-omega=W           the circle: R m, W rad/s, about the
#                                        origin at height 1, as a function of
#                                        the server clock
#   --nz-lag-ms=L --nz-jitter-ms=J       NetRoom's lag simulator on this
#                                        player's server link (each way)
# The Peer root processes after every other node (process_priority 1000), so
# it reads where the NetPredictors drew this frame.
extends Node3D

@onready var room: NetRoom = $NetRoom
@onready var me: Node3D = $Me
@onready var net: NetPredictor = $Me/NetPredictor

var args := {}
var role := ""
var out_dir := ""
var radius := 5.0
var omega := 1.0
var record_for := 6.0
var moving := false
var track := []
var record_start := -1.0
var frames := 0
var stop_check := 0.0
var done := false


func _ready() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-"):
			var kv := a.substr(5).split("=", true, 1)
			args[kv[0]] = kv[1] if kv.size() > 1 else ""
	role = args.get("role", "")
	out_dir = args.get("out", "")
	radius = float(args.get("radius", "5"))
	omega = float(args.get("omega", "1"))
	record_for = float(args.get("seconds", "6"))
	room.server_address = args.get("server", "")
	if args.has("lag-ms"):
		room.lag_latency_ms = float(args["lag-ms"])
		room.lag_jitter_ms = float(args.get("jitter-ms", "0"))
		room.lag_enabled = true
	if args.has("no-direct"):
		room.direct_links = false  # measure the server path alone
	room.display_name = role
	room.room_joined.connect(_on_joined)
	room.room_error.connect(func(code, message): _log("room_error %d %s" % [code, message]))
	room.disconnected.connect(func(reason): _log("disconnected " + reason))
	room.clock_synced.connect(func(): _log("clock_synced"))
	room.player_spawned.connect(func(slot, node): _log("player_spawned %d %s" % [slot, node.name]))
	room.player_despawned.connect(func(slot): _log("player_despawned %d" % slot))
	match role:
		"mover":
			room.create_room()
		"watcher":
			room.join_room(args.get("code", ""))
		_:
			_log("unknown role '%s'" % role)
			get_tree().quit(2)


func _log(msg: String) -> void:
	print("NZ_%s: %s" % [role.to_upper(), msg])


func _on_joined(code: String, slot: int) -> void:
	_log("room_joined %s slot %d (local predictor is_local=%s)" % [code, slot, net.is_local()])
	if role == "mover":
		var f := FileAccess.open(out_dir.path_join("code.txt"), FileAccess.WRITE)
		f.store_string(code)
		f.close()


func circle(t: float) -> Vector3:
	return Vector3(radius * cos(omega * t), 1.0, radius * sin(omega * t))


func _physics_process(_delta: float) -> void:
	if role != "mover" or not room.is_synced():
		return
	# Position as a function of the physics frame's server time: the time
	# the NetPredictor stamps this frame's sample with.
	var t := room.physics_server_time()
	me.global_position = circle(t)
	me.rotation = Vector3(0, -omega * t, 0)
	if not moving:
		moving = true
		net.teleport()  # from the origin to the circle: a jump, not a move
		_log("moving")


func _process(delta: float) -> void:
	frames += 1
	if role == "mover":
		stop_check += delta
		if stop_check > 0.25:
			stop_check = 0.0
			if FileAccess.file_exists(out_dir.path_join("stop")):
				_finish(0)
		return
	if done:
		return
	var remote := room.get_player_node(0)
	if remote == null or not room.is_synced():
		return
	var pred: NetPredictor = remote.get_node("NetPredictor")
	if pred.is_hidden():
		return
	var t := room.server_time()
	if record_start < 0:
		record_start = t
		_log("recording")
	var p := (remote as Node3D).global_position
	track.append([t, p.x, p.y, p.z, pred.debug_age_ms, pred.debug_correction, 1 if pred.is_ghost() else 0])
	if t - record_start >= record_for:
		var f := FileAccess.open(out_dir.path_join("track.json"), FileAccess.WRITE)
		f.store_string(JSON.stringify({"radius": radius, "omega": omega, "rtt_ms": room.rtt_ms,
			"version": Engine.get_version_info().string, "frames": track.size(), "track": track}))
		f.close()
		_log("wrote %d frames" % track.size())
		_finish(0)


func _finish(code: int) -> void:
	if done:
		return
	done = true
	room.leave_room()
	# Give the leave a moment to go out, then quit (the library also waits
	# for the goodbye at shutdown).
	await get_tree().create_timer(0.3).timeout
	get_tree().quit(code)
