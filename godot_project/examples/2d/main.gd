# The 2D example (the project's main scene is the 3D racer, res://racer/):
# a NetRoom, your player (World/Me, moved with the arrow keys) and a tiny UI
# to create or join a room by code. Every other player appears as a copy of
# player.tscn that NetRoom spawns under World.
#
# Run it (headless prints the events; --nz-bot drives your player in a circle):
#   godot --path godot_project res://examples/2d/main.tscn
#   godot --headless --path godot_project res://examples/2d/main.tscn -- --nz-server=127.0.0.1:8787 --nz-create --nz-bot
#   godot --headless --path godot_project res://examples/2d/main.tscn -- --nz-server=127.0.0.1:8787 --nz-join=ABCDEF --nz-name=Bob
# Add --nz-quit-after=SECONDS to stop by itself.
extends Node2D

@onready var room: NetRoom = $NetRoom
@onready var me: CharacterBody2D = $World/Me
@onready var address: LineEdit = $UI/Panel/Server/Address
@onready var player_name: LineEdit = $UI/Panel/Server/Name
@onready var code: LineEdit = $UI/Panel/Room/Code
# Names of the NetRoom.Phase values, for the status line.
const PHASES := {
	NetRoom.PHASE_LOBBY: "lobby", NetRoom.PHASE_HANDSHAKE: "handshake", NetRoom.PHASE_COUNTDOWN: "countdown",
	NetRoom.PHASE_PLAYING: "playing", NetRoom.PHASE_RESULTS: "results",
}
@onready var status: Label = $UI/Panel/Status
@onready var players: Label = $UI/Panel/Players


func _ready() -> void:
	address.text = room.server_address
	$UI/Panel/Room/Create.pressed.connect(_on_create)
	$UI/Panel/Room/Join.pressed.connect(_on_join)
	$UI/Panel/Room/Leave.pressed.connect(room.leave_room)

	room.connected.connect(func(): _show("Connected."))
	room.disconnected.connect(func(reason): _show("Disconnected. " + reason))
	room.reconnecting.connect(func(reason): _show("Reconnecting... " + reason))
	room.room_joined.connect(_on_joined)
	room.room_left.connect(func(): _show("Left the room."))
	room.room_error.connect(func(err_code, message): _show("Error %d: %s" % [err_code, message]))
	room.player_joined.connect(func(_slot, _name): _list_players())
	room.player_left.connect(func(_slot): _list_players())
	room.player_updated.connect(func(_slot): _list_players())
	room.player_spawned.connect(_on_spawned)
	room.phase_changed.connect(func(phase, _next): _show("Phase: " + PHASES.get(phase, "none")))
	_headless_args()


func _headless_args() -> void:
	var args := {}
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-"):
			var kv := a.substr(5).split("=", true, 1)
			args[kv[0]] = kv[1] if kv.size() > 1 else ""
	if args.has("server"):
		address.text = args.server
	if args.has("name"):
		player_name.text = args.name
	if args.has("bot"):
		me.bot = true
	if args.has("quit-after"):
		get_tree().create_timer(float(args["quit-after"])).timeout.connect(get_tree().quit)
	if args.has("create"):
		_on_create()
	elif args.has("join"):
		code.text = args.join
		_on_join()


func _configure() -> void:
	room.server_address = address.text
	if player_name.text != "":
		room.display_name = player_name.text


func _on_create() -> void:
	_configure()
	_show("Creating a room...")
	room.create_room()


func _on_join() -> void:
	_configure()
	_show("Joining %s..." % code.text)
	room.join_room(code.text)


func _on_joined(room_code: String, slot: int) -> void:
	code.text = room_code
	_show("In room %s as player %d. Share the code; arrow keys move." % [room_code, slot])
	$World/Me/Label.text = room.display_name if room.display_name != "" else "me"
	room.report_loaded(1.0)


func _on_spawned(slot: int, node: Node) -> void:
	var p := room.get_player(slot)
	node.get_node("Label").text = p.get("name", "player %d" % slot)
	node.position = Vector2(480, 360)


func _list_players() -> void:
	var lines := []
	for p in room.get_players():
		lines.append("%d %s%s%s" % [p.slot, p.name, " (host)" if p.is_host else "",
			" (you)" if p.is_local else ("" if p.connected else " (reconnecting)")])
	players.text = "\n".join(lines)
	if DisplayServer.get_name() == "headless":
		print("players: ", ", ".join(lines))


func _show(text: String) -> void:
	status.text = text
	print("nearzero demo: ", text)
