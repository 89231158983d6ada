# The arena's ball: a shared object (NetPredictor.shared). One player owns
# it at a time, as the server decides: its physics runs on the owner's
# machine and everyone else draws it from the owner's states. A player who
# touches it claims it (player.gd); NetPredictor freezes the body while
# someone else owns it and lets it simulate, from the velocity it was drawn
# with, once it is ours.
extends RigidBody2D

const RADIUS := 16.0
## The arena's walls, for the owner's copy to bounce off.
const BOUNDS := Rect2(20, 20, 960, 560)

@onready var net: NetPredictor = $NetPredictor
var log_every := 0  # physics frames between NZ_BALL lines; 0: none


func _ready() -> void:
	net.owner_changed.connect(func(slot: int, mine: bool):
		print("NZ_BALL_OWNER slot=%d mine=%s" % [slot, mine]))
	net.snapped.connect(func(): print("NZ_BALL_SNAPPED"))


func _draw() -> void:
	draw_circle(Vector2.ZERO, RADIUS, Color(1, 1, 1))
	draw_arc(Vector2.ZERO, RADIUS, 0, TAU, 24, Color(0.2, 0.2, 0.2), 2.0)


func _physics_process(_delta: float) -> void:
	if net.is_owner():
		# Bounce off the walls (top-down: no gravity, some damping). Only
		# a bounce writes the velocity: writing it every frame would undo
		# this frame's pushes (the getter reads the last step's value).
		var v := linear_velocity
		if (position.x < BOUNDS.position.x and v.x < 0) or (position.x > BOUNDS.end.x and v.x > 0):
			linear_velocity = Vector2(-v.x, v.y)
		elif (position.y < BOUNDS.position.y and v.y < 0) or (position.y > BOUNDS.end.y and v.y > 0):
			linear_velocity = Vector2(v.x, -v.y)
	if log_every > 0 and Engine.get_physics_frames() % log_every == 0:
		var room: NetRoom = net.get_room()
		if room != null and room.is_synced():
			print("NZ_BALL t=%.4f owner=%d mine=%s x=%.2f y=%.2f corr=%.1f" % [room.server_time(), net.owner_slot,
				net.is_owner(), global_position.x, global_position.y, net.debug_correction])


## Pushes the ball away from a player at from (the owner's machine).
func push(from: Vector2, strength: float) -> void:
	apply_central_impulse(from.direction_to(global_position) * strength)
