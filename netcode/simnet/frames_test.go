package simnet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFramesSteady(t *testing.T) {
	tests := []struct {
		name   string
		cfg    FrameConfig
		period time.Duration
	}{
		{"default 60 fps", FrameConfig{}, DefaultFramePeriod},
		{"30 fps", FrameConfig{Period: time.Second / 30}, time.Second / 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewScheduler(testSeed(t))
			s.RunUntil(time.Second)
			var frames []Frame
			NewFrames(s, tc.cfg, func(f Frame) { frames = append(frames, f) })
			s.RunUntil(2 * time.Second)
			require.NotEmpty(t, frames)
			for i, f := range frames {
				assert.Equal(t, i, f.Index)
				assert.Equal(t, time.Second+time.Duration(i)*tc.period, f.Start)
				assert.Equal(t, tc.period, f.Delta)
			}
			assert.Equal(t, int(time.Second/tc.period)+1, len(frames))
		})
	}
}

func TestFramesPost(t *testing.T) {
	s := NewScheduler(testSeed(t))
	var log []string
	var fr *Frames
	fr = NewFrames(s, FrameConfig{Period: 10 * time.Millisecond}, func(f Frame) {
		log = append(log, "frame "+f.Start.String())
		if f.Index == 1 {
			fr.Post(func() { log = append(log, "posted in frame 1 at "+s.Now().String()) })
		}
	})
	// A network arrival between frames waits for the next frame start.
	s.At(3*time.Millisecond, func() {
		fr.Post(func() { log = append(log, "arrival at "+s.Now().String()) })
		fr.Post(func() { log = append(log, "second arrival") })
	})
	s.RunUntil(25 * time.Millisecond)
	assert.Equal(t, []string{
		"frame 0s",
		"arrival at 10ms", "second arrival", "frame 10ms",
		"posted in frame 1 at 20ms", "frame 20ms",
	}, log)
	assert.Equal(t, 3, fr.Count())

	fr.Post(func() { t.Error("posted work ran after Stop") })
	fr.Stop()
	s.RunUntil(time.Second)
	assert.Equal(t, 3, fr.Count())
}

func TestFramesHitches(t *testing.T) {
	const period = 10 * time.Millisecond
	const total = 10 * time.Minute
	hitches := Stalls{Every: 2 * time.Second, For: 100 * time.Millisecond, Jitter: 0.5}
	s := NewScheduler(testSeed(t))
	var deltas []time.Duration
	arrivals, waited := 0, time.Duration(0)
	var fr *Frames
	fr = NewFrames(s, FrameConfig{Period: period, Hitches: &hitches, Jitter: UniformJitter{Max: time.Millisecond}},
		func(f Frame) {
			if f.Index > 0 {
				deltas = append(deltas, f.Delta)
			}
		})
	// Arrivals every 3 ms wait for the next frame, longer during a hitch.
	s.Every(3*time.Millisecond, func() {
		at := s.Now()
		fr.Post(func() { arrivals++; waited = max(waited, s.Now()-at) })
	})
	s.RunUntil(total)

	long := 0
	for _, d := range deltas {
		require.GreaterOrEqual(t, d, period)
		if d > period+time.Millisecond {
			long++
			assert.GreaterOrEqual(t, d, period+50*time.Millisecond)
			assert.LessOrEqual(t, d, period+151*time.Millisecond)
		} else {
			assert.Less(t, d, period+time.Millisecond, "jitter stays under its Max")
		}
	}
	// Gaps are exponential with mean 2 s after each hitch ends.
	want := float64(total) / float64(hitches.Every+hitches.For)
	assert.InEpsilon(t, want, float64(long), 0.2, "hitches per run")
	assert.Greater(t, waited, 50*time.Millisecond, "an arrival waited out a hitch")
	// All but those posted during the last frame (at most ~160 ms) ran.
	assert.Greater(t, arrivals, int(total/(3*time.Millisecond))-60)
}

func TestFrameConfigValidate(t *testing.T) {
	s := NewScheduler(1)
	assert.PanicsWithError(t, `simnet: NewFrames "frames1": simnet: FrameConfig.Period -1s is negative`,
		func() { NewFrames(s, FrameConfig{Period: -time.Second}, nil) })
	assert.ErrorContains(t, FrameConfig{Jitter: NormalJitter{Sigma: -1}}.Validate(), "Sigma")
	assert.ErrorContains(t, FrameConfig{Hitches: &Stalls{For: -1}}.Validate(), "Stalls.For")
	assert.NoError(t, FrameConfig{Hitches: &Stalls{}}.Validate())
}
