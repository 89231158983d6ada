# One player of the GODOT character test (test/godot/character_test.go):
# tests/peer.gd with a running character instead of the circle. Arguments
# after "--" are peer.gd's, plus:
#   --nz-path=FILE   (mover) the path to run: one knot a line, "t x z" (s
#                    from the start, m), straight between knots, so every
#                    turn and stop is instant. The mover starts it 0.5 s
#                    after its clock is synced, at server time T0, written
#                    to DIR/t0.txt; its position at server time t is the
#                    path at t - T0, and its CharacterBody3D velocity the
#                    segment's, as a game's character would send.
#   --nz-input-delay-ms=D  (mover, the host) the room's input delay, fixed
#                    (NetRoom.input_delay_mode), asked for by its create.
#   --nz-profile=auto|character  (watcher) the NetPredictor's motion profile.
# The watcher's track.json rows are: server time, where its NetPredictor
# draws the mover (x, y, z), where snap on arrival draws it (the newest
# state received, NetPredictor.get_newest_state_position: what Godot's
# MultiplayerSynchronizer shows), debug_age_ms, debug_states, 1 when the
# direct path drew the frame (0: the server's), debug_input_delay_ms, where
# an interpolation buffer draws it (get_interpolated_position, the newest
# state's mean age plus a send interval and 5 ms behind: x, y, z) and the
# NetPredictor's debug_render_lag_ms (how far behind now Auto draws).
# The mover's own.json rows are: server time, where its Me/Visual is drawn
# (x, z: the input delay's drawing of our own entity), where Me is (x, z)
# and the input delay in force (ms).
extends "res://tests/peer.gd"

var times := PackedFloat64Array()
var xs := PackedFloat64Array()
var zs := PackedFloat64Array()
var t0 := -1.0
var own := []
var own_written := false
var age_ms := -1.0  # the newest state's age, averaged (the interpolation's delay)


func _ready() -> void:
	if _arg("role") == "mover":
		_load_path(_arg("path"))
		me.global_position = Vector3(xs[0], 1.0, zs[0]) if times.size() > 0 else Vector3(0, 1, 0)
		var d := _arg("input-delay-ms")
		if d != "" and float(d) > 0:
			room.set("input_delay_ms", float(d))
			room.set("input_delay_mode", 1)  # NetRoom.INPUT_DELAY_FIXED
	if _arg("role") == "watcher" and _arg("profile") == "character":
		room.player_spawned.connect(func(_slot, node):
			(node.get_node("NetPredictor") as NetPredictor).motion_profile = NetPredictor.CHARACTER)
	super()


# _delay_ms returns the input delay a NetPredictor applies (0 from a
# library without input delay, so that the test also measures older builds).
func _delay_ms(p: NetPredictor) -> float:
	var d = p.get("debug_input_delay_ms")
	return 0.0 if d == null else d


# _lag_ms returns the NetPredictor's render lag (0 from a library without
# debug_render_lag_ms).
func _lag_ms(p: NetPredictor) -> float:
	var d = p.get("debug_render_lag_ms")
	return 0.0 if d == null else d


# _arg reads one --nz-KEY=VALUE argument before peer.gd's _ready parses
# them all.
func _arg(key: String) -> String:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-%s=" % key):
			return a.substr(6 + key.length())
	return ""


func _load_path(path: String) -> void:
	var f := FileAccess.open(path, FileAccess.READ)
	if f == null:
		push_error("char_peer: cannot read the path %s" % path)
		return
	while not f.eof_reached():
		var p := f.get_line().split(" ", false)
		if p.size() == 3:
			times.append(float(p[0]))
			xs.append(float(p[1]))
			zs.append(float(p[2]))
	f.close()


func _physics_process(_delta: float) -> void:
	if role != "mover" or not room.is_synced() or times.size() < 2:
		return
	var t := room.physics_server_time()
	if t0 < 0:
		t0 = t + 0.5
		var f := FileAccess.open(out_dir.path_join("t0.txt"), FileAccess.WRITE)
		f.store_string(String.num(t0, 6))
		f.close()
		_log("moving from %s" % String.num(t0, 6))
	var s := t - t0
	var body := me as CharacterBody3D
	if s <= times[0]:
		me.global_position = Vector3(xs[0], 1.0, zs[0])
		body.velocity = Vector3.ZERO
		return
	if s >= times[times.size() - 1]:
		var n := times.size() - 1
		me.global_position = Vector3(xs[n], 1.0, zs[n])
		body.velocity = Vector3.ZERO
		return
	var i := times.bsearch(s, false) - 1  # times[i] <= s < times[i + 1]
	var dt := times[i + 1] - times[i]
	var v := Vector3((xs[i + 1] - xs[i]) / dt, 0.0, (zs[i + 1] - zs[i]) / dt)
	me.global_position = Vector3(xs[i], 1.0, zs[i]) + v * (s - times[i])
	body.velocity = v


func _process(delta: float) -> void:
	if role != "watcher":
		if t0 >= 0 and room.is_synced():
			var v := ($Me/Visual as Node3D).global_position
			own.append([room.server_time(), v.x, v.z, me.global_position.x, me.global_position.z,
				_delay_ms(net)])
		if not own_written and FileAccess.file_exists(out_dir.path_join("stop")):
			own_written = true
			var f := FileAccess.open(out_dir.path_join("own.json"), FileAccess.WRITE)
			f.store_string(JSON.stringify({"own": own}))
			f.close()
		super(delta)  # the mover's stop check
		return
	frames += 1
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
	var n := pred.get_newest_state_position()
	age_ms = pred.debug_age_ms if age_ms < 0 else lerpf(age_ms, pred.debug_age_ms, 1.0 / 60.0)
	var i := pred.get_interpolated_position(max(age_ms, 0.0) + 1000.0 / 60.0 + 5.0)
	track.append([t, p.x, p.y, p.z, n.x, n.y, n.z, pred.debug_age_ms, pred.debug_states,
		1 if pred.debug_path == "direct" else 0, _delay_ms(pred), i.x, i.y, i.z, _lag_ms(pred)])
	if t - record_start >= record_for:
		var f := FileAccess.open(out_dir.path_join("track.json"), FileAccess.WRITE)
		f.store_string(JSON.stringify({"rtt_ms": room.rtt_ms, "version": Engine.get_version_info().string,
			"frames": track.size(), "track": track}))
		f.close()
		_log("wrote %d frames" % track.size())
		_finish(0)
