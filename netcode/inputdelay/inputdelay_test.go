package inputdelay

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
)

func TestOwnDrawsDelayLate(t *testing.T) {
	o, err := New(100*time.Millisecond, 16)
	require.NoError(t, err)
	_, _, ok := o.At(0)
	assert.False(t, ok, "nothing recorded")
	// A mover at 6 m/s along X, recorded every 10 ms.
	for i := range 30 {
		at := time.Duration(i) * 10 * time.Millisecond
		o.Record(at, geom.Vec3{X: 6 * at.Seconds()}, geom.Identity)
	}
	pos, _, ok := o.At(255 * time.Millisecond)
	require.True(t, ok)
	assert.InDelta(t, 6*0.155, pos.X, 1e-9, "the simulated pose 100 ms back, interpolated")
	pos, _, _ = o.At(0)
	assert.InDelta(t, 6*0.14, pos.X, 1e-9, "before the buffer reaches back: its oldest frame (16 kept)")
	pos, _, _ = o.At(time.Second)
	assert.InDelta(t, 6*0.29, pos.X, 1e-9, "past the newest: the newest")
	o.Record(50*time.Millisecond, geom.Vec3{X: 99}, geom.Identity)
	pos, _, _ = o.At(time.Second)
	assert.InDelta(t, 6*0.29, pos.X, 1e-9, "an older frame is ignored")
}

func TestOwnNoAllocs(t *testing.T) {
	o, err := New(50*time.Millisecond, 8)
	require.NoError(t, err)
	i := 0
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		at := time.Duration(i) * time.Second / 60
		o.Record(at, geom.Vec3{X: float64(i)}, geom.Identity)
		o.At(at)
		i++
	}))
}

func TestConfigAndPlace(t *testing.T) {
	_, err := New(-time.Millisecond, 8)
	require.ErrorIs(t, err, ErrConfig)
	_, err = New(time.Millisecond, 1)
	require.ErrorIs(t, err, ErrConfig)
	o, err := New(70*time.Millisecond, 8)
	require.NoError(t, err)
	assert.Equal(t, 70*time.Millisecond, o.Delay())
	assert.Equal(t, 1070*time.Millisecond, Place(time.Second, o.Delay()))
}

func TestSlide(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	at := 10 * time.Second
	assert.Equal(t, ms(50), Slide(ms(50), ms(100), at, at-time.Second), "before the change: the old delay")
	assert.Equal(t, ms(50), Slide(ms(50), ms(100), at, at))
	assert.Equal(t, ms(75), Slide(ms(50), ms(100), at, at+250*time.Millisecond), "0.1 s/s: 25 ms in 250 ms")
	assert.Equal(t, ms(100), Slide(ms(50), ms(100), at, at+time.Second), "there after 500 ms, and stays")
	assert.Equal(t, ms(80), Slide(ms(100), ms(0), at, at+200*time.Millisecond), "down as well")
	assert.Equal(t, ms(0), Slide(ms(100), ms(0), at, at+2*time.Second))
	assert.Equal(t, ms(40), Slide(ms(40), ms(40), at, at-time.Second), "no change")
}

func TestAdaptive(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	assert.Zero(t, Adaptive(nil, ms(250)))
	assert.Zero(t, Adaptive([]time.Duration{ms(100)}, ms(250)), "alone: nobody to draw")
	// The slowest pair, 120 and 80 ms round trips: 100 ms one way through
	// the server, plus the margin, rounded up to 5 ms.
	assert.Equal(t, ms(125), Adaptive([]time.Duration{ms(20), ms(120), ms(80), ms(40)}, ms(250)))
	assert.Equal(t, ms(60), Adaptive([]time.Duration{ms(30), ms(31)}, ms(250)), "30.5 + 25 rounds up to 60")
	assert.Equal(t, ms(90), Adaptive([]time.Duration{ms(200), ms(180)}, ms(90)), "at most the cap")
}

func TestAtDelayAndReset(t *testing.T) {
	o, err := New(100*time.Millisecond, 32)
	require.NoError(t, err)
	for i := range 30 {
		at := time.Duration(i) * 10 * time.Millisecond
		o.Record(at, geom.Vec3{X: at.Seconds()}, geom.Identity)
	}
	pos, _, _ := o.AtDelay(250*time.Millisecond, 50*time.Millisecond)
	assert.InDelta(t, 0.2, pos.X, 1e-9, "another delay than New's")
	o.Reset()
	_, _, ok := o.At(time.Second)
	assert.False(t, ok, "forgotten")
}
