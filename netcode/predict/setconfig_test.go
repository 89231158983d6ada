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
