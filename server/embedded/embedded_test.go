package embedded

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestHostJoinStop hosts a server, creates a room and joins it by code
// from a second client, then stops: the clients are told the server went
// away, the port is free at once and every goroutine ends.
func TestHostJoinStop(t *testing.T) {
	s, err := Start(Config{Port: AnyPort, Host: "127.0.0.1"})
	require.NoError(t, err)
	assert.True(t, s.Running())
	assert.Equal(t, "ws://127.0.0.1:"+strconv.Itoa(s.Port())+"/ws", s.LocalURL())

	opts := &serverlink.Options{NoReconnect: true}
	a, err := serverlink.Dial(ctxT(t), s.LocalURL(), opts)
	require.NoError(t, err)
	joined, err := a.Create(ctxT(t), nil)
	require.NoError(t, err)
	// Two players from one address, as on a LAN behind one router: the
	// per-address limits are off.
	b, err := serverlink.Dial(ctxT(t), s.LocalURL(), opts)
	require.NoError(t, err)
	_, err = b.Join(ctxT(t), joined.Code)
	require.NoError(t, err)

	// The datagram path on the same port number over UDP carries states.
	require.NotNil(t, a.Welcome().Datagram)
	assert.Equal(t, s.Port(), a.Welcome().Datagram.Port)
	assert.Eventually(t, func() bool { return a.DatagramUp() && b.DatagramUp() }, 5*time.Second, 5*time.Millisecond)

	s.Stop()
	assert.False(t, s.Running())
	// The port is free as soon as Stop returns, TCP and UDP: hosting
	// again works.
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	u, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
	require.NoError(t, err)
	require.NoError(t, u.Close())
	require.True(t, s.Wait(5*time.Second), "shutdown did not finish")
	s.Stop() // repeat: no effect

	for _, c := range []*serverlink.Conn{a, b} {
		assert.Eventually(t, func() bool {
			for _, e := range c.PollEvents(nil) {
				if e.Kind == serverlink.EventDisconnected {
					return true
				}
			}
			return false
		}, 5*time.Second, 10*time.Millisecond, "client not told the server stopped")
		_ = c.Close(ctxT(t))
	}
}

func TestNoDatagrams(t *testing.T) {
	s, err := Start(Config{Port: AnyPort, Host: "127.0.0.1", NoDatagrams: true})
	require.NoError(t, err)
	defer func() { s.Stop(); s.Wait(5 * time.Second) }()
	c, err := serverlink.Dial(ctxT(t), s.LocalURL(), &serverlink.Options{NoReconnect: true})
	require.NoError(t, err)
	defer c.Close(ctxT(t))
	assert.Nil(t, c.Welcome().Datagram, "none offered")
	u, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
	require.NoError(t, err, "the UDP port was never taken")
	require.NoError(t, u.Close())
}

func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(Config{Port: port, Host: "127.0.0.1"})
	require.ErrorIs(t, err, ErrPortInUse)
	require.ErrorIs(t, err, ErrListen)
	assert.Contains(t, err.Error(), strconv.Itoa(port))

	_, err = Start(Config{Port: 70000})
	require.ErrorIs(t, err, ErrListen)
	assert.NotErrorIs(t, err, ErrPortInUse)
}

func TestHealthOnEveryInterface(t *testing.T) {
	s, err := Start(Config{Port: AnyPort}) // 0.0.0.0
	require.NoError(t, err)
	defer func() { s.Stop(); s.Wait(5 * time.Second) }()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := hc.Get("http://127.0.0.1:" + strconv.Itoa(s.Port()) + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, s.LANURL(), ":"+strconv.Itoa(s.Port())+"/ws")
}

func TestPickIP(t *testing.T) {
	nw := func(s string) net.Addr {
		ip, n, err := net.ParseCIDR(s)
		require.NoError(t, err)
		n.IP = ip
		return n
	}
	assert.Equal(t, "127.0.0.1", pickIP(nil))
	assert.Equal(t, "127.0.0.1", pickIP([]net.Addr{nw("127.0.0.1/8"), nw("::1/128"), nw("169.254.3.4/16")}))
	assert.Equal(t, "192.168.1.20", pickIP([]net.Addr{nw("127.0.0.1/8"), nw("fe80::1/64"), nw("192.168.1.20/24"), nw("10.0.0.2/8")}))
	assert.Equal(t, "10.1.2.3", pickIP([]net.Addr{&net.IPAddr{IP: net.ParseIP("10.1.2.3")}}))
	ip := net.ParseIP(LANIP())
	require.NotNil(t, ip)
	assert.NotNil(t, ip.To4())
}

// TestMaxPlayers: a game of two hosts rooms of two (host_local's
// max_players): the third player is refused as room_full.
func TestMaxPlayers(t *testing.T) {
	s, err := Start(Config{Port: AnyPort, Host: "127.0.0.1", MaxPlayers: 2})
	require.NoError(t, err)
	defer func() { s.Stop(); s.Wait(5 * time.Second) }()
	opts := &serverlink.Options{NoReconnect: true}
	var conns []*serverlink.Conn
	for range 3 {
		c, err := serverlink.Dial(ctxT(t), s.LocalURL(), opts)
		require.NoError(t, err)
		conns = append(conns, c)
		defer c.Close(ctxT(t))
	}
	joined, err := conns[0].Create(ctxT(t), nil)
	require.NoError(t, err)
	assert.Equal(t, 2, joined.Room.Settings.MaxPlayers)
	_, err = conns[1].Join(ctxT(t), joined.Code)
	require.NoError(t, err)
	_, err = conns[2].Join(ctxT(t), joined.Code)
	assert.Equal(t, protocol.CodeRoomFull, protocol.CodeOf(err), "%v", err)
}
