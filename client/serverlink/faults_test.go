package serverlink

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

const waitFor = 20 * time.Second

// stub is a scripted room server: each connection is handed to serve, with
// the hello already read and the welcome sent.
type stub struct {
	srv   *httptest.Server
	conns atomic.Int32
	wg    sync.WaitGroup
}

// stubConn is one connection of a stub.
type stubConn struct {
	n   int // 1 for the first connection
	ws  *websocket.Conn
	ctx context.Context
}

func (sc *stubConn) send(m protocol.Message) error {
	return sc.ws.Write(sc.ctx, websocket.MessageBinary, protocol.MustMarshal(m))
}

// read returns the next message: a control message, or nil for states.
func (sc *stubConn) read() (protocol.Message, []byte, error) {
	_, b, err := sc.ws.Read(sc.ctx)
	if err != nil {
		return nil, nil, err
	}
	if wire.KindOf(b) != wire.KindControl {
		return nil, b, nil
	}
	m, err := protocol.Decode(b)
	return m, b, err
}

func newStub(t *testing.T, serve func(sc *stubConn)) *stub {
	t.Helper()
	s := &stub{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		s.wg.Add(1)
		defer s.wg.Done()
		defer ws.CloseNow()
		sc := &stubConn{n: int(s.conns.Add(1)), ws: ws, ctx: r.Context()}
		if _, _, err := ws.Read(sc.ctx); err != nil { // hello
			return
		}
		if sc.send(&protocol.Welcome{User: "u1", Token: "t", Name: "Ann"}) != nil {
			return
		}
		serve(sc)
	}))
	t.Cleanup(func() {
		s.srv.CloseClientConnections()
		s.srv.Close()
		s.wg.Wait()
	})
	return s
}

func (s *stub) url() string { return "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/ws" }

// waitEvent waits for an event matching ok, and returns it.
func waitEvent(t *testing.T, c *Conn, what string, ok func(Event) bool) Event {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		for _, ev := range c.PollEvents(nil) {
			if ok(ev) {
				return ev
			}
		}
		select {
		case <-c.Notify():
		case <-deadline:
			t.Fatalf("no %s", what)
		}
	}
}

// TestSilentServerIsNoticed: a server that stops answering (hung, or gone
// from the network, with the socket still open) is taken for dead once
// nothing, not even a pong, arrived for SilenceTimeout: the game sees
// reconnecting, and the client reconnects.
func TestSilentServerIsNoticed(t *testing.T) {
	var pings atomic.Int32
	silent := make(chan struct{})
	s := newStub(t, func(sc *stubConn) {
		for {
			m, _, err := sc.read()
			if err != nil {
				return
			}
			p, ok := m.(*protocol.Ping)
			if !ok {
				continue
			}
			pings.Add(1)
			select {
			case <-silent: // hung: reads, never answers
				continue
			default:
			}
			if sc.send(&protocol.Pong{TUS: p.TUS, ServerUS: 1}) != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := Dial(ctx, s.url(), &Options{SilenceTimeout: 300 * time.Millisecond, BackoffMin: 10 * time.Millisecond,
		BackoffMax: 50 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close(ctx)
	require.Eventually(t, func() bool { return pings.Load() >= 3 }, waitFor, time.Millisecond, "pings answered")
	for _, ev := range c.PollEvents(nil) {
		require.NotEqual(t, EventReconnecting, ev.Kind, "an answering server is alive: %v", ev.Err)
	}
	before := pings.Load()
	close(silent)
	ev := waitEvent(t, c, "reconnecting", func(ev Event) bool { return ev.Kind == EventReconnecting })
	assert.ErrorIs(t, ev.Err, ErrServerSilent)
	assert.Greater(t, pings.Load(), before, "it pinged the silent server before giving it up")
	waitEvent(t, c, "reconnected", func(ev Event) bool { return ev.Kind == EventReconnected })
	assert.GreaterOrEqual(t, s.conns.Load(), int32(2))
}

// TestSilenceTimeoutOff: with the check off, a silent server is not given
// up (the socket alone decides).
func TestSilenceTimeoutOff(t *testing.T) {
	var pings atomic.Int32
	s := newStub(t, func(sc *stubConn) {
		for {
			if m, _, err := sc.read(); err != nil {
				return
			} else if _, ok := m.(*protocol.Ping); ok {
				pings.Add(1)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := Dial(ctx, s.url(), &Options{SilenceTimeout: -1})
	require.NoError(t, err)
	defer c.Close(ctx)
	// The sync's warm-up pings (every 250 ms) go unanswered for a while.
	require.Eventually(t, func() bool { return pings.Load() >= 6 }, waitFor, time.Millisecond)
	assert.True(t, c.Connected())
	for _, ev := range c.PollEvents(nil) {
		assert.NotEqual(t, EventReconnecting, ev.Kind)
	}
}

// TestRejoinBeforeStates: after a reconnect, the client sends nothing but
// the rejoin (and pings) until the server answers it; states resume once
// it has.
func TestRejoinBeforeStates(t *testing.T) {
	rejoined := make(chan struct{}) // the second connection's join arrived
	release := make(chan struct{})  // the test sent states meanwhile: answer it
	var early, late atomic.Int32    // states before and after the answer
	var notPing []string            // control messages before the answer but the join
	var mu sync.Mutex
	s := newStub(t, func(sc *stubConn) {
		type msg struct {
			m protocol.Message
			b []byte
		}
		msgs := make(chan msg, 1024)
		go func() { // read on while the join waits
			defer close(msgs)
			for {
				m, b, err := sc.read()
				if err != nil {
					return
				}
				msgs <- msg{m, b}
			}
		}()
		answered, joinAt := sc.n == 1, false
		rel := release
		for {
			var in msg
			var ok bool
			select {
			case in, ok = <-msgs:
				if !ok {
					return
				}
			case <-rel:
				rel, answered = nil, true
				_ = sc.send(&protocol.Joined{Code: "ABCDEF", Slot: 0, Reconnected: true})
				continue
			}
			switch m := in.m.(type) {
			case nil:
				if answered {
					late.Add(1)
				} else {
					early.Add(1)
				}
			case *protocol.Ping:
				_ = sc.send(&protocol.Pong{TUS: m.TUS, ServerUS: 1})
			case *protocol.Create:
				_ = sc.send(&protocol.Joined{Code: "ABCDEF", Slot: 0})
				// Then the connection drops.
				_ = sc.ws.Close(websocket.StatusCode(protocol.CodeGoingAway), "restarting")
				return
			case *protocol.Join:
				assert.Equal(t, "ABCDEF", m.Code)
				assert.Equal(t, protocol.ViaReconnect, m.Via)
				if !joinAt {
					joinAt = true
					close(rejoined)
				}
			default:
				if !answered {
					mu.Lock()
					notPing = append(notPing, protocol.TypeName(m.Type()))
					mu.Unlock()
				}
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := Dial(ctx, s.url(), &Options{BackoffMin: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close(ctx)
	_, err = c.Create(ctx, nil)
	require.NoError(t, err)

	st := &wire.State{Rot: geom.Identity}
	send := func() {
		st.Seq++
		st.Stamp = wire.StampOf(c.Now())
		require.NoError(t, c.SendState(st))
	}
	for {
		send()
		select {
		case <-rejoined:
		case <-time.After(5 * time.Millisecond):
			continue
		}
		break
	}
	// While the rejoin waits: states and room messages go nowhere.
	for range 50 {
		send()
		time.Sleep(time.Millisecond)
	}
	assert.ErrorIs(t, c.Send(&protocol.Ready{Ready: true}), ErrNotConnected)
	assert.False(t, c.Connected(), "not connected until the room is back")
	close(release)
	waitEvent(t, c, "reconnected", func(ev Event) bool { return ev.Kind == EventReconnected })
	assert.True(t, c.Connected())
	require.Eventually(t, func() bool {
		send()
		return late.Load() > 0
	}, waitFor, 5*time.Millisecond, "states resume after the rejoin")
	assert.Zero(t, early.Load(), "no state before the rejoin was answered")
	mu.Lock()
	assert.Empty(t, notPing, "nothing but the rejoin and pings before its answer")
	mu.Unlock()
}

// TestBackoffSeedPerClient: clients left to the default seed each jitter
// their back-off their own way; a seed given is used as given.
func TestBackoffSeedPerClient(t *testing.T) {
	a, b := (&Options{}).backoffSeed(), (&Options{}).backoffSeed()
	assert.NotEqual(t, a, b, "two clients dropped together must not retry in step")
	assert.Equal(t, uint64(7), (&Options{Seed: 7}).backoffSeed())
	assert.Equal(t, (&Options{}).lagSeed(), (&Options{}).lagSeed(), "the lag simulator stays reproducible")
}
