// Package geom holds the small vector and quaternion types the netcode uses.
//
// Values are float64 for arithmetic; the wire format narrows them. The axes
// follow Godot: in 3D +Y is up, in 2D the plane is X/Y and rotation is about +Z.
package geom

import "math"

// Vec3 is a 3D vector. 2D values use X and Y and leave Z at zero.
type Vec3 struct{ X, Y, Z float64 }

// Up3D is the world up axis in 3D (Godot's +Y).
var Up3D = Vec3{Y: 1}

// Up2D is the rotation axis of a 2D scene (out of the screen, +Z).
var Up2D = Vec3{Z: 1}

// Add returns v+w.
func (v Vec3) Add(w Vec3) Vec3 { return Vec3{v.X + w.X, v.Y + w.Y, v.Z + w.Z} }

// Sub returns v-w.
func (v Vec3) Sub(w Vec3) Vec3 { return Vec3{v.X - w.X, v.Y - w.Y, v.Z - w.Z} }

// Scale returns v*s.
func (v Vec3) Scale(s float64) Vec3 { return Vec3{v.X * s, v.Y * s, v.Z * s} }

// Dot returns the dot product of v and w.
func (v Vec3) Dot(w Vec3) float64 { return v.X*w.X + v.Y*w.Y + v.Z*w.Z }

// Cross returns the cross product v×w.
func (v Vec3) Cross(w Vec3) Vec3 {
	return Vec3{v.Y*w.Z - v.Z*w.Y, v.Z*w.X - v.X*w.Z, v.X*w.Y - v.Y*w.X}
}

// Len returns the Euclidean length of v.
func (v Vec3) Len() float64 { return math.Sqrt(v.Dot(v)) }

// Finite reports whether every component is neither NaN nor infinite.
func (v Vec3) Finite() bool { return finite(v.X) && finite(v.Y) && finite(v.Z) }

// Lerp returns v + (w-v)*t.
func (v Vec3) Lerp(w Vec3, t float64) Vec3 { return v.Add(w.Sub(v).Scale(t)) }

// RotateAbout returns v rotated by angle radians about the unit axis
// (right-handed, Rodrigues' formula).
func (v Vec3) RotateAbout(axis Vec3, angle float64) Vec3 {
	if angle == 0 {
		return v
	}
	s, c := math.Sincos(angle)
	return v.Scale(c).Add(axis.Cross(v).Scale(s)).Add(axis.Scale(axis.Dot(v) * (1 - c)))
}

// Quat is a rotation quaternion (X, Y, Z vector part, W scalar), as in Godot.
type Quat struct{ X, Y, Z, W float64 }

// Identity is the quaternion of no rotation.
var Identity = Quat{W: 1}

// AxisAngle returns the rotation of angle radians about the unit axis.
func AxisAngle(axis Vec3, angle float64) Quat {
	s, c := math.Sincos(angle / 2)
	return Quat{axis.X * s, axis.Y * s, axis.Z * s, c}
}

// Mul returns q*r: the rotation r followed by q.
func (q Quat) Mul(r Quat) Quat {
	return Quat{
		X: q.W*r.X + q.X*r.W + q.Y*r.Z - q.Z*r.Y,
		Y: q.W*r.Y - q.X*r.Z + q.Y*r.W + q.Z*r.X,
		Z: q.W*r.Z + q.X*r.Y - q.Y*r.X + q.Z*r.W,
		W: q.W*r.W - q.X*r.X - q.Y*r.Y - q.Z*r.Z,
	}
}

// Dot returns the 4D dot product of q and r.
func (q Quat) Dot(r Quat) float64 { return q.X*r.X + q.Y*r.Y + q.Z*r.Z + q.W*r.W }

// Len returns the 4D length of q.
func (q Quat) Len() float64 { return math.Sqrt(q.Dot(q)) }

// Finite reports whether every component is neither NaN nor infinite.
func (q Quat) Finite() bool { return finite(q.X) && finite(q.Y) && finite(q.Z) && finite(q.W) }

// Normalized returns q scaled to unit length; a zero quaternion becomes Identity.
func (q Quat) Normalized() Quat {
	n := q.Len()
	if n == 0 || !finite(n) {
		return Identity
	}
	return Quat{q.X / n, q.Y / n, q.Z / n, q.W / n}
}

// Neg returns -q, the same rotation.
func (q Quat) Neg() Quat { return Quat{-q.X, -q.Y, -q.Z, -q.W} }

// Rotate returns v rotated by the unit quaternion q.
func (q Quat) Rotate(v Vec3) Vec3 {
	u := Vec3{q.X, q.Y, q.Z}
	t := u.Cross(v).Scale(2)
	return v.Add(t.Scale(q.W)).Add(u.Cross(t))
}

// AngleTo returns the angle in radians of the rotation between q and r (unit
// quaternions), in [0, π]. q and -q are the same rotation.
func (q Quat) AngleTo(r Quat) float64 {
	d := math.Abs(q.Dot(r))
	if d > 1 {
		d = 1
	}
	return 2 * math.Acos(d)
}

// Slerp interpolates along the shortest arc from q to r by t in [0, 1].
func (q Quat) Slerp(r Quat, t float64) Quat {
	d := q.Dot(r)
	if d < 0 {
		r, d = r.Neg(), -d
	}
	if d > 0.9995 {
		// Nearly parallel: a normalised lerp avoids dividing by sin(≈0).
		return Quat{
			q.X + (r.X-q.X)*t, q.Y + (r.Y-q.Y)*t, q.Z + (r.Z-q.Z)*t, q.W + (r.W-q.W)*t,
		}.Normalized()
	}
	th := math.Acos(d)
	s := math.Sin(th)
	a, b := math.Sin((1-t)*th)/s, math.Sin(t*th)/s
	return Quat{a*q.X + b*r.X, a*q.Y + b*r.Y, a*q.Z + b*r.Z, a*q.W + b*r.W}
}

// Angle2D returns the rotation of a 2D scene (about +Z) as a quaternion.
func Angle2D(angle float64) Quat { return AxisAngle(Up2D, angle) }

// Angle2D returns the rotation about +Z of a quaternion that rotates in the 2D plane.
func (q Quat) Angle2D() float64 { return 2 * math.Atan2(q.Z, q.W) }

// WrapAngle maps a in radians to (-π, π].
func WrapAngle(a float64) float64 {
	a = math.Mod(a+math.Pi, 2*math.Pi)
	if a <= 0 {
		a += 2 * math.Pi
	}
	return a - math.Pi
}

// finite: x-x is 0 for every finite x and NaN for NaN and ±Inf.
func finite(f float64) bool { return f-f == 0 }
