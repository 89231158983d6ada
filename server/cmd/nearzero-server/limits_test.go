package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server"
)

func TestLimitFlags(t *testing.T) {
	var out syncBuf
	require.Zero(t, run([]string{"-h"}, nil, &out, &out, nil))
	for _, want := range []string{"-max-conns-per-addr", "(default 32)", "-max-rooms-per-addr", "(default 8)",
		"-new-identity-rate", "(default 0.2)", "-new-identity-burst", "(default 20)",
		"-join-fail-rate", "(default 0.5)", "-join-fail-burst", "(default 10)", "-idle-timeout", "(default 30s)",
		"visible to every local user", "-trusted-proxy", "-max-rooms-per-prefix", "(default 32)", "-playing-reserve",
		"(default 0.2)", "-lobby-timeout", "(default 10m0s)", "-max-conns", "-max-sockets", "open-file limit",
		"-header-timeout", "(default 3s)", "-recipient-rate", "(default 960)", "-recipient-bytes", "(default 98304)",
		"-reliable-backlog", "(default 524288)"} {
		assert.Contains(t, out.String(), want)
	}

	o, err := parse([]string{"-max-conns-per-addr", "-1", "-max-rooms-per-addr", "2", "-new-identity-rate", "1",
		"-new-identity-burst", "3", "-join-fail-rate", "0.1", "-join-fail-burst", "4", "-idle-timeout", "1m",
		"-trusted-proxy", "10.0.0.0/8", "-trusted-proxy", "192.168.1.1", "-max-rooms-per-prefix", "5",
		"-playing-reserve", "0.5", "-lobby-timeout", "2m", "-max-conns", "300", "-max-sockets", "400",
		"-header-timeout", "1s", "-recipient-rate", "100", "-recipient-bytes", "5000", "-reliable-backlog", "70000"}, io.Discard)
	require.NoError(t, err)
	c := o.config()
	assert.Equal(t, server.Config{MaxConnsPerAddr: -1, MaxRoomsPerAddr: 2, NewIdentityRate: 1, NewIdentityBurst: 3,
		JoinFailRate: 0.1, JoinFailBurst: 4, IdleTimeout: time.Minute},
		server.Config{MaxConnsPerAddr: c.MaxConnsPerAddr, MaxRoomsPerAddr: c.MaxRoomsPerAddr,
			NewIdentityRate: c.NewIdentityRate, NewIdentityBurst: c.NewIdentityBurst, JoinFailRate: c.JoinFailRate,
			JoinFailBurst: c.JoinFailBurst, IdleTimeout: c.IdleTimeout})
	assert.Equal(t, []string{"10.0.0.0/8", "192.168.1.1"}, c.TrustedProxies)
	assert.Equal(t, []any{5, 0.5, 2 * time.Minute}, []any{c.MaxRoomsPerPrefix, c.PlayingReserve, c.LobbyTimeout})
	assert.Equal(t, []any{300, 400, time.Second}, []any{c.MaxConns, c.MaxSockets, c.HeaderTimeout})
	assert.Equal(t, []any{100.0, 5000.0, 70000}, []any{c.Room.RecipientRate, c.Room.RecipientBytes, c.Room.BacklogBytes})
	require.NoError(t, c.Validate())
}

func TestEntityFlags(t *testing.T) {
	o, err := parse([]string{"-max-entities", "8", "-claim-radius", "2.5", "-claim-radius-2d", "64"}, io.Discard)
	require.NoError(t, err)
	c := o.config()
	e := c.Room.Entities
	assert.Equal(t, []any{8, 2.5, 64.0}, []any{e.MaxPerPlayer, e.ClaimRadius, e.ClaimRadius2D})
	require.NoError(t, c.Validate())
}

func TestMotionFlags(t *testing.T) {
	o, err := parse([]string{"-teleports-per-minute", "30", "-hits", "-hit-range", "150", "-hit-range-2d", "900"}, io.Discard)
	require.NoError(t, err)
	c := o.config()
	assert.Equal(t, 30.0, c.Room.TeleportsPerMinute)
	assert.Equal(t, []any{true, 150.0, 900.0}, []any{c.Room.Hits.On, c.Room.Hits.Range, c.Room.Hits.Range2D})
	require.NoError(t, c.Validate())
}

func TestInputDelayFlag(t *testing.T) {
	for in, want := range map[string]protocol.InputDelay{
		"off":            {},
		"100ms":          {Mode: protocol.InputDelayFixed, US: 100_000},
		"adaptive":       {Mode: protocol.InputDelayAdaptive},
		"adaptive:150ms": {Mode: protocol.InputDelayAdaptive, CapUS: 150_000},
	} {
		o, err := parse([]string{"-input-delay", in}, io.Discard)
		require.NoError(t, err, in)
		c := o.config()
		assert.Equal(t, want, c.Room.InputDelay, in)
		assert.Equal(t, in, o.inputDelay.String())
		require.NoError(t, c.Validate())
	}
	for _, bad := range []string{"300ms", "-5ms", "adaptive:1s", "adaptive:x", "soon"} {
		_, err := parse([]string{"-input-delay", bad}, io.Discard)
		assert.Error(t, err, bad)
	}
}
