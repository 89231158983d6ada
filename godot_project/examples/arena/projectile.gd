# A projectile of the arena example. Not a networked entity: the shooter
# sends one "fire" event (position, direction, server time) and every
# machine flies the same projectile from it, so all see it where the
# shooter does. Only the shooter's copy reports hits, against where it
# draws the other players; the server decides (NetRoom.report_hit).
extends Node2D

const SPEED := 700.0
const LIFE := 1.2
const RADIUS := 22.0

var room: NetRoom
var shooter := -1
var dir := Vector2.RIGHT
var age := 0.0


func _draw() -> void:
	draw_circle(Vector2.ZERO, 5.0, Color(1, 0.9, 0.2))


func _physics_process(delta: float) -> void:
	age += delta
	position += dir * SPEED * delta
	if age > LIFE:
		queue_free()
		return
	if room == null or shooter != room.local_slot:
		return
	for p in room.get_players():
		var slot: int = p["slot"]
		if slot == shooter:
			continue
		var target: Node2D = room.get_player_node(slot)
		if target != null and target.global_position.distance_to(global_position) < RADIUS:
			# Where we draw the target now is what the server checks.
			var at := target.global_position
			room.report_hit(slot, room.physics_server_time(), Vector3(at.x, at.y, 0))
			queue_free()
			return
