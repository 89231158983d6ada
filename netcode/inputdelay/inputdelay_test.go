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
