package entity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nearzero/nearzero/netcode/predict"
)

func TestProfiles(t *testing.T) {
	cases := []struct {
		p        Profile
		cap, tau time.Duration
		ok       bool
	}{
		{ProfileVehicle, predict.DefaultPredictionCap, predict.DefaultSmoothingTau, true},
		{ProfileCharacter, 150 * time.Millisecond, 50 * time.Millisecond, true},
		{ProfileCustom, 0, 0, false},
		{ProfileAuto, 0, 0, false},
		{Profile(7), 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.p.String(), func(t *testing.T) {
			c, tau, ok := tc.p.Preset()
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.cap, c)
			assert.Equal(t, tc.tau, tau)
			if ok {
				assert.Equal(t, tc.p, ProfileOf(c, tau), "a preset's values name it")
			}
		})
	}
	assert.Equal(t, ProfileCustom, ProfileOf(200*time.Millisecond, 50*time.Millisecond))
	assert.Equal(t, ProfileVehicle, ProfileOf(300*time.Millisecond, 150*time.Millisecond))
	base := predict.DefaultConfig(false)
	assert.True(t, ProfileAuto.Apply(base).Auto, "Auto turns the tuning on")
	assert.Equal(t, base.PredictionCap, ProfileAuto.Apply(base).PredictionCap, "and keeps the starting values")
	assert.False(t, ProfileCharacter.Apply(ProfileAuto.Apply(base)).Auto, "a preset turns it off")
	assert.False(t, ProfileCustom.Apply(ProfileAuto.Apply(base)).Auto)
	assert.Equal(t, ProfileAuto, DefaultProfile)
}
