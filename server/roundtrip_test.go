package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/server/room"
)

// TestConnMeasuresRoundTrip: the server measures each connection's round
// trip itself (WebSocket pings) and offers it to the room, which caps a
// player's claimed round trip by it (room's TestMeasuredRoundTripCapsTheClaim).
func TestConnMeasuresRoundTrip(t *testing.T) {
	e := newEnv(t, nil)
	ann := e.dial("Ann", nil)
	_, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	c := eventually(t, "the server measured Ann's round trip", func() (*conn, bool) {
		e.s.mu.Lock()
		defer e.s.mu.Unlock()
		for c := range e.s.conns {
			if _, ok := c.RoundTrip(); ok && c.user == ann.User() {
				return c, true
			}
		}
		return nil, false
	})
	var rt room.RoundTripper = c // the room asks the peer through this interface
	d, ok := rt.RoundTrip()
	require.True(t, ok)
	t.Logf("measured round trip on loopback: %v", d)
	assert.Less(t, d, time.Second, "a loopback round trip")

}
