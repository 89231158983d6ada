package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// faultyStore wraps a Storage: SaveResults fails while failResults > 0
// (counting down), user writes block while gate is open-ended, and every
// user write is counted.
type faultyStore struct {
	Storage
	failResults atomic.Int32
	gate        chan struct{} // user writes wait for it to close; nil: no wait
	userWrites  atomic.Int32
	resultTries atomic.Int32
}

func (f *faultyStore) RenameUser(ctx context.Context, user, name string, now time.Time) error {
	f.userWrites.Add(1)
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return f.Storage.RenameUser(ctx, user, name, now)
}

func (f *faultyStore) SaveResults(ctx context.Context, res *protocol.Results, now time.Time) error {
	f.resultTries.Add(1)
	if f.failResults.Add(-1) >= 0 {
		return errors.New("disk full")
	}
	return f.Storage.SaveResults(ctx, res, now)
}

// Attack: a flood of writes fills the shared storage queue; a real
// round's results must still be stored (their own path, retried).
func TestResultsNeverDropped(t *testing.T) {
	logs := &syncBuffer{}
	fs := &faultyStore{gate: make(chan struct{})}
	fs.failResults.Store(3)
	e := newEnvOpts(t, nil, envOpts{wrap: func(s Storage) Storage { fs.Storage = s; return fs },
		log: slog.New(slog.NewTextHandler(logs, nil))})
	defer close(fs.gate)

	// The shared queue is full: its writer is stuck and 5000 more wait.
	for range 5000 {
		e.s.save("rename", func(ctx context.Context, st Storage) error {
			return st.RenameUser(ctx, "u", "n", time.Now())
		})
	}
	ann := e.dial("Ann", nil)
	code := playing(t, ann)
	require.NoError(t, ann.Send(&protocol.Finish{Score: 3}))
	waitMsg[*protocol.Results](ann, "results", nil)

	saved := eventually(t, "results stored despite a full queue and three failures", func() ([]protocol.Results, bool) {
		r, err := e.store.Results(context.Background(), code, 5)
		return r, err == nil && len(r) == 1
	})
	assert.Equal(t, ann.User(), saved[0].Players[0].User)
	assert.EqualValues(t, 4, fs.resultTries.Load(), "three failures, then stored")
	name, ok, err := e.store.UserName(context.Background(), ann.User())
	require.NoError(t, err)
	assert.True(t, ok, "the user row is written with the first result")
	assert.Equal(t, "Ann", name)

	// The dropped writes are logged once, with a count, not 4000 times.
	assert.Equal(t, 1, strings.Count(logs.String(), "write dropped"), logs.String())
	_, body := e.get("/metrics")
	assert.Contains(t, body, "nearzero_storage_dropped_total")
	assert.Contains(t, body, "nearzero_results_retries_total 3")
}

// Attack: tokenless hellos each minted an identity and queued a user row.
func TestTokenlessHellosWriteNothingAndAreLimited(t *testing.T) {
	fs := &faultyStore{}
	e := newEnvOpts(t, func(c *Config) { c.NewIdentityBurst = 5; c.NewIdentityRate = 0.001 },
		envOpts{wrap: func(s Storage) Storage { fs.Storage = s; return fs }})
	var first *protocol.Welcome
	var raws []*raw
	for i := range 5 {
		r := e.raw()
		raws = append(raws, r)
		w := r.hello()
		require.NotEmpty(t, w.User, "hello %d", i)
		if first == nil {
			first = w
		}
	}
	r := e.raw()
	r.send(protocol.MustMarshal(&protocol.Hello{Rules: wire.RulesVersion}))
	code, errs := r.closed()
	assert.Equal(t, protocol.CodeRateLimited, code, "the sixth new identity from one address is refused")
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[0].Message, "token")

	// A returning player (with a token) is not limited.
	r = e.raw()
	r.send(protocol.MustMarshal(&protocol.Hello{Rules: wire.RulesVersion, Token: first.Token}))
	w, ok := r.next().(*protocol.Welcome)
	require.True(t, ok)
	assert.Equal(t, first.User, w.User)

	_, body := e.get("/metrics")
	assert.Contains(t, body, `nearzero_limited_total{limit="new_identities"} 1`)

	// Shutdown runs every queued write: none was queued for a hello.
	for _, r := range append(raws, r) {
		_ = r.ws.CloseNow()
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, e.s.Shutdown(ctx))
	assert.Zero(t, fs.userWrites.Load(), "no user rows for hellos")
	_, ok, err := e.store.UserName(context.Background(), first.User)
	require.NoError(t, err)
	assert.False(t, ok)
}

// dialFrom opens a bare WebSocket from local address ip (any 127.x.y.z
// works on loopback), so tests can be several client addresses.
func (e *env) dialFrom(ip string) (*raw, *http.Response, error) {
	e.t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	ws, resp, err := websocket.Dial(ctxT(e.t), e.url, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(1 << 20)
	e.t.Cleanup(func() { _ = ws.CloseNow() })
	return &raw{t: e.t, ws: ws}, resp, nil
}

func (e *env) rawFrom(ip string) *raw {
	e.t.Helper()
	r, _, err := e.dialFrom(ip)
	require.NoError(e.t, err)
	return r
}

// request sends m and returns the next message that is not a room update.
func (r *raw) request(m protocol.Message) protocol.Message {
	r.t.Helper()
	r.send(protocol.MustMarshal(m))
	for {
		switch got := r.next().(type) {
		case *protocol.RoomState, *protocol.Notice:
		default:
			return got
		}
	}
}

// Attack: create a room, drop the connection, repeat: one address took
// every room of the server.
func TestRoomsPerAddress(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxRoomsPerAddr = 3; c.Room.SeatHold = time.Minute })
	for i := range 3 {
		r := e.rawFrom("127.0.0.1")
		r.hello()
		_, ok := r.request(&protocol.Create{}).(*protocol.Joined)
		require.True(t, ok, "create %d", i)
		_ = r.ws.CloseNow() // the seat is held; the room stays open
	}
	r := e.rawFrom("127.0.0.1")
	r.hello()
	m := r.request(&protocol.Create{})
	require.IsType(t, &protocol.Error{}, m)
	assert.Equal(t, protocol.CodeRateLimited, m.(*protocol.Error).Code, "a fourth open room from one address")
	assert.Equal(t, 3, e.s.Health().Rooms)

	other := e.rawFrom("127.0.0.2")
	other.hello()
	assert.IsType(t, &protocol.Joined{}, other.request(&protocol.Create{}), "other addresses still create")

	// Once one of its rooms closes, the address may create again.
	var code string
	e.s.mu.Lock()
	for c, h := range e.s.rooms {
		if h.addr == "127.0.0.1" {
			code = c
		}
	}
	e.s.mu.Unlock()
	h := e.s.lookupRoom(code)
	h.do(func(time.Duration) { h.r.Close(protocol.CodeGoingAway, "test") })
	assert.IsType(t, &protocol.Joined{}, r.request(&protocol.Create{}))
	assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="rooms_per_addr"} 1`)
}

func metricsBody(e *env) string {
	_, body := e.get("/metrics")
	return body
}

// Attack: one client opened 4000 idle connections.
func TestConnectionsPerAddress(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxConnsPerAddr = 3 })
	var rs []*raw
	for range 3 {
		rs = append(rs, e.rawFrom("127.0.0.1"))
	}
	_, resp, err := e.dialFrom("127.0.0.1")
	require.Error(t, err, "a fourth connection from one address")
	require.NotNil(t, resp)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	e.rawFrom("127.0.0.2").hello() // another address is not affected

	_ = rs[0].ws.CloseNow()
	eventually(t, "a closed connection frees its place", func() (error, bool) {
		r, _, err := e.dialFrom("127.0.0.1")
		if err == nil {
			r.hello()
		}
		return err, err == nil
	})
	assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="conns_per_addr"}`)
}

// Attack: idle connections stay open for ever. The silence is set, not
// slept: the silent connection's last message is set back by the
// time-out, so the janitor's next pass closes it, while the talker, whose
// last message is fresh, stays; nothing hangs on how soon a goroutine runs.
func TestSilentConnectionsClose(t *testing.T) {
	const timeout = time.Hour
	e := newEnv(t, func(c *Config) { c.IdleTimeout = timeout })
	silent, talker := e.rawFrom("127.0.0.2"), e.rawFrom("127.0.0.3")
	silent.hello()
	talker.hello()
	set := 0
	e.s.mu.Lock()
	for c := range e.s.conns {
		if c.addr == "127.0.0.2" {
			c.lastRead.Store(int64(e.s.now() - timeout - time.Millisecond))
			set++
		}
	}
	e.s.mu.Unlock()
	require.Equal(t, 1, set, "the silent connection")
	code, errs := silent.closed()
	assert.Equal(t, protocol.CodeTimeout, code)
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[0].Message, "no message")
	assert.IsType(t, &protocol.Pong{}, talker.request(&protocol.Ping{}), "the talker is kept")
	assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="idle"} 1`)
}

// Attack: WebSocket-level pings are answered by the library, outside any
// message budget. The flood is written by hand (coder/websocket's Ping
// waits for each pong), as fast as the socket takes it.
func TestPingFramesCountAgainstBudget(t *testing.T) {
	e := newEnv(t, nil)
	nc, err := net.Dial("tcp", e.s.Addr().String())
	require.NoError(t, err)
	defer nc.Close()
	_, err = fmt.Fprintf(nc, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", e.s.Addr())
	require.NoError(t, err)
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)

	// Client frames are masked; a zero mask key leaves the payload as is.
	frame := func(op byte, payload []byte) []byte {
		require.Less(t, len(payload), 126)
		return append([]byte{0x80 | op, 0x80 | byte(len(payload)), 0, 0, 0, 0}, payload...)
	}
	_, err = nc.Write(frame(0x2, protocol.MustMarshal(&protocol.Hello{Rules: wire.RulesVersion})))
	require.NoError(t, err)
	go func() {
		ping := frame(0x9, nil)
		for range 2000 {
			if _, err := nc.Write(ping); err != nil {
				return
			}
		}
	}()

	// Read server frames until the close frame; count the pongs.
	pongs := 0
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(waitFor)))
	for {
		var h [2]byte
		_, err := io.ReadFull(br, h[:])
		require.NoError(t, err, "no close frame")
		n := int(h[1] & 0x7f)
		if n == 126 {
			var l [2]byte
			_, err = io.ReadFull(br, l[:])
			require.NoError(t, err)
			n = int(binary.BigEndian.Uint16(l[:]))
		}
		body := make([]byte, n)
		_, err = io.ReadFull(br, body)
		require.NoError(t, err)
		switch h[0] & 0x0f {
		case 0xA:
			pongs++
		case 0x8:
			require.GreaterOrEqual(t, len(body), 2)
			assert.Equal(t, protocol.CodeRateLimited, protocol.Code(binary.BigEndian.Uint16(body)), string(body[2:]))
			assert.Less(t, pongs, 100, "pings past the control budget are not answered")
			assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="ping_frames"} 1`)
			return
		}
	}
}

// Attack: room codes guessed by joining (20/s per connection, 950/s with
// 50 connections) or by GET /join/CODE (27k/s, 200 vs 404).
func TestFailedJoinsLimitedPerAddress(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.JoinFailBurst = 5; c.JoinFailRate = 0.001 })
	host := e.rawFrom("127.0.0.2")
	host.hello()
	real := host.request(&protocol.Create{}).(*protocol.Joined).Code

	a, b := e.rawFrom("127.0.0.1"), e.rawFrom("127.0.0.1")
	a.hello()
	b.hello()
	guesses := []string{"ZZZZZZ", "ZZZZZY", "ZZZZZX", "ZZZZZW", "ZZZZZV"}
	for i, g := range guesses { // spread over two connections: the limit is per address
		r := []*raw{a, b}[i%2]
		m := r.request(&protocol.Join{Code: g})
		require.IsType(t, &protocol.Error{}, m)
		assert.Equal(t, protocol.CodeRoomNotFound, m.(*protocol.Error).Code)
	}
	for _, code := range []string{"ZZZZZU", real} {
		m := a.request(&protocol.Join{Code: code})
		require.IsType(t, &protocol.Error{}, m, code)
		assert.Equal(t, protocol.CodeRateLimited, m.(*protocol.Error).Code, "a guess and the real code get the same answer")
	}
	other := e.rawFrom("127.0.0.3")
	other.hello()
	assert.IsType(t, &protocol.Joined{}, other.request(&protocol.Join{Code: real}), "other addresses join")
	assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="join_failures"} 2`)
}

func TestInvitePageRevealsNothing(t *testing.T) {
	e := newEnv(t, nil)
	host := e.raw()
	host.hello()
	real := host.request(&protocol.Create{}).(*protocol.Joined).Code
	fake := "ZZZZZZ"
	if real == fake {
		fake = "ZZZZZY"
	}
	realStatus, realBody := e.get("/join/" + real)
	fakeStatus, fakeBody := e.get("/join/" + fake)
	assert.Equal(t, 200, realStatus)
	assert.Equal(t, realStatus, fakeStatus, "same status for open and unknown codes")
	assert.Equal(t, strings.ReplaceAll(realBody, real, "CODE"), strings.ReplaceAll(fakeBody, fake, "CODE"),
		"same page for open and unknown codes")
	assert.Contains(t, realBody, "nearzero://join/"+real, "the page hands the code to the game")
	status, _ := e.get("/join/not-a-code")
	assert.Equal(t, 404, status, "a malformed code reveals nothing about rooms")
}

// Attack: a player the host kicked rejoined at once under a fresh
// identity (a hello without a token).
func TestKickBansTheAddress(t *testing.T) {
	e := newEnv(t, nil)
	host := e.rawFrom("127.0.0.2")
	host.hello()
	code := host.request(&protocol.Create{}).(*protocol.Joined).Code
	friend := e.rawFrom("127.0.0.2") // an identity made before any kick
	friend.hello()
	mate := e.rawFrom("127.0.0.2") // on the host's network
	mate.hello()
	mj, ok := mate.request(&protocol.Join{Code: code}).(*protocol.Joined)
	require.True(t, ok)

	victim := e.rawFrom("127.0.0.3")
	victim.hello()
	j, ok := victim.request(&protocol.Join{Code: code}).(*protocol.Joined)
	require.True(t, ok, "the victim joins")
	host.send(protocol.MustMarshal(&protocol.Kick{Slot: j.Slot}))
	closeCode, _ := victim.closed()
	require.Equal(t, protocol.CodeKicked, closeCode)

	again := e.rawFrom("127.0.0.3")
	w := again.hello()
	require.NotEmpty(t, w.User, "a fresh identity")
	m := again.request(&protocol.Join{Code: code})
	require.IsType(t, &protocol.Error{}, m, "a new identity from the kicked address")
	assert.Equal(t, protocol.CodeKicked, m.(*protocol.Error).Code)

	other := e.rawFrom("127.0.1.4") // another /24: the victim's is banned too (TestKickBansThePrefix)
	other.hello()
	assert.IsType(t, &protocol.Joined{}, other.request(&protocol.Join{Code: code}), "other addresses still join")

	// A kick of a player on the host's own network bans that user, and the
	// identities made there after the kick, only.
	host.send(protocol.MustMarshal(&protocol.Kick{Slot: mj.Slot}))
	closeCode, _ = mate.closed()
	require.Equal(t, protocol.CodeKicked, closeCode)
	assert.IsType(t, &protocol.Joined{}, friend.request(&protocol.Join{Code: code}), "the host's address is not banned")
}

// Attack: 125 addresses x 8 rooms filled all 1000 rooms in 0.3 s; an
// honest create got server_full. Here 6 addresses of one /24 x 2 rooms
// against 12 rooms.
func TestRoomsPerPrefix(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.MaxRooms, c.MaxRoomsPerAddr, c.MaxRoomsPerPrefix, c.PlayingReserve = 12, 2, 4, -1
		c.Room.SeatHold = time.Minute
	})
	created := 0
	for i := range 6 {
		for range 2 {
			r := e.rawFrom(fmt.Sprintf("127.0.0.%d", i+1))
			r.hello()
			switch m := r.request(&protocol.Create{}).(type) {
			case *protocol.Joined:
				created++
			case *protocol.Error:
				assert.Equal(t, protocol.CodeRateLimited, m.Code)
			}
			_ = r.ws.CloseNow() // the seat is held; the room stays open
		}
	}
	assert.Equal(t, 4, created, "rooms from one /24")
	honest := e.rawFrom("127.0.1.1")
	honest.hello()
	m := honest.request(&protocol.Create{})
	if err, ok := m.(*protocol.Error); ok {
		t.Fatalf("an honest create from another network got %d %s", err.Code, err.Message)
	}
	assert.IsType(t, &protocol.Joined{}, m)
	assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="rooms_per_prefix"} 8`)
}

func TestPrefixKeyOf(t *testing.T) {
	assert.Equal(t, "203.0.113.0/24", prefixKeyOf("203.0.113.77"))
	assert.Equal(t, "2001:db8:1::/48", prefixKeyOf(addrKeyOf(netip.MustParseAddr("2001:db8:1:2:3::4"))))
	assert.Equal(t, "pipe", prefixKeyOf("pipe"))
}

// Lobbies may not take the share of rooms kept for rounds under way.
func TestLobbiesLeaveAShareForPlaying(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxRooms, c.PlayingReserve, c.Room.SeatHold = 5, 0.4, time.Minute })
	ann := e.dial("Ann", nil)
	j, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	for i := range 2 {
		r := e.rawFrom(fmt.Sprintf("127.0.0.%d", i+2))
		r.hello()
		require.IsType(t, &protocol.Joined{}, r.request(&protocol.Create{}), "lobby %d", i+2)
	}
	late := e.rawFrom("127.0.0.9")
	late.hello()
	m := late.request(&protocol.Create{})
	require.IsType(t, &protocol.Error{}, m, "a fourth lobby of 5 rooms with 40%% kept for play")
	assert.Equal(t, protocol.CodeServerFull, m.(*protocol.Error).Code)

	// Ann's room starts a round: it leaves the lobbies' share.
	require.NoError(t, ann.Send(&protocol.Loading{Progress: 1}))
	require.NoError(t, ann.Send(&protocol.Ready{Ready: true}))
	ann.waitRoom("ready", func(s protocol.RoomState) bool { return len(s.Players) == 1 && s.Players[0].Ready })
	require.NoError(t, ann.Send(&protocol.Start{}))
	ann.waitRoom("handshake", func(s protocol.RoomState) bool { return s.Code == j.Code && s.Phase != protocol.PhaseLobby })
	assert.IsType(t, &protocol.Joined{}, late.request(&protocol.Create{}))
	assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="lobbies"} 1`)
}

// Attack: rooms that nobody plays in held capacity for as long as their
// creators stayed connected; a player ready did not change that
// (TestReadyLobbyExpires).
func TestIdleLobbyCloses(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.LobbyTimeout = 300 * time.Millisecond })
	idle := e.rawFrom("127.0.0.2")
	idle.hello()
	require.IsType(t, &protocol.Joined{}, idle.request(&protocol.Create{}))
	code, errs := idle.closed()
	assert.Equal(t, protocol.CodeTimeout, code, "%v", errs)
	// The room leaves the directory just after its players are closed
	// (host.do retires it once the room's lock is released).
	eventually(t, "the idle lobby leaves the directory", func() (int, bool) {
		n := e.s.Health().Rooms
		return n, n == 0
	})
	assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="idle_lobby"} 1`)
}
