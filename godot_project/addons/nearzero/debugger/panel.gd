@tool
extends VBoxContainer
## The nearzero tab of a debugger session: the samples a running game's
## NetRooms send, ten a second, plotted over the last seconds. Pause stops
## the view (samples keep coming), the slider scrubs through what was
## recorded (the last 10 minutes), Export CSV saves every sample of the
## room shown.

const Plot := preload("res://addons/nearzero/debugger/plot.gd")

## Samples kept per room: 10 minutes at 10 a second.
const MAX_SAMPLES := 6000
const COLORS := [Color("4fc3f7"), Color("ffb74d"), Color("81c784"), Color("e57373"), Color("ba68c8"),
	Color("fff176"), Color("4db6ac"), Color("f06292")]
## Plots of the remote entities and of the links: [key, title].
const ENTITY_PLOTS := [["age_ms", "data age (ms)"], ["correction", "correction being faded (m, px in 2D)"],
	["speed", "drawn speed (per second)"], ["path", "path drawn from"], ["pops_rate", "pops and snaps per second"]]
const LINK_PLOTS := [["rtt_ms", "round trip (ms)"], ["offset_ms", "clock offset (ms)"], ["loss_pct", "states lost (%)"],
	["in_bps", "received (bytes/s)"], ["out_bps", "sent (bytes/s)"]]
const WINDOWS := [5.0, 10.0, 30.0, 60.0]
const CSV_COLUMNS := ["time_s", "room", "kind", "name", "age_ms", "correction", "speed", "path", "visibility", "pops",
	"snaps", "rtt_ms", "offset_ms", "loss", "jitter_ms", "in_bps", "out_bps", "candidates", "code", "slot", "host",
	"phase", "status", "players"]

var _samples := {} # room (the NetRoom's name) -> Array of sample Dictionaries, oldest first
var _room := ""
var _paused := false
var _window := 10.0
var _view_end := 0.0 # the view's end while paused (seconds)
var _dirty := false
var _stopped := false
var _refreshing := false # refresh() moves the slider's range: not the user scrubbing
var _colors := {} # series key -> Color

var _rooms: OptionButton
var _pause: Button
var _windows: OptionButton
var _scrub: HSlider
var _time: Label
var _facts: RichTextLabel
var _table: RichTextLabel
var _tabs: TabContainer
var _plots := {} # "entity:age_ms" -> Plot
var _dialog: EditorFileDialog


func _init() -> void:
	size_flags_vertical = Control.SIZE_EXPAND_FILL
	var bar := HBoxContainer.new()
	add_child(bar)
	var l := Label.new()
	l.text = "Room:"
	bar.add_child(l)
	_rooms = OptionButton.new()
	_rooms.tooltip_text = "The game's NetRoom (by node name) whose samples are shown."
	_rooms.item_selected.connect(_on_room_selected)
	bar.add_child(_rooms)
	_pause = Button.new()
	_pause.text = "Pause"
	_pause.toggle_mode = true
	_pause.tooltip_text = "Stop the view (samples keep being recorded); drag the slider to scrub."
	_pause.toggled.connect(set_paused)
	bar.add_child(_pause)
	l = Label.new()
	l.text = "Window:"
	bar.add_child(l)
	_windows = OptionButton.new()
	for w in WINDOWS:
		_windows.add_item("%d s" % w)
	_windows.select(WINDOWS.find(_window))
	_windows.item_selected.connect(_on_window_selected)
	bar.add_child(_windows)
	_scrub = HSlider.new()
	_scrub.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_scrub.step = 0.1
	_scrub.tooltip_text = "Scrub: the end of the window shown (pauses the view)."
	_scrub.value_changed.connect(_on_scrub)
	bar.add_child(_scrub)
	_time = Label.new()
	_time.custom_minimum_size.x = 70
	bar.add_child(_time)
	var clear := Button.new()
	clear.text = "Clear"
	clear.pressed.connect(clear_samples)
	bar.add_child(clear)
	var export := Button.new()
	export.text = "Export CSV..."
	export.tooltip_text = "Save every sample of the room shown as CSV (one row per entity and link per sample)."
	export.pressed.connect(_on_export)
	bar.add_child(export)

	_facts = RichTextLabel.new()
	_facts.bbcode_enabled = true
	_facts.fit_content = true
	_facts.scroll_active = false
	add_child(_facts)

	var split := HSplitContainer.new()
	split.size_flags_vertical = Control.SIZE_EXPAND_FILL
	add_child(split)
	_table = RichTextLabel.new()
	_table.bbcode_enabled = true
	_table.custom_minimum_size = Vector2(430, 0)
	_table.size_flags_vertical = Control.SIZE_EXPAND_FILL
	split.add_child(_table)
	_tabs = TabContainer.new()
	_tabs.size_flags_horizontal = Control.SIZE_EXPAND_FILL
	_tabs.size_flags_vertical = Control.SIZE_EXPAND_FILL
	split.add_child(_tabs)
	_tabs.add_child(_plot_grid("Entities", "entity", ENTITY_PLOTS))
	_tabs.add_child(_plot_grid("Links", "link", LINK_PLOTS))
	_show_waiting()


func _on_room_selected(i: int) -> void:
	_room = _rooms.get_item_text(i)
	_dirty = true


func _on_window_selected(i: int) -> void:
	_window = WINDOWS[i]
	_dirty = true


## Forgets every sample.
func clear_samples() -> void:
	_samples.clear()
	_rooms.clear()
	_room = ""
	_dirty = true


func _plot_grid(title: String, kind: String, plots: Array) -> Control:
	var grid := GridContainer.new()
	grid.name = title
	grid.columns = 2
	for p in plots:
		var plot := Plot.new()
		plot.title = p[1]
		if p[0] == "path":
			plot.levels = {0.0: "server", 1.0: "direct"}
		grid.add_child(plot)
		_plots[kind + ":" + p[0]] = plot
	return grid


func _ready() -> void:
	set_process(true)


func _process(_delta: float) -> void:
	if _dirty and is_visible_in_tree():
		_dirty = false
		refresh()


## A sample from the game (nearzero_debugger.gd).
func add_sample(d: Dictionary) -> void:
	var room: String = d.get("source", "NetRoom")
	if not _samples.has(room):
		_samples[room] = []
		_rooms.add_item(room)
		if _room == "":
			_room = room
			_rooms.select(_rooms.item_count - 1)
	var arr: Array = _samples[room]
	arr.append(d)
	if arr.size() > MAX_SAMPLES:
		arr.pop_front()
	_dirty = true


## How many samples of room ("": the one shown) were recorded.
func sample_count(room: String = "") -> int:
	return _samples.get(room if room != "" else _room, []).size()


## A new run of the game: the samples of the last one go.
func on_started() -> void:
	_samples.clear()
	_rooms.clear()
	_room = ""
	_stopped = false
	set_paused(false)
	_show_waiting()


func on_stopped() -> void:
	_stopped = true
	_dirty = true


## Pauses or resumes the view.
func set_paused(on: bool) -> void:
	_paused = on
	_pause.set_pressed_no_signal(on)
	_pause.text = "Resume" if on else "Pause"
	var arr: Array = _samples.get(_room, [])
	if on and not arr.is_empty():
		_view_end = arr[-1].time
	_dirty = true


func _on_scrub(v: float) -> void:
	if _refreshing:
		return # the range moved under the value (Range clamps and signals): the view stays live
	if not _paused:
		set_paused(true)
	_view_end = v
	_dirty = true


func _show_waiting() -> void:
	_facts.text = "[color=#9aa]No samples yet. Run a scene with a NetRoom from the editor: its room, links and remote entities show here ten times a second.[/color]"
	_table.text = ""
	for p in _plots.values():
		p.set_series([], 0.0, _window)


func _color(key: String) -> Color:
	if not _colors.has(key):
		_colors[key] = COLORS[_colors.size() % COLORS.size()]
	return _colors[key]


## Redraws the view from the samples of the room shown.
func refresh() -> void:
	var arr: Array = _samples.get(_room, [])
	if arr.is_empty():
		_show_waiting()
		return
	var first: float = arr[0].time
	var last: float = arr[-1].time
	_refreshing = true
	_scrub.min_value = first
	_scrub.max_value = max(last, first + 0.1)
	_refreshing = false
	var end := last
	if _paused:
		end = clampf(_view_end, first, last)
	_scrub.set_value_no_signal(end)
	_time.text = "%.1f s" % end
	var from := end - _window

	var ent := {} # key -> {metric -> Array of Vector2(time, value)}
	var lnk := {}
	var names := {}
	var prev_counts := {}
	var at: Dictionary = arr[0]
	for d in arr:
		var t: float = d.time
		if t > end:
			break
		at = d
		var players := _player_names(d)
		for e in d.entities:
			var key := "%d:%d" % [e.slot, e.entity]
			var count: int = e.pops + e.snaps
			var pc = prev_counts.get(key)
			prev_counts[key] = [t, count]
			if t < from:
				continue
			names[key] = _entity_name(e, players)
			var s: Dictionary = ent.get(key, {})
			if s.is_empty():
				ent[key] = s
				for p in ENTITY_PLOTS:
					s[p[0]] = [] # an Array: a packed array in a Dictionary would be copied on append
			s.age_ms.append(Vector2(t, e.age_ms))
			s.correction.append(Vector2(t, e.correction))
			s.speed.append(Vector2(t, e.speed))
			if e.path != "":
				s.path.append(Vector2(t, 1.0 if e.path == "direct" else 0.0))
			if pc != null and t > pc[0]:
				s.pops_rate.append(Vector2(t, (count - pc[1]) / (t - pc[0])))
		if t < from:
			continue
		for k in d.links:
			var s: Dictionary = lnk.get(k.name, {})
			if s.is_empty():
				lnk[k.name] = s
				for p in LINK_PLOTS:
					s[p[0]] = [] # an Array: a packed array in a Dictionary would be copied on append
			s.rtt_ms.append(Vector2(t, k.rtt_ms))
			s.offset_ms.append(Vector2(t, k.offset_ms))
			if k.loss >= 0:
				s.loss_pct.append(Vector2(t, 100.0 * k.loss))
			if k.in_bps >= 0:
				s.in_bps.append(Vector2(t, k.in_bps))
			if k.out_bps >= 0:
				s.out_bps.append(Vector2(t, k.out_bps))
	for p in ENTITY_PLOTS:
		var series := []
		for key in ent:
			series.append({name = names[key], color = _color("e" + key), points = ent[key][p[0]]})
		_plots["entity:" + p[0]].set_series(series, from, end)
	for p in LINK_PLOTS:
		var series := []
		for key in lnk:
			series.append({name = key, color = _color("l" + key), points = lnk[key][p[0]]})
		_plots["link:" + p[0]].set_series(series, from, end)
	_show_facts(at)


func _player_names(d: Dictionary) -> Dictionary:
	var out := {}
	for p in d.room.players:
		out[int(p.slot)] = p.name
	return out


func _entity_name(e: Dictionary, players: Dictionary) -> String:
	if e.slot < 0:
		return "shared object %d" % (e.entity - 128)
	var who := "%s (%d)" % [players.get(int(e.slot), "player"), e.slot]
	if e.entity == 0:
		return who
	return "%s entity %d" % [who, e.entity]


func _swatch(c: Color) -> String:
	return "[color=#%s]■[/color] " % c.to_html(false)


func _show_facts(d: Dictionary) -> void:
	var r: Dictionary = d.room
	var players := []
	for p in r.players:
		var tags := []
		if p.slot == r.host:
			tags.append("host")
		if p.slot == r.slot:
			tags.append("you")
		if not p.connected:
			tags.append("away")
		players.append("%s (%d%s)" % [p.name, p.slot, (", " + ", ".join(tags)) if tags else ""])
	var room := "room [b]%s[/b]" % r.code if r.code != "" else "no room"
	_facts.text = "%s%s · slot %d · host %d · phase %s · %s%s · players: %s" % [
		"[color=#e88]game stopped[/color] · " if _stopped else "", room, r.slot, r.host,
		r.phase if r.phase != "" else "-", r.status, ", synced" if r.synced else ", not synced",
		", ".join(players) if players else "-"]

	var t := "[table=7][cell][b]entity[/b][/cell][cell][b]age[/b][/cell][cell][b]corr.[/b][/cell][cell][b]speed[/b][/cell]" + \
		"[cell][b]path[/b][/cell][cell][b]pops[/b][/cell][cell][b]snaps[/b][/cell]"
	var players_by := _player_names(d)
	for e in d.entities:
		t += "[cell]%s%s[/cell][cell]%.0f ms[/cell][cell]%.2f[/cell][cell]%.1f[/cell][cell]%s[/cell][cell]%d[/cell][cell]%d[/cell]" % [
			_swatch(_color("e%d:%d" % [e.slot, e.entity])), _entity_name(e, players_by), e.age_ms, e.correction, e.speed,
			e.path if e.path != "" else e.visibility, e.pops, e.snaps]
	t += "[/table]\n\n[table=7][cell][b]link[/b][/cell][cell][b]rtt[/b][/cell][cell][b]offset[/b][/cell][cell][b]loss[/b][/cell]" + \
		"[cell][b]in B/s[/b][/cell][cell][b]out B/s[/b][/cell][cell][b]candidates[/b][/cell]"
	for k in d.links:
		t += "[cell]%s%s%s[/cell][cell]%.1f ms[/cell][cell]%.1f ms[/cell][cell]%s[/cell][cell]%s[/cell][cell]%s[/cell][cell]%s[/cell]" % [
			_swatch(_color("l" + k.name)), k.name, "" if k.up else " (down)", k.rtt_ms, k.offset_ms,
			("%.1f%%" % (100.0 * k.loss)) if k.loss >= 0 else "-", _rate(k.in_bps), _rate(k.out_bps),
			k.candidates if k.candidates != "" else "-"]
	t += "[/table]"
	_table.text = t


func _rate(v: float) -> String:
	if v < 0:
		return "-"
	return Plot._short(v)


func _on_export() -> void:
	if _dialog == null:
		_dialog = EditorFileDialog.new()
		_dialog.file_mode = EditorFileDialog.FILE_MODE_SAVE_FILE
		_dialog.access = EditorFileDialog.ACCESS_FILESYSTEM
		_dialog.add_filter("*.csv", "CSV")
		_dialog.file_selected.connect(_on_file_selected)
		add_child(_dialog)
	_dialog.current_file = "nearzero-%s.csv" % (_room if _room != "" else "samples")
	_dialog.popup_centered_ratio(0.5)


func _on_file_selected(path: String) -> void:
	var err := export_csv(path)
	if err != OK:
		push_error("nearzero: could not write %s: %s" % [path, error_string(err)])


## Writes every sample of room ("": the one shown) to path as CSV: one row
## per remote entity and per link of each sample, the room's facts on each.
func export_csv(path: String, room: String = "") -> Error:
	var f := FileAccess.open(path, FileAccess.WRITE)
	if f == null:
		return FileAccess.get_open_error()
	f.store_line(",".join(CSV_COLUMNS))
	var room_name := room if room != "" else _room
	for d in _samples.get(room_name, []):
		var r: Dictionary = d.room
		var players := []
		for p in r.players:
			players.append("%d:%s" % [p.slot, p.name])
		var tail := [r.code, r.slot, r.host, r.phase, r.status, " ".join(players)]
		var names := _player_names(d)
		for e in d.entities:
			f.store_line(_csv_row([d.time, room_name, "entity", _entity_name(e, names), e.age_ms, e.correction, e.speed,
				e.path, e.visibility, e.pops, e.snaps, "", "", "", "", "", "", ""] + tail))
		for k in d.links:
			f.store_line(_csv_row([d.time, room_name, "link", k.name, "", "", "", "", "", "", "", k.rtt_ms, k.offset_ms,
				k.loss, k.jitter_ms, k.in_bps, k.out_bps, k.candidates] + tail))
	f.close()
	return OK


static func _csv_row(fields: Array) -> String:
	var out := PackedStringArray()
	for v in fields:
		var s := str(v)
		if s.contains(",") or s.contains("\"") or s.contains("\n"):
			s = "\"" + s.replace("\"", "\"\"") + "\""
		out.append(s)
	return ",".join(out)
