@tool
extends EditorPlugin
# TestGodotDebuggerTab (test/godot/debugger_test.go) copies this plugin into
# a copy of the demo project: once the editor is up it runs
# res://tests/debug_cost.tscn (a host and a lagged bot), waits for the
# nearzero tab's samples, opens Debugger > nearzero, and once the room
# shown has had a code and a remote entity for 4 s while the game still
# plays, saves a screenshot of the editor and the samples as CSV into
# $NZ_SHOT_DIR, writes shot.json, then waits for the game to end and
# quits the editor.

var dir := ""
var t := 0.0
var step := 0
var panel: Control
var live_since := -1.0


func _enter_tree() -> void:
	dir = OS.get_environment("NZ_SHOT_DIR")
	if dir == "":
		return
	EditorInterface.get_editor_settings().set_setting("run/bottom_panel/action_on_play", 2) # open the Debugger
	set_process(true)


func _log(msg: String) -> void:
	print("NZ_SHOT: ", msg)


func _find(n: Node, pred: Callable) -> Node:
	if pred.call(n):
		return n
	for c in n.get_children(true):
		var got := _find(c, pred)
		if got != null:
			return got
	return null


func _process(delta: float) -> void:
	if dir == "":
		return
	t += delta
	match step:
		0:
			if t > 4.0 and not EditorInterface.get_resource_filesystem().is_scanning():
				step = 1
				t = 0.0
				_log("playing res://tests/debug_cost.tscn")
				EditorInterface.play_custom_scene("res://tests/debug_cost.tscn")
		1:
			panel = _find(EditorInterface.get_base_control(), func(n): return n.name == "nearzero" and n.has_method("sample_count"))
			if panel != null and panel.sample_count() >= 60:
				step = 2
				t = 0.0
				_show_tab()
			elif t > 90.0:
				_log("no samples after 90 s")
				_finish({"samples": panel.sample_count() if panel != null else -1})
		2:
			# The shot is of a game in play: the room shown has a code and
			# draws a remote entity, for long enough to fill the plots.
			if _live():
				if live_since < 0:
					live_since = t
					_log("the room shown is live")
			else:
				live_since = -1.0
			if int(t) != int(t - delta) and live_since < 0:
				_log("waiting for a live room: %s" % _why())
			if t > 120.0:
				_log("the room shown never played while the game ran")
				_finish({"samples": panel.sample_count(), "live": false})
			elif live_since >= 0 and t - live_since > 4.0:
				step = 3
				var img := get_viewport().get_texture().get_image()
				img.save_png(dir.path_join("debugger.png"))
				var err: int = panel.export_csv(dir.path_join("samples.csv"))
				_log("screenshot saved; csv %d; %d samples" % [err, panel.sample_count()])
				_finish({"samples": panel.sample_count(), "csv": err, "rooms": panel._samples.keys(),
					"size": [img.get_width(), img.get_height()], "live": true, "paused": panel._paused})


# _why says what the room shown lacks (a log line while waiting).
func _why() -> String:
	var arr: Array = panel._samples.get(panel._room, [])
	if arr.is_empty():
		return "playing %s, room %s: no samples" % [EditorInterface.is_playing_scene(), panel._room]
	var d: Dictionary = arr[-1]
	return "playing %s, room %s: %d samples, code '%s', %d entities" % [EditorInterface.is_playing_scene(), panel._room,
		arr.size(), str(d.get("room", {}).get("code", "")), (d.get("entities", []) as Array).size()]


# _live reports whether the game still plays and the newest sample of the
# room the tab shows has a room code and a remote entity.
func _live() -> bool:
	if not EditorInterface.is_playing_scene():
		return false
	var arr: Array = panel._samples.get(panel._room, [])
	if arr.is_empty():
		return false
	var d: Dictionary = arr[-1]
	var room: Dictionary = d.get("room", {})
	return str(room.get("code", "")) != "" and not (d.get("entities", []) as Array).is_empty()


func _show_tab() -> void:
	var base := EditorInterface.get_base_control()
	var bottom := _find(base, func(n): return n.get_class() == "EditorBottomPanel")
	if bottom != null:
		var dbg := _find(bottom, func(n): return n is Button and n.text.begins_with("Debugger"))
		if dbg != null:
			dbg.button_pressed = true
		var expand := _find(bottom, func(n): return n is Button and n.toggle_mode and n.shortcut != null and n.shortcut.get_as_text().contains("F12"))
		if expand != null:
			expand.button_pressed = true
	var tabs := panel.get_parent()
	if tabs is TabContainer:
		tabs.current_tab = tabs.get_tab_idx_from_control(panel)
	_log("showing the nearzero tab")


func _finish(info: Dictionary) -> void:
	step = 99
	var f := FileAccess.open(dir.path_join("shot.json"), FileAccess.WRITE)
	f.store_string(JSON.stringify(info))
	f.close()
	# Let the game finish its measurement (it quits by itself), then quit.
	for i in 120:
		if not EditorInterface.is_playing_scene():
			break
		await get_tree().create_timer(0.5).timeout
	EditorInterface.stop_playing_scene()
	await get_tree().create_timer(0.5).timeout
	get_tree().quit(0)
