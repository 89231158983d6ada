package predict

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
)

// TestSetConfigKeepsHistory: a setting changed at run time applies at
// once without losing the buffered samples, and shape changes are refused.
func TestSetConfigKeepsHistory(t *testing.T) {
	p := newPredictor(t, Config{})
	vel := geom.Vec3{X: 10}
	for i := range 5 {
		at := ms(float64(16 * i))
		require.True(t, p.Add(PathServer, moving(at, i, geom.Vec3{X: at.Seconds() * 10}, vel), at))
	}
	last := ms(64)
	far := last + ms(250) // past a 100 ms cap, within the default 300 ms
	before := p.PoseAt(far)
	require.Equal(t, Visible, before.Visibility)

	cfg := p.Config()
	cfg.PredictionCap = ms(100)
	require.NoError(t, p.SetConfig(cfg))
	assert.Equal(t, ms(100), p.Config().PredictionCap)
	after := p.PoseAt(far + ms(1))
	assert.Equal(t, Visible, after.Visibility, "the samples are still there")
	assert.True(t, after.PastCap, "the new cap applies")
	assert.Less(t, after.Raw.X, before.Raw.X+0.05, "extrapolation stops at the new cap")

	bad := cfg
	bad.GhostAfter, bad.HideAfter = ms(900), ms(800)
	assert.ErrorIs(t, p.SetConfig(bad), ErrConfig)
	flip := cfg
	flip.Dim2D = true
	assert.ErrorIs(t, p.SetConfig(flip), ErrConfig)
	assert.Equal(t, ms(100), p.Config().PredictionCap, "refused: unchanged")
}

// TestSetConfigSwitchesAuto: turning Auto on in a running predictor (a
// profile changed in the inspector at run time) must not draw from shadows
// that were never allocated, and turning it off again draws as configured.
func TestSetConfigSwitchesAuto(t *testing.T) {
	p := newPredictor(t, Config{})
	vel := geom.Vec3{X: 10}
	add := func(from, n int) {
		for i := from; i < from+n; i++ {
			at := ms(float64(16 * i))
			require.True(t, p.Add(PathServer, moving(at, i, geom.Vec3{X: at.Seconds() * 10}, vel), at+ms(50)))
			p.PoseAt(at + ms(55))
		}
	}
	add(0, 5)
	cfg := p.Config()
	cfg.Auto = true
	require.NoError(t, p.SetConfig(cfg))
	require.NotNil(t, p.auto, "Auto switched on at run time tunes, as one made by New does")
	require.NotPanics(t, func() { add(5, 60) }, "Auto switched on keeps drawing")
	assert.Positive(t, p.auto.labels, "arrivals score the shadows")
	pose := p.PoseAt(ms(16*64) + ms(60))
	assert.Equal(t, Visible, pose.Visibility)
	assert.InDelta(t, 10*(ms(16*64)+ms(60)).Seconds(), pose.Pos.X, 0.5, "still near the straight-line truth")

	cfg.Auto = false
	require.NoError(t, p.SetConfig(cfg))
	assert.False(t, p.Config().Auto)
	assert.Nil(t, p.auto, "Auto's shadows are dropped")
	require.NotPanics(t, func() { add(65, 5) })
	pose = p.PoseAt(ms(16*69) + ms(60))
	assert.InDelta(t, 10*(ms(16*69)+ms(60)).Seconds(), pose.Pos.X, 0.5)
}
