# Times the NetRooms' _process in examples/debugger/two_players.tscn (a
# host and a lagged bot, two NetRooms in one window): a node processing
# just before them (priority -1001) and one just after (-999) read
# Time.get_ticks_usec() each frame. Once both are in the room and synced,
# it skips 120 frames, measures FRAMES frames, and at least MIN_SECONDS
# (an unthrottled window draws 600 frames in a few seconds: the editor's
# tab must see the game play), and writes
#   {"mean_us", "p50_us", "p95_us", "p99_us", "max_us", "frames", "debugger"}
# to the file named by the NZ_COST_OUT environment variable (default
# user://debug_cost.json), then quits. TestGodotDebuggerTab runs it from
# the command line (no debugger) and from the editor (the nearzero tab
# listening), to price the debugger samples.
extends Node

const WARMUP := 120
const FRAMES := 600
const MIN_SECONDS := 20.0

class Stamp extends Node:
	var t := 0
	func _process(_delta: float) -> void:
		t = Time.get_ticks_usec()

var before: Stamp
var after: Stamp
var game: Node
var frames := 0
var spans: Array[int] = []
var started_ms := -1


func _ready() -> void:
	before = Stamp.new()
	before.process_priority = -1001
	add_child(before)
	after = Stamp.new()
	after.process_priority = -999
	add_child(after)
	game = preload("res://examples/debugger/two_players.tscn").instantiate()
	add_child(game)


func _process(_delta: float) -> void:
	var host: NetRoom = game.get_node("Host/NetRoom")
	if host.get_players().size() < 2 or not host.is_synced():
		return
	frames += 1
	if frames <= WARMUP:
		return
	spans.append(after.t - before.t)
	if started_ms < 0:
		started_ms = Time.get_ticks_msec()
	if spans.size() < FRAMES or Time.get_ticks_msec() - started_ms < MIN_SECONDS * 1000.0:
		return
	set_process(false)
	var sorted := spans.duplicate()
	sorted.sort()
	var total := 0
	for s in spans:
		total += s
	var pick := func(q: float) -> int: return sorted[mini(int(q * sorted.size()), sorted.size() - 1)]
	var out := {"mean_us": float(total) / spans.size(), "p50_us": pick.call(0.5), "p95_us": pick.call(0.95),
		"p99_us": pick.call(0.99), "max_us": sorted[-1], "frames": spans.size(), "debugger": EngineDebugger.is_active()}
	var path := OS.get_environment("NZ_COST_OUT")
	if path == "":
		path = "user://debug_cost.json"
	var f := FileAccess.open(path, FileAccess.WRITE)
	f.store_string(JSON.stringify(out))
	f.close()
	print("NZ_COST=", JSON.stringify(out))
	get_tree().quit()
