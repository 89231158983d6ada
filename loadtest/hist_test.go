package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestHistQuantiles: quantiles read off the histogram are within 1.6 % of
// the sorted samples'.
func TestHistQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h hist
	var all []time.Duration
	for range 100000 {
		d := time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond))
		h.add(d)
		all = append(all, d)
	}
	slices.Sort(all)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := all[int(q*float64(len(all)))-1]
		assert.InEpsilon(t, float64(want), float64(h.quantile(q)), 1.0/histSub, "q %v", q)
	}
	assert.Equal(t, all[len(all)-1], h.quantile(1))
	for _, d := range []time.Duration{0, time.Microsecond, 63 * time.Microsecond, 64 * time.Microsecond, 1000 * time.Microsecond,
		time.Second, time.Hour} {
		i := bucket(d)
		assert.LessOrEqual(t, lower(i), d, "%v", d)
		assert.Greater(t, lower(i+1), d-time.Microsecond, "%v", d)
	}
}
