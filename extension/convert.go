package main

import (
	"math"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/netcode/geom"
)

// Conversions between the engine's float32 math types and netcode's
// float64 ones. 2D positions live in X and Y with Z zero; a 2D rotation is
// a rotation about +Z (geom.Angle2D), Godot's canvas rotation.

func vec3From(v godot.Vector3) geom.Vec3 {
	return geom.Vec3{X: float64(v.X), Y: float64(v.Y), Z: float64(v.Z)}
}

func vec3To(v geom.Vec3) godot.Vector3 {
	return godot.Vector3{X: float32(v.X), Y: float32(v.Y), Z: float32(v.Z)}
}

func vec2From(v godot.Vector2) geom.Vec3 { return geom.Vec3{X: float64(v.X), Y: float64(v.Y)} }

func vec2To(v geom.Vec3) godot.Vector2 { return godot.Vector2{X: float32(v.X), Y: float32(v.Y)} }

func quatFrom(q godot.Quaternion) geom.Quat {
	return geom.Quat{X: float64(q.X), Y: float64(q.Y), Z: float64(q.Z), W: float64(q.W)}
}

func quatTo(q geom.Quat) godot.Quaternion {
	return godot.Quaternion{X: float32(q.X), Y: float32(q.Y), Z: float32(q.Z), W: float32(q.W)}
}

func length3(v godot.Vector3) float32 {
	return float32(math.Sqrt(float64(v.X*v.X + v.Y*v.Y + v.Z*v.Z)))
}

func length2(v godot.Vector2) float32 { return float32(math.Hypot(float64(v.X), float64(v.Y))) }

// scaledBasis returns the rotation q with its columns (local axes) scaled.
func scaledBasis(q geom.Quat, scale [3]float32) godot.Basis {
	b := godot.BasisFromQuaternion(quatTo(q))
	for r := range 3 {
		row := &b.Rows[r]
		row.X *= scale[0]
		row.Y *= scale[1]
		row.Z *= scale[2]
	}
	return b
}

// scaledTransform2D returns the 2D transform of a rotation by angle, axes
// scaled, at origin pos.
func scaledTransform2D(angle float64, pos geom.Vec3, scale [2]float32) godot.Transform2D {
	t := godot.Transform2DFrom(float32(angle), vec2To(pos))
	t.X.X, t.X.Y = t.X.X*scale[0], t.X.Y*scale[0]
	t.Y.X, t.Y.Y = t.Y.X*scale[1], t.Y.Y*scale[1]
	return t
}

// The affine math of the input delay's drawn nodes (netpredictor_delay.go),
// in float64 on a 3x4 matrix (basis rows, then the origin as a column).

type aff3 [3][4]float64

func aff3From(t godot.Transform3D) (m aff3) {
	for i, r := range t.Basis.Rows {
		m[i] = [4]float64{float64(r.X), float64(r.Y), float64(r.Z), 0}
	}
	m[0][3], m[1][3], m[2][3] = float64(t.Origin.X), float64(t.Origin.Y), float64(t.Origin.Z)
	return m
}

func (m aff3) to() (t godot.Transform3D) {
	for i := range 3 {
		t.Basis.Rows[i] = godot.Vector3{X: float32(m[i][0]), Y: float32(m[i][1]), Z: float32(m[i][2])}
	}
	t.Origin = godot.Vector3{X: float32(m[0][3]), Y: float32(m[1][3]), Z: float32(m[2][3])}
	return t
}

// mul3 returns a·b: b's transform, then a's.
func mul3(a, b godot.Transform3D) godot.Transform3D {
	x, y := aff3From(a), aff3From(b)
	var r aff3
	for i := range 3 {
		for j := range 4 {
			v := x[i][0]*y[0][j] + x[i][1]*y[1][j] + x[i][2]*y[2][j]
			if j == 3 {
				v += x[i][3]
			}
			r[i][j] = v
		}
	}
	return r.to()
}

// affineInverse3 returns the inverse of t (a basis that may scale): the
// identity when it is singular.
func affineInverse3(t godot.Transform3D) godot.Transform3D {
	m := aff3From(t)
	a, b, c := m[0], m[1], m[2]
	det := a[0]*(b[1]*c[2]-b[2]*c[1]) - a[1]*(b[0]*c[2]-b[2]*c[0]) + a[2]*(b[0]*c[1]-b[1]*c[0])
	if det == 0 {
		return godot.Transform3D{Basis: godot.IdentityBasis}
	}
	var r aff3
	r[0] = [4]float64{(b[1]*c[2] - b[2]*c[1]) / det, (a[2]*c[1] - a[1]*c[2]) / det, (a[1]*b[2] - a[2]*b[1]) / det}
	r[1] = [4]float64{(b[2]*c[0] - b[0]*c[2]) / det, (a[0]*c[2] - a[2]*c[0]) / det, (a[2]*b[0] - a[0]*b[2]) / det}
	r[2] = [4]float64{(b[0]*c[1] - b[1]*c[0]) / det, (a[1]*c[0] - a[0]*c[1]) / det, (a[0]*b[1] - a[1]*b[0]) / det}
	for i := range 3 {
		r[i][3] = -(r[i][0]*m[0][3] + r[i][1]*m[1][3] + r[i][2]*m[2][3])
	}
	return r.to()
}

// near3 reports whether two transforms are equal up to float32 rounding
// of the math between them.
func near3(a, b godot.Transform3D) bool {
	x, y := aff3From(a), aff3From(b)
	for i := range 3 {
		for j := range 4 {
			if d := x[i][j] - y[i][j]; d > 1e-3*(1+math.Abs(y[i][j])) || -d > 1e-3*(1+math.Abs(y[i][j])) {
				return false
			}
		}
	}
	return true
}

// mul2 returns a·b for 2D transforms (columns X, Y and the origin).
func mul2(a, b godot.Transform2D) godot.Transform2D {
	ax := func(v godot.Vector2) godot.Vector2 {
		return godot.Vector2{X: a.X.X*v.X + a.Y.X*v.Y, Y: a.X.Y*v.X + a.Y.Y*v.Y}
	}
	o := ax(b.Origin)
	return godot.Transform2D{X: ax(b.X), Y: ax(b.Y), Origin: godot.Vector2{X: o.X + a.Origin.X, Y: o.Y + a.Origin.Y}}
}

// affineInverse2 returns the inverse of t: the identity when singular.
func affineInverse2(t godot.Transform2D) godot.Transform2D {
	det := float64(t.X.X)*float64(t.Y.Y) - float64(t.Y.X)*float64(t.X.Y)
	if det == 0 {
		return godot.Transform2D{X: godot.Vector2{X: 1}, Y: godot.Vector2{Y: 1}}
	}
	r := godot.Transform2D{
		X: godot.Vector2{X: float32(float64(t.Y.Y) / det), Y: float32(-float64(t.X.Y) / det)},
		Y: godot.Vector2{X: float32(-float64(t.Y.X) / det), Y: float32(float64(t.X.X) / det)},
	}
	o := mul2(r, godot.Transform2D{Origin: t.Origin}).Origin
	r.Origin = godot.Vector2{X: -o.X, Y: -o.Y}
	return r
}

// near2 is near3 for 2D transforms.
func near2(a, b godot.Transform2D) bool {
	x := [6]float32{a.X.X, a.X.Y, a.Y.X, a.Y.Y, a.Origin.X, a.Origin.Y}
	y := [6]float32{b.X.X, b.X.Y, b.Y.X, b.Y.Y, b.Origin.X, b.Origin.Y}
	for i := range x {
		if d := math.Abs(float64(x[i] - y[i])); d > 1e-3*(1+math.Abs(float64(y[i]))) {
			return false
		}
	}
	return true
}
