package wire

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
)

// TestQuatErrorBound packs 10^6 random unit quaternions and asserts the worst
// angular error stays within 0.25 degrees.
func TestQuatErrorBound(t *testing.T) {
	const seed, n = 7, 1_000_000
	r := rand.New(rand.NewPCG(seed, 2))
	worst := 0.0
	for range n {
		q := randomQuat(r)
		u, err := EncodeQuat(q)
		require.NoError(t, err)
		if e := q.AngleTo(DecodeQuat(u)); e > worst {
			worst = e
		}
	}
	worstDeg := worst * 180 / math.Pi
	t.Logf("max angular error over %d random unit quaternions: %.4f degrees", n, worstDeg)
	assert.LessOrEqual(t, worstDeg, 0.25)
}

func TestQuatSignAndScale(t *testing.T) {
	q := geom.AxisAngle(geom.Vec3{X: 1}, 2.0)
	a, err := EncodeQuat(q)
	require.NoError(t, err)
	b, err := EncodeQuat(q.Neg())
	require.NoError(t, err)
	assert.Equal(t, a, b, "q and -q are the same rotation and pack the same")

	scaled := geom.Quat{X: q.X * 3, Y: q.Y * 3, Z: q.Z * 3, W: q.W * 3}
	c, err := EncodeQuat(scaled)
	require.NoError(t, err)
	assert.Equal(t, a, c, "non-unit input is normalised")
	assert.InDelta(t, 1, DecodeQuat(c).Len(), 1e-12)
}

func TestQuatRejects(t *testing.T) {
	_, err := EncodeQuat(geom.Quat{W: math.NaN()})
	assert.ErrorIs(t, err, ErrNotFinite)
	_, err = EncodeQuat(geom.Quat{X: math.Inf(-1), W: 1})
	assert.ErrorIs(t, err, ErrNotFinite)
	_, err = EncodeQuat(geom.Quat{})
	assert.ErrorIs(t, err, ErrZeroRotation)
}

func TestQuatEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    geom.Quat
	}{
		{"identity", geom.Identity},
		{"half turn about x", geom.Quat{X: 1}},
		{"half turn about z", geom.Quat{Z: -1}},
		{"two equal largest", geom.Quat{X: 1, Y: 1}.Normalized()},
		{"all equal", geom.Quat{X: 0.5, Y: -0.5, Z: 0.5, W: -0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := EncodeQuat(tc.q)
			require.NoError(t, err)
			assert.Less(t, tc.q.AngleTo(DecodeQuat(u)), 0.25*math.Pi/180)
		})
	}
}

// TestDecodeQuatAnyBits checks that every bit pattern decodes to a unit quaternion.
func TestDecodeQuatAnyBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, u := range []uint32{0, math.MaxUint32, 0x3fffffff, 0xc0000000} {
		assert.InDelta(t, 1, DecodeQuat(u).Len(), 1e-9, "%#x", u)
	}
	for range 100000 {
		q := DecodeQuat(r.Uint32())
		require.True(t, q.Finite())
		require.InDelta(t, 1, q.Len(), 1e-9)
	}
}
