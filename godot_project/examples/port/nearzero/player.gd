# A player: arrow keys move it, or, for a bot, it walks to `target`. Its
# NetPredictor sends it from the machine that owns it and draws it elsewhere.
extends Node2D

const SPEED := 220.0

var bot := false
var target = null  # where a bot walks (a Vector2), or null to stand


func _physics_process(delta: float) -> void:
	if not $NetPredictor.is_local():
		return  # the other player's: its NetPredictor moves it
	var dir := Input.get_vector("ui_left", "ui_right", "ui_up", "ui_down")
	if bot:
		dir = Vector2.ZERO if target == null else position.direction_to(target)
	position = (position + dir * SPEED * delta).clamp(Vector2(20, 20), Vector2(940, 520))
