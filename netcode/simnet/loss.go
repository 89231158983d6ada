package simnet

import (
	"fmt"
	"math/rand/v2"
)

// Loss decides, packet by packet, whether a packet is lost. Stateful models
// (GilbertElliott, ExactLoss) advance one packet per call, so one value must
// not be shared by two links.
type Loss interface {
	Lost(r *rand.Rand) bool
}

// Bernoulli loses each packet independently with probability P.
type Bernoulli struct {
	// P is the loss probability in [0, 1]. Default 0.
	P float64
}

// Lost implements Loss.
func (b Bernoulli) Lost(r *rand.Rand) bool { return b.P > 0 && r.Float64() < b.P }

// Validate reports a P outside [0, 1].
func (b Bernoulli) Validate() error { return checkProb("Bernoulli.P", b.P) }

// GilbertElliott is bursty loss: a two-state Markov chain, Good and Bad,
// with its own loss probability in each. The loss of a packet is drawn in
// the current state, then the state moves. With LossBad = 1 and LossGood = 0
// the losses come in bursts of mean length 1/PBadGood packets.
//
// It starts in Good. Use it through a pointer; it keeps the state.
type GilbertElliott struct {
	// PGoodBad is the chance per packet of going from Good to Bad. Default 0.
	PGoodBad float64
	// PBadGood is the chance per packet of going from Bad to Good. Default 0.
	PBadGood float64
	// LossGood is the loss probability in Good. Default 0.
	LossGood float64
	// LossBad is the loss probability in Bad. Default 0.
	LossBad float64

	bad bool
}

// Lost implements Loss.
func (g *GilbertElliott) Lost(r *rand.Rand) bool {
	p, move := g.LossGood, g.PGoodBad
	if g.bad {
		p, move = g.LossBad, g.PBadGood
	}
	lost := p > 0 && r.Float64() < p
	if move > 0 && r.Float64() < move {
		g.bad = !g.bad
	}
	return lost
}

// Bad reports whether the chain is in the Bad state.
func (g *GilbertElliott) Bad() bool { return g.bad }

// MeanLoss returns the long-run loss rate: the stationary share of each
// state times its loss probability.
func (g *GilbertElliott) MeanLoss() float64 {
	if g.PGoodBad+g.PBadGood == 0 {
		if g.bad {
			return g.LossBad
		}
		return g.LossGood
	}
	pBad := g.PGoodBad / (g.PGoodBad + g.PBadGood)
	return pBad*g.LossBad + (1-pBad)*g.LossGood
}

// Validate reports a probability outside [0, 1].
func (g *GilbertElliott) Validate() error {
	for _, f := range []struct {
		name string
		p    float64
	}{
		{"GilbertElliott.PGoodBad", g.PGoodBad},
		{"GilbertElliott.PBadGood", g.PBadGood},
		{"GilbertElliott.LossGood", g.LossGood},
		{"GilbertElliott.LossBad", g.LossBad},
	} {
		if err := checkProb(f.name, f.p); err != nil {
			return err
		}
	}
	return nil
}

// ExactLoss drops exactly Drop packets out of each block of Every
// consecutive packets; which ones is drawn afresh for each block, every
// subset equally likely. Loss rates in tests are then exact rather than
// approximate. Use it through a pointer; it keeps its place in the block.
type ExactLoss struct {
	// Drop is the number of packets lost per block, 0 <= Drop <= Every. Default 0.
	Drop int
	// Every is the block length in packets; it must be positive.
	Every int

	pos  int // packets already decided in the current block
	left int // drops still to place in the current block
}

// Lost implements Loss.
func (e *ExactLoss) Lost(r *rand.Rand) bool {
	if e.Every <= 0 {
		return false
	}
	if e.pos == 0 {
		e.left = e.Drop
	}
	// Selection sampling: drop with chance (drops left)/(slots left), which
	// places exactly Drop losses uniformly without storing a mask.
	slots := e.Every - e.pos
	lost := e.left > 0 && r.IntN(slots) < e.left
	if lost {
		e.left--
	}
	e.pos++
	if e.pos == e.Every {
		e.pos = 0
	}
	return lost
}

// Validate reports a non-positive Every or a Drop outside [0, Every].
func (e *ExactLoss) Validate() error {
	switch {
	case e.Every <= 0:
		return fmt.Errorf("simnet: ExactLoss.Every %d must be positive", e.Every)
	case e.Drop < 0:
		return fmt.Errorf("simnet: ExactLoss.Drop %d is negative", e.Drop)
	case e.Drop > e.Every:
		return fmt.Errorf("simnet: ExactLoss.Drop %d exceeds Every %d", e.Drop, e.Every)
	}
	return nil
}

func checkProb(name string, p float64) error {
	if !(p >= 0 && p <= 1) {
		return fmt.Errorf("simnet: %s %v is outside [0, 1]", name, p)
	}
	return nil
}
