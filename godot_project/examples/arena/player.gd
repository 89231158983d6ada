# A player's entity in the arena example: steered with the arrow keys on
# the machine that owns it, drawn by its NetPredictor everywhere else.
# `health` and the body colour are synced properties (NetPredictor's
# synced_properties): the owner sets them, every copy shows them, players
# who join later included.
extends CharacterBody2D

const SPEED := 300.0

## Health, 0-100: set by the owner from the server's hit_result; the bar
## follows it on every machine.
@export var health := 100:
	set(v):
		health = v
		if is_node_ready():
			$HealthBar.size.x = 40.0 * health / 100.0

## Drives the entity in a circle instead of the keys (headless runs).
var bot := false
## A bot that stays in place.
var still := false
var bot_angle := 0.0

@onready var net: NetPredictor = $NetPredictor


func _ready() -> void:
	health = health
	if net.is_local():
		$Body.color = Color.from_hsv(randf(), 0.6, 1.0)  # synced: every copy shows it
	else:
		$Shape.disabled = true  # remote copies stay out of the local physics


func _physics_process(delta: float) -> void:
	if not net.is_local():
		return
	var dir := Input.get_vector("ui_left", "ui_right", "ui_up", "ui_down")
	if bot:
		bot_angle += delta
		dir = Vector2.ZERO if still else Vector2.from_angle(bot_angle + PI / 2)
	velocity = dir * SPEED
	if dir != Vector2.ZERO:
		rotation = dir.angle()
	move_and_slide()


## Called on the owner when the server says we died: back to full health
## somewhere else, and remote copies snap there instead of sliding.
func respawn() -> void:
	health = 100
	global_position = Vector2(randf_range(100, 900), randf_range(100, 500))
	net.teleport()
