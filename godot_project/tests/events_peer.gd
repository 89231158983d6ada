# One player of TestGodotEvents (test/godot/events_test.go): events, chat
# and synced properties between two Godot processes. Arguments after "--":
#   --nz-server=URL  --nz-role=a|b  --nz-out=DIR  --nz-code=CODE (b)
# a creates the room (writes DIR/code.txt), sets two synced properties on
# its entity, sends an event, one with every typed argument (typed_args)
# and a chat line once b is in, and answers b's
# "echo" event; it stops when DIR/stop exists. b joins, checks what it got
# and writes DIR/b.json.
extends Node3D

@onready var room: NetRoom = $NetRoom
@onready var me: Node3D = $Me
@onready var net: NetPredictor = $Me/NetPredictor

var args := {}
var role := ""
var out_dir := ""
var sent := false
var done := false
var got := {"events": [], "chat": [], "errors": [], "types": [], "values": [], "typed": []}


# Every type issue 22 lists, sent by a in the "typed" event; b checks each
# arrives as the same type and value.
func typed_args() -> Array:
	return [Vector2(1.5, -2), Vector2i(3, -4), Vector3(1, 2, 3), Vector3i(-5, 6, 7), Vector4(1, 2, 3, 4),
		Color(0.25, 0.5, 0.75, 1), Quaternion(0, 0.6, 0, 0.8), Basis(Vector3(1, 0, 0), Vector3(0, 0, 1), Vector3(0, -1, 0)),
		Transform2D(0.5, Vector2(10, 20)), Transform3D(Basis.IDENTITY, Vector3(1, 2, 3)), Rect2(1, 2, 30, 40),
		PackedByteArray([0, 1, 254, 255]), PackedFloat32Array([0.5, -1]), PackedFloat64Array([0.1, 1e300]),
		PackedInt32Array([-2147483648, 7]), PackedInt64Array([-9223372036854775807, 9223372036854775807]),
		PackedVector2Array([Vector2(1, 2), Vector2(-3, 4)]), PackedVector3Array([Vector3(1, 2, 3)]),
		PackedStringArray(["a", "ü", ""]), &"jump", {1: "one", 2: [Vector2i(1, 1)]}, {"two": 2, "v": Vector3(0, 1, 0)}]
var elapsed := 0.0


func _ready() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-"):
			var kv := a.substr(5).split("=", true, 1)
			args[kv[0]] = kv[1] if kv.size() > 1 else ""
	role = args.get("role", "")
	out_dir = args.get("out", "")
	room.server_address = args.get("server", "")
	room.direct_links = false
	room.display_name = role
	net.synced_properties = ["editor_description", "process_priority"]
	room.room_joined.connect(_on_joined)
	room.room_error.connect(func(code, message): _log("room_error %d %s" % [code, message]); got["errors"].append(message))
	room.event_received.connect(_on_event)
	room.chat_received.connect(func(slot, text): _log("chat %d %s" % [slot, text]); got["chat"].append([slot, text]))
	if role == "a":
		room.create_room()
	else:
		room.join_room(args.get("code", ""))


func _log(msg: String) -> void:
	print("NZ_%s: %s" % [role.to_upper(), msg])


func _on_joined(code: String, slot: int) -> void:
	_log("room_joined %s slot %d" % [code, slot])
	if role == "a":
		var f := FileAccess.open(out_dir.path_join("code.txt"), FileAccess.WRITE)
		f.store_string(code)
		f.close()


func _on_event(slot: int, name: String, ev_args: Array) -> void:
	_log("event %d %s %s" % [slot, name, str(ev_args)])
	got["events"].append([slot, name, ev_args])
	if name == "hello":
		# The types and values as they arrived (JSON would flatten them).
		got["types"] = ev_args.map(func(a): return type_string(typeof(a)))
		got["values"] = [ev_args[3] == Vector2(1, 2), ev_args[7] == Vector2i(3, -4),
			ev_args[8] == {1: "one", "two": 2}, ev_args[9] == PackedFloat32Array([0.5, -1]),
			ev_args[10] == &"jump", ev_args[11] == Transform3D(Basis.IDENTITY, Vector3(1, 2, 3))]
	if name == "typed":
		var want := typed_args()
		for i in range(want.size()):
			var a = ev_args[i] if i < ev_args.size() else null
			got["typed"].append([type_string(typeof(want[i])), type_string(typeof(a)), a == want[i]])
	if role == "a" and name == "echo":
		room.send_event_to(slot, "echoed", ev_args)


func _physics_process(_delta: float) -> void:
	if role == "a":
		# Synced properties of the entity's root, read each physics frame.
		me.editor_description = "hp=%d" % 75
		me.process_priority = 7


func _process(delta: float) -> void:
	elapsed += delta
	if role == "a":
		if not sent and room.get_players().size() == 2 and room.is_synced():
			sent = true
			room.send_event("hello", [1, 2.5, "x", Vector2(1, 2), Vector3(1, 2, 3), Color(1, 0, 0, 1), {"k": [true, null]},
				Vector2i(3, -4), {1: "one", "two": 2}, PackedFloat32Array([0.5, -1]), &"jump",
				Transform3D(Basis.IDENTITY, Vector3(1, 2, 3))])
			room.send_event("typed", typed_args())
			room.send_chat("  hi there\u0007  ")
			room.send_event("bad", [self])  # refused here: an Object
		if FileAccess.file_exists(out_dir.path_join("stop")) and not done:
			done = true
			room.leave_room()
			await get_tree().create_timer(0.3).timeout
			get_tree().quit(0)
		return
	if done:
		return
	var remote := room.get_player_node(0)
	var have_props: bool = remote != null and remote.editor_description == "hp=75" and remote.process_priority == 7
	var echoed: bool = got["events"].any(func(e): return e[1] == "echoed")
	var hello: bool = got["events"].any(func(e): return e[1] == "hello")
	if hello and not sent:
		sent = true
		room.send_event_to(0, "echo", [42, "back"])
	if (have_props and echoed and got["chat"].size() > 0 and got["typed"].size() > 0) or elapsed > 30.0:
		done = true
		got["props"] = [remote.editor_description, remote.process_priority] if remote != null else []
		var f := FileAccess.open(out_dir.path_join("b.json"), FileAccess.WRITE)
		f.store_string(JSON.stringify(got))
		f.close()
		_log("wrote b.json")
		room.leave_room()
		await get_tree().create_timer(0.3).timeout
		get_tree().quit(0)
