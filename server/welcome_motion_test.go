package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/motion"
)

// TestWelcomeCarriesMotionLimits: clients check their direct peers by the
// room's own motion limits, so the welcome says what they are.
func TestWelcomeCarriesMotionLimits(t *testing.T) {
	w := newEnv(t, nil).raw().hello()
	require.NotNil(t, w.Limits.Motion)
	l, on := motion.FromProtocol(w.Limits.Motion)
	assert.True(t, on)
	assert.Equal(t, motion.Defaults(), l, "the defaults")

	w = newEnv(t, func(c *Config) {
		c.Room.TopSpeed, c.Room.WorldBounds, c.Room.NoMotionChecks = 12, 300, true
	}).raw().hello()
	require.NotNil(t, w.Limits.Motion)
	l, on = motion.FromProtocol(w.Limits.Motion)
	assert.False(t, on, "the server checks no motion")
	assert.Equal(t, 12.0, l.TopSpeed)
	assert.Equal(t, 300.0, l.WorldBounds)
}
