package predict

import (
	"math"

	"github.com/nearzero/nearzero/netcode/geom"
)

// kin is a kinematic state at one instant.
type kin struct {
	pos, vel geom.Vec3
	rot      geom.Quat
}

// restAcc returns acc without the centripetal part turn×vel that a turn at
// rate turn about the unit axis up already explains.
func restAcc(acc, vel, up geom.Vec3, turn float64) geom.Vec3 {
	if turn == 0 {
		return acc
	}
	return acc.Sub(up.Cross(vel).Scale(turn))
}

// smallTurn is the turn angle below which the closed form's integrals are
// taken from their Taylor series, which avoids dividing by a tiny turn rate.
// The first omitted terms are below 1e-14 relative.
const smallTurn = 1e-3

// advance carries the state (p0, v0, q0) forward by t seconds (t may be
// zero) under a coordinated turn: the velocity turns about the unit axis up
// at rate turn (rad/s), and the acceleration acc (centripetal part already
// removed, see restAcc) turns with it. So
//
//	v(τ) = R(turn τ) (v0 + acc τ),  p(t) = p0 + ∫₀ᵗ v(τ) dτ,  q(t) = R(turn t) q0.
//
// Components along up do not turn; for a component x perpendicular to up,
// R(θ)x = x cos θ + (up×x) sin θ, which integrates in closed form.
func advance(p0, v0, acc geom.Vec3, q0 geom.Quat, turn float64, up geom.Vec3, t float64) kin {
	if turn == 0 {
		// Straight: exactly p0 + v t + a t²/2.
		return kin{pos: straightPos(p0, v0, acc, t), vel: v0.Add(acc.Scale(t)), rot: q0}
	}
	c := turnOf(v0, acc, turn, up, t)
	// v(t) = R(θ)(v0 + acc t).
	wPar := c.vPar + c.aPar*t
	w := c.x.Add(c.y.Scale(t))
	vel := up.Scale(wPar).Add(w.Scale(c.cos)).Add(up.Cross(w).Scale(c.sin))
	rot := geom.Quat{X: up.X * c.hs, Y: up.Y * c.hs, Z: up.Z * c.hs, W: c.hc}.Mul(q0) // geom.AxisAngle(up, th)
	return kin{pos: c.pos(p0, up, t), vel: vel, rot: rot}
}

// advancePos is advance's position alone (the same arithmetic, so the same
// value): Auto's shadows draw positions only.
func advancePos(p0, v0, acc geom.Vec3, turn float64, up geom.Vec3, t float64) geom.Vec3 {
	if turn == 0 {
		return straightPos(p0, v0, acc, t)
	}
	c := turnOf(v0, acc, turn, up, t)
	return c.pos(p0, up, t)
}

// straightPos is p0 + v t + a t²/2.
func straightPos(p0, v0, acc geom.Vec3, t float64) geom.Vec3 {
	return p0.Add(v0.Scale(t)).Add(acc.Scale(t * t / 2))
}

// turning is what advance derives from a turn before the position and the
// velocity: the parts along and across up and the closed form's integrals.
type turning struct {
	vPar, aPar       float64
	x, y             geom.Vec3 // velocity and acceleration across up
	hs, hc, sin, cos float64
	s1, c1, s2, c2   float64
}

// turnOf computes advance's turning terms (turn != 0).
func turnOf(v0, acc geom.Vec3, turn float64, up geom.Vec3, t float64) turning {
	var c turning
	th := turn * t
	c.vPar, c.aPar = up.Dot(v0), up.Dot(acc)
	c.x = v0.Sub(up.Scale(c.vPar)) // velocity across up
	c.y = acc.Sub(up.Scale(c.aPar))
	// s1 = ∫cos θ(τ) dτ, c1 = ∫sin θ(τ) dτ, s2 = ∫τ cos θ(τ) dτ,
	// c2 = ∫τ sin θ(τ) dτ, over [0, t] with θ(τ) = turn τ.
	// One half-angle sincos gives sin θ, 1-cos θ (without cancellation) and
	// the orientation quaternion.
	c.hs, c.hc = math.Sincos(th / 2)
	sin, oneMinusCos := 2*c.hs*c.hc, 2*c.hs*c.hs
	c.sin, c.cos = sin, 1-oneMinusCos
	if math.Abs(th) < smallTurn {
		th2 := th * th
		c.s1 = t * (1 - th2/6)
		c.c1 = t * th * (0.5 - th2/24)
		c.s2 = t * t * (0.5 - th2/8)
		c.c2 = t * t * th * (1.0/3 - th2/30)
	} else {
		c.s1 = sin / turn
		c.c1 = oneMinusCos / turn
		c.s2 = t*sin/turn - oneMinusCos/(turn*turn)
		c.c2 = (sin - th*c.cos) / (turn * turn)
	}
	return c
}

// pos is the position after t from p0.
func (c *turning) pos(p0, up geom.Vec3, t float64) geom.Vec3 {
	ux, uy := up.Cross(c.x), up.Cross(c.y)
	return p0.Add(up.Scale(c.vPar*t + c.aPar*t*t/2)).
		Add(c.x.Scale(c.s1)).Add(ux.Scale(c.c1)).
		Add(c.y.Scale(c.s2)).Add(uy.Scale(c.c2))
}

// hermite interpolates between a (at time 0) and b (at time h > 0 seconds)
// at time s·h, s in [0, 1]: cubic Hermite on position using both
// velocities, slerp on rotation.
func hermite(a, b *entry, h, s float64) kin {
	s2 := s * s
	// Derivatives of the basis with respect to s (that of h01 is -d00, so
	// the two positions fold into one difference), divided by h for d/dt.
	d00 := 6*s2 - 6*s
	d10 := 3*s2 - 4*s + 1
	d11 := 3*s2 - 2*s
	vel := a.Pos.Sub(b.Pos).Scale(d00 / h).Add(a.Vel.Scale(d10)).Add(b.Vel.Scale(d11))
	return kin{pos: hermitePos(a, b, h, s), vel: vel, rot: a.Rot.Slerp(b.Rot, s)}
}

// hermitePos is hermite's position alone (the same arithmetic, so the same
// value).
func hermitePos(a, b *entry, h, s float64) geom.Vec3 {
	s2, s3 := s*s, s*s*s
	h00 := 2*s3 - 3*s2 + 1
	h10 := s3 - 2*s2 + s
	h01 := -2*s3 + 3*s2
	h11 := s3 - s2
	return a.Pos.Scale(h00).Add(a.Vel.Scale(h10 * h)).Add(b.Pos.Scale(h01)).Add(b.Vel.Scale(h11 * h))
}
