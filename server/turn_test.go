package server

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the TURN REST scheme
	"encoding/base64"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/stun/v4"
	"github.com/pion/turn/v5"
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
		assert.Equal(t, want[0], public(net.ParseIP(ip)), "public relay, peer %s", ip)
		assert.Equal(t, want[1], local(net.ParseIP(ip)), "loopback relay, peer %s", ip)
	}
}

// TestTURNRelayFiltersSilently: a relayed socket neither sends to nor
// takes packets from a peer the relay may not reach, and says nothing of
// it (the permission was granted: a refused one makes a client retry it,
// holding its ICE checks back).
func TestTURNRelayFiltersSilently(t *testing.T) {
	relay, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer relay.Close()
	fc := &filteredConn{PacketConn: relay, allowed: func(ip net.IP) bool { return !ip.Equal(net.IPv4(127, 0, 0, 2)) }}
	peer, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer peer.Close()
	n, err := fc.WriteTo([]byte("x"), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 9})
	assert.NoError(t, err, "dropped, not refused")
	assert.Equal(t, 1, n)
	_, err = fc.WriteTo([]byte("hello"), peer.LocalAddr())
	require.NoError(t, err)
	buf := make([]byte, 16)
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(5*time.Second)))
	n, _, err = peer.ReadFrom(buf)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(buf[:n]))
	assert.True(t, permitted(nil, net.ParseIP("192.168.1.9")), "private peers are permitted, then filtered")
	assert.False(t, permitted(nil, net.ParseIP("224.0.0.1")))
}

// stunBinding sends a STUN binding request from a new socket to addr and
// returns the mapped address of the answer, and the socket's own.
func stunBinding(t *testing.T, addr net.Addr) (mapped, local *net.UDPAddr) {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer c.Close()
	req, err := stun.Build(stun.TransactionID, stun.BindingRequest, stun.Fingerprint)
	require.NoError(t, err)
	_, err = c.WriteTo(req.Raw, addr)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	buf := make([]byte, 1500)
	n, _, err := c.ReadFrom(buf)
	require.NoError(t, err)
	resp := &stun.Message{Raw: buf[:n]}
	require.NoError(t, resp.Decode())
	assert.Equal(t, stun.BindingSuccess, resp.Type)
	assert.Equal(t, req.TransactionID, resp.TransactionID)
	var xor stun.XORMappedAddress
	require.NoError(t, xor.GetFrom(resp))
	return &net.UDPAddr{IP: xor.IP, Port: xor.Port}, c.LocalAddr().(*net.UDPAddr)
}

// TestSTUNResponder: the server's own STUN responder tells a player the
// address it came from, and its URL names the host the player connected
// to; garbage gets no answer and stops nothing.
func TestSTUNResponder(t *testing.T) {
	tr, err := StartTURN(TURNConfig{STUNAddr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	defer tr.Close()
	junk, err := net.Dial("udp4", tr.STUNAddr().String())
	require.NoError(t, err)
	_, _ = junk.Write([]byte("not stun"))
	_ = junk.Close()
	mapped, local := stunBinding(t, tr.STUNAddr())
	assert.Equal(t, local.String(), mapped.String())

	port := strconv.Itoa(tr.STUNAddr().(*net.UDPAddr).Port)
	ice, refused := tr.ICEServersFor("u1", ICEClient{Host: "play.example.com:8787", Remote: netip.MustParseAddr("198.51.100.7")})
	assert.False(t, refused)
	require.Len(t, ice, 1)
	assert.Equal(t, []string{"stun:play.example.com:" + port}, ice[0].URLs, "the host the player connected to")
	ice = tr.ICEServers("u1")
	require.Len(t, ice, 1)
	assert.Equal(t, []string{"stun:127.0.0.1:" + port}, ice[0].URLs, "no host known: the listen address")
}

// TestICEServersReachable: a loopback or private address is never handed
// to a player who came from elsewhere (it could not reach it: the bug
// where "-turn-addr :3478" handed every player 127.0.0.1); one on the same
// network gets it; -public-addr names the server for everyone.
func TestICEServersReachable(t *testing.T) {
	var log logBuf
	tr, err := StartTURN(TURNConfig{STUNAddr: "127.0.0.1:0", Addr: "127.0.0.1:0"}, slog.New(slog.NewTextHandler(&log, nil)))
	require.NoError(t, err)
	defer tr.Close()
	far := netip.MustParseAddr("198.51.100.7")
	near := netip.MustParseAddr("192.168.1.20")
	ice, refused := tr.ICEServersFor("u1", ICEClient{Host: "192.168.1.2:8787", Remote: far})
	assert.True(t, refused, "a private host to a player from elsewhere")
	assert.Empty(t, ice)
	assert.Contains(t, log.String(), "set -public-addr")
	ice, refused = tr.ICEServersFor("u1", ICEClient{Host: "192.168.1.2:8787", Remote: near})
	assert.False(t, refused)
	require.Len(t, ice, 2)
	assert.True(t, strings.HasPrefix(ice[0].URLs[0], "stun:192.168.1.2:"), ice[0].URLs[0])
	assert.True(t, strings.HasPrefix(ice[1].URLs[0], "turn:192.168.1.2:"), ice[1].URLs[0])
	ice, refused = tr.ICEServersFor("u1", ICEClient{Host: "203.0.113.9:8787", Remote: far})
	assert.True(t, refused, "the relay's own address (loopback here) is out of a far player's reach")
	require.Len(t, ice, 1, "STUN still")
	assert.True(t, strings.HasPrefix(ice[0].URLs[0], "stun:203.0.113.9:"), ice[0].URLs[0])

	pub, err := StartTURN(TURNConfig{STUNAddr: "127.0.0.1:0", PublicHost: "play.example.com"}, nil)
	require.NoError(t, err)
	defer pub.Close()
	ice, refused = pub.ICEServersFor("u1", ICEClient{Host: "10.0.0.5:8787", Remote: far})
	assert.False(t, refused)
	require.Len(t, ice, 1)
	assert.True(t, strings.HasPrefix(ice[0].URLs[0], "stun:play.example.com:"), ice[0].URLs[0])
}

// TestTURNRelayPorts: the relay allocates its relayed sockets from the
// configured range.
func TestTURNRelayPorts(t *testing.T) {
	_, err := StartTURN(TURNConfig{Addr: "127.0.0.1:0", RelayPorts: [2]uint16{5000, 4000}}, nil)
	assert.ErrorIs(t, err, ErrTURNConfig)
	_, err = StartTURN(TURNConfig{Addr: "127.0.0.1:0", PublicHost: "a b"}, nil)
	assert.ErrorIs(t, err, ErrTURNConfig)
	tr, err := StartTURN(TURNConfig{Addr: "127.0.0.1:0", RelayPorts: [2]uint16{41000, 41009}}, nil)
	require.NoError(t, err)
	defer tr.Close()
	ice := tr.ICEServers("u1")
	require.Len(t, ice, 2)
	client, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer client.Close()
	tc, err := turn.NewClient(&turn.ClientConfig{STUNServerAddr: tr.Addr().String(), TURNServerAddr: tr.Addr().String(),
		Conn: client, Username: ice[1].Username, Password: ice[1].Credential, Realm: DefaultTURNRealm})
	require.NoError(t, err)
	defer tc.Close()
	require.NoError(t, tc.Listen())
	relayed, err := tc.Allocate()
	require.NoError(t, err)
	defer relayed.Close()
	port := relayed.LocalAddr().(*net.UDPAddr).Port
	assert.GreaterOrEqual(t, port, 41000)
	assert.LessOrEqual(t, port, 41009)
}

// logBuf is a concurrency-safe log sink.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
