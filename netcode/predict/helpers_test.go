package predict

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// dims names both dimensions for table tests.
var dims = []struct {
	name  string
	dim2D bool
}{{"3d", false}, {"2d", true}}

// ms returns n milliseconds.
func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// axes returns the forward, side and up directions of a dimension's
// movement plane; a positive turn rotates fwd towards side.
func axes(dim2D bool) (fwd, side, up geom.Vec3) {
	up = geom.Up3D
	if dim2D {
		up = geom.Up2D
	}
	fwd = geom.Vec3{X: 1}
	return fwd, up.Cross(fwd), up
}

// unit returns the distance unit of a dimension: 1 m in 3D, 40 px in 2D,
// so one test moves comparable distances in both.
func unit(dim2D bool) float64 {
	if dim2D {
		return 40
	}
	return 1
}

// newPredictor returns a predictor for cfg or fails the test.
func newPredictor(t testing.TB, cfg Config) *Predictor {
	t.Helper()
	p, err := New(cfg)
	require.NoError(t, err)
	return p
}

// moving returns a sample at time at of an entity at pos moving with vel.
func moving(at time.Duration, seq int, pos, vel geom.Vec3) Sample {
	return Sample{Time: at, Seq: seqOf(seq), Pos: pos, Vel: vel, Rot: geom.Identity}
}

// tb is what the assert helpers need: *testing.T and *rapid.T both fit.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
}

// assertVecNear checks that got lies within tol of want.
func assertVecNear(t tb, want, got geom.Vec3, tol float64, what string) {
	t.Helper()
	assert.LessOrEqual(t, got.Sub(want).Len(), tol, "%s: want %v, got %v", what, want, got)
}

// assertQuatNear checks that got is the rotation want, within tol per
// component (q and -q are the same rotation). Components rather than
// AngleTo, whose acos loses precision near zero.
func assertQuatNear(t tb, want, got geom.Quat, tol float64, what string) {
	t.Helper()
	assert.LessOrEqual(t, quatDist(want, got), tol, "%s: want %v, got %v", what, want, got)
}

// quatDist is the 4D distance between two rotations, taking q ≡ -q.
func quatDist(q, r geom.Quat) float64 {
	d := geom.Quat{X: q.X - r.X, Y: q.Y - r.Y, Z: q.Z - r.Z, W: q.W - r.W}.Len()
	s := geom.Quat{X: q.X + r.X, Y: q.Y + r.Y, Z: q.Z + r.Z, W: q.W + r.W}.Len()
	return min(d, s)
}

func seqOf(n int) wire.Seq { return wire.Seq(uint16(n)) }
