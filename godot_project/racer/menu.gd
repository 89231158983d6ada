# The main menu with the room inside it (built from code; main.gd drives
# it). Left: name, server, netcode and lag choices, Create room and Join by
# code or invite link. Once in a room: the code (big, copyable), the player
# list with colour, loading / ready state and host tag, the host's laps,
# time limit and Start, your Ready (with the track's load progress), and
# after a round its results with the restart vote.
extends Control

signal create_pressed
signal join_pressed(code_or_link: String)
signal leave_pressed
signal ready_toggled(ready: bool)
signal start_pressed
signal vote_pressed
signal settings_changed
signal lag_changed(index: int)
signal markers_toggled(on: bool)
signal delay_changed(index: int)

var name_edit: LineEdit
var server_choice: OptionButton
var address_edit: LineEdit
var mode_choice: OptionButton
var lag_choice: OptionButton
var markers_check: CheckBox
var delay_choice: OptionButton
var code_edit: LineEdit
var create_button: Button
var join_button: Button
var banner: Label
var status: Label

var room_box: VBoxContainer
var code_label: Label
var copy_code: Button
var copy_link: Button
var hosting_label: Label
var players_box: VBoxContainer
var laps_spin: SpinBox
var limit_choice: OptionButton
var start_button: Button
var ready_button: Button
var leave_button: Button
var host_row: HBoxContainer
var results_panel: PanelContainer
var results_box: VBoxContainer
var results_grid: GridContainer
var results_title: Label
var vote_button: Button

var link := ""


func _ready() -> void:
	set_anchors_preset(Control.PRESET_FULL_RECT)
	mouse_filter = Control.MOUSE_FILTER_IGNORE
	var panel := PanelContainer.new()
	panel.position = Vector2(24, 24)
	panel.custom_minimum_size = Vector2(560, 0)
	var style := StyleBoxFlat.new()
	style.bg_color = Color(0.07, 0.08, 0.11, 0.9)
	style.set_corner_radius_all(10)
	style.set_content_margin_all(18)
	panel.add_theme_stylebox_override("panel", style)
	add_child(panel)
	var v := VBoxContainer.new()
	v.add_theme_constant_override("separation", 10)
	panel.add_child(v)

	var title := Label.new()
	title.text = "nearzero racer"
	title.add_theme_font_size_override("font_size", 34)
	v.add_child(title)

	name_edit = LineEdit.new()
	name_edit.placeholder_text = "your name"
	name_edit.max_length = 24
	name_edit.text_changed.connect(func(_t): settings_changed.emit())
	v.add_child(_row("Name", name_edit))

	server_choice = OptionButton.new()
	server_choice.add_item("Host on this machine / LAN")
	server_choice.add_item("Room server")
	server_choice.item_selected.connect(_server_selected)
	address_edit = LineEdit.new()
	address_edit.placeholder_text = "host address to join (127.0.0.1)"
	address_edit.custom_minimum_size.x = 200
	address_edit.text_changed.connect(func(_t): settings_changed.emit())
	var srow := _row("Server", server_choice)
	srow.add_child(address_edit)
	v.add_child(srow)

	mode_choice = OptionButton.new()
	mode_choice.add_item("nearzero: NetRoom + NetPredictor")
	mode_choice.add_item("Godot: ENet + MultiplayerSynchronizer")
	mode_choice.tooltip_text = "The room creator's choice is the room's. Switchable in the lobby."
	mode_choice.item_selected.connect(func(_i): settings_changed.emit())
	v.add_child(_row("Netcode", mode_choice))

	delay_choice = OptionButton.new()
	delay_choice.tooltip_text = ("The room's input delay (nearzero): your own car is drawn this late, the others'\n" +
		"states placed as far ahead, so that other cars are drawn where they truly are\n" +
		"when the delay covers the lag. The host's choice, in the lobby.")
	delay_choice.item_selected.connect(func(i): delay_changed.emit(i))
	v.add_child(_row("Input delay", delay_choice))

	lag_choice = OptionButton.new()
	markers_check = CheckBox.new()
	markers_check.text = "markers"
	markers_check.button_pressed = true
	markers_check.tooltip_text = "For each remote car, draw where MultiplayerSynchronizer (newest state, red)\nand a 100 ms interpolation buffer (yellow) would put it (nearzero mode, F4)"
	markers_check.toggled.connect(func(on): markers_toggled.emit(on))
	lag_choice.item_selected.connect(func(i): lag_changed.emit(i))
	var lrow := _row("Lag", lag_choice)
	lrow.add_child(markers_check)
	v.add_child(lrow)

	var jrow := HBoxContainer.new()
	create_button = Button.new()
	create_button.text = "Create room"
	create_button.pressed.connect(func(): create_pressed.emit())
	jrow.add_child(create_button)
	code_edit = LineEdit.new()
	code_edit.placeholder_text = "code or invite link"
	code_edit.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	code_edit.text_submitted.connect(func(t): join_pressed.emit(t))
	jrow.add_child(code_edit)
	join_button = Button.new()
	join_button.text = "Join"
	join_button.pressed.connect(func(): join_pressed.emit(code_edit.text))
	jrow.add_child(join_button)
	v.add_child(jrow)

	banner = Label.new()
	banner.add_theme_font_size_override("font_size", 22)
	banner.add_theme_color_override("font_color", Color(1.0, 0.45, 0.35))
	banner.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	banner.visible = false
	v.add_child(banner)
	status = Label.new()
	status.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	status.modulate = Color(0.8, 0.85, 0.9)
	v.add_child(status)

	# The room, inside the menu.
	room_box = VBoxContainer.new()
	room_box.add_theme_constant_override("separation", 8)
	room_box.visible = false
	v.add_child(room_box)
	room_box.add_child(HSeparator.new())
	var crow := HBoxContainer.new()
	code_label = Label.new()
	code_label.add_theme_font_size_override("font_size", 52)
	code_label.text = "------"
	code_label.mouse_filter = Control.MOUSE_FILTER_PASS
	code_label.tooltip_text = "The room code: friends type it in Join"
	crow.add_child(code_label)
	var cbox := VBoxContainer.new()
	copy_code = Button.new()
	copy_code.text = "Copy code"
	copy_code.pressed.connect(func(): _copy(code_label.text, copy_code))
	cbox.add_child(copy_code)
	copy_link = Button.new()
	copy_link.text = "Copy link"
	copy_link.pressed.connect(func(): _copy(link, copy_link))
	cbox.add_child(copy_link)
	crow.add_child(cbox)
	room_box.add_child(crow)
	hosting_label = Label.new()
	hosting_label.modulate = Color(0.7, 0.9, 0.7)
	hosting_label.autowrap_mode = TextServer.AUTOWRAP_WORD_SMART
	room_box.add_child(hosting_label)
	players_box = VBoxContainer.new()
	room_box.add_child(players_box)

	host_row = HBoxContainer.new()
	var ll := Label.new()
	ll.text = "Laps"
	host_row.add_child(ll)
	laps_spin = SpinBox.new()
	laps_spin.min_value = 1
	laps_spin.max_value = 9
	laps_spin.value = 3
	laps_spin.value_changed.connect(func(_v): settings_changed.emit())
	host_row.add_child(laps_spin)
	var tl := Label.new()
	tl.text = "  Time limit"
	host_row.add_child(tl)
	limit_choice = OptionButton.new()
	for s in ["1:00", "2:00", "3:00"]:
		limit_choice.add_item(s)
	limit_choice.select(2)
	limit_choice.item_selected.connect(func(_i): settings_changed.emit())
	host_row.add_child(limit_choice)
	start_button = Button.new()
	start_button.text = "Start"
	start_button.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	start_button.pressed.connect(func(): start_pressed.emit())
	host_row.add_child(start_button)
	room_box.add_child(host_row)

	var rrow := HBoxContainer.new()
	ready_button = Button.new()
	ready_button.toggle_mode = true
	ready_button.text = "Loading track..."
	ready_button.disabled = true
	ready_button.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	ready_button.custom_minimum_size.y = 44
	ready_button.toggled.connect(func(on): ready_toggled.emit(on))
	rrow.add_child(ready_button)
	leave_button = Button.new()
	leave_button.text = "Leave room"
	leave_button.pressed.connect(func(): leave_pressed.emit())
	rrow.add_child(leave_button)
	room_box.add_child(rrow)

	# The results: a panel of their own, right of the menu.
	results_panel = PanelContainer.new()
	results_panel.position = Vector2(600, 24)
	results_panel.custom_minimum_size = Vector2(520, 0)
	results_panel.add_theme_stylebox_override("panel", style)
	results_panel.visible = false
	add_child(results_panel)
	results_box = VBoxContainer.new()
	results_box.add_theme_constant_override("separation", 10)
	results_title = Label.new()
	results_title.add_theme_font_size_override("font_size", 30)
	results_box.add_child(results_title)
	results_grid = GridContainer.new()
	results_grid.columns = 4
	results_grid.add_theme_constant_override("h_separation", 28)
	results_grid.add_theme_constant_override("v_separation", 6)
	results_box.add_child(results_grid)
	vote_button = Button.new()
	vote_button.text = "Race again (vote)"
	vote_button.pressed.connect(func(): vote_pressed.emit())
	results_box.add_child(vote_button)
	results_panel.add_child(results_box)
	_update_server()


func _row(label: String, control: Control) -> HBoxContainer:
	var h := HBoxContainer.new()
	var l := Label.new()
	l.text = label
	l.custom_minimum_size.x = 80
	h.add_child(l)
	control.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	h.add_child(control)
	return h


func _server_selected(_i: int) -> void:
	_update_server()
	settings_changed.emit()


func _copy(text: String, b: Button) -> void:
	DisplayServer.clipboard_set(text)
	_flash(b, "Copied!")


func _flash(b: Button, text: String) -> void:
	var old := b.text
	b.text = text
	get_tree().create_timer(1.2).timeout.connect(func(): b.text = old)


func _update_server() -> void:
	if server_choice.selected == 0:
		address_edit.placeholder_text = "host's address to join (127.0.0.1)"
	else:
		address_edit.placeholder_text = "server host:port"


func set_lag_presets(names: Array, selected: int) -> void:
	lag_choice.clear()
	for n in names:
		lag_choice.add_item(n)
	lag_choice.select(selected)


func set_delay_presets(names: Array, selected: int) -> void:
	delay_choice.clear()
	for n in names:
		delay_choice.add_item(n)
	delay_choice.select(selected)


func show_banner(text: String) -> void:
	banner.text = text
	banner.visible = text != ""


func set_in_room(in_room: bool) -> void:
	room_box.visible = in_room
	create_button.disabled = in_room
	join_button.disabled = in_room
	code_edit.editable = not in_room
	server_choice.disabled = in_room
	address_edit.editable = not in_room
	if not in_room:
		code_label.text = "------"
		results_panel.visible = false
		hosting_label.text = ""
		for c in players_box.get_children():
			c.queue_free()


## rows: [{name, color, state, host, you}] or empty (placeholders).
func set_players(rows: Array) -> void:
	for c in players_box.get_children():
		players_box.remove_child(c)
		c.queue_free()
	if rows.is_empty():
		var l := Label.new()
		l.text = "Waiting for the room..."
		l.modulate = Color(1, 1, 1, 0.5)
		players_box.add_child(l)
		return
	for r in rows:
		var h := HBoxContainer.new()
		var swatch := ColorRect.new()
		swatch.color = r.color
		swatch.custom_minimum_size = Vector2(22, 22)
		h.add_child(swatch)
		var n := Label.new()
		n.text = "%s%s" % [r.name, "  (you)" if r.you else ""]
		n.custom_minimum_size.x = 200
		h.add_child(n)
		var s := Label.new()
		s.text = r.state
		s.custom_minimum_size.x = 150
		s.modulate = Color(0.5, 1.0, 0.5) if r.state == "ready" else Color(1, 1, 1, 0.75)
		h.add_child(s)
		if r.host:
			var t := Label.new()
			t.text = "HOST"
			t.add_theme_color_override("font_color", Color(1.0, 0.8, 0.2))
			h.add_child(t)
		players_box.add_child(h)


## rows: [[place, name, time, status], ...]
func set_results(title: String, rows: Array) -> void:
	results_panel.visible = true
	results_title.text = title
	for c in results_grid.get_children():
		results_grid.remove_child(c)
		c.queue_free()
	for h in ["#", "player", "time", ""]:
		var l := Label.new()
		l.text = h
		l.modulate = Color(1, 1, 1, 0.6)
		results_grid.add_child(l)
	for r in rows:
		for cell in r:
			var l := Label.new()
			l.text = str(cell)
			l.add_theme_font_size_override("font_size", 22)
			results_grid.add_child(l)
