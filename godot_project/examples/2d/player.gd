# A player's entity: a CharacterBody2D steered with the arrow keys on the
# machine that owns it. On every other machine the NetRoom spawned this
# scene and its NetPredictor places it; the script then does nothing.
extends CharacterBody2D

const SPEED := 320.0

## Drives the entity in a circle instead of the keys (headless runs).
var bot := false

@onready var net: NetPredictor = $NetPredictor
@onready var body: Polygon2D = $Body

var bot_angle := 0.0


func _ready() -> void:
	if not net.is_local():
		body.color = Color(1.0, 0.6, 0.3)
		# A remote copy does not push the local player around: the demo
		# keeps it out of physics (a game would follow net.collidable).
		$Shape.disabled = true
		net.ghost_changed.connect(func(ghost): $Label.modulate.a = 0.5 if ghost else 1.0)


func _physics_process(delta: float) -> void:
	if not net.is_local():
		return  # a remote copy: NetPredictor moves it
	var dir := Input.get_vector("ui_left", "ui_right", "ui_up", "ui_down")
	if bot:
		bot_angle += delta
		dir = Vector2.from_angle(bot_angle + PI / 2)
	velocity = dir * SPEED
	if dir != Vector2.ZERO:
		rotation = dir.angle()
	move_and_slide()
