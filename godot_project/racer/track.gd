# The race track, built from code at _ready (primitive meshes only, no
# assets): a closed Catmull-Rom loop through CONTROL, resampled every
# SPACING metres into `points`, a road strip with kerbs, a start line,
# checkpoint gates, trees to crash into and a ground plane.
#
# Cars read the track through the helpers below: nearest_index() (the
# progress along the loop), lateral_offset() (off track when larger than
# half_width), grid_transform() (start slots) and checkpoint_transform()
# (where the reset key puts a car).
extends Node3D

## Control points of the loop (x, z), metres. The start line is at the first.
const CONTROL := [
	Vector2(0, 0), Vector2(70, 0), Vector2(115, 12), Vector2(135, 55), Vector2(118, 98),
	Vector2(75, 104), Vector2(48, 80), Vector2(10, 86), Vector2(-20, 122), Vector2(-72, 118),
	Vector2(-98, 78), Vector2(-92, 30), Vector2(-55, 2),
]
const SPACING := 3.0
const CHECKPOINTS := 8
const TREES := 70

@export var half_width := 7.0

var points := PackedVector3Array()
var tangents := PackedVector3Array()
## Sample index of each checkpoint; checkpoint 0 is the start/finish line.
var checkpoints := PackedInt32Array()
var length := 0.0

var _road_mat := StandardMaterial3D.new()


func _ready() -> void:
	_build_centerline()
	_build_ground()
	_build_road()
	_build_gates()
	_build_trees()


## Index of the centreline sample nearest to pos. With hint >= 0 only the
## samples within window of it are searched (cheap, and a car never jumps
## to the other side of a hairpin).
func nearest_index(pos: Vector3, hint := -1, window := 12) -> int:
	var n := points.size()
	var best := 0
	var best_d := INF
	if hint < 0:
		for i in n:
			var d := _flat(points[i] - pos).length_squared()
			if d < best_d:
				best_d = d
				best = i
		return best
	for k in range(-window, window + 1):
		var i := posmod(hint + k, n)
		var d := _flat(points[i] - pos).length_squared()
		if d < best_d:
			best_d = d
			best = i
	return best


## Signed sideways distance of pos from the centreline at sample i
## (positive to the right of the driving direction).
func lateral_offset(pos: Vector3, i: int) -> float:
	var right := tangents[i].cross(Vector3.UP)
	return _flat(pos - points[i]).dot(right)


## A point dist metres ahead of sample i along the loop, moved sideways by lane.
func point_ahead(i: int, dist: float, lane := 0.0) -> Vector3:
	var j := posmod(i + int(round(dist / SPACING)), points.size())
	return points[j] + tangents[j].cross(Vector3.UP) * lane


## Start slot k (0-based): two columns, staggered, behind the start line.
func grid_transform(k: int) -> Transform3D:
	var row := k / 2
	var col := -1.0 if k % 2 == 0 else 1.0
	var i := posmod(-(3 + row * 3), points.size())
	var pos := points[i] + tangents[i].cross(Vector3.UP) * col * 3.2 - tangents[i] * (0.0 if col < 0 else 2.5)
	return _facing(pos, tangents[i])


## The checkpoint gate c, facing the driving direction.
func checkpoint_transform(c: int) -> Transform3D:
	var i := checkpoints[c]
	return _facing(points[i], tangents[i])


## Distance along the loop from the start line to sample i.
func distance_at(i: int) -> float:
	return i * length / points.size()


func _facing(pos: Vector3, fwd: Vector3) -> Transform3D:
	var b := Basis.looking_at(fwd, Vector3.UP)
	return Transform3D(b, pos + Vector3(0, 0.6, 0))


static func _flat(v: Vector3) -> Vector3:
	return Vector3(v.x, 0, v.z)


func _build_centerline() -> void:
	# Dense Catmull-Rom samples, then resampled at SPACING.
	var dense := PackedVector3Array()
	var n := CONTROL.size()
	for s in n:
		var p0: Vector2 = CONTROL[posmod(s - 1, n)]
		var p1: Vector2 = CONTROL[s]
		var p2: Vector2 = CONTROL[(s + 1) % n]
		var p3: Vector2 = CONTROL[(s + 2) % n]
		for k in 40:
			var t := k / 40.0
			var p := 0.5 * ((2.0 * p1) + (-p0 + p2) * t + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * t * t
				+ (-p0 + 3.0 * p1 - 3.0 * p2 + p3) * t * t * t)
			dense.append(Vector3(p.x, 0, p.y))
	var total := 0.0
	for i in dense.size():
		total += dense[i].distance_to(dense[(i + 1) % dense.size()])
	var count := int(round(total / SPACING))
	var step := total / count
	var walked := 0.0
	var next := 0.0
	for i in dense.size():
		var a := dense[i]
		var b := dense[(i + 1) % dense.size()]
		var seg := a.distance_to(b)
		while next <= walked + seg and points.size() < count:
			points.append(a.lerp(b, (next - walked) / max(seg, 0.0001)))
			next += step
		walked += seg
	length = total
	for i in points.size():
		var t := (points[(i + 1) % points.size()] - points[posmod(i - 1, points.size())]).normalized()
		tangents.append(t)
	for c in CHECKPOINTS:
		checkpoints.append(int(c * points.size() / CHECKPOINTS))


func _mat(color: Color) -> StandardMaterial3D:
	var m := StandardMaterial3D.new()
	m.albedo_color = color
	m.roughness = 0.9
	return m


func _build_ground() -> void:
	var body := StaticBody3D.new()
	body.name = "Ground"
	var shape := CollisionShape3D.new()
	var box := BoxShape3D.new()
	box.size = Vector3(800, 2, 800)
	shape.shape = box
	shape.position = Vector3(20, -1, 60)
	body.add_child(shape)
	var mesh := MeshInstance3D.new()
	var plane := PlaneMesh.new()
	plane.size = Vector2(800, 800)
	plane.material = _mat(Color(0.24, 0.45, 0.2))
	mesh.mesh = plane
	mesh.position = Vector3(20, 0, 60)
	body.add_child(mesh)
	add_child(body)


func _build_road() -> void:
	var st := SurfaceTool.new()
	st.begin(Mesh.PRIMITIVE_TRIANGLES)
	var n := points.size()
	var kerb := 1.2
	for i in n:
		var j := (i + 1) % n
		var ri := tangents[i].cross(Vector3.UP)
		var rj := tangents[j].cross(Vector3.UP)
		var stripe := Color(0.85, 0.1, 0.1) if (i / 2) % 2 == 0 else Color(0.95, 0.95, 0.95)
		# Asphalt, then a kerb on each side.
		_quad(st, points[i] - ri * half_width, points[i] + ri * half_width,
			points[j] - rj * half_width, points[j] + rj * half_width, Color(0.3, 0.3, 0.32), 0.03)
		_quad(st, points[i] - ri * (half_width + kerb), points[i] - ri * half_width,
			points[j] - rj * (half_width + kerb), points[j] - rj * half_width, stripe, 0.04)
		_quad(st, points[i] + ri * half_width, points[i] + ri * (half_width + kerb),
			points[j] + rj * half_width, points[j] + rj * (half_width + kerb), stripe, 0.04)
	var mi := MeshInstance3D.new()
	mi.name = "Road"
	mi.cast_shadow = GeometryInstance3D.SHADOW_CASTING_SETTING_OFF
	mi.mesh = st.commit()
	_road_mat.vertex_color_use_as_albedo = true
	_road_mat.roughness = 1.0
	_road_mat.metallic_specular = 0.1
	_road_mat.cull_mode = BaseMaterial3D.CULL_DISABLED
	mi.material_override = _road_mat
	add_child(mi)


func _quad(st: SurfaceTool, a: Vector3, b: Vector3, c: Vector3, d: Vector3, color: Color, y: float) -> void:
	var up := Vector3(0, y, 0)
	# Two triangles, wound to face up (clockwise seen from above).
	for v in [a, c, b, b, c, d]:
		st.set_color(color)
		st.set_normal(Vector3.UP)
		st.add_vertex(v + up)


func _build_gates() -> void:
	for c in checkpoints.size():
		var t := checkpoint_transform(c)
		var gate := Node3D.new()
		gate.name = "Checkpoint%d" % c
		gate.transform = Transform3D(t.basis, points[checkpoints[c]])
		var color := Color(1.0, 0.8, 0.1) if c == 0 else Color(0.2, 0.6, 1.0)
		for side in [-1.0, 1.0]:
			var post := MeshInstance3D.new()
			var pm := BoxMesh.new()
			pm.size = Vector3(0.5, 5, 0.5)
			pm.material = _mat(color)
			post.mesh = pm
			post.position = Vector3(side * (half_width + 2.0), 2.5, 0)
			gate.add_child(post)
		var bar := MeshInstance3D.new()
		var bm := BoxMesh.new()
		bm.size = Vector3(half_width * 2 + 4.5, 0.7, 0.4)
		bm.material = _mat(color)
		bar.mesh = bm
		bar.position = Vector3(0, 5, 0)
		gate.add_child(bar)
		if c == 0:
			# A chequered start/finish line across the road.
			for k in 14:
				for r in 2:
					var sq := MeshInstance3D.new()
					var qm := BoxMesh.new()
					qm.size = Vector3(half_width / 7.0, 0.02, 0.8)
					qm.material = _mat(Color.WHITE if (k + r) % 2 == 0 else Color.BLACK)
					sq.mesh = qm
					sq.position = Vector3(-half_width + (k + 0.5) * half_width / 7.0, 0.05, (r - 0.5) * 0.8)
					gate.add_child(sq)
		add_child(gate)


func _build_trees() -> void:
	var rng := RandomNumberGenerator.new()
	rng.seed = 7
	var trunk_mat := _mat(Color(0.4, 0.26, 0.13))
	var leaf_mat := _mat(Color(0.13, 0.4, 0.16))
	var placed := 0
	var tries := 0
	while placed < TREES and tries < 2000:
		tries += 1
		var pos := Vector3(rng.randf_range(-160, 200), 0, rng.randf_range(-70, 190))
		var i := nearest_index(pos)
		var off: float = abs(lateral_offset(pos, i))
		var far := _flat(points[i] - pos).length()
		if min(off, far) < half_width + 5.0:
			continue
		var tree := StaticBody3D.new()
		tree.position = pos
		var shape := CollisionShape3D.new()
		var cyl := CylinderShape3D.new()
		cyl.radius = 0.6
		cyl.height = 4
		shape.shape = cyl
		shape.position.y = 2
		tree.add_child(shape)
		var trunk := MeshInstance3D.new()
		var tm := CylinderMesh.new()
		tm.top_radius = 0.4
		tm.bottom_radius = 0.55
		tm.height = 2.5
		tm.material = trunk_mat
		trunk.mesh = tm
		trunk.position.y = 1.25
		tree.add_child(trunk)
		var crown := MeshInstance3D.new()
		var cm := CylinderMesh.new()
		cm.top_radius = 0.0
		cm.bottom_radius = 2.2
		cm.height = 5.0
		cm.material = leaf_mat
		crown.mesh = cm
		crown.position.y = 4.5
		tree.add_child(crown)
		add_child(tree)
		placed += 1
