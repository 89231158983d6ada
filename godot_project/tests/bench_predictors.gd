# Measures the in-engine cost of remote NetPredictors per entity per frame.
#   godot --headless --path godot_project --max-fps 60 --script res://tests/bench_predictors.gd -- --nz-n=64
# --nz-profile=P sets their motion_profile (default: the NetPredictor's,
# AUTO; 0 VEHICLE, 1 CHARACTER), to tell Auto's share of the cost.
# Builds N Node3D roots, each with a NetPredictor fed by push_state every
# physics frame (a circle per entity, as a remote player's states would
# arrive), and times every frame's _process of all of them: a node that
# processes first (priority -1000) and one that processes last (+1000) read
# Time.get_ticks_usec(). Prints one line: NZ_BENCH={json} with the mean and
# p95 of the frame span, the same with no NetPredictors (the baseline), the
# per-entity cost, the mean time each NetPredictor spent inside the
# extension (debug_frame_usec), and how many Go heap objects the extension
# allocated over the measured frames (push_state included; goal 0).
extends SceneTree

const WARMUP := 120
const FRAMES := 600

class Stamp extends Node:
	var t := 0
	func _process(_delta: float) -> void:
		t = Time.get_ticks_usec()

var n := 64
var profile := -1
var first: Stamp
var last: Stamp
var room: NetRoom
var preds: Array[NetPredictor] = []
var frame := 0
var phase := 0  # 0: with predictors, 1: baseline (predictors removed)
var spans := [[], []]
var inside := 0.0
var inside_n := 0
var allocs_start := 0
var allocs := 0


func _initialize() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-n="):
			n = int(a.substr(7))
		elif a.begins_with("--nz-profile="):
			profile = int(a.substr(13))
	first = Stamp.new()
	first.process_priority = -1000
	root.add_child(first)
	# Only for local_time(), the predictors' clock; kept out of the tree so
	# that the NetPredictors find no room and draw what push_state feeds.
	room = NetRoom.new()
	for i in n:
		var body := Node3D.new()
		body.name = "Entity%d" % i
		var p := NetPredictor.new()
		if profile >= 0:
			p.motion_profile = profile
		body.add_child(p)
		root.add_child(body)
		preds.append(p)
	last = Stamp.new()
	last.process_priority = 1000
	root.add_child(last)


func _physics_process(_delta: float) -> bool:
	var t := room.local_time()
	for i in preds.size():
		var a := t + i * 0.1
		var pos := Vector3(5.0 * cos(a), 0.0, 5.0 * sin(a))
		var vel := Vector3(-5.0 * sin(a), 0.0, 5.0 * cos(a))
		preds[i].push_state(t, Transform3D(Basis(Vector3.UP, -a), pos), vel)
	return false


func _process(_delta: float) -> bool:
	frame += 1
	if phase == 0 and frame == WARMUP:
		allocs_start = room.debug_go_allocations
	if phase == 0 and frame == WARMUP + FRAMES:
		allocs = room.debug_go_allocations - allocs_start
	if frame > WARMUP and last.t > first.t:
		spans[phase].append(last.t - first.t)
		if phase == 0:
			for p in preds:
				inside += p.debug_frame_usec
			inside_n += preds.size()
	if frame == WARMUP + FRAMES:
		if phase == 0:
			phase = 1
			frame = 0
			for p in preds:
				p.get_parent().queue_free()
			preds.clear()
		else:
			_report()
			room.free()
			return true
	return false


func stats(a: Array) -> Dictionary:
	var s := a.duplicate()
	s.sort()
	var sum := 0.0
	for v in s:
		sum += v
	return {
		"mean": sum / max(s.size(), 1),
		"p50": s[int(s.size() * 0.5)] if s.size() > 0 else 0,
		"p95": s[int(s.size() * 0.95)] if s.size() > 0 else 0,
		"frames": s.size(),
	}


func _report() -> void:
	var with := stats(spans[0])
	var base := stats(spans[1])
	var per: float = (with.mean - base.mean) / max(n, 1)
	print("NZ_BENCH=" + JSON.stringify({
		"version": Engine.get_version_info().string,
		"entities": n,
		"profile": profile,  # -1: the default (AUTO)
		"span_usec": with,
		"baseline_usec": base,
		"per_entity_usec": per,
		# The same from the median frames: a frame the machine hitched in
		# (another process, the host) moves the mean, not the median.
		"per_entity_p50_usec": float(with.p50 - base.p50) / max(n, 1),
		"inside_extension_usec": inside / max(inside_n, 1),
		"go_allocations": allocs,
		"frames_counted": FRAMES,
	}))
