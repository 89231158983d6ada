package simnet

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBernoulliRate(t *testing.T) {
	seed := testSeed(t)
	for _, p := range []float64{0, 0.01, 0.1, 0.5, 1} {
		r := NewScheduler(seed).Rand("loss")
		const n = 100000
		lost := 0
		for range n {
			if (Bernoulli{P: p}).Lost(r) {
				lost++
			}
		}
		// 5 standard errors, at least 0.2 %.
		tol := max(5*sqrt(p*(1-p)/n), 0.002)
		assert.InDelta(t, p, float64(lost)/n, tol, "P=%v", p)
	}
}

// bursts returns the lengths of the runs of losses in a loss pattern.
func bursts(lost []bool) []int {
	var out []int
	run := 0
	for _, l := range lost {
		if l {
			run++
			continue
		}
		if run > 0 {
			out = append(out, run)
		}
		run = 0
	}
	if run > 0 {
		out = append(out, run)
	}
	return out
}

func TestGilbertElliottBursts(t *testing.T) {
	seed := testSeed(t)
	tests := []struct {
		name string
		ge   GilbertElliott
	}{
		{"bursts of 4", GilbertElliott{PGoodBad: 0.01, PBadGood: 0.25, LossBad: 1}},
		{"bursts of 10", GilbertElliott{PGoodBad: 0.002, PBadGood: 0.1, LossBad: 1}},
		{"single losses", GilbertElliott{PGoodBad: 0.01, PBadGood: 1, LossBad: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewScheduler(seed).Rand("ge")
			ge := tc.ge
			const n = 2000000 // thousands of Good-Bad cycles even for long bursts
			lost := make([]bool, n)
			nLost := 0
			for i := range lost {
				lost[i] = ge.Lost(r)
				if lost[i] {
					nLost++
				}
			}
			b := bursts(lost)
			require.Greater(t, len(b), 100, "enough bursts to measure")
			meanBurst := float64(nLost) / float64(len(b))
			want := 1 / tc.ge.PBadGood
			assert.InEpsilon(t, want, meanBurst, 0.1, "mean burst length")
			assert.InEpsilon(t, tc.ge.MeanLoss(), float64(nLost)/n, 0.1, "mean loss rate")
		})
	}
}

func TestGilbertElliottVersusBernoulli(t *testing.T) {
	// Same mean loss, very different burst lengths: the point of the model.
	seed := testSeed(t)
	ge := &GilbertElliott{PGoodBad: 0.01, PBadGood: 0.2, LossBad: 1}
	be := Bernoulli{P: ge.MeanLoss()}
	run := func(l Loss) float64 {
		r := NewScheduler(seed).Rand("x")
		lost := make([]bool, 200000)
		n := 0
		for i := range lost {
			lost[i] = l.Lost(r)
			if lost[i] {
				n++
			}
		}
		return float64(n) / float64(len(bursts(lost)))
	}
	geBurst, beBurst := run(ge), run(be)
	assert.Less(t, beBurst, 1.2)
	assert.Greater(t, geBurst, 4.0)
}

func TestExactLoss(t *testing.T) {
	seed := testSeed(t)
	tests := []struct {
		name        string
		drop, every int
	}{
		{"1 of 100", 1, 100},
		{"3 of 10", 3, 10},
		{"none", 0, 7},
		{"all", 5, 5},
		{"every other", 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewScheduler(seed).Rand("exact")
			e := &ExactLoss{Drop: tc.drop, Every: tc.every}
			require.NoError(t, e.Validate())
			const blocks = 2000
			perPos := make([]int, tc.every)
			patterns := map[string]bool{}
			for range blocks {
				n := 0
				pat := make([]byte, tc.every)
				for i := range tc.every {
					pat[i] = '.'
					if e.Lost(r) {
						n++
						perPos[i]++
						pat[i] = 'x'
					}
				}
				if !assert.Equal(t, tc.drop, n, "drops in one block") {
					return
				}
				patterns[string(pat)] = true
			}
			if tc.drop > 0 && tc.drop < tc.every {
				assert.Greater(t, len(patterns), 1, "positions are shuffled per block")
				// Every position is equally likely to drop.
				want := float64(tc.drop) / float64(tc.every)
				for i, c := range perPos {
					assert.InDelta(t, want, float64(c)/blocks, 5*sqrt(want*(1-want)/blocks), "position %d", i)
				}
			}
		})
	}
}

func TestLossValidate(t *testing.T) {
	tests := []struct {
		name    string
		v       validator
		wantErr string
	}{
		{"bernoulli ok", Bernoulli{P: 0.3}, ""},
		{"bernoulli negative", Bernoulli{P: -0.1}, "Bernoulli.P -0.1 is outside [0, 1]"},
		{"bernoulli above one", Bernoulli{P: 1.5}, "Bernoulli.P 1.5"},
		{"ge ok", &GilbertElliott{PGoodBad: 0.1, PBadGood: 0.5, LossBad: 1}, ""},
		{"ge bad", &GilbertElliott{PBadGood: 2}, "GilbertElliott.PBadGood 2"},
		{"exact ok", &ExactLoss{Drop: 1, Every: 4}, ""},
		{"exact drop over every", &ExactLoss{Drop: 5, Every: 4}, "ExactLoss.Drop 5 exceeds Every 4"},
		{"exact zero every", &ExactLoss{}, "ExactLoss.Every 0 must be positive"},
		{"exact negative drop", &ExactLoss{Drop: -1, Every: 4}, "ExactLoss.Drop -1 is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.Validate()
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}
