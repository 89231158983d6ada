# The race HUD: lap, place and time (top left), speed (top right), the
# time left when the limit is near (top centre), the countdown / GO and the
# reset hint (big, centre), and which netcode and lag are in use (bottom).
extends Control

var info: Label
var speed: Label
var time_left: Label
var big: Label
var hint: Label
var mode: Label


func _ready() -> void:
	set_anchors_preset(Control.PRESET_FULL_RECT)
	mouse_filter = Control.MOUSE_FILTER_IGNORE
	info = _label(26, Control.PRESET_TOP_LEFT, Vector2(20, 14))
	speed = _label(30, Control.PRESET_TOP_RIGHT, Vector2(-200, 14))
	speed.horizontal_alignment = HORIZONTAL_ALIGNMENT_RIGHT
	speed.size.x = 180
	time_left = _label(34, Control.PRESET_CENTER_TOP, Vector2(-200, 14))
	time_left.horizontal_alignment = HORIZONTAL_ALIGNMENT_CENTER
	time_left.size.x = 400
	time_left.add_theme_color_override("font_color", Color(1.0, 0.5, 0.3))
	big = _label(110, Control.PRESET_CENTER, Vector2(-400, -150))
	big.horizontal_alignment = HORIZONTAL_ALIGNMENT_CENTER
	big.size.x = 800
	hint = _label(44, Control.PRESET_CENTER, Vector2(-500, 0))
	hint.horizontal_alignment = HORIZONTAL_ALIGNMENT_CENTER
	hint.size.x = 1000
	hint.add_theme_color_override("font_color", Color(1.0, 0.85, 0.2))
	mode = _label(18, Control.PRESET_BOTTOM_LEFT, Vector2(20, -40))
	mode.modulate = Color(1, 1, 1, 0.8)


func _label(size: int, preset: int, offset: Vector2) -> Label:
	var l := Label.new()
	l.add_theme_font_size_override("font_size", size)
	l.add_theme_constant_override("outline_size", max(4, size / 8))
	l.add_theme_color_override("font_outline_color", Color(0, 0, 0, 0.85))
	l.mouse_filter = Control.MOUSE_FILTER_IGNORE
	add_child(l)
	l.set_anchors_preset(preset)
	l.position += offset
	return l
