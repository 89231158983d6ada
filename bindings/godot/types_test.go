package godot

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBasisQuaternionRoundTrip(t *testing.T) {
	const seed = 7
	rng := rand.New(rand.NewPCG(seed, 0))
	for i := range 200 {
		q := Quaternion{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
		n := float32(math.Sqrt(float64(q.X*q.X + q.Y*q.Y + q.Z*q.Z + q.W*q.W)))
		q = Quaternion{q.X / n, q.Y / n, q.Z / n, q.W / n}
		b := BasisFromQuaternion(q)
		// Scale the axes: Quaternion must ignore scale.
		s := [3]float32{1, 2.5, 0.3}
		for r := range 3 {
			b.Rows[r] = Vector3{b.Rows[r].X * s[0], b.Rows[r].Y * s[1], b.Rows[r].Z * s[2]}
		}
		got := b.Quaternion()
		// q and -q are the same rotation.
		dot := float64(got.X*q.X + got.Y*q.Y + got.Z*q.Z + got.W*q.W)
		assert.InDelta(t, 1, math.Abs(dot), 1e-4, "seed %d case %d: q=%v got=%v", seed, i, q, got)
	}
}

func TestBasisAxes(t *testing.T) {
	// A quarter turn about +Y maps the local X axis onto world -Z.
	s := float32(math.Sqrt(0.5))
	b := BasisFromQuaternion(Quaternion{0, s, 0, s})
	x := b.Column(0)
	assert.InDelta(t, 0, x.X, 1e-6)
	assert.InDelta(t, 0, x.Y, 1e-6)
	assert.InDelta(t, -1, x.Z, 1e-6)
	assert.Equal(t, IdentityBasis, BasisFromQuaternion(Quaternion{}), "a zero quaternion gives identity")
	assert.Equal(t, IdentityQuaternion, Basis{}.Quaternion(), "a degenerate basis gives identity")
}

func TestTransform2D(t *testing.T) {
	for _, angle := range []float32{0, 0.5, -2, 3.1} {
		tr := Transform2DFrom(angle, Vector2{3, 4})
		assert.InDelta(t, angle, tr.Rotation(), 1e-6, "angle %v", angle)
		assert.Equal(t, Vector2{3, 4}, tr.Origin)
	}
}

func TestRangeHint(t *testing.T) {
	tests := []struct {
		name           string
		min, max, step float64
		extra          []string
		want           string
	}{
		{"with step", 0, 100, 0.5, nil, "0,100,0.5"},
		{"no step", 0, 1, 0, []string{"or_greater"}, "0,1,or_greater"},
		{"suffix", 0.05, 2, 0.01, []string{"suffix:s"}, "0.05,2,0.01,suffix:s"},
		{"negative", -1e3, 1e3, 1, []string{"or_less", "or_greater"}, "-1000,1000,1,or_less,or_greater"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, RangeHint(tc.min, tc.max, tc.step, tc.extra...))
		})
	}
}

func TestVariantTypeString(t *testing.T) {
	assert.Equal(t, "Vector3", TypeVector3.String())
	assert.Equal(t, "PackedStringArray", TypePackedStringArray.String())
	assert.Equal(t, "PackedVector3Array", TypePackedVector3Array.String())
	assert.Equal(t, "Vector4", TypeVector4.String())
	// Types the package does not convert are named too: a message about a
	// Rect2i read "Type(8)" before.
	for n := range typeMax {
		assert.NotContains(t, n.String(), "Type(", "Variant type %d has a name", n)
	}
	assert.Equal(t, "Rect2i", VariantType(8).String())
	assert.Equal(t, "Type(39)", VariantType(39).String())
}
