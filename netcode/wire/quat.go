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
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, false
	}
	c := [4]float64{q.X / n, q.Y / n, q.Z / n, q.W / n}
	big := 0
	for i := 1; i < 4; i++ {
		if math.Abs(c[i]) > math.Abs(c[big]) {
			big = i
		}
	}
	sign := 1.0
	if c[big] < 0 {
		sign = -1
	}
	u := uint32(big) << 30
	shift := 20
	for i := 0; i < 4; i++ {
		if i == big {
			continue
		}
		v := math.Round((c[i]*sign + invSqrt2) * quatScale)
		v = math.Max(0, math.Min(quatMax, v))
		u |= uint32(v) << shift
		shift -= quatBits
	}
	return u, true
}

func decodeQuat(u uint32) geom.Quat {
	big := int(u >> 30)
	var c [4]float64
	shift := 20
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
	c[big] = math.Sqrt(math.Max(0, 1-sum))
	return geom.Quat{X: c[0], Y: c[1], Z: c[2], W: c[3]}.Normalized()
}
