package entity

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nearzero/nearzero/netcode/wire"
)

func TestStepClock(t *testing.T) {
	const step = time.Second / 60
	catch := catchUpOf(step)
	cases := []struct {
		name  string
		walls []time.Duration // wall time of each physics callback
		want  []time.Duration
	}{
		{
			name:  "first step takes the wall time",
			walls: []time.Duration{5 * time.Second},
			want:  []time.Duration{5 * time.Second},
		},
		{
			name:  "on schedule: exactly a step apart",
			walls: []time.Duration{0, step, 2 * step},
			want:  []time.Duration{0, step, 2 * step},
		},
		{
			name:  "back-to-back catch-up frames are a step apart, plus the catch-up",
			walls: []time.Duration{0, 40 * time.Millisecond, 40*time.Millisecond + 3*time.Microsecond},
			want:  []time.Duration{0, step + catch, 2*step + 2*catch},
		},
		{
			name:  "a frame that comes early pulls the time back",
			walls: []time.Duration{0, 10 * time.Millisecond},
			want:  []time.Duration{0, 10 * time.Millisecond},
		},
		{
			name:  "a stall jumps to MaxLag behind",
			walls: []time.Duration{0, time.Second},
			want:  []time.Duration{0, time.Second - DefaultMaxStepLag},
		},
		{
			name:  "a wall clock that did not move still advances a stamp",
			walls: []time.Duration{time.Second, time.Second},
			want:  []time.Duration{time.Second, time.Second + wire.StampUnit},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c StepClock
			for i, w := range tc.walls {
				assert.Equal(t, tc.want[i], c.Step(w, step), "step %d", i)
			}
		})
	}
}

// TestStepClockLagDecays: after a hitch that shifts the engine's schedule
// by a frame for good, the step times catch up with the wall clock within
// a second, without a jump.
func TestStepClockLagDecays(t *testing.T) {
	const step = time.Second / 60
	var c StepClock
	c.Step(0, step)
	shift := step + 500*time.Microsecond // the schedule now runs 17.2 ms later
	prev := time.Duration(0)
	var lag time.Duration
	for k := 1; k <= 60; k++ {
		wall := time.Duration(k)*step + shift
		got := c.Step(wall, step)
		assert.LessOrEqual(t, got-prev, step+catchUpOf(step)+time.Microsecond, "step %d: no jump", k)
		prev = got
		lag = wall - got
	}
	assert.Zero(t, lag, "the lag is gone after a second")
}

// TestStepClockJitter: with physics callbacks late by a random part of a
// frame (as an engine runs them: never early), step times stay within a
// step and the catch-up of each other, within MaxLag of the wall clock,
// never ahead of it, and close to the schedule.
func TestStepClockJitter(t *testing.T) {
	const seed = 7
	rng := rand.New(rand.NewPCG(seed, 0))
	const step = time.Second / 60
	maxGap := step + catchUpOf(step)
	var c StepClock
	prev := time.Duration(-1)
	var lagSum time.Duration
	const n = 2000
	for i := range n {
		ideal := time.Duration(i) * step
		wall := ideal + time.Duration(rng.Int64N(int64(4*time.Millisecond)))
		got := c.Step(wall, step)
		if !assert.LessOrEqual(t, got, wall, "seed %d step %d", seed, i) ||
			!assert.GreaterOrEqual(t, got, wall-DefaultMaxStepLag, "seed %d step %d", seed, i) ||
			!assert.Greater(t, got, prev, "seed %d step %d", seed, i) {
			return
		}
		if prev >= 0 {
			assert.LessOrEqual(t, got-prev, maxGap, "seed %d step %d", seed, i)
		}
		lagSum += got - ideal
		prev = got
	}
	assert.Less(t, lagSum/n, 1500*time.Microsecond, "seed %d: step times hug the schedule (mean jitter 2 ms)", seed)
}

func TestFrameClock(t *testing.T) {
	const step = time.Second / 60
	var c FrameClock
	a := c.At(1, time.Second, step)
	assert.Equal(t, time.Second, a)
	assert.Equal(t, a, c.At(1, time.Second+3*time.Millisecond, step), "same frame, same time, whoever asks")
	b := c.At(2, time.Second+20*time.Millisecond, step)
	assert.Equal(t, time.Second+step+catchUpOf(step), b, "next frame, late: one step on, plus the catch-up")
	c.Reset()
	assert.Equal(t, 2*time.Second, c.At(2, 2*time.Second, step), "after Reset the frame starts at the wall time")
}

// catchUpOf is the default catch-up per frame of a step, as Step computes it.
func catchUpOf(step time.Duration) time.Duration {
	c := DefaultStepCatchUp
	return time.Duration(c * float64(step))
}
