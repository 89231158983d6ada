package wire

import (
	"math"

	"github.com/nearzero/nearzero/netcode/geom"
)

// Smallest-three quaternion packing: the largest component is dropped (and
// made positive by negating the whole quaternion, which is the same
// rotation); the other three lie in [-1/√2, 1/√2] and take 10 bits each.
const (
	quatBits  = 10
	quatMax   = 1<<quatBits - 1
	invSqrt2  = 0.70710678118654752440
	quatScale = quatMax / (2 * invSqrt2)
)

// EncodeQuat packs a rotation into 32 bits. Non-unit input is normalised.
// It returns ErrNotFinite for NaN or infinite components and ErrZeroRotation
// for a zero quaternion.
func EncodeQuat(q geom.Quat) (uint32, error) {
	if !q.Finite() {
		return 0, ErrNotFinite
	}
	u, ok := encodeQuat(q)
	if !ok {
		return 0, ErrZeroRotation
	}
	return u, nil
}

// DecodeQuat unpacks a rotation packed by EncodeQuat. Every 32-bit value
// decodes to a unit quaternion.
func DecodeQuat(u uint32) geom.Quat { return decodeQuat(u) }

func encodeQuat(q geom.Quat) (uint32, bool) {
	n2 := q.Dot(q)
	if !(n2 > 0 && n2 <= math.MaxFloat64) {
		return 0, false
	}
	// Unit input (the usual case) skips the square root; the quantisation
	// step is 1.4e-3, so a norm off by 1e-7 changes nothing.
	k := quatScale
	if d := n2 - 1; d > 1e-7 || d < -1e-7 {
		k /= math.Sqrt(n2)
	}
	// Drop the largest component; the others, in x, y, z, w order, go in.
	x, y, z, w := q.X, q.Y, q.Z, q.W
	ax, ay, az, aw := math.Abs(x), math.Abs(y), math.Abs(z), math.Abs(w)
	var big uint32
	var a, b, c, m float64
	switch {
	case ax >= ay && ax >= az && ax >= aw:
		big, a, b, c, m = 0, y, z, w, x
	case ay >= az && ay >= aw:
		big, a, b, c, m = 1, x, z, w, y
	case az >= aw:
		big, a, b, c, m = 2, x, y, w, z
	default:
		big, a, b, c, m = 3, x, y, z, w
	}
	if m < 0 {
		// -q is the same rotation; make the dropped component positive.
		k = -k
	}
	return big<<30 | quant(a*k)<<20 | quant(b*k)<<10 | quant(c*k), true
}

// quant maps a component already scaled by quatScale onto 0..quatMax.
func quant(v float64) uint32 {
	u := int32(v + invSqrt2*quatScale + 0.5) // >= 0 in range, so truncation rounds
	if u > quatMax {
		u = quatMax
	} else if u < 0 {
		u = 0
	}
	return uint32(u)
}

func decodeQuat(u uint32) geom.Quat {
	const off, inv = invSqrt2, 1 / quatScale
	a := float64(u>>20&quatMax)*inv - off
	b := float64(u>>10&quatMax)*inv - off
	c := float64(u&quatMax)*inv - off
	sum := a*a + b*b + c*c
	if sum >= 1 {
		// Only bit patterns no encoder writes get here; keep the result a
		// unit quaternion by dropping the largest component to zero.
		return geom.Quat{X: a, Y: b, Z: c}.Normalized()
	}
	m := math.Sqrt(1 - sum)
	switch u >> 30 {
	case 0:
		return geom.Quat{X: m, Y: a, Z: b, W: c}
	case 1:
		return geom.Quat{X: a, Y: m, Z: b, W: c}
	case 2:
		return geom.Quat{X: a, Y: b, Z: m, W: c}
	default:
		return geom.Quat{X: a, Y: b, Z: c, W: m}
	}
}
