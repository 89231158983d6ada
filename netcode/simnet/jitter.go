package simnet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Jitter draws the extra one-way delay of one packet, added to the link's
// base latency. Samples are never negative.
type Jitter interface {
	Sample(r *rand.Rand) time.Duration
}

// NormalJitter is half-normal jitter: the absolute value of a normal draw
// |N(0, Sigma)|, so every packet is delayed and none is early. Its mean is
// Sigma*√(2/π) ≈ 0.80 Sigma, its median ≈ 0.67 Sigma and its 95th percentile
// ≈ 1.96 Sigma.
type NormalJitter struct {
	// Sigma is the standard deviation of the underlying normal. Default 0 (no jitter).
	Sigma time.Duration
}

// Sample implements Jitter.
func (j NormalJitter) Sample(r *rand.Rand) time.Duration {
	return time.Duration(math.Abs(r.NormFloat64()) * float64(j.Sigma))
}

// Validate reports a negative Sigma.
func (j NormalJitter) Validate() error {
	if j.Sigma < 0 {
		return fmt.Errorf("simnet: NormalJitter.Sigma %v is negative", j.Sigma)
	}
	return nil
}

// DefaultParetoAlpha is the ParetoJitter tail index when Alpha is 0: a heavy
// tail with a finite mean and an infinite variance.
const DefaultParetoAlpha = 1.5

// DefaultParetoMax is the ParetoJitter cap when Max is 0.
const DefaultParetoMax = time.Second

// ParetoJitter is long-tailed jitter: a Lomax (Pareto type II) draw
//
//	Scale * ((1-U)^(-1/Alpha) - 1),   U uniform in [0, 1)
//
// capped at Max. It starts at 0, has median Scale*(2^(1/Alpha) - 1) and
// quantile q at Scale*((1-q)^(-1/Alpha) - 1): most packets are barely late
// and a few are very late, as on a busy Wi-Fi or mobile link.
type ParetoJitter struct {
	// Scale sets the size of the delays. Default 0 (no jitter).
	Scale time.Duration
	// Alpha is the tail index; smaller is heavier. Default DefaultParetoAlpha.
	Alpha float64
	// Max caps one sample. Default DefaultParetoMax.
	Max time.Duration
}

// Sample implements Jitter.
func (j ParetoJitter) Sample(r *rand.Rand) time.Duration {
	alpha, maxd := j.Alpha, j.Max
	if alpha == 0 {
		alpha = DefaultParetoAlpha
	}
	if maxd == 0 {
		maxd = DefaultParetoMax
	}
	x := float64(j.Scale) * (math.Pow(1-r.Float64(), -1/alpha) - 1)
	if x >= float64(maxd) {
		return maxd
	}
	return time.Duration(x)
}

// Validate reports negative fields.
func (j ParetoJitter) Validate() error {
	switch {
	case j.Scale < 0:
		return fmt.Errorf("simnet: ParetoJitter.Scale %v is negative", j.Scale)
	case j.Alpha < 0 || math.IsNaN(j.Alpha):
		return fmt.Errorf("simnet: ParetoJitter.Alpha %v is negative", j.Alpha)
	case j.Max < 0:
		return fmt.Errorf("simnet: ParetoJitter.Max %v is negative", j.Max)
	}
	return nil
}

// UniformJitter draws the extra delay uniformly from [0, Max).
type UniformJitter struct {
	// Max bounds the delay. Default 0 (no jitter).
	Max time.Duration
}

// Sample implements Jitter.
func (j UniformJitter) Sample(r *rand.Rand) time.Duration {
	if j.Max <= 0 {
		return 0
	}
	return time.Duration(r.Int64N(int64(j.Max)))
}

// Validate reports a negative Max.
func (j UniformJitter) Validate() error {
	if j.Max < 0 {
		return fmt.Errorf("simnet: UniformJitter.Max %v is negative", j.Max)
	}
	return nil
}
