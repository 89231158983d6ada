# Coin rush on Godot's own multiplayer: ENetMultiplayerPeer, MultiplayerSpawner,
# MultiplayerSynchronizer and @rpc. Two players meet in a lobby by name and
# walk an arena for 12 coins; the host decides who got each coin (a shared
# outcome one machine decides), and the most coins win. ../nearzero/ is the
# same game on NetRoom + NetPredictor: everything above "Network" is the same
# there, line for line.
#   godot --path godot_project res://examples/port/godot_stack/main.tscn
#   godot --headless --path godot_project res://examples/port/godot_stack/main.tscn -- --port-host --port-name=Ann --port-bot
#   godot --headless --path godot_project res://examples/port/godot_stack/main.tscn -- --port-join=127.0.0.1 --port-name=Bob --port-bot
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


# --- Network: Godot's multiplayer (ENet, two MultiplayerSpawners, a
# MultiplayerSynchronizer in player.tscn, @rpc) ---

const PLAYER := preload("res://examples/port/godot_stack/player.tscn")
const COIN := preload("res://examples/port/godot_stack/coin.tscn")
var port := 7710


func _net_ready(args: Dictionary) -> void:
	port = int(args.get("port", port))
	$PlayerSpawner.spawn_function = _make_player
	$CoinSpawner.spawn_function = _make_coin
	multiplayer.connected_to_server.connect(func(): _register.rpc_id(1, $UI/Name.text))
	$UI/Host.pressed.connect(_host)
	$UI/Join.pressed.connect(_join)
	if args.has("host"):
		_host()
	elif args.has("join"):
		$UI/Address.text = args.join
		_join()


func _host() -> void:
	var peer := ENetMultiplayerPeer.new()
	if peer.create_server(port, 1) != OK:
		status.text = "Cannot host on port %d" % port
		return
	multiplayer.multiplayer_peer = peer
	names[1] = $UI/Name.text
	_lobby_changed()


func _join() -> void:
	var peer := ENetMultiplayerPeer.new()
	peer.create_client($UI/Address.text, port)
	multiplayer.multiplayer_peer = peer
	status.text = "Joining %s..." % $UI/Address.text


func _is_host() -> bool:
	return multiplayer.is_server()


@rpc("any_peer", "reliable")
func _register(player_name: String) -> void:  # a joiner's name, to the host
	names[multiplayer.get_remote_sender_id()] = player_name
	_lobby_changed()


func _announce_start() -> void:
	_start_rpc.rpc(names)


@rpc("authority", "call_local", "reliable")
func _start_rpc(all_names: Dictionary) -> void:
	_start(all_names)


func _spawn_players() -> void:  # the host spawns every player, with its owner's id
	if not _is_host():
		return
	var ids := names.keys()
	ids.sort()
	for i in ids.size():
		$PlayerSpawner.spawn([ids[i], names[ids[i]], i])


func _make_player(data: Array) -> Node:  # PlayerSpawner's spawn_function, every machine
	var player := PLAYER.instantiate()
	player.name = str(data[0])  # player.gd makes that peer its authority
	player.position = STARTS[data[2]]
	player.get_node("Label").text = data[1]
	if data[0] == multiplayer.get_unique_id():
		me = player
		me.bot = bot
	return player


func _net_spawn_coin(id: int, at: Vector2) -> void:
	$CoinSpawner.spawn([id, at])


func _make_coin(data: Array) -> Node:  # CoinSpawner's spawn_function, every machine
	var coin := COIN.instantiate()
	coin.name = "Coin%d" % data[0]
	_add_coin(coin, data[0], data[1])
	return coin


func _ask_pickup(id: int) -> void:
	_pickup_rpc.rpc_id(1, id)


@rpc("any_peer", "call_local", "reliable")
func _pickup_rpc(id: int) -> void:
	if _is_host():
		_decide_pickup(id, multiplayer.get_remote_sender_id())


func _announce_taken(id: int, who: int) -> void:
	_taken_rpc.rpc(id, who)


@rpc("authority", "call_local", "reliable")
func _taken_rpc(id: int, who: int) -> void:
	_on_taken(id, who)


func _announce_over(winner: String) -> void:
	_over_rpc.rpc(winner)


@rpc("authority", "call_local", "reliable")
func _over_rpc(winner: String) -> void:
	_on_over(winner)
