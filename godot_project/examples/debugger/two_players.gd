# Two players in one window, for the editor's nearzero debugger tab: the
# host hosts the room server in the game (host_local) and creates a room,
# a bot joins it through the lag simulator (50 ms each way, 10 ms jitter,
# 2% loss), and both drive in circles. Run it from the editor (F6 on this
# scene) with the nearzero plugin enabled, then open Debugger > nearzero:
# Host's room shows Bot's player (data age, correction, speed, path, pops)
# and the links; Bot's room, in the Room list, shows Host's.
#
# Headless, for the tests: --nz-port=N hosts on port N (default 8788),
# --nz-quit-after=SECONDS stops.
extends Node2D

@onready var host: NetRoom = $Host/NetRoom
@onready var bot: NetRoom = $Bot/NetRoom
@onready var status: Label = $Status

var _port := 8788


func _ready() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-port="):
			_port = int(a.get_slice("=", 1))
		elif a.begins_with("--nz-quit-after="):
			get_tree().create_timer(float(a.get_slice("=", 1))).timeout.connect(get_tree().quit)
	$Host/Me.bot = true
	$Bot/Me.bot = true
	$Bot/Me.bot_angle = PI
	for r in [host, bot]:
		r.room_error.connect(func(code, message): _show("%s: error %d: %s" % [r.name, code, message]))
		r.connection_error.connect(func(reason, message): _show("%s: connection: %s" % [r.name, message]))
	host.room_joined.connect(_on_host_joined)
	bot.room_joined.connect(func(code, slot): _show("Bot joined %s as slot %d" % [code, slot]))
	var lan := host.host_local(_port, 2)
	if lan == "":
		_show("Could not host on port %d" % _port)
		return
	host.create_room()
	_show("Hosting on %s" % lan)


func _on_host_joined(code: String, _slot: int) -> void:
	_show("Room %s: the bot joins" % code)
	bot.server_address = host.server_address
	bot.join_room(code)


func _show(text: String) -> void:
	status.text = text
	print("two_players: ", text)
