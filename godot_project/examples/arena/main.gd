# The arena example: events, chat, synced properties and hits the server
# decides, in 2D. Arrows move, Space fires, Enter sends the chat line.
# Needs a server with hits on:
#   nearzero-server -hits -hit-tolerance-2d 48
#   godot --path godot_project res://examples/arena/main.tscn
#   godot --headless --path godot_project res://examples/arena/main.tscn -- --nz-server=127.0.0.1:8787 --nz-create --nz-bot
#   godot --headless --path godot_project res://examples/arena/main.tscn -- --nz-server=127.0.0.1:8787 --nz-join=ABCDEF
# Add --nz-quit-after=SECONDS to stop by itself; --nz-still keeps a bot in place
# (it still fires). The ball is a shared object: touch it to take it over.
# R launches a rocket, an entity spawned on every machine (spawn_entity).
# --nz-ball makes a bot play the ball instead of firing (the left half for
# the room's creator, the right half for the joiner); --nz-ball-log prints
# the ball's owner and drawn position every physics frame; --nz-rockets
# makes a bot launch a rocket every 3 s; --nz-lag=MS adds that much one-way
# latency each way (NetRoom's lag simulator); --nz-screenshot=PNG saves a frame
# after --nz-screenshot-at seconds (8 by default; needs a renderer, e.g.
# xvfb-run -a godot --rendering-driver opengl3 ...). --nz-input-delay=MS|adaptive
# sets the room's input delay (the creator's; also the "input delay" menu
# at the bottom right): your own player is drawn that late (its Body and
# health bar; the body collides on time) and the others are drawn where
# they truly are when the delay covers the lag.
extends Node2D

const Projectile := preload("res://examples/arena/projectile.gd")

@onready var room: NetRoom = $NetRoom
@onready var me: CharacterBody2D = $World/Me
@onready var log_label: Label = $UI/Log
@onready var chat: LineEdit = $UI/Chat
var lines: PackedStringArray = []
var rockets := false
var rocket_wait := 3.0


func _ready() -> void:
	room.room_joined.connect(func(code, slot): _say("joined %s as slot %d" % [code, slot]))
	room.room_error.connect(func(code, message): _say("error %d: %s" % [code, message]))
	room.connection_error.connect(func(reason, message): _say("connection error %d: %s" % [reason, message]))
	room.event_received.connect(_on_event)
	room.chat_received.connect(func(slot, text): _say("%s: %s" % [_name(slot), text]))
	room.hit_result.connect(_on_hit)
	room.entity_spawned.connect(_on_entity_spawned)
	room.entity_despawned.connect(func(_node, slot): _say("%s's rocket is gone" % _name(slot)))
	chat.text_submitted.connect(func(text): room.send_chat(text); _say("me: " + text); chat.clear())
	var args := {}
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-"):
			var kv := a.substr(5).split("=", true, 1)
			args[kv[0]] = kv[1] if kv.size() > 1 else ""
	room.server_address = args.get("server", room.server_address)
	if args.has("lag"):  # one-way milliseconds, both ways (NetRoom's lag simulator)
		room.lag_latency_ms = float(args["lag"])
		room.lag_enabled = true
	me.bot = args.has("bot")
	me.still = args.has("still")
	rockets = args.has("rockets")
	if args.has("ball"):
		me.ball_side = 1 if args.has("join") else -1
		me.bot = true
	if args.has("ball-log"):
		$World/Ball.log_every = 1
	# Taking the ball is announced with an event (what @rpc would carry).
	$World/Ball.net.owner_changed.connect(func(_slot, mine):
		if mine:
			room.send_event("took_ball", [room.local_slot]))
	if me.ball_side != 0:
		me.position = Vector2(500 + 250 * me.ball_side, 300)
	elif me.bot:
		me.position = Vector2(randf_range(200, 800), randf_range(150, 450))
	if args.has("screenshot"):  # needs a renderer (not --headless): see the README
		get_tree().create_timer(float(args.get("screenshot-at", "8"))).timeout.connect(func():
			get_viewport().get_texture().get_image().save_png(args["screenshot"])
			print("NZ_ARENA: screenshot " + args["screenshot"]))
	if args.has("quit-after"):
		get_tree().create_timer(float(args["quit-after"])).timeout.connect(get_tree().quit)
	_add_delay_menu(args.get("input-delay", ""))
	if args.has("join"):
		room.join_room(args["join"])
	else:
		room.create_room()


## The input-delay menu: the room creator's (host's) choice; a joiner's
## shows the room's. Also --nz-input-delay=MS|adaptive.
func _add_delay_menu(arg: String) -> void:
	var choice := OptionButton.new()
	for n in ["input delay: off", "input delay: 50 ms", "input delay: 100 ms", "input delay: adaptive"]:
		choice.add_item(n)
	choice.position = Vector2(800, 560)
	var presets := [[NetRoom.INPUT_DELAY_OFF, 0.0], [NetRoom.INPUT_DELAY_FIXED, 50.0],
		[NetRoom.INPUT_DELAY_FIXED, 100.0], [NetRoom.INPUT_DELAY_ADAPTIVE, 150.0]]
	var pick := func(i: int):
		if room.room_code != "" and not room.is_host():
			return
		room.input_delay_ms = presets[i][1]
		room.input_delay_mode = presets[i][0]
	choice.item_selected.connect(pick)
	$UI.add_child(choice)
	if arg != "":
		var i := 3 if arg == "adaptive" else (2 if float(arg) >= 100 else (1 if float(arg) > 0 else 0))
		choice.select(i)
		pick.call(i)
	# A joiner sees the room's (the host's) choice.
	room.host_changed.connect(func(_slot): choice.disabled = not room.is_host())
	get_tree().create_timer(1.0).timeout.connect(func(): _sync_delay_menu(choice, presets))


func _sync_delay_menu(choice: OptionButton, presets: Array) -> void:
	if room.room_code != "" and not room.is_host():
		for i in presets.size():
			if presets[i][0] == room.input_delay_mode and (i == 0 or presets[i][1] == room.input_delay_ms):
				choice.select(i)
	get_tree().create_timer(1.0).timeout.connect(func(): _sync_delay_menu(choice, presets))


func _unhandled_input(event: InputEvent) -> void:
	if event.is_action_pressed("ui_accept") and not chat.has_focus():
		_fire()
	var key := event as InputEventKey
	if key != null and key.pressed and not key.echo and key.keycode == KEY_R and not chat.has_focus():
		_launch_rocket()


func _process(delta: float) -> void:
	if not room.is_synced():
		return
	if me.bot and me.ball_side == 0 and Engine.get_process_frames() % 30 == 0:
		_fire()
	if rockets:
		rocket_wait -= delta
		if rocket_wait <= 0.0:
			rocket_wait = 3.0  # seconds, whatever the frame rate
			_launch_rocket()


## Launches a rocket: spawned on every machine, flown and sent by ours.
func _launch_rocket() -> void:
	var dir := Vector2.from_angle(me.rotation)
	var tint := Color.from_hsv(randf(), 0.8, 1.0)
	var rocket := room.spawn_entity("res://examples/arena/rocket.tscn", [tint])
	if rocket == null:
		return  # refused: the reason is in the console
	rocket.dir = dir
	rocket.tint = tint
	rocket.global_position = me.global_position + dir * 30.0
	_say("rocket launched")


func _on_entity_spawned(node: Node, slot: int, args: Array) -> void:
	if node.has_method("queue_redraw") and args.size() == 1:
		node.tint = args[0]  # the Color as sent
		node.queue_redraw()
	_say("%s launched a rocket" % _name(slot))


func _fire() -> void:
	var dir := Vector2.from_angle(me.rotation)
	if me.bot:  # the bot aims at the first other player it draws
		for p in room.get_players():
			var other: Node2D = room.get_player_node(p["slot"])
			if other != null:
				dir = me.global_position.direction_to(other.global_position)
				break
	var from := me.global_position + dir * 30.0
	# The event carries where and when; every machine flies the same shot.
	room.send_event("fire", [from, dir, room.server_time()])
	_spawn_projectile(room.local_slot, from, dir, 0.0)


func _on_event(from_slot: int, name: String, args: Array) -> void:
	if name == "took_ball":
		print("NZ_EVENT_RX took_ball from=%d" % from_slot)
	if name == "fire" and args.size() == 3:
		var from: Vector2 = args[0]  # arguments keep their types
		var dir: Vector2 = (args[1] as Vector2).normalized()
		# Catch up with the time the event spent on its way.
		_spawn_projectile(from_slot, from, dir, maxf(0.0, room.server_time() - float(args[2])))


func _spawn_projectile(shooter: int, from: Vector2, dir: Vector2, late: float) -> void:
	var p := Projectile.new()
	p.room = room
	p.shooter = shooter
	p.dir = dir
	p.position = from + dir * Projectile.SPEED * late
	p.age = late
	$World.add_child(p)


func _on_hit(r: Dictionary) -> void:
	if not r["accepted"]:
		_say("hit refused: " + r["reason"])
		return
	_say("%s hit %s (%d left)%s" % [_name(r["from_slot"]), _name(r["target_slot"]), r["health"],
		", killed" if r["killed"] else ""])
	if r["target_slot"] == room.local_slot:
		# The server decides health; the owner's copy carries it to
		# everyone as a synced property.
		me.health = r["health"]
		if r["killed"]:
			me.respawn()


func _name(slot: int) -> String:
	return room.get_player(slot).get("name", "slot %d" % slot)


func _say(line: String) -> void:
	print("NZ_ARENA: " + line)
	lines.append(line)
	if lines.size() > 8:
		lines.remove_at(0)
	log_label.text = "\n".join(lines)
