# Coin rush on nearzero: a NetRoom (the lobby, events) and a NetPredictor in
# player.tscn. Two players meet in a lobby by name and walk an arena for 12
# coins; the host decides who got each coin (a shared outcome one machine
# decides), and the most coins win. ../godot_stack/ is the same game on
# Godot's ENet, MultiplayerSpawner, MultiplayerSynchronizer and @rpc:
# everything above "Network" is the same there, line for line.
#   godot --path godot_project res://examples/port/nearzero/main.tscn
#   godot --headless --path godot_project res://examples/port/nearzero/main.tscn -- --port-host --port-name=Ann --port-bot
#   godot --headless --path godot_project res://examples/port/nearzero/main.tscn -- --port-join=127.0.0.1 --port-code=ABCDEF --port-name=Bob --port-bot
# --port-port=N sets the port (7710); --port-bot walks to the nearest coin and quits after the game.
extends Node2D

const COINS := 12  # coins in a game
const ON_FIELD := 3  # coins out at once
const PICKUP_RADIUS := 24.0
const STARTS := [Vector2(120, 270), Vector2(840, 270)]

var names := {}  # player id -> name
var scores := {}  # player id -> coins taken
var coins := {}  # coin id -> its node
var asked := {}  # coin ids this machine asked the host for
var spawned := 0  # the host's count of coins spawned
var taken := 0
var started := false
var over := false
var bot := false
var me: Node2D = null  # this machine's player
var rng := RandomNumberGenerator.new()

@onready var status: Label = $UI/Status


func _ready() -> void:
	rng.seed = 22  # the same coins in every game
	var args := {}
	for a in OS.get_cmdline_user_args():
		var kv := a.trim_prefix("--port-").split("=", true, 1)
		args[kv[0]] = kv[1] if kv.size() > 1 else ""
	bot = args.has("bot")
	$UI/Name.text = args.get("name", "Player")
	_net_ready(args)


func _lobby_changed() -> void:
	status.text = "Lobby: " + ", ".join(names.values())
	print("PORT_LOBBY players=", ",".join(names.values()))
	if _is_host() and names.size() == 2 and not started:
		_announce_start()


func _start(all_names: Dictionary) -> void:
	started = true
	names = all_names
	for id in names:
		scores[id] = 0
	print("PORT_START players=", _score_line())
	_spawn_players()
	if _is_host():
		for i in ON_FIELD:
			_spawn_coin()


func _spawn_coin() -> void:  # the host
	spawned += 1
	_net_spawn_coin(spawned, Vector2(rng.randi_range(60, 900), rng.randi_range(60, 480)))


func _add_coin(coin: Node2D, id: int, at: Vector2) -> void:  # every machine
	coin.position = at
	coins[id] = coin
	print("PORT_COIN id=%d at=%s" % [id, at])


func _physics_process(_delta: float) -> void:
	if me == null or over:
		return
	var nearest := -1
	for id in coins:
		if is_instance_valid(coins[id]) and not asked.has(id) and (nearest < 0 or _away(id) < _away(nearest)):
			nearest = id
	me.target = null if nearest < 0 else coins[nearest].position
	if nearest >= 0 and _away(nearest) < PICKUP_RADIUS:
		asked[nearest] = true
		_ask_pickup(nearest)


func _away(coin_id: int) -> float:
	return me.position.distance_to(coins[coin_id].position)


func _decide_pickup(id: int, who: int) -> void:  # the host: the first to ask gets it
	if over or not coins.has(id):
		return
	coins[id].queue_free()  # gone on every machine
	coins.erase(id)
	_announce_taken(id, who)


func _on_taken(id: int, who: int) -> void:  # every machine
	coins.erase(id)
	scores[who] += 1
	taken += 1
	print("PORT_TAKEN id=%d by=%s" % [id, names[who]])
	status.text = _score_line()
	if _is_host() and spawned < COINS:
		_spawn_coin()
	elif _is_host() and taken == COINS:
		_announce_over(_winner())


func _winner() -> String:
	var best := -1
	var winner := "draw"
	for id in scores:
		if scores[id] > best:
			best = scores[id]
			winner = names[id]
		elif scores[id] == best:
			winner = "draw"
	return winner


func _on_over(winner: String) -> void:  # every machine
	over = true
	print("PORT_OVER winner=%s scores=%s" % [winner, _score_line()])
	status.text = "Game over: %s. %s" % [winner, _score_line()]
	if bot:  # a scripted run ends here; the host last, after the other has its answer
		get_tree().create_timer(2.0 if _is_host() else 1.0).timeout.connect(get_tree().quit)


func _score_line() -> String:
	var parts := []
	for id in names:
		parts.append("%s:%d" % [names[id], scores.get(id, 0)])
	parts.sort()
	return ",".join(parts)


# --- Network: nearzero (a NetRoom whose host runs the room server in the
# game, a NetPredictor in player.tscn, events) ---

const PLAYER := preload("res://examples/port/nearzero/player.tscn")
const COIN := "res://examples/port/nearzero/coin.tscn"  # in the NetRoom's spawnable_scenes
var port := 7710

@onready var room: NetRoom = $NetRoom


func _net_ready(args: Dictionary) -> void:
	port = int(args.get("port", port))
	room.room_joined.connect(func(code, _slot): print("PORT_ROOM code=", code); $UI/Code.text = code)
	room.room_error.connect(func(_code, message): status.text = message)
	room.player_joined.connect(func(slot, player_name): names[slot] = player_name; _lobby_changed())
	room.player_spawned.connect(func(slot, player): player.get_node("Label").text = names[slot])
	room.entity_spawned.connect(func(coin, _slot, data): _add_coin(coin, data[0], data[1]))
	room.event_received.connect(_on_event)
	$UI/Host.pressed.connect(_host)
	$UI/Join.pressed.connect(_join)
	if args.has("host"):
		_host()
	elif args.has("join"):
		$UI/Address.text = args.join
		$UI/Code.text = args.get("code", "")
		_join()


func _host() -> void:
	room.display_name = $UI/Name.text
	if room.host_local(port) != "":  # the room server, in this game
		room.create_room()


func _join() -> void:
	room.display_name = $UI/Name.text
	room.server_address = "%s:%d" % [$UI/Address.text, port]
	room.join_room($UI/Code.text)
	status.text = "Joining %s..." % $UI/Address.text


func _is_host() -> bool:
	return room.is_host()


func _on_event(from_slot: int, event: String, args: Array) -> void:
	var from_host := from_slot == room.host_slot  # outcomes count only from the host
	match event:
		"start" when from_host:
			_start(args[0])
		"pickup" when _is_host():
			_decide_pickup(args[0], from_slot)
		"taken" when from_host:
			_on_taken(args[0], args[1])
		"over" when from_host:
			_on_over(args[0])


func _announce_start() -> void:
	room.send_event_all("start", [names])  # an int-keyed Dictionary arrives as one


func _spawn_players() -> void:  # every machine places its own player (NetRoom spawned the
	# other's copy from player_scene when it joined; its NetPredictor shows it from its first state)
	var ids := names.keys()
	ids.sort()
	me = PLAYER.instantiate()
	me.position = STARTS[ids.find(room.local_slot)]
	me.get_node("Label").text = names[room.local_slot]
	me.bot = bot
	$Players.add_child(me)


func _net_spawn_coin(id: int, at: Vector2) -> void:
	_add_coin(room.spawn_entity(COIN, [id, at]), id, at)


func _ask_pickup(id: int) -> void:
	room.send_event_to_host("pickup", [id])


func _announce_taken(id: int, who: int) -> void:
	room.send_event_all("taken", [id, who])


func _announce_over(winner: String) -> void:
	room.send_event_all("over", [winner])
