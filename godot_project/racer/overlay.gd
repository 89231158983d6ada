# F3: the debug overlay. The room's input delay in force; per remote
# player: RTT, jitter, loss and clock offset of the link, age of the newest
# state, the path it came by, the correction being faded, how far ahead it
# is predicted, ghost / hidden.
# The same figures are Performance custom monitors (nearzero/...), so they
# show in the editor's Debugger > Monitors while the game runs.
#
# F4 (and the menu's "markers"): in nearzero mode, for each remote car, a
# red marker where its newest received state puts it (what
# MultiplayerSynchronizer shows: snap on arrival) and a yellow one where a
# 100 ms interpolation buffer would, from the same received states.
extends Control

var room: NetRoom
var markers_root: Node3D
var markers_on := true
var nearzero_mode := true

var _panel: PanelContainer
var _text: Label
var _grid: GridContainer
var _foot: Label
var _next_update := 0.0
var _markers := {}  # slot -> [snap MeshInstance3D, interp MeshInstance3D]
var _monitors: Array[StringName] = []


func _ready() -> void:
	set_anchors_preset(Control.PRESET_FULL_RECT)
	mouse_filter = Control.MOUSE_FILTER_IGNORE
	_panel = PanelContainer.new()
	var style := StyleBoxFlat.new()
	style.bg_color = Color(0, 0, 0, 0.6)
	style.set_content_margin_all(10)
	_panel.add_theme_stylebox_override("panel", style)
	_panel.position = Vector2(20, 110)
	_panel.visible = false
	add_child(_panel)
	var box := VBoxContainer.new()
	_panel.add_child(box)
	_text = Label.new()
	_text.add_theme_font_size_override("font_size", 15)
	box.add_child(_text)
	_grid = GridContainer.new()
	_grid.columns = 9
	_grid.add_theme_constant_override("h_separation", 14)
	box.add_child(_grid)
	_foot = Label.new()
	_foot.add_theme_font_size_override("font_size", 13)
	_foot.modulate = Color(1, 1, 1, 0.7)
	_foot.text = "F3 closes. F4 markers: red = newest state (MultiplayerSynchronizer's snap), yellow = 100 ms interpolation"
	box.add_child(_foot)
	for m in ["rtt_ms", "jitter_ms", "loss_percent", "clock_offset_ms"]:
		_add_monitor("nearzero/link/" + m, func(): return _num(room, m))


func toggle() -> void:
	_panel.visible = not _panel.visible


func is_open() -> bool:
	return _panel.visible


func _exit_tree() -> void:
	for id in _monitors:
		if Performance.has_custom_monitor(id):
			Performance.remove_custom_monitor(id)
	_monitors.clear()


func _add_monitor(id: String, f: Callable) -> void:
	if not Performance.has_custom_monitor(id):
		Performance.add_custom_monitor(id, f)
		_monitors.append(StringName(id))


## A remote car appeared (nearzero mode): its monitors and markers.
func add_remote(slot: int, car: Node3D) -> void:
	var net: NetPredictor = car.get_node_or_null("NetPredictor")
	if net == null:
		return
	var base := "nearzero/player%d/" % slot
	for m in ["debug_age_ms", "debug_correction", "debug_prediction_distance", "debug_jitter_ms"]:
		_add_monitor(base + m.trim_prefix("debug_"), func(): return _num(net, m) if is_instance_valid(net) else 0.0)
	_add_monitor(base + "ghost", func(): return 1 if is_instance_valid(net) and net.is_ghost() else 0)
	if markers_root:
		_markers[slot] = [_marker(Color(1.0, 0.2, 0.2), "newest state (snap)"),
			_marker(Color(1.0, 0.85, 0.1), "interp 100 ms")]


func remove_remote(slot: int) -> void:
	var base := "nearzero/player%d/" % slot
	for id in _monitors.duplicate():
		if String(id).begins_with(base):
			if Performance.has_custom_monitor(id):
				Performance.remove_custom_monitor(id)
			_monitors.erase(id)
	if _markers.has(slot):
		for m in _markers[slot]:
			m.queue_free()
		_markers.erase(slot)


func _marker(color: Color, text: String) -> MeshInstance3D:
	var mi := MeshInstance3D.new()
	var sm := SphereMesh.new()
	sm.radius = 0.5
	sm.height = 1.0
	var mat := StandardMaterial3D.new()
	mat.albedo_color = color
	mat.shading_mode = BaseMaterial3D.SHADING_MODE_UNSHADED
	mat.no_depth_test = true
	sm.material = mat
	mi.mesh = sm
	var l := Label3D.new()
	l.text = text
	l.modulate = color
	l.billboard = BaseMaterial3D.BILLBOARD_ENABLED
	l.no_depth_test = true
	l.font_size = 40
	l.pixel_size = 0.012
	l.outline_size = 12
	l.position = Vector3(0, 0.9 if color.g < 0.5 else 1.6, 0)
	mi.add_child(l)
	mi.visible = false
	markers_root.add_child(mi)
	return mi


static func _num(obj: Object, prop: String) -> float:
	if obj == null:
		return 0.0
	var v = obj.get(prop)
	return float(v) if v != null else 0.0


static func _fmt(obj: Object, prop: String, f := "%.1f") -> String:
	var v = obj.get(prop) if obj else null
	if v == null:
		return "-"
	if v is String:
		return v if v != "" else "-"
	return f % v


func _process(_delta: float) -> void:
	if room == null:
		return
	var show := markers_on and nearzero_mode
	for slot in _markers:
		var car := room.get_player_node(slot) as Node3D
		var pair: Array = _markers[slot]
		var net: NetPredictor = car.get_node_or_null("NetPredictor") if car else null
		var ok := show and net != null and car.visible and not net.is_hidden() \
			and net.has_method("get_newest_state_position")
		pair[0].visible = ok
		pair[1].visible = ok
		if ok:
			pair[0].global_position = net.call("get_newest_state_position") + Vector3(0, 1.2, 0)
			pair[1].global_position = net.call("get_interpolated_position", 100.0) + Vector3(0, 1.2, 0)
	if not _panel.visible or Time.get_ticks_msec() < _next_update:
		return
	_next_update = Time.get_ticks_msec() + 200
	var lines := PackedStringArray()
	lines.append("nearzero %s   %s   server %s" % [room.version, "nearzero" if nearzero_mode else "Godot ENet",
		room.server_address])
	lines.append("link: RTT %s ms   jitter %s ms   loss %s %%   clock offset %s ms   synced %s" % [
		_fmt(room, "rtt_ms"), _fmt(room, "jitter_ms"), _fmt(room, "loss_percent"),
		_fmt(room, "clock_offset_ms"), room.is_synced()])
	lines.append("lag simulator (this link): %s   %s ms   ±%s ms   %s %% loss" % [
		"on" if room.lag_enabled else "off", _fmt(room, "lag_latency_ms", "%.0f"),
		_fmt(room, "lag_jitter_ms", "%.0f"), _fmt(room, "lag_loss_percent", "%.0f")])
	var modes := ["off", "fixed", "adaptive up to %s ms" % _fmt(room, "input_delay_ms", "%.0f")]
	var mode: int = room.get("input_delay_mode") if room.get("input_delay_mode") != null else 0
	lines.append("input delay: %s ms now (%s): your car drawn that late, the others' states placed that far ahead" % [
		_fmt(room, "input_delay_now_ms", "%.0f"), modes[clampi(mode, 0, 2)]])
	_text.text = "\n".join(lines)
	var cells := ["player", "age", "path", "correction", "predicted", "jitter", "states", "ghost", "hidden"]
	for p in room.get_players():
		if p.is_local:
			continue
		var car := room.get_player_node(p.slot)
		var net: NetPredictor = car.get_node_or_null("NetPredictor") if car else null
		if net == null:
			cells.append_array([p.name, "-", "-", "-", "-", "-", "-", "-", "-"])
			continue
		cells.append_array([p.name.left(14), _fmt(net, "debug_age_ms", "%.0f ms"), _fmt(net, "debug_path"),
			_fmt(net, "debug_correction", "%.2f m"), _fmt(net, "debug_prediction_distance", "%.2f m"),
			_fmt(net, "debug_jitter_ms", "%.1f ms"), str(net.debug_states),
			"ghost" if net.is_ghost() else "-", "hidden" if net.is_hidden() else "-"])
	while _grid.get_child_count() < cells.size():
		var l := Label.new()
		l.add_theme_font_size_override("font_size", 15)
		_grid.add_child(l)
	while _grid.get_child_count() > cells.size():
		var c := _grid.get_child(_grid.get_child_count() - 1)
		_grid.remove_child(c)
		c.queue_free()
	for i in cells.size():
		var l: Label = _grid.get_child(i)
		l.text = str(cells[i])
		l.modulate = Color(1, 1, 1, 0.6) if i < 9 else Color.WHITE
