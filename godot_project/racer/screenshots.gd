# Saves the README's screenshots (--nz-shots=DIR): the menu with a room,
# the race with the F3 overlay and the comparison markers, the results.
# Needs a renderer: headless Godot draws nothing. For example:
#   xvfb-run -a godot --rendering-driver opengl3 --path godot_project -- \
#     --nz-server=local --nz-create --nz-bot --nz-players=2 --nz-laps=1 --nz-shots=../docs
# (and a second, headless player joining the room).
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
	if main.go_time > 0 and room.server_time() > main.go_time + 7.0 and not _taken.has("race"):
		_taken["race"] = now
		main.overlay.toggle()
		await get_tree().create_timer(0.6).timeout
		await _shot("racer-race")
		main.overlay.toggle()
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
