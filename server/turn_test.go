package server

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the TURN REST scheme
	"encoding/base64"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTURNConfig(t *testing.T) {
	none, err := StartTURN(TURNConfig{}, nil)
	require.NoError(t, err)
	assert.Nil(t, none.ICEServers("u1"), "nothing configured: no ICE servers")
	assert.Nil(t, none.Addr())
	assert.NoError(t, none.Close())

	for name, c := range map[string]TURNConfig{
		"both":         {Addr: "127.0.0.1:0", URL: "turn:x:3478", Secret: "s"},
		"no secret":    {URL: "turn:x:3478"},
		"bad url":      {URL: "http://x", Secret: "s"},
		"bad ip":       {Addr: "127.0.0.1:0", PublicIP: "nope"},
		"negative ttl": {URL: "turn:x:3478", Secret: "s", TTL: -time.Second},
	} {
		_, err := StartTURN(c, nil)
		assert.ErrorIs(t, err, ErrTURNConfig, name)
	}

	ext, err := StartTURN(TURNConfig{URL: "turn:turn.example.com:3478", Secret: "sekrit", STUN: []string{"stun:s:3478"}, TTL: time.Hour}, nil)
	require.NoError(t, err)
	ice := ext.ICEServers("u42")
	require.Len(t, ice, 2)
	assert.Equal(t, []string{"stun:s:3478"}, ice[0].URLs)
	assert.Equal(t, []string{"turn:turn.example.com:3478"}, ice[1].URLs)
	expiry, user, ok := strings.Cut(ice[1].Username, ":")
	require.True(t, ok, "username is expiry:user")
	assert.Equal(t, "u42", user)
	exp, err := strconv.ParseInt(expiry, 10, 64)
	require.NoError(t, err)
	assert.InDelta(t, time.Now().Add(time.Hour).Unix(), exp, 5)
	mac := hmac.New(sha1.New, []byte("sekrit"))
	mac.Write([]byte(ice[1].Username))
	assert.Equal(t, base64.StdEncoding.EncodeToString(mac.Sum(nil)), ice[1].Credential)
}

func TestTURNEmbedded(t *testing.T) {
	tr, err := StartTURN(TURNConfig{Addr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	defer tr.Close()
	port := tr.Addr().(*net.UDPAddr).Port
	ice := tr.ICEServers("u1")
	require.Len(t, ice, 2)
	hp := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	assert.Equal(t, []string{"stun:" + hp}, ice[0].URLs, "the relay answers STUN too")
	assert.Equal(t, []string{"turn:" + hp + "?transport=udp"}, ice[1].URLs)
	assert.NotEmpty(t, ice[1].Credential)
}

func TestTURNPeerAllowed(t *testing.T) {
	public := peerAllowed(net.ParseIP("203.0.113.5"))
	local := peerAllowed(net.ParseIP("127.0.0.1"))
	for ip, want := range map[string][2]bool{ // public relay, loopback relay
		"198.51.100.7": {true, true},
		"127.0.0.1":    {false, true},
		"10.1.2.3":     {false, true},
		"192.168.1.9":  {false, true},
		"169.254.1.1":  {false, false},
		"0.0.0.0":      {false, false},
		"224.0.0.1":    {false, false},
	} {
		assert.Equal(t, want[0], public(nil, net.ParseIP(ip)), "public relay, peer %s", ip)
		assert.Equal(t, want[1], local(nil, net.ParseIP(ip)), "loopback relay, peer %s", ip)
	}
}
