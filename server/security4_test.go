package server

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pion/logging"
	"github.com/pion/stun/v4"
	"github.com/pion/turn/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// Attacks of issue "Security, round four" on a running server.

// turnAllocation is one TURN client with its allocation.
type turnAllocation struct {
	c     *turn.Client
	relay net.PacketConn
}

func (a *turnAllocation) close() {
	if a.relay != nil {
		_ = a.relay.Close()
	}
	a.c.Close()
}

// allocate makes one allocation on the relay at server with ice's TURN
// credentials, from its own UDP socket on local address ip.
func allocate(t *testing.T, server net.Addr, ice []protocol.ICEServer, ip string) (*turnAllocation, error) {
	t.Helper()
	require.Len(t, ice, 2)
	conn, err := net.ListenPacket("udp4", ip+":0")
	require.NoError(t, err)
	lf := &logging.DefaultLoggerFactory{DefaultLogLevel: logging.LogLevelDisabled}
	c, err := turn.NewClient(&turn.ClientConfig{TURNServerAddr: server.String(), STUNServerAddr: server.String(),
		Username: ice[1].Username, Password: ice[1].Credential, Realm: DefaultTURNRealm, Conn: conn, LoggerFactory: lf,
		RTO: 50 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, c.Listen())
	a := &turnAllocation{c: c}
	t.Cleanup(func() { a.close(); _ = conn.Close() })
	a.relay, err = c.Allocate()
	return a, err
}

// TestTURNAllocationFlood replays item 1: one hello's TURN credentials
// made 19,983 allocations from one address in 5.4 s, until the server ran
// out of file descriptors. Here 60 allocations with one credential, from
// one address, then another credential's from the same address.
func TestTURNAllocationFlood(t *testing.T) {
	tr, err := StartTURN(TURNConfig{Addr: "127.0.0.1:0", AllocationsPerAddr: 40}, nil)
	require.NoError(t, err)
	defer tr.Close()
	ice := tr.ICEServers("u1")
	made := 0
	for range 60 {
		if _, err := allocate(t, tr.Addr(), ice, "127.0.0.1"); err == nil {
			made++
		}
	}
	t.Logf("allocations made with one credential from one address: %d of 60", made)
	assert.Equal(t, DefaultTURNAllocationsPerUser, made, "a quota per credential")
	other := 0
	for range 20 {
		if _, err := allocate(t, tr.Addr(), tr.ICEServers("u2"), "127.0.0.1"); err == nil {
			other++
		}
	}
	t.Logf("then with another credential from the same address: %d of 20", other)
	assert.Equal(t, 40-DefaultTURNAllocationsPerUser, other, "and per address")
	assert.Equal(t, 40, tr.Allocations())
}

// stunDo sends m from conn to server and returns the answer.
func stunDo(t *testing.T, conn net.PacketConn, server net.Addr, m *stun.Message) *stun.Message {
	t.Helper()
	_, err := conn.WriteTo(m.Raw, server)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(waitFor)))
	buf := make([]byte, 1500)
	n, _, err := conn.ReadFrom(buf)
	require.NoError(t, err)
	res := &stun.Message{Raw: append([]byte(nil), buf[:n]...)}
	require.NoError(t, res.Decode())
	return res
}

// rawAllocation is an allocation made by hand, as an attacker's client
// would: asking for any lifetime, refreshing only when told to.
type rawAllocation struct {
	conn              net.PacketConn
	server            net.Addr
	user, pass, realm string
	nonce             stun.Nonce
}

// rawAllocate asks server for an allocation of lifetime with ice's TURN
// credentials; it returns the answer's class and error code (0 for none).
func rawAllocate(t *testing.T, server net.Addr, ice []protocol.ICEServer, lifetime time.Duration) (*rawAllocation, stun.MessageClass, stun.ErrorCode) {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	a := &rawAllocation{conn: conn, server: server, user: ice[1].Username, pass: ice[1].Credential, realm: DefaultTURNRealm}
	udp := stun.RawAttribute{Type: stun.AttrRequestedTransport, Value: []byte{17, 0, 0, 0}}
	res := stunDo(t, conn, server, stun.MustBuild(stun.TransactionID, stun.NewType(stun.MethodAllocate, stun.ClassRequest), udp))
	require.NoError(t, a.nonce.GetFrom(res), "a 401 with a nonce")
	res = stunDo(t, conn, server, stun.MustBuild(stun.TransactionID, stun.NewType(stun.MethodAllocate, stun.ClassRequest), udp,
		lifetimeAttr(lifetime), stun.NewUsername(a.user), stun.NewRealm(a.realm), a.nonce,
		stun.NewLongTermIntegrity(a.user, a.realm, a.pass), stun.Fingerprint))
	var code stun.ErrorCodeAttribute
	_ = code.GetFrom(res)
	return a, res.Type.Class, code.Code
}

// refresh asks for lifetime more.
func (a *rawAllocation) refresh(t *testing.T, lifetime time.Duration) stun.MessageClass {
	t.Helper()
	res := stunDo(t, a.conn, a.server, stun.MustBuild(stun.TransactionID, stun.NewType(stun.MethodRefresh, stun.ClassRequest),
		lifetimeAttr(lifetime), stun.NewUsername(a.user), stun.NewRealm(a.realm), a.nonce,
		stun.NewLongTermIntegrity(a.user, a.realm, a.pass), stun.Fingerprint))
	return res.Type.Class
}

func lifetimeAttr(d time.Duration) stun.RawAttribute {
	v := make([]byte, 4)
	binary.BigEndian.PutUint32(v, uint32(d/time.Second))
	return stun.RawAttribute{Type: stun.AttrLifetime, Value: v}
}

// TestTURNAllocationLifetime: an allocation that asked for 3,600 s lives
// AllocationLifetime unless refreshed, and a refresh gives it that again.
func TestTURNAllocationLifetime(t *testing.T) {
	tr, err := StartTURN(TURNConfig{Addr: "127.0.0.1:0", AllocationLifetime: 3 * time.Second}, nil)
	require.NoError(t, err)
	defer tr.Close()
	lazy, class, _ := rawAllocate(t, tr.Addr(), tr.ICEServers("u1"), time.Hour)
	require.Equal(t, stun.ClassSuccessResponse, class)
	kept, class, _ := rawAllocate(t, tr.Addr(), tr.ICEServers("u2"), time.Hour)
	require.Equal(t, stun.ClassSuccessResponse, class)
	require.Equal(t, 2, tr.Allocations())
	start := time.Now()
	for tr.Allocations() == 2 && time.Since(start) < waitFor {
		require.Equal(t, stun.ClassSuccessResponse, kept.refresh(t, time.Hour))
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("asked for 1 h: the allocation not refreshed closed after %v; the refreshed one lives", time.Since(start).Round(100*time.Millisecond))
	assert.Equal(t, 1, tr.Allocations(), "the refreshed one lives")
	assert.Equal(t, stun.ClassSuccessResponse, kept.refresh(t, time.Hour))
	_ = lazy // gone: the relay does not answer a refresh of no allocation
}

// TestTURNServesSeatedPlayers: with the relay given to the server, a
// player's credentials allocate only while it holds a seat, its
// allocations close when it leaves, and relay sockets count in
// MaxSockets.
func TestTURNServesSeatedPlayers(t *testing.T) {
	tr, err := StartTURN(TURNConfig{Addr: "127.0.0.1:0", MaxAllocations: -1}, nil)
	require.NoError(t, err)
	defer tr.Close()
	e := newEnvOpts(t, func(c *Config) { c.MaxSockets, c.ConnReserve = 20, -1 }, envOpts{turn: tr})
	r := e.raw()
	w := r.hello()
	assert.Empty(t, turnOf(w.ICEServers), "the welcome hands out no TURN credentials")
	// Credentials for the player as a seat hands them out (a former
	// seat's, kept): refused while it holds none.
	_, err = allocate(t, tr.Addr(), tr.ICEServers(w.User), "127.0.0.1")
	t.Logf("before taking a seat: %v", err)
	assert.Error(t, err, "credentials of a player without a seat")

	j, ok := r.request(&protocol.Create{}).(*protocol.Joined)
	require.True(t, ok)
	require.Len(t, j.ICEServers, 2, "the seat hands out the relay")
	made := 0
	for range 25 {
		if _, err := allocate(t, tr.Addr(), j.ICEServers, "127.0.0.1"); err == nil {
			made++
		}
	}
	e.s.socks.mu.Lock()
	n, relays := e.s.socks.n, e.s.socks.relays
	e.s.socks.mu.Unlock()
	t.Logf("seated: %d allocations; sockets %d of 20, %d of them relays", made, n, relays)
	assert.Equal(t, made, relays, "every relay socket counts in MaxSockets")
	assert.Equal(t, 20, n, "up to MaxSockets")
	assert.Equal(t, 19, made, "beside the player's own connection")

	r.send(protocol.MustMarshal(&protocol.Leave{}))
	eventually(t, "the allocations close when the player leaves", func() (int, bool) {
		return tr.Allocations(), tr.Allocations() == 0
	})
	_, err = allocate(t, tr.Addr(), j.ICEServers, "127.0.0.1")
	assert.Error(t, err, "and its credentials are refused")
	assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="turn_unseated"}`)
}

// TestKickBansThePrefix replays item 6: a kicked player rejoined at once
// as a new identity from another address of its /24, and a player kicked
// from the host's own address rejoined as a new identity from it.
func TestKickBansThePrefix(t *testing.T) {
	e := newEnv(t, nil)
	host := e.rawFrom("127.0.0.2")
	host.hello()
	code := host.request(&protocol.Create{}).(*protocol.Joined).Code
	friend := e.rawFrom("127.0.0.2") // on the host's address, a new identity minted before any kick
	friend.hello()

	victim := e.rawFrom("127.0.1.3")
	victim.hello()
	j := victim.request(&protocol.Join{Code: code}).(*protocol.Joined)
	host.send(protocol.MustMarshal(&protocol.Kick{Slot: j.Slot}))
	closeCode, _ := victim.closed()
	require.Equal(t, protocol.CodeKicked, closeCode)

	again := e.rawFrom("127.0.1.9") // the same /24
	again.hello()
	m := again.request(&protocol.Join{Code: code})
	t.Logf("a new identity from the kicked player's /24: %T %v", m, m)
	if assert.IsType(t, &protocol.Error{}, m, "refused") {
		assert.Equal(t, protocol.CodeKicked, m.(*protocol.Error).Code)
	}
	other := e.rawFrom("127.0.2.4")
	other.hello()
	assert.IsType(t, &protocol.Joined{}, other.request(&protocol.Join{Code: code}), "other networks still join")

	// A player on the host's own address, kicked, comes back as a new identity.
	mate := e.rawFrom("127.0.0.2")
	mate.hello()
	mj := mate.request(&protocol.Join{Code: code}).(*protocol.Joined)
	host.send(protocol.MustMarshal(&protocol.Kick{Slot: mj.Slot}))
	closeCode, _ = mate.closed()
	require.Equal(t, protocol.CodeKicked, closeCode)
	fresh := e.rawFrom("127.0.0.2")
	fresh.hello()
	m = fresh.request(&protocol.Join{Code: code})
	t.Logf("a new identity from the host's own address after a kick there: %T %v", m, m)
	if assert.IsType(t, &protocol.Error{}, m, "refused") {
		assert.Equal(t, protocol.CodeKicked, m.(*protocol.Error).Code)
	}
	assert.IsType(t, &protocol.Joined{}, friend.request(&protocol.Join{Code: code}),
		"an identity from before the kick still joins from the host's address")
}

// TestLobbyFloodFromManyNetworks replays item 9: 125 addresses over 32
// /24s took all 800 lobby slots and honest creates got server_full. Here
// 4 networks of 2 addresses each fill 32 lobby slots.
func TestLobbyFloodFromManyNetworks(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxRooms = 40; c.Room.SeatHold = time.Minute })
	made := 0
	for n := range 4 {
		for a := 1; a <= 2; a++ {
			for range 8 {
				r := e.rawFrom(fmt.Sprintf("127.0.%d.%d", 10+n, a))
				r.hello()
				if _, ok := r.request(&protocol.Create{}).(*protocol.Joined); ok {
					made++
				}
			}
		}
	}
	honest := e.rawFrom("127.0.99.1")
	honest.hello()
	m := honest.request(&protocol.Create{})
	t.Logf("rooms the flood made: %d; an honest create from another network: %T %v", made, m, m)
	assert.IsType(t, &protocol.Joined{}, m)
}

// TestReadyLobbyExpires replays item 9's second finding: a lobby with a
// player ready skipped the idle-lobby expiry (100 of 100 ready rooms stayed
// open past 3x the timeout). The room is aged by hand: no wall-clock wait.
func TestReadyLobbyExpires(t *testing.T) {
	e := newEnv(t, nil)
	keen := e.rawFrom("127.0.0.3")
	keen.hello()
	code := keen.request(&protocol.Create{}).(*protocol.Joined).Code
	keen.send(protocol.MustMarshal(&protocol.Ready{Ready: true}))
	h := e.s.lookupRoom(code)
	eventually(t, "ready", func() (bool, bool) {
		h.mu.Lock()
		defer h.mu.Unlock()
		st := h.r.Snapshot()
		ok := len(st.Players) == 1 && st.Players[0].Ready
		return ok, ok
	})
	h.mu.Lock()
	h.busyAt -= 3 * e.s.cfg.LobbyTimeout // in the lobby, ready, for 3x the timeout
	h.mu.Unlock()
	e.s.expireLobbies()
	t.Logf("a ready lobby 3x past the lobby timeout: rooms open %d", e.s.Health().Rooms)
	assert.Zero(t, e.s.Health().Rooms, "closed")
}

// TestConnectionsPerPrefix replays item 10's first finding: 100 addresses
// held 2,000 connections; one network's addresses may now hold at most
// MaxConnsPerPrefix together (8 addresses' worth by default). Here 10
// addresses of one /24, 4 connections each allowed.
func TestConnectionsPerPrefix(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxConnsPerAddr = 4 })
	held := 0
	for a := 1; a <= 10; a++ {
		for range 4 {
			if r, _, err := e.dialFrom(fmt.Sprintf("127.0.7.%d", a)); err == nil {
				r.hello()
				held++
			}
		}
	}
	t.Logf("connections held by 10 addresses of one /24: %d", held)
	assert.Equal(t, 8*4, held)
	e.rawFrom("127.0.8.1").hello() // another network is not affected
}

// fakeConn is an accepted connection from addr, for admitSocket.
type fakeConn struct {
	net.Conn
	addr *net.TCPAddr
}

func (c fakeConn) RemoteAddr() net.Addr { return c.addr }
func (c fakeConn) Close() error         { return nil }

// TestCapsLeaveRoomForFew replays item 10's second finding: addresses
// filling -max-sockets reset every honest join and even /healthz. Here 3
// addresses open 10 WebSockets each (all of MaxConns), then 4 idle sockets
// each (past the rest of MaxSockets).
func TestCapsLeaveRoomForFew(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxSockets, c.MaxConns = 40, 30 })
	ws := 0
	for a := range 3 {
		for range 10 {
			if r, _, err := e.dialFrom(fmt.Sprintf("127.0.%d.1", 20+a)); err == nil {
				r.hello()
				ws++
			}
		}
	}
	idle := 0
	for a := range 3 {
		for range 4 {
			c := e.s.admitSocket(fakeConn{addr: &net.TCPAddr{IP: net.ParseIP(fmt.Sprintf("127.0.%d.1", 20+a)), Port: 1}})
			if c != nil {
				idle++
				t.Cleanup(func() { _ = c.Close() })
			}
		}
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.50.1")}}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: waitFor}
	resp, err := hc.Get(e.base + "/healthz")
	var health string
	if err == nil {
		health = resp.Status
		_ = resp.Body.Close()
	} else {
		health = err.Error()
	}
	_, wsResp, wsErr := e.dialFrom("127.0.50.2")
	join := "joined"
	if wsErr != nil {
		join = wsErr.Error()
		if wsResp != nil {
			join = wsResp.Status
		}
	}
	t.Logf("3 addresses hold %d WebSockets and %d idle sockets; /healthz from a fresh address: %s; a WebSocket from another: %s",
		ws, idle, health, join)
	assert.True(t, err == nil && strings.HasPrefix(health, "200"), "health reachable")
	assert.NoError(t, wsErr, "an honest join gets in")
}

func TestKickNetOf(t *testing.T) {
	assert.Equal(t, "203.0.113.0/24", kickNetOf("203.0.113.77"))
	assert.Equal(t, "2001:db8:1:200::/56", kickNetOf(addrKeyOf(netip.MustParseAddr("2001:db8:1:2ff:3::4"))))
	assert.Equal(t, "pipe", kickNetOf("pipe"))
}
