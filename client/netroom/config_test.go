package netroom

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/lagsim"
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
		{name: "lag on", cfg: Config{Options: serverlink.Options{Lag: serverlink.LagConfig{Latency: 50 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.02}}}, ok: true},
		{name: "negative timeout", cfg: Config{Options: serverlink.Options{DialTimeout: -1}}},
		{name: "negative silence", cfg: Config{DirectSilence: -time.Millisecond}},
		{name: "loss above one", cfg: Config{Options: serverlink.Options{Lag: serverlink.LagConfig{Loss: 1.5}}}},
		{name: "negative latency", cfg: Config{Options: serverlink.Options{Lag: serverlink.LagConfig{Latency: -time.Millisecond}}}},
		{name: "bad server", cfg: Config{Server: "gopher://x"}},
		// The lag settings are checked by lagsim.Config.Validate, whose
		// limits a hand-written check here used to miss.
		{name: "latency over lagsim's limit", cfg: Config{Options: serverlink.Options{Lag: serverlink.LagConfig{Latency: lagsim.MaxLatency + 1}}}},
		{name: "direct latency over lagsim's limit", cfg: Config{Direct: direct.Config{Lag: lagsim.Config{Jitter: lagsim.MaxJitter + 1}}}},
		// Every serverlink.Options field is checked, by client's own Validate.
		{name: "back-off upside down", cfg: Config{Options: serverlink.Options{BackoffMin: time.Second, BackoffMax: time.Millisecond}}},
		{name: "negative close timeout", cfg: Config{Options: serverlink.Options{CloseTimeout: -1}}},
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

func TestConfigValidateNamesLagsimsError(t *testing.T) {
	err := Config{Options: serverlink.Options{Lag: serverlink.LagConfig{Latency: lagsim.MaxLatency + 1}}}.Validate()
	require.ErrorIs(t, err, ErrConfig)
	assert.ErrorIs(t, err, serverlink.ErrInvalidOptions, "serverlink.Options.Validate ran")
	assert.ErrorIs(t, err, lagsim.ErrInvalidConfig, "lagsim.Config.Validate ran")
}

// TestConfigDefaultsAreTheClients pins one set of defaults: a zero Config
// gets client's time-outs (the close time-out once disagreed: 3 s there,
// 2 s here), and only the Room's own fields and ClientName differ.
func TestConfigDefaultsAreTheClients(t *testing.T) {
	d := Config{}.withDefaults()
	want := (&serverlink.Options{ClientName: DefaultClientName}).WithDefaults()
	assert.Equal(t, serverlink.DefaultCloseTimeout, d.CloseTimeout)
	assert.Equal(t, 2*time.Second, d.CloseTimeout, "one close time-out")
	assert.Equal(t, serverlink.DefaultDialTimeout, d.DialTimeout)
	assert.Equal(t, serverlink.DefaultRequestTimeout, d.RequestTimeout)
	assert.NotNil(t, d.Clock, "a wall clock")
	assert.NotNil(t, d.Log)
	d.Clock, want.Clock, d.Log = nil, nil, nil
	assert.Equal(t, want, d.Options)
}

// TestDialGetsEveryOption: the client is dialled with the Config's
// Options as set, not a hand-made copy of some of them (Seed, ReconnectFor,
// the queues and SendLead were once left out).
func TestDialGetsEveryOption(t *testing.T) {
	opts := serverlink.Options{Name: "Ann", Token: "tok", ClientName: "game 1.2",
		DialTimeout: time.Second, RequestTimeout: 2 * time.Second, CloseTimeout: 3 * time.Second,
		NoReconnect: true, ReconnectFor: 4 * time.Second, BackoffMin: time.Millisecond, BackoffMax: time.Second,
		EventQueue: 5, StateQueue: 6, SendQueue: 7, SendLead: 8 * time.Millisecond, Seed: 9, SilenceTimeout: 10 * time.Second,
		Lag: serverlink.LagConfig{Latency: 10 * time.Millisecond}}
	h := newHarness(t, Config{Options: opts})
	require.NoError(t, h.room.Connect())
	h.until(has(EventConnected))
	h.mu.Lock()
	require.Len(t, h.dials, 1)
	got := h.dials[0].opts
	h.mu.Unlock()
	assert.Same(t, h.clock, got.Clock, "the Room's clock")
	assert.NotNil(t, got.Log)
	assert.NotNil(t, got.HTTPClient)
	got.Clock, got.Log, got.HTTPClient = nil, nil, nil
	assert.Equal(t, opts, got)
}
