package predict

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nearzero/nearzero/netcode/geom"
)

// genVec draws a vector with components in [-lim, lim]; in 2D Z is zero.
func genVec(t *rapid.T, dim2D bool, lim float64, label string) geom.Vec3 {
	v := geom.Vec3{
		X: rapid.Float64Range(-lim, lim).Draw(t, label+".x"),
		Y: rapid.Float64Range(-lim, lim).Draw(t, label+".y"),
	}
	if !dim2D {
		v.Z = rapid.Float64Range(-lim, lim).Draw(t, label+".z")
	}
	return v
}

func TestAdvanceStraightIsExact(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, side, up := axes(d.dim2D)
			p0 := geom.Vec3{X: 3, Y: -2, Z: 7}
			if d.dim2D {
				p0.Z = 0
			}
			v0 := fwd.Scale(12).Add(side.Scale(-3)).Add(up.Scale(1.5))
			acc := fwd.Scale(-4).Add(up.Scale(-9.8))
			if d.dim2D {
				v0, acc = fwd.Scale(12).Add(side.Scale(-3)), fwd.Scale(-4).Add(side.Scale(2))
			}
			for _, tt := range []float64{0, 0.016, 0.1, 0.3, 1} {
				k := advance(p0, v0, acc, geom.Identity, 0, up, tt)
				assertVecNear(t, p0.Add(v0.Scale(tt)).Add(acc.Scale(tt*tt/2)), k.pos, 1e-12, "pos")
				assertVecNear(t, v0.Add(acc.Scale(tt)), k.vel, 1e-12, "vel")
				assert.Equal(t, geom.Identity, k.rot)
			}
		})
	}
}

// TestAdvanceCircle: a constant-speed turn whose acceleration is exactly the
// centripetal one stays on its circle, keeps its speed and turns its heading
// and orientation by turn·t.
func TestAdvanceCircle(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				_, _, up := axes(d.dim2D)
				speed := rapid.Float64Range(0.5, 50).Draw(rt, "speed")
				turn := rapid.Float64Range(0.05, 4).Draw(rt, "turn")
				if rapid.Bool().Draw(rt, "left") {
					turn = -turn
				}
				heading := rapid.Float64Range(-math.Pi, math.Pi).Draw(rt, "heading")
				tt := rapid.Float64Range(0, 2).Draw(rt, "t")
				p0 := genVec(rt, d.dim2D, 100, "p0")
				v0 := geom.Vec3{X: speed}.RotateAbout(up, heading)
				acc := up.Cross(v0).Scale(turn) // centripetal only
				q0 := geom.AxisAngle(up, heading)

				k := advance(p0, v0, restAcc(acc, v0, up, turn), q0, turn, up, tt)
				centre := p0.Add(up.Cross(v0).Scale(1 / turn))
				radius := speed / math.Abs(turn)
				assert.InDelta(rt, radius, k.pos.Sub(centre).Len(), 1e-9*(1+radius), "off the circle")
				assert.InDelta(rt, speed, k.vel.Len(), 1e-9*speed, "speed changed")
				assertVecNear(rt, v0.RotateAbout(up, turn*tt), k.vel, 1e-9*speed, "heading")
				assertQuatNear(rt, geom.AxisAngle(up, heading+turn*tt), k.rot, 1e-9, "orientation")
			})
		})
	}
}

// TestAdvanceVelocityIsDerivative checks the closed-form position against
// the velocity by central differences, for any state, acceleration and
// turn, including turns on both sides of the series threshold.
func TestAdvanceVelocityIsDerivative(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				_, _, up := axes(d.dim2D)
				p0 := genVec(rt, d.dim2D, 100, "p0")
				v0 := genVec(rt, d.dim2D, 30, "v0")
				acc := genVec(rt, d.dim2D, 20, "acc")
				turn := rapid.SampledFrom([]float64{0, 1e-6, -2e-3, 0.5, -3}).Draw(rt, "turn")
				tt := rapid.Float64Range(0.01, 1).Draw(rt, "t")
				const h = 1e-5
				a := advance(p0, v0, acc, geom.Identity, turn, up, tt-h)
				b := advance(p0, v0, acc, geom.Identity, turn, up, tt+h)
				k := advance(p0, v0, acc, geom.Identity, turn, up, tt)
				assertVecNear(rt, k.vel, b.pos.Sub(a.pos).Scale(1/(2*h)), 1e-5*(1+k.vel.Len()), "dp/dt")
				// The acceleration is the rotated rest acceleration plus turn × v.
				dv := b.vel.Sub(a.vel).Scale(1 / (2 * h))
				want := acc.RotateAbout(up, turn*tt).Add(up.Cross(k.vel).Scale(turn))
				assertVecNear(rt, want, dv, 1e-5*(1+want.Len()), "dv/dt")
			})
		})
	}
}

// TestAdvanceSmallTurnIsContinuous: the Taylor branch and the closed form
// agree at the threshold, and a vanishing turn tends to the straight line.
func TestAdvanceSmallTurnIsContinuous(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, side, up := axes(d.dim2D)
			p0, v0, acc := geom.Vec3{X: 1}, fwd.Scale(20).Add(side.Scale(3)), fwd.Scale(5).Add(side.Scale(-2))
			const tt = 0.25
			below := advance(p0, v0, acc, geom.Identity, smallTurn/tt*(1-1e-9), up, tt)
			above := advance(p0, v0, acc, geom.Identity, smallTurn/tt*(1+1e-9), up, tt)
			assertVecNear(t, below.pos, above.pos, 1e-10, "pos across the threshold")
			assertVecNear(t, below.vel, above.vel, 1e-10, "vel across the threshold")
			straight := advance(p0, v0, acc, geom.Identity, 0, up, tt)
			tiny := advance(p0, v0, acc, geom.Identity, 1e-12, up, tt)
			assertVecNear(t, straight.pos, tiny.pos, 1e-10, "tiny turn vs straight")
		})
	}
}

// TestAdvanceTurningWhileAccelerating: the tangential acceleration adds
// speed along the turning heading.
func TestAdvanceTurningWhileAccelerating(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, _, up := axes(d.dim2D)
			const speed, along, turn, tt = 10.0, 2.0, 0.8, 0.3
			v0 := fwd.Scale(speed)
			acc := fwd.Scale(along).Add(up.Cross(v0).Scale(turn)) // tangential + centripetal
			k := advance(geom.Vec3{}, v0, restAcc(acc, v0, up, turn), geom.Identity, turn, up, tt)
			assertVecNear(t, fwd.Scale(speed+along*tt).RotateAbout(up, turn*tt), k.vel, 1e-12, "vel")
		})
	}
}

func TestHermite(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, side, up := axes(d.dim2D)
			a := &entry{Sample: Sample{Pos: geom.Vec3{X: 1}, Vel: fwd.Scale(10), Rot: geom.Identity}}
			b := &entry{Sample: Sample{Pos: geom.Vec3{X: 2}.Add(side.Scale(0.3)), Vel: side.Scale(4), Rot: geom.AxisAngle(up, 1)}}
			const h = 0.1
			k0, k1 := hermite(a, b, h, 0, false), hermite(a, b, h, 1, false)
			assertVecNear(t, a.Pos, k0.pos, 1e-12, "start pos")
			assertVecNear(t, b.Pos, k1.pos, 1e-12, "end pos")
			assertVecNear(t, a.Vel, k0.vel, 1e-12, "start vel")
			assertVecNear(t, b.Vel, k1.vel, 1e-12, "end vel")
			assertQuatNear(t, geom.AxisAngle(up, 0.5), hermite(a, b, h, 0.5, false).rot, 1e-12, "mid rotation")

			// Constant velocity: the curve is the line, at the right place.
			c := &entry{Sample: Sample{Pos: a.Pos.Add(a.Vel.Scale(h)), Vel: a.Vel, Rot: geom.Identity}}
			for _, s := range []float64{0.25, 0.5, 0.9} {
				k := hermite(a, c, h, s, false)
				assertVecNear(t, a.Pos.Add(a.Vel.Scale(s*h)), k.pos, 1e-12, "line pos")
				assertVecNear(t, a.Vel, k.vel, 1e-12, "line vel")
			}
		})
	}
}

// TestPosOnlyMatchesFull: advancePos and hermite with posOnly (Auto's
// shadows) give exactly the positions of advance and of hermite in full,
// straight, in a slight turn (the series) and in a sharp one.
func TestPosOnlyMatchesFull(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	vec := func(s float64) geom.Vec3 {
		return geom.Vec3{X: s * (r.Float64()*2 - 1), Y: s * (r.Float64()*2 - 1), Z: s * (r.Float64()*2 - 1)}
	}
	for i := range 3000 {
		p0, v0, acc := vec(100), vec(30), vec(10)
		turn := []float64{0, 1e-5 * (r.Float64() - 0.5), 6 * (r.Float64() - 0.5)}[i%3]
		up := []geom.Vec3{geom.Up3D, geom.Up2D}[i%2]
		dt := 0.3 * r.Float64()
		full := advance(p0, v0, acc, geom.Identity, turn, up, dt)
		require.Equal(t, full.pos, advancePos(p0, v0, acc, turn, up, dt), "advance %d", i)
		a := &entry{Sample: Sample{Pos: p0, Vel: v0, Rot: geom.Identity}}
		b := &entry{Sample: Sample{Pos: vec(100), Vel: vec(30), Rot: geom.AxisAngle(up, turn)}}
		h, s := 0.01+0.1*r.Float64(), r.Float64()
		require.Equal(t, hermite(a, b, h, s, false).pos, hermite(a, b, h, s, true).pos, "hermite %d", i)
	}
}
