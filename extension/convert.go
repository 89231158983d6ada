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
