# Saves the README's screenshots (--nz-shots=DIR): the menu with a room,
# the race with the F3 overlay and the comparison markers, the results.
# Needs a renderer: headless Godot draws nothing. The README's were made
# with software OpenGL under Xvfb (Debian: xvfb, libgl1-mesa-dri):
#   xvfb-run -a -s "-screen 0 1280x720x24" godot --rendering-driver opengl3 --path godot_project \
#     --resolution 1280x720 res://racer/main.tscn -- --nz-server=local --nz-create --nz-bot \
#     --nz-players=2 --nz-laps=1 --nz-limit=60 --nz-lag=2 --nz-rounds=1 --nz-quit-delay=2 \
#     --nz-name=Ann --nz-out=/tmp/shots --nz-shots=$PWD/docs
#   godot --headless --path godot_project res://racer/main.tscn -- --nz-server=127.0.0.1:8787 \
#     --nz-join=$(cat /tmp/shots/code.txt) --nz-bot --nz-name=Bob --nz-lag=2 --nz-rounds=1 --nz-quit-delay=4
# It holds the host's auto start until the lobby picture is taken, follows
# the other car from the side for the race picture (F3 open, markers on).
extends Node

var main: Node
var _taken := {}
var _race_at := -1.0


func _ready() -> void:
	main.hold_start = true


func _process(_delta: float) -> void:
	var room: NetRoom = main.room
	var now := Time.get_ticks_msec() / 1000.0
	if not _taken.has("menu") and room.phase == NetRoom.PHASE_LOBBY and main.track_loaded:
		var players := room.get_players()
		var all_ready := players.size() >= int(main.args.get("players", "2"))
		for p in players:
			all_ready = all_ready and p.ready
		if all_ready:
			_taken["menu"] = now
			await _shot("racer-menu")
			main.hold_start = false
	if main.go_time > 0 and room.server_time() > main.go_time + 5.0 and not _taken.has("race"):
		_taken["race"] = now
		# Follow the other car: its markers (red: newest state, yellow:
		# 100 ms interpolation) trail behind where nearzero draws it.
		for p in room.get_players():
			if not p.is_local and room.get_player_node(p.slot):
				main.camera_target = room.get_player_node(p.slot)
		main.overlay.toggle()
		await get_tree().create_timer(1.5).timeout
		await _shot("racer-race")
		main.overlay.toggle()
		main.camera_target = null
	if room.phase == NetRoom.PHASE_RESULTS and not main.results.is_empty() and not _taken.has("results"):
		_taken["results"] = now
		await get_tree().create_timer(0.5).timeout
		await _shot("racer-results")


func _shot(name: String) -> void:
	await RenderingServer.frame_post_draw
	var img := get_viewport().get_texture().get_image()
	img.resize(960, 540, Image.INTERPOLATE_LANCZOS)
	var path: String = main.shots_dir.path_join(name + ".png")
	var err := img.save_png(path)
	print("NZ_SHOT %s %s" % [path, error_string(err)])
