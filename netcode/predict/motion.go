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
		return kin{
			pos: p0.Add(v0.Scale(t)).Add(acc.Scale(t * t / 2)),
			vel: v0.Add(acc.Scale(t)),
			rot: q0,
		}
	}
	th := turn * t
	vPar, aPar := up.Dot(v0), up.Dot(acc)
	x := v0.Sub(up.Scale(vPar)) // velocity across up
	y := acc.Sub(up.Scale(aPar))
	// s1 = ∫cos θ(τ) dτ, c1 = ∫sin θ(τ) dτ, s2 = ∫τ cos θ(τ) dτ,
	// c2 = ∫τ sin θ(τ) dτ, over [0, t] with θ(τ) = turn τ.
	// One half-angle sincos gives sin θ, 1-cos θ (without cancellation) and
	// the orientation quaternion.
	hs, hc := math.Sincos(th / 2)
	sin, oneMinusCos := 2*hs*hc, 2*hs*hs
	cos := 1 - oneMinusCos
	var s1, c1, s2, c2 float64
	if math.Abs(th) < smallTurn {
		th2 := th * th
		s1 = t * (1 - th2/6)
		c1 = t * th * (0.5 - th2/24)
		s2 = t * t * (0.5 - th2/8)
		c2 = t * t * th * (1.0/3 - th2/30)
	} else {
		s1 = sin / turn
		c1 = oneMinusCos / turn
		s2 = t*sin/turn - oneMinusCos/(turn*turn)
		c2 = (sin - th*cos) / (turn * turn)
	}
	ux, uy := up.Cross(x), up.Cross(y)
	pos := p0.Add(up.Scale(vPar*t + aPar*t*t/2)).
		Add(x.Scale(s1)).Add(ux.Scale(c1)).
		Add(y.Scale(s2)).Add(uy.Scale(c2))
	// v(t) = R(θ)(v0 + acc t).
	wPar := vPar + aPar*t
	w := x.Add(y.Scale(t))
	vel := up.Scale(wPar).Add(w.Scale(cos)).Add(up.Cross(w).Scale(sin))
	rot := geom.Quat{X: up.X * hs, Y: up.Y * hs, Z: up.Z * hs, W: hc}.Mul(q0) // geom.AxisAngle(up, th)
	return kin{pos: pos, vel: vel, rot: rot}
}

// hermite interpolates between a (at time 0) and b (at time h > 0 seconds)
// at time s·h, s in [0, 1]: cubic Hermite on position using both
// velocities, slerp on rotation; with posOnly the position alone.
func hermite(a, b *entry, h, s float64, posOnly bool) kin {
	s2, s3 := s*s, s*s*s
	h00 := 2*s3 - 3*s2 + 1
	h10 := s3 - 2*s2 + s
	h01 := -2*s3 + 3*s2
	h11 := s3 - s2
	pos := a.Pos.Scale(h00).Add(a.Vel.Scale(h10 * h)).Add(b.Pos.Scale(h01)).Add(b.Vel.Scale(h11 * h))
	if posOnly {
		return kin{pos: pos}
	}
	// Derivatives of the basis with respect to s (that of h01 is -d00, so
	// the two positions fold into one difference), divided by h for d/dt.
	d00 := 6*s2 - 6*s
	d10 := 3*s2 - 4*s + 1
	d11 := 3*s2 - 2*s
	vel := a.Pos.Sub(b.Pos).Scale(d00 / h).Add(a.Vel.Scale(d10)).Add(b.Vel.Scale(d11))
	return kin{pos: pos, vel: vel, rot: a.Rot.Slerp(b.Rot, s)}
}

// advancePos is advance's position alone, for Auto's shadows: a copy of
// its arithmetic, so the same value (TestPosOnlyMatchesFull holds them
// equal), kept because a position-only switch in advance measurably slowed
// an Auto frame (bench/README.md, "Auto's cost").
func advancePos(p0, v0, acc geom.Vec3, turn float64, up geom.Vec3, t float64) geom.Vec3 {
	if turn == 0 {
		return p0.Add(v0.Scale(t)).Add(acc.Scale(t * t / 2))
	}
	th := turn * t
	vPar, aPar := up.Dot(v0), up.Dot(acc)
	x := v0.Sub(up.Scale(vPar))
	y := acc.Sub(up.Scale(aPar))
	hs, hc := math.Sincos(th / 2)
	sin, oneMinusCos := 2*hs*hc, 2*hs*hs
	cos := 1 - oneMinusCos
	var s1, c1, s2, c2 float64
	if math.Abs(th) < smallTurn {
		th2 := th * th
		s1 = t * (1 - th2/6)
		c1 = t * th * (0.5 - th2/24)
		s2 = t * t * (0.5 - th2/8)
		c2 = t * t * th * (1.0/3 - th2/30)
	} else {
		s1 = sin / turn
		c1 = oneMinusCos / turn
		s2 = t*sin/turn - oneMinusCos/(turn*turn)
		c2 = (sin - th*cos) / (turn * turn)
	}
	ux, uy := up.Cross(x), up.Cross(y)
	return p0.Add(up.Scale(vPar*t + aPar*t*t/2)).
		Add(x.Scale(s1)).Add(ux.Scale(c1)).
		Add(y.Scale(s2)).Add(uy.Scale(c2))
}
