# A rocket of the arena example: a networked entity made with
# NetRoom.spawn_entity (the MultiplayerSpawner role). The shooter's copy
# flies it and its NetPredictor sends its states; every other machine gets
# the same scene from NetRoom's spawnable_scenes, drawn by its NetPredictor,
# and entity_spawned with the spawn's args. Freeing the shooter's copy
# despawns it everywhere.
extends Node2D

const SPEED := 220.0
const LIFE := 2.5

@onready var net: NetPredictor = $NetPredictor
var dir := Vector2.RIGHT
var age := 0.0
var tint := Color(1, 0.5, 0.2)


func _draw() -> void:
	draw_colored_polygon(PackedVector2Array([Vector2(12, 0), Vector2(-8, -6), Vector2(-8, 6)]), tint)


func _physics_process(delta: float) -> void:
	if not net.is_local():
		return  # drawn by the NetPredictor
	age += delta
	position += dir * SPEED * delta
	rotation = dir.angle()
	if age > LIFE:
		queue_free()  # NetRoom despawns it on every machine
