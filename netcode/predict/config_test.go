package predict

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultConfig(t *testing.T) {
	for _, tc := range []struct {
		name            string
		dim2D           bool
		teleport, width float64
	}{
		{"3d", false, DefaultTeleportDistance, DefaultWidth},
		{"2d", true, DefaultTeleportDistance2D, DefaultWidth2D},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig(tc.dim2D)
			assert.Equal(t, Config{
				Dim2D:            tc.dim2D,
				PredictionCap:    300 * time.Millisecond,
				CoastUntil:       time.Second,
				GhostAfter:       500 * time.Millisecond,
				HideAfter:        2 * time.Second,
				SmoothingTau:     150 * time.Millisecond,
				TeleportDistance: tc.teleport,
				ContactTrust:     400 * time.Millisecond,
				Width:            tc.width,
				PathMargin:       30 * time.Millisecond,
				DirectOutage:     100 * time.Millisecond,
				BufferLen:        32,
			}, c)
			require.NoError(t, c.Validate())
			assert.Equal(t, c, Config{Dim2D: tc.dim2D}.withDefaults(), "zero value means the defaults")
		})
	}
}

func TestWithDefaultsKeepsSetFields(t *testing.T) {
	in := Config{PredictionCap: 500 * time.Millisecond, Width: 3, BufferLen: 8}
	out := in.withDefaults()
	assert.Equal(t, 500*time.Millisecond, out.PredictionCap)
	assert.Equal(t, 3.0, out.Width)
	assert.Equal(t, 8, out.BufferLen)
	assert.Equal(t, DefaultHideAfter, out.HideAfter)
	assert.Zero(t, in.HideAfter, "the caller's value is not changed")
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string // substrings of the error; nil for valid
	}{
		{"zero value", Config{}, nil},
		{"2d zero value", Config{Dim2D: true}, nil},
		{"cap equals coast", Config{PredictionCap: time.Second}, nil},
		{"ghost after hide", Config{GhostAfter: 3 * time.Second}, []string{"GhostAfter (3s)", "HideAfter (2s)"}},
		{"ghost equals hide", Config{GhostAfter: time.Second, HideAfter: time.Second}, []string{"GhostAfter (1s)", "HideAfter (1s)"}},
		{"cap beyond coast", Config{PredictionCap: 2 * time.Second}, []string{"PredictionCap (2s)", "CoastUntil (1s)"}},
		{"negative tau", Config{SmoothingTau: -time.Millisecond}, []string{"SmoothingTau", "-1ms"}},
		{"negative margin", Config{PathMargin: -1}, []string{"PathMargin"}},
		{"negative width", Config{Width: -1}, []string{"Width", "-1"}},
		{"NaN teleport", Config{TeleportDistance: math.NaN()}, []string{"TeleportDistance", "NaN"}},
		{"infinite width", Config{Width: math.Inf(1)}, []string{"Width", "+Inf"}},
		{"one-sample buffer", Config{BufferLen: 1}, []string{"BufferLen is 1"}},
		{"huge buffer", Config{BufferLen: MaxBufferLen + 1}, []string{"BufferLen is 4097"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrConfig)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			_, err = New(tc.cfg)
			assert.ErrorIs(t, err, ErrConfig, "New refuses it too")
		})
	}
}
