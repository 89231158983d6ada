package sender

import (
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// deriver turns a stream of samples into the velocity, acceleration and turn
// rate the predictor's motion model wants. It sees only accepted samples, in
// strictly increasing time.
//
// A velocity measurement is either the given velocity at the frame time or,
// when none is given, the backward difference of the last two positions:
// exact for the middle of the frame, half a frame before the stamp. Between
// successive measurements (times m0 < m1) the raw acceleration is their
// difference over m1-m0 and the raw turn rate the signed angle between
// their headings about up over m1-m0; both are low-passed.
type deriver struct {
	up           geom.Vec3 // the turn axis, unit
	minTurnSpeed float64   // speed across up below which the heading is undefined
	accTau       float64   // s
	turnTau      float64   // s
	impulseAcc   float64   // a velocity change faster than this is an impulse

	hasPos bool
	t      time.Duration // the previous sample's time
	pos    geom.Vec3     // the previous sample's position

	hasMeas bool
	mt      time.Duration // time of the previous velocity measurement
	mv      geom.Vec3     // the previous velocity measurement

	// vs is the velocity low-passed with turnTau. Only its speed is used:
	// it decides whether there is a heading at all, and unlike the speed
	// of one measurement it stays low when a standing entity jitters by a
	// millimetre (at 144 Hz that alone is 0.2 m/s of derived velocity in
	// a random direction, and a turn rate of hundreds of rad/s).
	vs geom.Vec3
	// acc is the low-passed acceleration, expressed at the heading of mv.
	// It is turned with the heading (at the smoothed turn rate) before each
	// update, so a steady turn's centripetal part is filtered in the
	// entity's own frame, where it is constant, and comes out with no
	// phase lag.
	acc geom.Vec3
	// turn is the low-passed heading rate of the measurements (rad/s);
	// zero while vs is slower than minTurnSpeed across up. It holds when a
	// single measurement is that slow.
	turn float64
}

// reset forgets the motion so far; the next sample starts afresh (after a
// teleport). Filters restart from zero.
func (d *deriver) reset() {
	*d = deriver{up: d.up, minTurnSpeed: d.minTurnSpeed, accTau: d.accTau, turnTau: d.turnTau, impulseAcc: d.impulseAcc}
}

// add takes the sample at t (after every earlier one) and returns the
// velocity, acceleration and turn rate to send with it. vel is used when
// hasVel; otherwise the velocity is derived from positions.
func (d *deriver) add(t time.Duration, pos, vel geom.Vec3, hasVel bool) (v, a geom.Vec3, turn float64) {
	if !d.hasPos {
		d.hasPos, d.t, d.pos = true, t, pos
		if !hasVel {
			// One position says nothing about motion: send it as still.
			return geom.Vec3{}, geom.Vec3{}, 0
		}
	}
	m, mt := vel, t
	if !hasVel {
		dt := t - d.t
		m, mt = pos.Sub(d.pos).Scale(1/dt.Seconds()), d.t+dt/2
	}
	d.t, d.pos = t, pos

	if d.hasMeas && mt > d.mt {
		span := (mt - d.mt).Seconds()
		// An impulse (a collision, an instant turn) makes the velocity
		// jump. The jump is sent as it is, but it says nothing about the
		// acceleration and turn rate that follow it: fed to the filters, a
		// spike of hundreds of m/s² would bend every receiver's prediction
		// for a filter time. They keep what they had.
		impulse := m.Sub(d.mv).Len() > d.impulseAcc*span
		d.vs = d.vs.Add(m.Sub(d.vs).Scale(smoothing(span, d.turnTau)))
		switch {
		case d.across(d.vs) < d.minTurnSpeed:
			d.turn = 0
		case impulse:
			// Keep the turn rate (see above).
		case d.across(m) >= d.minTurnSpeed && d.across(d.mv) >= d.minTurnSpeed:
			// Successive headings give the turn exactly on a circle,
			// whatever the frame times.
			raw := signedAngle(d.mv, m, d.up) / span
			d.turn += (raw - d.turn) * smoothing(span, d.turnTau)
		}
		dth := d.turn * span
		// The raw acceleration belongs halfway between the two
		// measurements: turn it on by half the heading change, and carry
		// the filter along by the whole change.
		raw := m.Sub(d.mv).Scale(1/span).RotateAbout(d.up, dth/2)
		d.acc = d.acc.RotateAbout(d.up, dth)
		if !impulse {
			d.acc = d.acc.Add(raw.Sub(d.acc).Scale(smoothing(span, d.accTau)))
		}
	}
	d.hasMeas, d.mt, d.mv = true, mt, m

	// A backward difference is the velocity half a frame ago; carry it to
	// the stamp with the acceleration, which leaves an error of the second
	// order (the acceleration's error times half a frame).
	lead := (t - mt).Seconds()
	return m.Add(d.acc.Scale(lead)), d.acc.RotateAbout(d.up, d.turn*lead), d.turn
}

// across returns the length of v's component perpendicular to the up axis.
func (d *deriver) across(v geom.Vec3) float64 {
	return v.Sub(d.up.Scale(d.up.Dot(v))).Len()
}

// signedAngle returns the angle in [-π, π] that turns a's heading into b's,
// right-handed about the unit axis up. atan2 of the cross and dot products
// needs no wrapping across ±π.
func signedAngle(a, b, up geom.Vec3) float64 {
	sin := up.Dot(a.Cross(b))
	cos := a.Dot(b) - up.Dot(a)*up.Dot(b)
	return math.Atan2(sin, cos)
}

// smoothing returns the weight of a new value in a first-order low-pass
// with time constant tau after dt seconds: the same step response whatever
// the frame rate.
func smoothing(dt, tau float64) float64 { return -math.Expm1(-dt / tau) }
