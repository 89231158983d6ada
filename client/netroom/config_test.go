package netroom

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client"
	"github.com/nearzero/nearzero/netcode/predict"
)

func TestServerURL(t *testing.T) {
	cases := []struct {
		name, in, want string
		err            bool
	}{
		{name: "host and port", in: "127.0.0.1:8787", want: "ws://127.0.0.1:8787/ws"},
		{name: "spaces trimmed", in: "  example.org:80 ", want: "ws://example.org:80/ws"},
		{name: "ws without path", in: "ws://example.org:8787", want: "ws://example.org:8787/ws"},
		{name: "ws root path", in: "ws://example.org/", want: "ws://example.org/ws"},
		{name: "ws with path kept", in: "ws://example.org/rooms/ws", want: "ws://example.org/rooms/ws"},
		{name: "wss kept", in: "wss://play.example.org/ws", want: "wss://play.example.org/ws"},
		{name: "http becomes ws", in: "http://example.org:8787", want: "ws://example.org:8787/ws"},
		{name: "https becomes wss", in: "https://example.org", want: "wss://example.org/ws"},
		{name: "empty", in: "", err: true},
		{name: "other scheme", in: "ftp://example.org", err: true},
		{name: "no host", in: "ws:///ws", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ServerURL(tc.in)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := ServerURL("")
	assert.ErrorIs(t, err, ErrNoServer)
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{name: "zero is valid", cfg: Config{}, ok: true},
		{name: "lag on", cfg: Config{Lag: client.LagConfig{Latency: 50 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.02}}, ok: true},
		{name: "negative timeout", cfg: Config{ConnectTimeout: -1}},
		{name: "negative silence", cfg: Config{DirectSilence: -time.Millisecond}},
		{name: "loss above one", cfg: Config{Lag: client.LagConfig{Loss: 1.5}}},
		{name: "negative latency", cfg: Config{Lag: client.LagConfig{Latency: -time.Millisecond}}},
		{name: "bad server", cfg: Config{Server: "gopher://x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrConfig)
			_, err = New(tc.cfg)
			assert.ErrorIs(t, err, ErrConfig, "New validates too")
		})
	}
	d := Config{}.withDefaults()
	assert.Equal(t, DefaultDirectSilence, d.DirectSilence)
	assert.Equal(t, 250*time.Millisecond, d.DirectSilence, "the bench's number")
}

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
