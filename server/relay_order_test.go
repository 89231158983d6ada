package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// testConn is a connection whose writer is not started yet, and the
// client end of its WebSocket.
func testConn(t *testing.T) (*conn, *websocket.Conn) {
	t.Helper()
	sv, cl := wsPair(t)
	s := &Server{cfg: (&Config{}).withDefaults(), log: discardLog()}
	var err error
	s.m, err = newTestMetrics()
	require.NoError(t, err)
	c := &conn{s: s, ws: sv, wake: make(chan struct{}, 1), done: make(chan struct{}),
		ring: make([]byte, s.cfg.StateQueue*slotSize), log: discardLog()}
	return c, cl
}

// bigEvent is a control frame of about n bytes.
func bigEvent(t *testing.T, n int) []byte {
	t.Helper()
	args, err := json.Marshal([]string{strings.Repeat("x", n)})
	require.NoError(t, err)
	return protocol.MustMarshal(&protocol.Event{Name: "boom", Args: args})
}

// Attack: events within their senders' rates queued up for a player on a
// slow link, and the writer sent every queued reliable frame before any
// state: the victim's states were 11.7 s late after 45 s. States now go
// out between reliable frames.
func TestStatesGoBetweenReliableFrames(t *testing.T) {
	c, cl := testConn(t)
	ev := bigEvent(t, 1000)
	const backlog = 50
	for range backlog {
		c.Send(ev, true)
	}
	st, err := wire.AppendState(nil, state(1, 0))
	require.NoError(t, err)
	c.Send(st, false)

	go c.writeLoop()
	first := -1
	for i := 0; i <= backlog && first < 0; i++ {
		_, b, err := cl.Read(ctxT(t))
		require.NoError(t, err)
		if wire.KindOf(b) != wire.KindControl {
			first = i
		}
	}
	_ = c.ws.CloseNow() // the rest is never read
	c.closeWith(protocol.CodeNormal, "")
	<-c.done
	t.Logf("the state went out as message %d of %d", first, backlog+1)
	require.GreaterOrEqual(t, first, 0, "the state arrives")
	assert.Equal(t, 1, first, "the state goes right after the first reliable frame, not after the backlog")
}

// ReliableBacklog counts reliable bytes queued for a connection.
func TestReliableBacklog(t *testing.T) {
	c, _ := testConn(t)
	ev := bigEvent(t, 1000)
	for range 3 {
		c.Send(ev, true)
	}
	assert.Equal(t, 3*len(ev), c.ReliableBacklog())
	c.Send(make([]byte, 20), false)
	assert.Equal(t, 3*len(ev), c.ReliableBacklog(), "states are not reliable backlog")
}
