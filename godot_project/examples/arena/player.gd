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
			$Body/HealthBar.size.x = 40.0 * health / 100.0

## Drives the entity in a circle instead of the keys (headless runs).
var bot := false
## A bot that plays the ball instead: it pushes the ball to the other
## half of the arena whenever the ball is on its own half (set by main.gd:
## -1 the left half, +1 the right half).
var ball_side := 0
## How hard a touch pushes the ball (an impulse, on the owner's machine).
const PUSH := 160.0
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
	if ball_side != 0:
		dir = _play_ball()
	velocity = dir * SPEED
	if dir != Vector2.ZERO:
		rotation = dir.angle()
	move_and_slide()
	for i in get_slide_collision_count():
		var ball := get_slide_collision(i).get_collider() as RigidBody2D
		if ball != null and ball.has_method("push"):
			# Touching the shared ball: push it if it is ours, else ask
			# for it (the server hands it over; the next touch pushes).
			if ball.net.is_owner():
				ball.push(global_position, PUSH)
			else:
				ball.net.claim()


## The ball bot: walk behind the ball and through it towards the other
## half while the ball is on ours, else wait at home.
func _play_ball() -> Vector2:
	var ball: Node2D = get_parent().get_node_or_null("Ball")
	if ball == null:
		return Vector2.ZERO
	var home := Vector2(500 + 250 * ball_side, 300)
	var on_my_half := (ball.global_position.x - 500) * ball_side > 0
	var target := home
	if on_my_half:
		var goal := Vector2(500 - 300 * ball_side, 300)
		var behind := ball.global_position + goal.direction_to(ball.global_position) * 30.0
		target = behind if global_position.distance_to(behind) > 12.0 else goal
	if global_position.distance_to(target) < 6.0:
		return Vector2.ZERO
	return global_position.direction_to(target)


## Called on the owner when the server says we died: back to full health
## somewhere else, and remote copies snap there instead of sliding.
func respawn() -> void:
	health = 100
	global_position = Vector2(randf_range(100, 900), randf_range(100, 500))
	net.teleport()
