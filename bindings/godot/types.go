package godot

import (
	"math"
	"strconv"
)

// VariantType is Godot's Variant::Type.
type VariantType uint32

// The Variant types this package converts (the rest keep their engine numbers).
const (
	TypeNil                VariantType = 0
	TypeBool               VariantType = 1
	TypeInt                VariantType = 2
	TypeFloat              VariantType = 3
	TypeString             VariantType = 4
	TypeVector2            VariantType = 5
	TypeVector2i           VariantType = 6
	TypeRect2              VariantType = 7
	TypeVector3            VariantType = 9
	TypeVector3i           VariantType = 10
	TypeTransform2D        VariantType = 11
	TypeVector4            VariantType = 12
	TypeQuaternion         VariantType = 15
	TypeBasis              VariantType = 17
	TypeTransform3D        VariantType = 18
	TypeColor              VariantType = 20
	TypeStringName         VariantType = 21
	TypeNodePath           VariantType = 22
	TypeRID                VariantType = 23
	TypeObject             VariantType = 24
	TypeCallable           VariantType = 25
	TypeSignal             VariantType = 26
	TypeDictionary         VariantType = 27
	TypeArray              VariantType = 28
	TypePackedByteArray    VariantType = 29
	TypePackedInt32Array   VariantType = 30
	TypePackedInt64Array   VariantType = 31
	TypePackedFloat32Array VariantType = 32
	TypePackedFloat64Array VariantType = 33
	TypePackedStringArray  VariantType = 34
	TypePackedVector2Array VariantType = 35
	TypePackedVector3Array VariantType = 36
	typeMax                VariantType = 39
)

var variantTypeNames = map[VariantType]string{
	TypeNil: "Nil", TypeBool: "bool", TypeInt: "int", TypeFloat: "float", TypeString: "String",
	TypeVector2: "Vector2", TypeVector2i: "Vector2i", TypeRect2: "Rect2", TypeVector3: "Vector3",
	TypeTransform2D: "Transform2D", TypeQuaternion: "Quaternion", TypeBasis: "Basis",
	TypeTransform3D: "Transform3D", TypeColor: "Color", TypeStringName: "StringName",
	TypeNodePath: "NodePath", TypeRID: "RID", TypeObject: "Object", TypeCallable: "Callable",
	TypeSignal: "Signal", TypeDictionary: "Dictionary", TypeArray: "Array",
	TypePackedByteArray: "PackedByteArray", TypePackedStringArray: "PackedStringArray",
	TypeVector3i: "Vector3i", TypeVector4: "Vector4", TypePackedInt32Array: "PackedInt32Array",
	TypePackedInt64Array: "PackedInt64Array", TypePackedFloat32Array: "PackedFloat32Array",
	TypePackedFloat64Array: "PackedFloat64Array", TypePackedVector2Array: "PackedVector2Array",
	TypePackedVector3Array: "PackedVector3Array",
	// Types the package does not convert, named for messages ("a Rect2i
	// is not carried", not "Type(8)").
	8: "Rect2i", 13: "Vector4i", 14: "Plane", 16: "AABB", 19: "Projection",
	37: "PackedColorArray", 38: "PackedVector4Array",
}

// String returns the engine's name of the type ("Vector3"), or "Type(n)".
func (t VariantType) String() string {
	if n, ok := variantTypeNames[t]; ok {
		return n
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// Vector2 is Godot's Vector2 (single-precision build: 2 × float32, 8 B).
type Vector2 struct{ X, Y float32 }

// Vector3 is Godot's Vector3 (3 × float32, 12 B).
type Vector3 struct{ X, Y, Z float32 }

// Vector2i is Godot's Vector2i (2 × int32, 8 B).
type Vector2i struct{ X, Y int32 }

// Vector3i is Godot's Vector3i (3 × int32, 12 B).
type Vector3i struct{ X, Y, Z int32 }

// Vector4 is Godot's Vector4 (4 × float32, 16 B).
type Vector4 struct{ X, Y, Z, W float32 }

// Rect2 is Godot's Rect2: its position then its size (16 B).
type Rect2 struct{ Position, Size Vector2 }

// Quaternion is Godot's Quaternion (x, y, z vector part, w scalar; 16 B).
type Quaternion struct{ X, Y, Z, W float32 }

// Color is Godot's Color (r, g, b, a as float32; 16 B).
type Color struct{ R, G, B, A float32 }

// Basis is Godot's Basis: three rows (not columns) of float32, 36 B. The
// columns are the local axes: column 0 = (Rows[0].X, Rows[1].X, Rows[2].X).
type Basis struct{ Rows [3]Vector3 }

// Transform3D is Godot's Transform3D (Basis then origin, 48 B).
type Transform3D struct {
	Basis  Basis
	Origin Vector3
}

// Transform2D is Godot's Transform2D: the X axis, the Y axis and the origin
// (three columns, 24 B).
type Transform2D struct{ X, Y, Origin Vector2 }

// IdentityBasis is the basis of no rotation or scale.
var IdentityBasis = Basis{Rows: [3]Vector3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}

// IdentityQuaternion is the quaternion of no rotation.
var IdentityQuaternion = Quaternion{W: 1}

// BasisFromQuaternion returns the rotation matrix of the unit quaternion q.
func BasisFromQuaternion(q Quaternion) Basis {
	x, y, z, w := float64(q.X), float64(q.Y), float64(q.Z), float64(q.W)
	d := x*x + y*y + z*z + w*w
	if d == 0 {
		return IdentityBasis
	}
	s := 2 / d
	xs, ys, zs := x*s, y*s, z*s
	wx, wy, wz := w*xs, w*ys, w*zs
	xx, xy, xz := x*xs, x*ys, x*zs
	yy, yz, zz := y*ys, y*zs, z*zs
	return Basis{Rows: [3]Vector3{
		{float32(1 - (yy + zz)), float32(xy - wz), float32(xz + wy)},
		{float32(xy + wz), float32(1 - (xx + zz)), float32(yz - wx)},
		{float32(xz - wy), float32(yz + wx), float32(1 - (xx + yy))},
	}}
}

// Quaternion returns the rotation of b as a unit quaternion. Scale is
// removed first (each column normalised), so scaled node transforms work.
func (b Basis) Quaternion() Quaternion {
	var m [3][3]float64
	for c := range 3 {
		col := [3]float64{float64(b.Rows[0].at(c)), float64(b.Rows[1].at(c)), float64(b.Rows[2].at(c))}
		l := math.Sqrt(col[0]*col[0] + col[1]*col[1] + col[2]*col[2])
		if l == 0 {
			return IdentityQuaternion
		}
		for r := range 3 {
			m[r][c] = col[r] / l
		}
	}
	// Shepperd's method: pick the largest diagonal term for stability.
	var x, y, z, w float64
	switch tr := m[0][0] + m[1][1] + m[2][2]; {
	case tr > 0:
		s := math.Sqrt(tr+1) * 2
		w, x, y, z = s/4, (m[2][1]-m[1][2])/s, (m[0][2]-m[2][0])/s, (m[1][0]-m[0][1])/s
	case m[0][0] > m[1][1] && m[0][0] > m[2][2]:
		s := math.Sqrt(1+m[0][0]-m[1][1]-m[2][2]) * 2
		w, x, y, z = (m[2][1]-m[1][2])/s, s/4, (m[0][1]+m[1][0])/s, (m[0][2]+m[2][0])/s
	case m[1][1] > m[2][2]:
		s := math.Sqrt(1+m[1][1]-m[0][0]-m[2][2]) * 2
		w, x, y, z = (m[0][2]-m[2][0])/s, (m[0][1]+m[1][0])/s, s/4, (m[1][2]+m[2][1])/s
	default:
		s := math.Sqrt(1+m[2][2]-m[0][0]-m[1][1]) * 2
		w, x, y, z = (m[1][0]-m[0][1])/s, (m[0][2]+m[2][0])/s, (m[1][2]+m[2][1])/s, s/4
	}
	return Quaternion{float32(x), float32(y), float32(z), float32(w)}
}

// Column returns column i (0..2) of b: the local X, Y or Z axis.
func (b Basis) Column(i int) Vector3 {
	return Vector3{b.Rows[0].at(i), b.Rows[1].at(i), b.Rows[2].at(i)}
}

func (v Vector3) at(i int) float32 {
	switch i {
	case 0:
		return v.X
	case 1:
		return v.Y
	}
	return v.Z
}

// Rotation returns the rotation angle of t in radians (atan2 of its X axis).
func (t Transform2D) Rotation() float32 {
	return float32(math.Atan2(float64(t.X.Y), float64(t.X.X)))
}

// Transform2DFrom returns the transform of a rotation by angle radians
// followed by a translation to origin (unit scale).
func Transform2DFrom(angle float32, origin Vector2) Transform2D {
	s, c := math.Sincos(float64(angle))
	return Transform2D{X: Vector2{float32(c), float32(s)}, Y: Vector2{float32(-s), float32(c)}, Origin: origin}
}
