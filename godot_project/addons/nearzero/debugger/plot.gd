@tool
extends Control
## One plot of the nearzero tab: a title, a value axis and a line per
## series over the time window [t_from, t_to] (seconds of the game's
## clock).

## Title, with its unit.
var title := ""
## Draw the series as steps between labelled levels (the path plot):
## value -> label.
var levels := {}
## The window's ends, in seconds.
var t_from := 0.0
var t_to := 10.0

## [{name, color, points: Array of Vector2(time, value)}]
var _series: Array = []


func _init() -> void:
	custom_minimum_size = Vector2(260, 120)
	size_flags_horizontal = Control.SIZE_EXPAND_FILL
	size_flags_vertical = Control.SIZE_EXPAND_FILL


## Sets the series and the window, and redraws.
func set_series(series: Array, from: float, to: float) -> void:
	_series = series
	t_from = from
	t_to = max(to, from + 0.001)
	queue_redraw()


## The value range of the points in the window: [lo, hi], 0 included for
## values that never go below it, with a margin above.
func value_range() -> Vector2:
	if not levels.is_empty():
		var ks := levels.keys()
		return Vector2(ks.min() - 0.3, ks.max() + 0.3)
	var lo := INF
	var hi := -INF
	for s in _series:
		for p in s.points:
			if p.x >= t_from and p.x <= t_to:
				lo = min(lo, p.y)
				hi = max(hi, p.y)
	if lo == INF:
		return Vector2(0, 1)
	if lo >= 0:
		lo = 0.0
	if hi - lo < 1e-6:
		hi = lo + max(abs(lo), 1.0)
	return Vector2(lo, hi + (hi - lo) * 0.12)


func _draw() -> void:
	var font := get_theme_default_font()
	var fs := get_theme_default_font_size() - 2
	var sz := size
	draw_rect(Rect2(Vector2.ZERO, sz), Color(0.09, 0.1, 0.12))
	var area := Rect2(Vector2(52, fs + 8), Vector2(sz.x - 58, sz.y - fs - 14))
	if area.size.x < 10 or area.size.y < 10:
		return
	draw_string(font, Vector2(6, fs + 2), title, HORIZONTAL_ALIGNMENT_LEFT, -1, fs, Color(0.85, 0.87, 0.9))
	var r := value_range()
	var to_y := func(v: float) -> float:
		return area.end.y - (v - r.x) / (r.y - r.x) * area.size.y
	var to_x := func(t: float) -> float:
		return area.position.x + (t - t_from) / (t_to - t_from) * area.size.x
	var grid := Color(1, 1, 1, 0.08)
	if levels.is_empty():
		for i in 5:
			var v: float = r.x + (r.y - r.x) * i / 4.0
			var y: float = to_y.call(v)
			draw_line(Vector2(area.position.x, y), Vector2(area.end.x, y), grid)
			draw_string(font, Vector2(2, y + fs * 0.35), _short(v), HORIZONTAL_ALIGNMENT_RIGHT, 46, fs - 1,
				Color(0.6, 0.62, 0.66))
	else:
		for v in levels:
			var y: float = to_y.call(v)
			draw_line(Vector2(area.position.x, y), Vector2(area.end.x, y), grid)
			draw_string(font, Vector2(2, y + fs * 0.35), str(levels[v]), HORIZONTAL_ALIGNMENT_RIGHT, 46, fs - 1,
				Color(0.6, 0.62, 0.66))
	# A tick every second of the window, labelled every few.
	var span := t_to - t_from
	var every := 1.0 if span <= 12 else (5.0 if span <= 60 else 30.0)
	var t := ceilf(t_from / every) * every
	while t <= t_to:
		var x: float = to_x.call(t)
		draw_line(Vector2(x, area.position.y), Vector2(x, area.end.y), grid)
		t += every
	draw_rect(area, Color(1, 1, 1, 0.15), false)
	for s in _series:
		var pts := PackedVector2Array()
		var prev := Vector2.INF
		for p in s.points:
			if p.x < t_from or p.x > t_to:
				continue
			var q := Vector2(to_x.call(p.x), to_y.call(clampf(p.y, r.x, r.y)))
			if not levels.is_empty() and prev != Vector2.INF:
				pts.append(Vector2(q.x, prev.y)) # a step
			pts.append(q)
			prev = q
		if pts.size() >= 2:
			draw_polyline(pts, s.color, 1.6, true)
		elif pts.size() == 1:
			draw_circle(pts[0], 2.0, s.color)


## A short label for an axis value: 1.2k, 35, 0.25.
static func _short(v: float) -> String:
	var a := absf(v)
	if a >= 10000:
		return "%.0fk" % (v / 1000.0)
	if a >= 1000:
		return "%.1fk" % (v / 1000.0)
	if a >= 10 or a == 0:
		return "%.0f" % v
	if a >= 1:
		return "%.1f" % v
	return "%.2f" % v
