package geom

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVecOps(t *testing.T) {
	a, b := Vec3{1, 2, 3}, Vec3{-4, 5, 0.5}
	assert.Equal(t, Vec3{-3, 7, 3.5}, a.Add(b))
	assert.Equal(t, Vec3{5, -3, 2.5}, a.Sub(b))
	assert.Equal(t, 7.5, a.Dot(b))
	assert.Equal(t, Vec3{2, 4, 6}, a.Scale(2))
	assert.InDelta(t, math.Sqrt(14), a.Len(), 1e-12)
	assert.Equal(t, Vec3{Z: 1}, Vec3{X: 1}.Cross(Vec3{Y: 1}))
	assert.Equal(t, Vec3{-1.5, 3.5, 1.75}, a.Lerp(b, 0.5))
	assert.False(t, Vec3{X: math.NaN()}.Finite())
	assert.False(t, Vec3{Z: math.Inf(-1)}.Finite())
	assert.True(t, a.Finite())
}

func TestRotations(t *testing.T) {
	// A quarter turn about +Y takes +X to -Z (right-handed, as in Godot).
	q := AxisAngle(Up3D, math.Pi/2)
	got := q.Rotate(Vec3{X: 1})
	assert.InDelta(t, 0, got.X, 1e-12)
	assert.InDelta(t, -1, got.Z, 1e-12)
	r := Vec3{X: 1}.RotateAbout(Up3D, math.Pi/2)
	assert.InDelta(t, got.X, r.X, 1e-12)
	assert.InDelta(t, got.Z, r.Z, 1e-12)

	// Composition adds angles about one axis.
	qq := q.Mul(q)
	assert.InDelta(t, math.Pi, Identity.AngleTo(qq), 1e-9)
	assert.InDelta(t, 0, qq.AngleTo(qq.Neg()), 1e-6, "q and -q are the same rotation")

	half := Identity.Slerp(qq, 0.5)
	assert.InDelta(t, 0, half.AngleTo(q), 1e-9)
	assert.InDelta(t, 0, q.Slerp(q, 0.3).AngleTo(q), 1e-6, "nearly parallel path")
	assert.Equal(t, Identity, Quat{}.Normalized())
	assert.InDelta(t, 1, Quat{1, 2, 3, 4}.Normalized().Len(), 1e-12)
	assert.False(t, Quat{W: math.NaN()}.Finite())
}

func TestAngles2D(t *testing.T) {
	for _, a := range []float64{0, 1, -2, 3} {
		assert.InDelta(t, a, Angle2D(a).Angle2D(), 1e-12)
	}
	assert.InDelta(t, -math.Pi+0.5, WrapAngle(math.Pi+0.5), 1e-12)
	assert.InDelta(t, math.Pi, WrapAngle(-math.Pi), 1e-12)
	assert.InDelta(t, 0.25, WrapAngle(0.25+6*math.Pi), 1e-9)
}
