# The racer: a NetRoom (the room, its round flow and the remote cars), your
# car, the track (loaded in the background while you are in the menu), the
# menu with the room inside it, the HUD and the F3 overlay.
#
# Netcode, one switch away (the room creator's choice, menu "Netcode"):
#  - nearzero: NetRoom spawns car.tscn for every other player and its
#    NetPredictor draws the car where it is now.
#  - Godot: the same race on ENetMultiplayerPeer with the room creator as
#    host (ENet port = the room server's port + 1), a MultiplayerSpawner
#    and a MultiplayerSynchronizer per car (car_enet.tscn). Joiners connect
#    through NetRoom.start_udp_relay, so the lag simulator applies to both
#    stacks alike. The room, lobby and round flow stay on NetRoom.
#
# Command line (after "--"; headless runs and tests):
#   --nz-server=ADDR|local   room server, or host one in the game (default: local)
#   --nz-create              create a room;  --nz-join=CODE|LINK  join one
#   --nz-name=NAME           display name;   --nz-bot  the bot drives, readies by itself
#   --nz-players=N           (host) start when N players are loaded and ready
#   --nz-laps=N --nz-limit=S laps and time limit (host)
#   --nz-mode=nearzero|enet  the netcode (host)
#   --nz-lag-ms=L --nz-jitter-ms=J --nz-loss=P   lag between two players, one way
#   --nz-input-delay=0|50|100|adaptive   the room's input delay (host; nearzero mode)
#   --nz-out=DIR             write DIR/code.txt (host) and, with --nz-poslog, DIR/pos-NAME.txt
#   --nz-poslog              log own and drawn positions with the system clock
#   --nz-rounds=N            quit after N rounds' results;  --nz-nocollide  cars never collide
#   --nz-switch-mode=S       (host) flip the netcode S s after joining, as the lobby switch does
#   --nz-vote                vote for a restart on the results;  --nz-reset-at=S  press reset S s after GO
#   --nz-shots=DIR           save screenshots (needs a renderer, see docs)
#   --nz-record-inputs=PATH  write your car's inputs per physics frame from GO, in the
#                            bench's CSV (go run ./bench -inputs PATH; see bench/README.md)
extends Node

const TRACK_PATH := "res://racer/track.tscn"
const CAR_SCENE := preload("res://racer/car.tscn")
const ENET_CAR := "res://racer/car_enet.tscn"
const SETTINGS_FILE := "user://racer.cfg"
const COLORS := [Color(0.9, 0.2, 0.2), Color(0.2, 0.5, 1.0), Color(1.0, 0.8, 0.1), Color(0.2, 0.8, 0.3),
	Color(0.8, 0.3, 0.9), Color(1.0, 0.5, 0.1), Color(0.2, 0.85, 0.85), Color(0.95, 0.95, 0.95)]
## Lag between two players, one way (each player's link gets half in
## nearzero mode, since states cross two links through the server; the
## ENet joiner's relay gets all of it, since ENet goes straight to the host).
const LAG_PRESETS := [
	{"name": "Lag: off", "latency": 0.0, "jitter": 0.0, "loss": 0.0},
	{"name": "50 ms", "latency": 50.0, "jitter": 4.0, "loss": 0.0},
	{"name": "150 ms + 5% loss", "latency": 150.0, "jitter": 10.0, "loss": 5.0},
	{"name": "Wi-Fi stalls", "latency": 20.0, "jitter": 140.0, "loss": 3.0},
]
## The room's input delay (NetRoom.input_delay_mode and _ms): your car is
## drawn that late, the others' states placed as far ahead.
const DELAY_PRESETS := [
	{"name": "off", "mode": NetRoom.INPUT_DELAY_OFF, "ms": 0.0},
	{"name": "50 ms", "mode": NetRoom.INPUT_DELAY_FIXED, "ms": 50.0},
	{"name": "100 ms", "mode": NetRoom.INPUT_DELAY_FIXED, "ms": 100.0},
	{"name": "adaptive (up to 150 ms)", "mode": NetRoom.INPUT_DELAY_ADAPTIVE, "ms": 150.0},
]
const LIMITS := [60, 120, 180]
const PHASE_NAMES := {-1: "none", 0: "lobby", 1: "handshake", 2: "countdown", 3: "playing", 4: "results"}

@onready var room: NetRoom = $NetRoom
@onready var world: Node3D = $World
@onready var cars: Node3D = $World/Cars
@onready var enet_cars: Node3D = $World/EnetCars
@onready var spawner: MultiplayerSpawner = $World/EnetSpawner
@onready var camera: Camera3D = $World/Camera
@onready var menu = $UI/Menu
@onready var hud = $UI/Hud
@onready var overlay = $UI/Overlay

var args := {}
var track  # track.gd
var car  # your car (car.gd)
var track_loaded := false
var load_progress := 0.0
var lag_index := 0
var delay_index := 0  # DELAY_PRESETS
var custom_lag := {}
var gamepad := false

# The room's settings (the host's; others read them from the host's car).
var laps := 3
var limit_index := 2
var enet_mode := false
## Whether this player knows the room's settings (the host always does;
## the others once the host's car has sent them). Ready waits for it.
var settings_known := false

var phase := -1
var go_time := -1.0
var deadline := -1.0
var round_laps := 3
var round_limit := 180.0
var racing := false
var reported_finish := false
var results := {}
var rounds_done := 0
var reset_tested := false
var ready_sent := false
var start_sent_at := -10.0
var lan_address := ""
var hosting := false

var enet_peer: ENetMultiplayerPeer
var enet_joining := false

var poslog: FileAccess
## The car the camera follows instead of yours (screenshots).
var camera_target: Node3D
## Set by the screenshot script until it has its lobby picture.
var hold_start := false
var shots_dir := ""


func _ready() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-"):
			var kv := a.substr(5).split("=", true, 1)
			args[kv[0]] = kv[1] if kv.size() > 1 else ""
	ResourceLoader.load_threaded_request(TRACK_PATH)
	_load_settings()
	menu.set_lag_presets(LAG_PRESETS.map(func(p): return p.name), lag_index)
	menu.set_delay_presets(DELAY_PRESETS.map(func(p): return p.name), delay_index)
	menu.delay_changed.connect(_delay_selected)
	menu.create_pressed.connect(_create)
	menu.join_pressed.connect(_join)
	menu.leave_pressed.connect(_leave)
	menu.ready_toggled.connect(func(on): room.set_ready(on))
	menu.start_pressed.connect(func(): room.start_round())
	menu.vote_pressed.connect(_vote)
	menu.settings_changed.connect(_menu_settings_changed)
	menu.lag_changed.connect(_lag_selected)
	menu.markers_toggled.connect(func(on): overlay.markers_on = on)
	overlay.room = room
	overlay.markers_root = $World/Markers

	room.room_joined.connect(_on_joined)
	room.room_left.connect(_on_left)
	room.room_error.connect(_on_error)
	room.reconnecting.connect(func(_r): _set_connection_lost(true))
	room.reconnected.connect(func(): _set_connection_lost(false))
	room.connected.connect(func(): _set_connection_lost(false))
	room.disconnected.connect(_on_disconnected)
	room.player_joined.connect(func(_s, _n): _refresh_players())
	room.player_left.connect(func(_s): _refresh_players())
	room.player_updated.connect(func(_s): _refresh_players())
	room.host_changed.connect(func(_s): _refresh_players())
	room.player_spawned.connect(_on_spawned)
	room.player_despawned.connect(func(slot): overlay.remove_remote(slot))
	room.phase_changed.connect(_on_phase)
	room.results.connect(_on_results)
	room.notice.connect(func(kind, text): _event("notice", {"kind": kind, "text": text}))

	multiplayer.peer_connected.connect(_enet_peer_connected)
	multiplayer.peer_disconnected.connect(_enet_peer_disconnected)
	multiplayer.connected_to_server.connect(_enet_connected)
	multiplayer.connection_failed.connect(_enet_lost.bind("enet_failed"))
	multiplayer.server_disconnected.connect(_enet_lost.bind("enet_lost"))
	spawner.spawned.connect(_on_enet_spawned)

	_spawn_own_car()
	_apply_args()
	_apply_lag()
	_apply_delay()
	if args.has("shots"):
		shots_dir = args.shots
		var shots = load("res://racer/screenshots.gd").new()
		shots.main = self
		add_child(shots)


func _vote() -> void:
	room.vote_restart(true)
	menu.vote_button.disabled = true


func _lag_selected(i: int) -> void:
	lag_index = i
	custom_lag = {}
	_apply_lag()
	_save_settings()


func _on_disconnected(reason: String) -> void:
	_set_connection_lost(false)
	if reason != "":
		menu.show_banner("Disconnected: " + reason)


func _enet_lost(what: String) -> void:
	_event(what, {})
	_enet_close()


# --- settings kept between runs ---------------------------------------------

func _load_settings() -> void:
	var cfg := ConfigFile.new()
	cfg.load(SETTINGS_FILE)
	menu.name_edit.text = cfg.get_value("player", "name", "")
	menu.server_choice.select(cfg.get_value("net", "server_choice", 0))
	menu.address_edit.text = cfg.get_value("net", "address", "")
	menu.mode_choice.select(cfg.get_value("net", "mode", 0))
	lag_index = cfg.get_value("net", "lag", 0)
	delay_index = clamp(cfg.get_value("net", "input_delay", 0), 0, DELAY_PRESETS.size() - 1)
	menu._update_server()


func _save_settings() -> void:
	if args.has("bot"):
		return  # headless bots share user:// with the player
	var cfg := ConfigFile.new()
	cfg.set_value("player", "name", menu.name_edit.text)
	cfg.set_value("net", "server_choice", menu.server_choice.selected)
	cfg.set_value("net", "address", menu.address_edit.text)
	cfg.set_value("net", "mode", menu.mode_choice.selected)
	cfg.set_value("net", "lag", lag_index)
	cfg.set_value("net", "input_delay", delay_index)
	cfg.save(SETTINGS_FILE)


func _apply_args() -> void:
	if args.has("name"):
		menu.name_edit.text = args.name
	if args.has("server"):
		if args.server == "local":
			menu.server_choice.select(0)
		else:
			menu.server_choice.select(1)
			menu.address_edit.text = args.server
	if args.has("mode"):
		menu.mode_choice.select(1 if args.mode == "enet" else 0)
	if args.has("laps"):
		menu.laps_spin.value = int(args.laps)
	if args.has("limit"):
		var s := int(args.limit)
		limit_index = 0
		for i in LIMITS.size():
			if LIMITS[i] <= s:
				limit_index = i
		menu.limit_choice.select(limit_index)
	if args.has("lag"):
		lag_index = clamp(int(args.lag), 0, LAG_PRESETS.size() - 1)
		menu.lag_choice.select(lag_index)
	if args.has("input-delay"):
		delay_index = 3 if args["input-delay"] == "adaptive" else 0
		for i in DELAY_PRESETS.size():
			if DELAY_PRESETS[i].mode == NetRoom.INPUT_DELAY_FIXED and DELAY_PRESETS[i].ms == float(args["input-delay"]):
				delay_index = i
		menu.delay_choice.select(delay_index)
	if args.has("lag-ms"):
		custom_lag = {"latency": float(args["lag-ms"]), "jitter": float(args.get("jitter-ms", "0")),
			"loss": float(args.get("loss", "0"))}
	if args.has("bot"):
		car.bot = true
		car.bot_speed = float(args.get("bot-speed", "1"))
	if args.has("nocollide"):
		car.collide_cars = false
	if args.has("record-inputs"):
		car.input_log = FileAccess.open(args["record-inputs"], FileAccess.WRITE)
		if car.input_log:
			car.input_log.store_line("t_s,client,throttle,brake,steer,heading_rad,jump")
		else:
			push_error("--nz-record-inputs: cannot write %s" % args["record-inputs"])
	if args.has("poslog") and args.has("out"):
		poslog = FileAccess.open(args.out.path_join("pos-%s.txt" % args.get("name", "player")), FileAccess.WRITE)
	_menu_settings_changed()
	if args.has("create"):
		_create.call_deferred()
	elif args.has("join"):
		_join.call_deferred(args.join)


func _menu_settings_changed() -> void:
	room.display_name = menu.name_edit.text.strip_edges()
	laps = int(menu.laps_spin.value)
	limit_index = menu.limit_choice.selected
	var want_enet: bool = menu.mode_choice.selected == 1
	if (room.room_code == "" or room.is_host()) and want_enet != enet_mode:
		enet_mode = want_enet
		if room.room_code != "":
			# The host switched the netcode in the lobby: live, for everyone.
			_apply_lag()
			_update_mode_visibility()
	_publish_settings()
	_save_settings()


# --- lag ----------------------------------------------------------------------

func _apply_lag() -> void:
	var p: Dictionary = custom_lag if not custom_lag.is_empty() else LAG_PRESETS[lag_index]
	# The preset is the lag between two players, one way. nearzero: states
	# cross two links (yours to the server, the server to them): half each.
	# Godot/ENet: the joiner's relay carries it all; the host adds none.
	var share := 0.5
	if enet_mode:
		share = 0.0 if room.is_host() else 1.0
	room.lag_latency_ms = p.latency * share
	room.lag_jitter_ms = p.jitter * share
	room.lag_loss_percent = p.loss * share
	# The lag_* settings cover the direct (peer-to-peer) links too, so every
	# path between two players has the preset.
	room.lag_enabled = p.latency > 0 or p.jitter > 0 or p.loss > 0


# --- input delay --------------------------------------------------------------

func _delay_selected(i: int) -> void:
	delay_index = i
	_apply_delay()
	_save_settings()


## Hands the chosen input delay to the room: asked for by the create, or
## sent at once by the host in the lobby (a guest shows the room's).
func _apply_delay() -> void:
	if room.room_code != "" and not room.is_host():
		return
	var p: Dictionary = DELAY_PRESETS[delay_index]
	room.input_delay_ms = p.ms
	room.input_delay_mode = p.mode


## The preset the room's input delay matches (for a guest's menu).
func _room_delay_index() -> int:
	for i in DELAY_PRESETS.size():
		var p: Dictionary = DELAY_PRESETS[i]
		if p.mode == room.input_delay_mode and (p.mode == NetRoom.INPUT_DELAY_OFF or p.ms == room.input_delay_ms):
			return i
	return delay_index


func lag_name() -> String:
	if not custom_lag.is_empty():
		return "%.0f ms one way" % custom_lag.latency
	return LAG_PRESETS[lag_index].name


# --- the room -----------------------------------------------------------------

func _spawn_own_car() -> void:
	car = CAR_SCENE.instantiate()
	car.mine = true
	car.name = "MyCar"
	cars.add_child(car)
	car.was_reset.connect(func(why): _event("reset", {"why": why, "checkpoint": car.next_cp - 1,
		"ghosted": car.ghosted}))
	car.was_cleared.connect(func(): _event("ghost_cleared", {}))
	car.position = Vector3(0, -50, 0)  # parked under the world until the track is in
	car.set_physics_process(false)


func _server_address_for_join() -> String:
	var a: String = menu.address_edit.text.strip_edges()
	if menu.server_choice.selected == 0:
		if a == "":
			a = "127.0.0.1"
		if not a.contains(":") or a.begins_with("["):
			a += ":8787"
	return a


func _create() -> void:
	menu.show_banner("")
	_menu_settings_changed()
	if menu.server_choice.selected == 0:
		if not room.has_method("host_local"):
			menu.show_banner("This build of the addon cannot host: choose a room server.")
			return
		lan_address = room.call("host_local", int(args.get("port", "0")))
		if lan_address == "":
			return  # room_error says why
		hosting = true
	else:
		room.server_address = menu.address_edit.text.strip_edges()
	menu.status.text = "Creating a room on %s..." % room.server_address
	menu.set_in_room(true)
	menu.set_players([])
	room.create_room()


func _join(text: String) -> void:
	text = text.strip_edges()
	if text == "":
		menu.show_banner("Type a room code or paste an invite link.")
		return
	menu.show_banner("")
	var code := text
	# Our invite links carry the server: nearzero://join/CODE?server=ws://host:port/ws
	var m := RegEx.create_from_string("[?&]server=([^&\\s]+)").search(text)
	if m:
		room.server_address = m.get_string(1).uri_decode()
		code = text.substr(0, text.find("?"))
	else:
		room.server_address = _server_address_for_join()
	_menu_settings_changed()
	menu.status.text = "Joining %s on %s..." % [code, room.server_address]
	menu.set_in_room(true)
	menu.set_players([])
	room.join_room(code)


func _leave() -> void:
	room.leave_room()
	_enet_close()
	if hosting and room.has_method("stop_local_server"):
		room.call("stop_local_server")
	hosting = false
	menu.set_in_room(false)
	menu.status.text = "Left the room."
	_set_racing(false)


func _on_joined(code: String, slot: int) -> void:
	_event("joined", {"code": code, "slot": slot})
	menu.code_label.text = code
	settings_known = room.is_host()
	car.set_color(COLORS[slot % COLORS.size()])
	var others: String = lan_address if hosting else room.server_address
	menu.link = "%s?server=%s" % [room.invite_link if room.invite_link != "" else "nearzero://join/" + code,
		others.uri_encode()]
	menu.hosting_label.text = ("Hosting on this machine. Others join with the code, server address %s" % others) \
		if hosting else "Server %s" % room.server_address
	menu.status.text = "In room %s. Share the code." % code
	if args.has("out") and room.is_host():
		var f := FileAccess.open(args.out.path_join("code.txt"), FileAccess.WRITE)
		f.store_string(code)
		f.close()
	ready_sent = false
	room.report_loaded(1.0 if track_loaded else load_progress)
	_apply_lag()
	_refresh_players()
	if enet_mode and room.is_host():
		_enet_host()
	if args.has("switch-mode") and room.is_host():
		# Test the live switch: the host flips the netcode in the lobby.
		await get_tree().create_timer(float(args["switch-mode"])).timeout
		menu.mode_choice.select(1 - menu.mode_choice.selected)
		_menu_settings_changed()
		_event("mode", {"enet": enet_mode})


func _on_left() -> void:
	_event("left", {})
	menu.set_in_room(false)
	_set_racing(false)
	_enet_close()


func _on_error(code: int, message: String) -> void:
	_event("error", {"code": code, "message": message})
	if message.begins_with("state rejected"):
		return  # the server dropped one state (late or too fast): nothing to show
	if code == NetRoom.ERROR_UPDATE_REQUIRED:
		menu.show_banner("Update required: this game and the room server are different versions. " +
			"Update the game (or the server), then try again.")
	elif code == NetRoom.ERROR_ROOM_NOT_FOUND:
		menu.show_banner("No room with that code. Check the code and the server address.")
	else:
		menu.show_banner(message)
	if room.room_code == "":
		menu.set_in_room(false)


func _set_connection_lost(lost: bool) -> void:
	if lost:
		menu.show_banner("Connection lost. Reconnecting...")
		_event("reconnecting", {})
	elif menu.banner.text.begins_with("Connection lost"):
		menu.show_banner("")
	_refresh_players()


func _refresh_players() -> void:
	var rows := []
	var all_ready := true
	for p in room.get_players():
		var state := "reconnecting..."
		if p.connected:
			if p.ready:
				state = "ready"
			elif p.loaded < 1.0:
				state = "loading %d%%" % int(p.loaded * 100)
			else:
				state = "not ready"
		if not (p.connected and p.ready and p.loaded >= 1.0):
			all_ready = false
		rows.append({"name": p.name if p.name != "" else "player %d" % p.slot, "color": COLORS[p.slot % COLORS.size()],
			"state": state, "host": p.is_host, "you": p.is_local})
	if room.room_code != "":
		menu.set_players(rows)
	var host: bool = room.is_host()
	var online: bool = room.status == NetRoom.STATUS_CONNECTED
	menu.host_row.visible = room.room_code != ""
	menu.laps_spin.editable = host and online and phase == NetRoom.PHASE_LOBBY
	menu.limit_choice.disabled = not (host and online and phase == NetRoom.PHASE_LOBBY)
	menu.mode_choice.disabled = room.room_code != "" and not (host and online and phase == NetRoom.PHASE_LOBBY)
	menu.delay_choice.disabled = room.room_code != "" and not (host and online and phase == NetRoom.PHASE_LOBBY)
	menu.start_button.disabled = not (host and online and phase == NetRoom.PHASE_LOBBY and all_ready and rows.size() > 0)
	menu.start_button.text = "Start" if host else "Host starts"
	menu.start_button.tooltip_text = "" if all_ready else "Everyone must be loaded and ready"
	var known := settings_known or host
	menu.ready_button.disabled = not (track_loaded and online and known and phase == NetRoom.PHASE_LOBBY)
	if track_loaded and not known:
		menu.ready_button.text = "Waiting for the host's settings..."
	elif track_loaded:
		menu.ready_button.text = "Ready!" if menu.ready_button.button_pressed else "Ready"
	else:
		menu.ready_button.text = "Loading track %d%%" % int(load_progress * 100)
	if not host:
		menu.laps_spin.set_value_no_signal(laps)
		menu.limit_choice.select(limit_index)
		menu.mode_choice.select(1 if enet_mode else 0)
		menu.delay_choice.select(_room_delay_index())


## The room's settings travel as the host's car's input_bits (laps in bits
## 0-3, time limit index in 4-5, netcode in 7), as NetRoom has no room
## settings call yet; every player reads them from the host's car.
func _publish_settings() -> void:
	if car and car.net:
		car.net.input_bits = (laps & 15) | ((limit_index & 3) << 4) | (128 if enet_mode else 0)


func _read_host_settings() -> void:
	if room.is_host() or room.room_code == "":
		return
	var host_car := room.get_player_node(room.host_slot)
	if host_car == null:
		return
	var net: NetPredictor = host_car.get_node_or_null("NetPredictor")
	if net == null or net.debug_states == 0:
		return
	var bits := net.input_bits
	if (bits & 15) == 0:
		return
	if not settings_known:
		settings_known = true
		_refresh_players()
	var new_laps := bits & 15
	var new_limit := (bits >> 4) & 3
	var new_enet := (bits & 128) != 0
	if new_laps != laps or new_limit != limit_index or new_enet != enet_mode:
		laps = new_laps
		limit_index = min(new_limit, LIMITS.size() - 1)
		if new_enet != enet_mode:
			enet_mode = new_enet
			_apply_lag()
			_update_mode_visibility()
		_refresh_players()


func _on_spawned(slot: int, node) -> void:
	var p := room.get_player(slot)
	node.slot = slot
	node.track = track
	node.set_color(COLORS[slot % COLORS.size()])
	node.set_label(p.get("name", "player %d" % slot))
	overlay.add_remote(slot, node)
	var net: NetPredictor = node.get_node_or_null("NetPredictor")
	if net:
		net.snapped.connect(func(): _event("remote_snapped", {"slot": slot}))
	_update_mode_visibility()
	_event("spawned", {"slot": slot})


## nearzero copies are drawn in nearzero mode; in Godot mode they only
## carry the host's settings, and ENet's copies are drawn.
func _update_mode_visibility() -> void:
	for n in cars.get_children():
		if n == car:
			continue
		var net: NetPredictor = n.get_node_or_null("NetPredictor")
		if net:
			net.apply_visibility = not enet_mode
			n.visible = not enet_mode and not net.is_hidden()
	overlay.nearzero_mode = not enet_mode
	if enet_mode and room.room_code != "":
		if room.is_host():
			_enet_host()
		elif enet_peer == null and not enet_joining:
			_enet_join()
	elif not enet_mode:
		_enet_close()


# --- round flow -----------------------------------------------------------------

func _on_phase(p: int, next_time: float) -> void:
	phase = p
	_event("phase", {"phase": PHASE_NAMES.get(p, str(p)), "next": next_time})
	match p:
		NetRoom.PHASE_LOBBY:
			_set_racing(false)
			ready_sent = false
			menu.ready_button.set_pressed_no_signal(false)
			menu.vote_button.disabled = false
			if track_loaded:
				room.report_loaded(1.0)
			_park_on_grid()
		NetRoom.PHASE_HANDSHAKE:
			_start_handshake()
		NetRoom.PHASE_COUNTDOWN:
			go_time = next_time
			menu.visible = false
		NetRoom.PHASE_PLAYING:
			deadline = next_time
			if go_time < 0:
				go_time = room.server_time()
		NetRoom.PHASE_RESULTS:
			car.controls_enabled = false
			menu.visible = true
			menu.vote_button.disabled = false
	_refresh_players()


func _grid_slot() -> int:
	var k := 0
	for p in room.get_players():
		if (p.participant or phase == NetRoom.PHASE_LOBBY) and p.slot < room.local_slot:
			k += 1
	return k


func _park_on_grid() -> void:
	if track and car:
		car.set_physics_process(true)
		car.place(track.grid_transform(_grid_slot()))


func _start_handshake() -> void:
	menu.visible = false
	results = {}
	reset_tested = false
	reported_finish = false
	go_time = -1.0
	deadline = -1.0
	round_laps = laps
	round_limit = LIMITS[limit_index]
	car.reset_race()
	car.controls_enabled = false
	car.bot_lane = [0.0, -2.5, 2.5, -4.0, 4.0][room.local_slot % 5]
	_park_on_grid()
	racing = true
	# One physics frame for the grid position to be sampled and sent.
	await get_tree().physics_frame
	await get_tree().physics_frame
	room.report_in_position()
	_event("in_position", {"grid": _grid_slot(), "laps": round_laps, "limit": round_limit})


func _set_racing(on: bool) -> void:
	racing = on
	car.controls_enabled = false
	menu.visible = true
	hud.big.text = ""
	hud.hint.text = ""
	hud.time_left.text = ""


func _on_results(r: Dictionary) -> void:
	results = r
	rounds_done += 1
	var rows := []
	var players: Array = r.get("players", []).duplicate()
	# Finishers (score 1000) by time, then the rest by checkpoints passed.
	players.sort_custom(func(a, b):
		var fa: bool = a.status == "finished" and a.score >= 1000
		var fb: bool = b.status == "finished" and b.score >= 1000
		if fa != fb:
			return fa
		if fa:
			return a.time < b.time
		return a.score > b.score)
	var place := 1
	for p in players:
		var done: bool = p.status == "finished" and p.score >= 1000
		rows.append([str(place) if done else "-", p.name, _fmt_time(p.time) if done else "",
			"" if done else "DNF (%d checkpoints)" % int(p.score if p.status == "finished" else 0)])
		place += 1
	menu.set_results("Results, round %d%s" % [r.get("round", rounds_done), " (restarted)" if r.get("aborted", false) else ""], rows)
	menu.visible = true
	car.controls_enabled = false
	_event("results", r)
	if args.has("vote") and (not args.has("rounds") or rounds_done < int(args.rounds)):
		_vote.call_deferred()
	if args.has("rounds") and rounds_done >= int(args.rounds):
		get_tree().create_timer(float(args.get("quit-delay", "1"))).timeout.connect(func(): get_tree().quit(0))


static func _fmt_time(t: float) -> String:
	return "%d:%05.2f" % [int(t) / 60, fmod(t, 60.0)]


func _race_tick() -> void:
	if not racing or track == null:
		return
	var now := room.server_time()
	if go_time > 0:
		var left := go_time - now
		if left > 0:
			hud.big.text = str(int(ceil(left)))
		elif left > -1.0:
			hud.big.text = "GO!"
		else:
			hud.big.text = ""
		if left <= 0 and not car.controls_enabled and not car.finished and not reported_finish:
			car.controls_enabled = true
			_event("go", {"late_ms": -left * 1000.0})
		if args.has("reset-at") and left < -float(args["reset-at"]) and not reset_tested:
			reset_tested = true
			car.reset_to_checkpoint("test")
	if not car.controls_enabled and not reported_finish:
		return
	if car.lap >= round_laps and not reported_finish:
		car.finished = true
		reported_finish = true
		car.controls_enabled = false
		room.finish_round(1000.0)
		hud.big.text = "FINISH"
		_event("finished", {"time": now - go_time})
	var limit_end := go_time + round_limit
	if deadline > 0:
		limit_end = min(limit_end, deadline)
	var rest := limit_end - now
	hud.time_left.text = ("%d s left" % int(ceil(rest))) if rest < 30 and rest > 0 and not reported_finish else ""
	if rest <= 0 and not reported_finish and go_time > 0:
		reported_finish = true
		car.controls_enabled = false
		room.finish_round(float(car.passed))  # out of time: a DNF with its progress
		hud.big.text = "TIME"
		_event("out_of_time", {"passed": car.passed})


func _update_hud() -> void:
	hud.mode.text = "%s   |   %s   |   F3 debug   F4 markers" % [
		"Godot ENet + MultiplayerSynchronizer" if enet_mode else "nearzero NetPredictor", lag_name()]
	if not racing or menu.visible:
		hud.info.text = ""
		hud.speed.text = ""
		return
	hud.info.text = "Lap %d / %d\n%s" % [min(car.lap + 1, round_laps), round_laps,
		_fmt_time(max(0.0, room.server_time() - go_time)) if go_time > 0 and room.server_time() > go_time else "0:00.00"]
	hud.speed.text = "%d km/h" % int(Vector3(car.velocity.x, 0, car.velocity.z).length() * 3.6)
	if car.stuck_reason != "" and car.controls_enabled and not car.bot:
		hud.hint.text = "%s  Press %s to reset" % [car.stuck_reason, "Y / Triangle" if gamepad else "R"]
	else:
		hud.hint.text = ""


func _input(event: InputEvent) -> void:
	if event is InputEventJoypadButton or (event is InputEventJoypadMotion and abs(event.axis_value) > 0.4):
		gamepad = true
	elif event is InputEventKey or event is InputEventMouseButton:
		gamepad = false
	if event.is_action_pressed("reset_car") and racing and car.controls_enabled:
		car.reset_to_checkpoint()
	elif event.is_action_pressed("debug_overlay"):
		overlay.toggle()
	elif event.is_action_pressed("toggle_markers"):
		overlay.markers_on = not overlay.markers_on
		menu.markers_check.set_pressed_no_signal(overlay.markers_on)
	elif event.is_action_pressed("menu") and racing:
		menu.visible = not menu.visible


func _process(delta: float) -> void:
	_poll_track()
	_read_host_settings()
	if room.room_code != "" and track_loaded and phase == NetRoom.PHASE_LOBBY:
		if args.has("bot") and not ready_sent and room.status == NetRoom.STATUS_CONNECTED and \
				(settings_known or room.is_host()):
			ready_sent = true
			room.set_ready(true)
			_event("ready", {})
		if args.has("players") and room.is_host():
			_auto_start()
	_race_tick()
	_update_hud()
	_update_camera(delta)
	_log_positions()


func _auto_start() -> void:
	var players := room.get_players()
	if players.size() < int(args.players):
		return
	for p in players:
		if not (p.connected and p.ready and p.loaded >= 1.0):
			return
	if hold_start or Time.get_ticks_msec() / 1000.0 - start_sent_at < 2.0:
		return
	start_sent_at = Time.get_ticks_msec() / 1000.0
	room.start_round()
	_event("start", {"players": players.size()})


func _poll_track() -> void:
	if track_loaded:
		return
	var progress := []
	var st := ResourceLoader.load_threaded_get_status(TRACK_PATH, progress)
	if st == ResourceLoader.THREAD_LOAD_IN_PROGRESS:
		if progress.size() > 0 and progress[0] != load_progress:
			load_progress = progress[0]
			if room.room_code != "":
				room.report_loaded(min(load_progress, 0.99))
			_refresh_players()
	elif st == ResourceLoader.THREAD_LOAD_LOADED:
		var scene: PackedScene = ResourceLoader.load_threaded_get(TRACK_PATH)
		track = scene.instantiate()
		world.add_child(track)
		world.move_child(track, 0)
		track_loaded = true
		load_progress = 1.0
		car.track = track
		for n in cars.get_children() + enet_cars.get_children():
			n.track = track
		_park_on_grid()
		_event("track_loaded", {"length_m": track.length})
		_refresh_players()
	elif st == ResourceLoader.THREAD_LOAD_FAILED or st == ResourceLoader.THREAD_LOAD_INVALID_RESOURCE:
		menu.show_banner("Could not load the track.")
		track_loaded = true
	if track_loaded and room.room_code != "":
		room.report_loaded(1.0)


func _update_camera(delta: float) -> void:
	var target: Node3D = camera_target if is_instance_valid(camera_target) else car
	var own: bool = target == car
	var drawn = target.get("visual") if target else null
	if drawn is Node3D:
		target = drawn  # where the car is drawn (late, with the room's input delay)
	if racing and target:
		var fwd: Vector3 = -target.global_basis.z
		fwd.y = 0
		fwd = fwd.normalized()
		var want: Vector3 = target.global_position - fwd * 9.0 + Vector3(0, 3.8, 0)
		var look: Vector3 = target.global_position + fwd * 5.0 + Vector3(0, 1.0, 0)
		if not own:
			# Beside the other car, looking at it and the trail of markers.
			want = target.global_position + fwd.cross(Vector3.UP) * 11.0 - fwd * 2.0 + Vector3(0, 4.0, 0)
			look = target.global_position - fwd * 3.0 + Vector3(0, 1.0, 0)
		camera.global_position = camera.global_position.lerp(want, 1.0 - exp(-6.0 * delta))
		camera.look_at(look)
	else:
		# The menu: a slow orbit over the track.
		var t := Time.get_ticks_msec() / 1000.0 * 0.05
		camera.global_position = Vector3(20 + 150 * cos(t), 70, 60 + 150 * sin(t))
		camera.look_at(Vector3(20, 0, 60))


# --- Godot's own stack: ENet, MultiplayerSpawner, MultiplayerSynchronizer -----------

func _server_host_port() -> Array:
	var a := room.server_address.trim_prefix("ws://").trim_prefix("wss://").trim_prefix("http://")
	a = a.get_slice("/", 0)
	var i := a.rfind(":")
	if i < 0:
		return [a, 8787]
	return [a.substr(0, i).trim_prefix("[").trim_suffix("]"), int(a.substr(i + 1))]


func _enet_host() -> void:
	if enet_peer != null:
		return
	var port: int = _server_host_port()[1] + 1
	enet_peer = ENetMultiplayerPeer.new()
	var err := enet_peer.create_server(port, 16)
	if err != OK:
		menu.show_banner("Godot mode: could not open ENet port %d (error %d)" % [port, err])
		enet_peer = null
		return
	multiplayer.multiplayer_peer = enet_peer
	_event("enet_host", {"port": port})
	_spawn_enet_car(1, room.local_slot)


func _enet_join() -> void:
	var hp := _server_host_port()
	var host: String = hp[0]
	var port: int = hp[1] + 1
	if host == "localhost":
		host = "127.0.0.1"
	var target_host := host
	var target_port := port
	if room.has_method("start_udp_relay"):
		# Through the lag simulator, as NetRoom's own link.
		var relay: int = room.call("start_udp_relay", host, port)
		if relay > 0:
			target_host = "127.0.0.1"
			target_port = relay
	enet_peer = ENetMultiplayerPeer.new()
	var err := enet_peer.create_client(target_host, target_port)
	if err != OK:
		menu.show_banner("Godot mode: could not connect ENet to %s:%d (error %d)" % [host, port, err])
		enet_peer = null
		return
	enet_joining = true
	multiplayer.multiplayer_peer = enet_peer
	_event("enet_join", {"host": host, "port": port, "via": "%s:%d" % [target_host, target_port]})


func _enet_connected() -> void:
	enet_joining = false
	_event("enet_connected", {"id": multiplayer.get_unique_id()})
	_register.rpc_id(1, room.local_slot)


@rpc("any_peer", "reliable")
func _register(slot: int) -> void:
	if not multiplayer.is_server():
		return
	_spawn_enet_car(multiplayer.get_remote_sender_id(), slot)


func _spawn_enet_car(peer_id: int, slot: int) -> void:
	if enet_cars.has_node(str(peer_id)):
		return
	var c = load(ENET_CAR).instantiate()
	c.name = str(peer_id)
	c.slot = slot
	enet_cars.add_child(c, true)
	_on_enet_spawned(c)


func _on_enet_spawned(node) -> void:
	node.track = track
	node.set_color(COLORS[max(node.slot, 0) % COLORS.size()])
	var p := room.get_player(node.slot)
	node.set_label(p.get("name", "player %d" % node.slot))
	if node.mine:
		node.follow = car


func _enet_peer_connected(id: int) -> void:
	_event("enet_peer", {"id": id})


func _enet_peer_disconnected(id: int) -> void:
	if multiplayer.is_server() and enet_cars.has_node(str(id)):
		enet_cars.get_node(str(id)).queue_free()


func _enet_close() -> void:
	enet_joining = false
	if enet_peer == null:
		return
	enet_peer.close()
	enet_peer = null
	multiplayer.multiplayer_peer = OfflineMultiplayerPeer.new()
	for n in enet_cars.get_children():
		n.queue_free()
	if room.has_method("stop_udp_relays"):
		room.call("stop_udp_relays")


# --- logs for the tests ---------------------------------------------------------

func _event(name: String, data: Dictionary) -> void:
	print("NZ_EVENT %s %s %s" % [args.get("name", "player"), name, JSON.stringify(data)])


func _physics_process(_delta: float) -> void:
	if poslog and racing and car.controls_enabled:
		var p: Vector3 = car.global_position
		poslog.store_line("T %.6f %.4f %.4f %.4f" % [Time.get_unix_time_from_system(), p.x, p.y, p.z])


func _log_positions() -> void:
	if poslog == null or not racing or go_time < 0 or room.server_time() < go_time:
		return
	var t := Time.get_unix_time_from_system()
	var nodes: Array = enet_cars.get_children() if enet_mode else cars.get_children()
	for n in nodes:
		if n == car or n.mine or not n.visible:
			continue
		var p: Vector3 = n.global_position
		var age: float = n.net.debug_age_ms if n.net else -1.0
		poslog.store_line("D %d %.6f %.4f %.4f %.4f %.1f" % [n.slot, t, p.x, p.y, p.z, age])
