package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/room"
)

// raw is a bare WebSocket to the server, for sending what no client would.
type raw struct {
	t  *testing.T
	ws *websocket.Conn
}

func (e *env) raw() *raw {
	e.t.Helper()
	ws, _, err := websocket.Dial(ctxT(e.t), e.url, nil)
	require.NoError(e.t, err)
	ws.SetReadLimit(1 << 20)
	e.t.Cleanup(func() { _ = ws.CloseNow() })
	return &raw{t: e.t, ws: ws}
}

func (r *raw) send(b []byte) {
	r.t.Helper()
	require.NoError(r.t, r.ws.Write(ctxT(r.t), websocket.MessageBinary, b))
}

func (r *raw) hello() *protocol.Welcome {
	r.t.Helper()
	r.send(protocol.MustMarshal(&protocol.Hello{Rules: wire.RulesVersion}))
	return r.next().(*protocol.Welcome)
}

// next reads the next control message.
func (r *raw) next() protocol.Message {
	r.t.Helper()
	_, b, err := r.ws.Read(ctxT(r.t))
	require.NoError(r.t, err)
	m, err := protocol.Decode(b)
	require.NoError(r.t, err)
	return m
}

// closed reads until the connection ends and returns the close code and
// the Error messages seen on the way.
func (r *raw) closed() (protocol.Code, []*protocol.Error) {
	r.t.Helper()
	var errs []*protocol.Error
	for {
		_, b, err := r.ws.Read(ctxT(r.t))
		if err != nil {
			return protocol.Code(websocket.CloseStatus(err)), errs
		}
		if m, err := protocol.Decode(b); err == nil {
			if e, ok := m.(*protocol.Error); ok {
				errs = append(errs, e)
			}
		}
	}
}

func TestBadInputEndsConnection(t *testing.T) {
	otherVersion := protocol.MustMarshal(&protocol.Hello{Rules: wire.RulesVersion})
	otherVersion[1]++
	cases := []struct {
		name   string
		frames [][]byte
		close  protocol.Code
		errMsg protocol.Code // the Error message before the close; 0 for none
		metric string
	}{
		{"other protocol version", [][]byte{otherVersion}, protocol.CodeUpdateRequired, protocol.CodeUpdateRequired, `reason="version"`},
		{"other rules version", [][]byte{protocol.MustMarshal(&protocol.Hello{Rules: wire.RulesVersion + 1})},
			protocol.CodeUpdateRequired, protocol.CodeUpdateRequired, `reason="version"`},
		{"first message not hello", [][]byte{protocol.MustMarshal(&protocol.Join{Code: "ABCDEF"})},
			protocol.CodeBadFrame, protocol.CodeBadFrame, `reason="bad_hello"`},
		{"garbage", [][]byte{{0x00, 0xff, 0x13}}, protocol.CodeBadFrame, protocol.CodeBadFrame, `reason="bad_hello"`},
		{"truncated control", [][]byte{{0xC0, 1}}, protocol.CodeBadFrame, protocol.CodeBadFrame, `reason="bad_hello"`},
		{"bad token", [][]byte{protocol.MustMarshal(&protocol.Hello{Rules: wire.RulesVersion, Token: "v1.forged.x"})},
			protocol.CodeBadToken, protocol.CodeBadToken, `reason="bad_token"`},
		{"oversized", [][]byte{make([]byte, DefaultMaxMessage+1)}, protocol.CodeTooBig, 0, `reason="oversized"`},
		{"no hello in time", nil, protocol.CodeTimeout, protocol.CodeTimeout, `reason="hello_timeout"`},
	}
	e := newEnv(t, nil)
	// A server that waits 300 ms for a hello, for the case that sends none.
	hurried := newEnv(t, func(c *Config) { c.HelloTimeout = 300 * time.Millisecond })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := e
			if tc.frames == nil {
				e = hurried
			}
			r := e.raw()
			for _, f := range tc.frames {
				r.send(f)
			}
			code, errs := r.closed()
			assert.Equal(t, tc.close, code)
			if tc.errMsg != 0 {
				require.NotEmpty(t, errs, "a clear error comes before the close")
				assert.Equal(t, tc.errMsg, errs[0].Code, errs[0].Message)
				assert.NotEmpty(t, errs[0].Message)
			}
			_, body := e.get("/metrics")
			assert.Contains(t, body, "nearzero_rejected_total{"+tc.metric+"} ")
			assert.NotContains(t, body, "nearzero_rejected_total{"+tc.metric+"} 0\n")
		})
	}
	// Nothing else broke.
	ann := e.dial("Ann", nil)
	_, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
}

func TestBadInputAnsweredConnectionKept(t *testing.T) {
	e := newEnv(t, nil)
	r := e.raw()
	r.hello()
	ctl := func(ty wire.ControlType, body string) []byte {
		b, err := wire.AppendControl(nil, ty, []byte(body))
		require.NoError(t, err)
		return b
	}
	state, err := wire.AppendState(nil, state(1, 0))
	require.NoError(t, err)
	cases := []struct {
		name  string
		frame []byte
		code  protocol.Code
	}{
		{"state outside a room", state, protocol.CodeNotInRoom},
		{"room message outside a room", protocol.MustMarshal(&protocol.Ready{Ready: true}), protocol.CodeNotInRoom},
		{"unknown type", ctl(99, `{}`), protocol.CodeUnknownType},
		{"bad body", ctl(protocol.TypeJoin, `{"code":7}`), protocol.CodeBadRequest},
		{"bad name", protocol.MustMarshal(&protocol.SetName{Name: strings.Repeat("x", 99)}), protocol.CodeBadName},
		{"second hello", protocol.MustMarshal(&protocol.Hello{Rules: wire.RulesVersion}), protocol.CodeBadRequest},
		{"leave outside a room", protocol.MustMarshal(&protocol.Leave{}), protocol.CodeNotInRoom},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r.send(tc.frame)
			m := r.next()
			require.IsType(t, &protocol.Error{}, m)
			assert.Equal(t, tc.code, m.(*protocol.Error).Code, m.(*protocol.Error).Message)
		})
	}
	// Still usable: a ping is answered.
	r.send(protocol.MustMarshal(&protocol.Ping{TUS: 9}))
	pong, ok := r.next().(*protocol.Pong)
	require.True(t, ok)
	assert.Equal(t, int64(9), pong.TUS)
	// A text message is refused but not fatal.
	require.NoError(t, r.ws.Write(ctxT(t), websocket.MessageText, []byte("hi")))
	assert.Equal(t, protocol.CodeBadFrame, r.next().(*protocol.Error).Code)
}

func TestFloodOutsideRoomCloses(t *testing.T) {
	e := newEnv(t, nil)
	r := e.raw()
	r.hello()
	ping := protocol.MustMarshal(&protocol.Ping{TUS: 1})
	go func() {
		for i := 0; i < 400; i++ {
			if r.ws.Write(context.Background(), websocket.MessageBinary, ping) != nil {
				return
			}
		}
	}()
	code, errs := r.closed()
	assert.Equal(t, protocol.CodeRateLimited, code)
	require.NotEmpty(t, errs)
	assert.Equal(t, protocol.CodeRateLimited, errs[0].Code)
}

func TestControlRateAloneKeepsDefaultBurst(t *testing.T) {
	// A configured ControlRate with ControlBurst left zero means the default
	// burst outside rooms too, as it does inside them.
	e := newEnv(t, func(c *Config) { c.Room.ControlRate = 50 })
	r := e.raw()
	r.hello()
	for i := range 5 {
		r.send(protocol.MustMarshal(&protocol.Ping{TUS: int64(i)}))
		m := r.next()
		require.IsType(t, &protocol.Pong{}, m, "ping %d answered: %+v", i, m)
		assert.Equal(t, int64(i), m.(*protocol.Pong).TUS)
	}
}

func TestSendQueuesBackpressure(t *testing.T) {
	s := &Server{cfg: (&Config{StateQueue: 4, ControlQueue: 3}).withDefaults()}
	var err error
	s.m, err = newTestMetrics()
	require.NoError(t, err)
	c := &conn{s: s, wake: make(chan struct{}, 1), ring: make([]byte, 4*slotSize), log: discardLog()}
	st, err := wire.AppendState(nil, state(1, 0))
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		st[2] = byte(i) // sequence
		c.Send(st, false)
	}
	assert.Equal(t, 4, c.n, "the ring holds StateQueue states")
	assert.Equal(t, 6, c.dropped, "the oldest are dropped")
	assert.Equal(t, byte(6), c.ring[c.head*slotSize+1+2], "the oldest kept is the 7th")
	assert.False(t, c.closing, "dropping states never closes")

	for i := 0; i < 3; i++ {
		c.Send([]byte{0xC0, 1, 0, 66}, true)
	}
	assert.False(t, c.closing)
	c.Send([]byte{0xC0, 1, 0, 66}, true)
	assert.True(t, c.closing, "a reliable queue overflow closes")
	assert.Equal(t, protocol.CodeTooSlow, c.code)
	c.Send([]byte{0xC0, 1, 0, 66}, true)
	assert.Empty(t, c.ctl, "nothing more is queued once closing")
	select {
	case <-c.wake:
	default:
		t.Fatal("the writer was not woken")
	}
}

// TestControlQueueBoundInBytes checks the reliable queue's byte bound:
// many small messages (a join's replay) fit, a few large ones do not.
func TestControlQueueBoundInBytes(t *testing.T) {
	s := &Server{cfg: (&Config{ControlQueueBytes: 3 << 10}).withDefaults()}
	c := &conn{s: s, wake: make(chan struct{}, 1), ring: make([]byte, 4*slotSize), log: discardLog()}
	small := []byte{0xC0, 1, 0, 66}
	for range 700 {
		c.Send(small, true)
	}
	assert.False(t, c.closing, "700 small messages fit (2800 bytes)")
	c.Send(make([]byte, 1<<10), true)
	assert.True(t, c.closing, "past 3 KiB the connection closes")
	assert.Equal(t, protocol.CodeTooSlow, c.code)
	assert.Zero(t, c.ctlSize)
	assert.Error(t, (&Config{ControlQueueBytes: 100}).Validate(), "below one control frame")
}

// wsPair returns both ends of a real WebSocket on loopback.
func wsPair(t *testing.T) (server, client *websocket.Conn) {
	t.Helper()
	got := make(chan *websocket.Conn, 1)
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		got <- ws
		<-hold // keep the handler (and the connection) alive
	}))
	cl, _, err := websocket.Dial(ctxT(t), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	sv := <-got
	t.Cleanup(func() {
		_ = cl.CloseNow()
		_ = sv.CloseNow()
		close(hold)
		srv.Close()
	})
	return sv, cl
}

func TestJanitorCutsStalledWrites(t *testing.T) {
	sv, cl := wsPair(t)
	s := &Server{cfg: (&Config{WriteTimeout: time.Second, HelloTimeout: time.Second}).withDefaults(), log: discardLog()}
	var err error
	s.m, err = newTestMetrics()
	require.NoError(t, err)
	c := &conn{s: s, ws: sv, wake: make(chan struct{}, 1), log: discardLog(), helloBy: time.Hour}
	c.helloState.Store(helloTaken)

	c.writeAt.Store(int64(10 * time.Second))
	c.check(10*time.Second + 500*time.Millisecond)
	assert.False(t, c.forced.Load(), "a write under the time-out is left alone")
	c.check(11*time.Second + time.Millisecond)
	assert.True(t, c.forced.Load(), "a write stalled past WriteTimeout is cut")
	_, _, err = cl.Read(ctxT(t))
	assert.Error(t, err, "the connection is closed")

	late := &conn{s: s, ws: sv, wake: make(chan struct{}, 1), log: discardLog(), helloBy: time.Second}
	late.check(2 * time.Second)
	assert.Equal(t, helloLate, late.helloState.Load())
	assert.True(t, late.closing)
	assert.Equal(t, protocol.CodeTimeout, late.code)
}

// TestControlQueueHoldsAJoin checks that the reliable queue's default
// holds what a join sends at once, even under raised room limits, and
// that a queue set too small for it is refused.
func TestControlQueueHoldsAJoin(t *testing.T) {
	d := (&Config{}).withDefaults()
	assert.Equal(t, DefaultControlQueue, d.ControlQueue)
	assert.GreaterOrEqual(t, d.ControlQueue, (&room.Config{MaxPlayers: room.MaxSlots}).JoinBurst())
	big := room.Config{MaxPlayers: room.MaxSlots, Entities: room.EntityLimits{MaxPerPlayer: 127}}
	d = (&Config{Room: big}).withDefaults()
	assert.Equal(t, big.JoinBurst(), d.ControlQueue)
	assert.NoError(t, (&Config{Room: big}).Validate())
	assert.ErrorIs(t, (&Config{Room: big, ControlQueue: 1000}).Validate(), ErrInvalidConfig)
}
