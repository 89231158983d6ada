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
	n := q.Len()
	if !(n > 0 && n <= math.MaxFloat64) {
		return 0, false
	}
	inv := 1 / n
	c := [4]float64{q.X * inv, q.Y * inv, q.Z * inv, q.W * inv}
	big := 0
	for i := 1; i < 4; i++ {
		if math.Abs(c[i]) > math.Abs(c[big]) {
			big = i
		}
	}
	// Scale and sign folded into one factor: the largest component becomes positive.
	k := quatScale
	if c[big] < 0 {
		k = -quatScale
	}
	u := uint32(big) << 30
	shift := 20
	for i := 0; i < 4; i++ {
		if i == big {
			continue
		}
		v := int32(c[i]*k + invSqrt2*quatScale + 0.5) // >= 0 here, so truncation rounds
		if v > quatMax {
			v = quatMax
		} else if v < 0 {
			v = 0
		}
		u |= uint32(v) << shift
		shift -= quatBits
	}
	return u, true
}

func decodeQuat(u uint32) geom.Quat {
	big := int(u >> 30)
	var c [4]float64
	shift := 20 // the first field sits in bits 29-20
	sum := 0.0
	for i := 0; i < 4; i++ {
		if i == big {
			continue
		}
		v := float64((u>>shift)&quatMax)/quatScale - invSqrt2
		c[i] = v
		sum += v * v
		shift -= quatBits
	}
	q := geom.Quat{X: c[0], Y: c[1], Z: c[2], W: c[3]}
	if sum >= 1 {
		// Only bit patterns no encoder writes get here; keep the result a unit quaternion.
		return q.Normalized()
	}
	switch big {
	case 0:
		q.X = math.Sqrt(1 - sum)
	case 1:
		q.Y = math.Sqrt(1 - sum)
	case 2:
		q.Z = math.Sqrt(1 - sum)
	default:
		q.W = math.Sqrt(1 - sum)
	}
	return q
}
