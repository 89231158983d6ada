package netroom

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// TestPanicInRequestIsAnError: a panic in a request's goroutine is
// recovered and reported as EventError (ErrPanic), and the Room is not
// left busy: the next request goes.
func TestPanicInRequestIsAnError(t *testing.T) {
	h := newHarness(t, Config{})
	calls := 0
	h.link.OnCreate(func() error {
		calls++
		if calls == 1 {
			panic("create broke")
		}
		return nil
	})
	require.NoError(t, h.room.Create())
	evs := h.until(has(EventError))
	errs := eventsOf(evs, EventError)
	require.Len(t, errs, 1)
	assert.Equal(t, CodeLocal, errs[0].Code)
	assert.Contains(t, errs[0].Text, "create broke")
	assert.Contains(t, errs[0].Text, "internal error")
	assert.True(t, errs[0].Internal)
	require.NoError(t, h.room.Create(), "not left busy")
}

// TestClientPanicIsAnError: a panic the client recovered in one of its
// goroutines (EventReconnecting or EventDisconnected with ErrPanic) becomes
// EventError as well as the connection event.
func TestClientPanicIsAnError(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Connect())
	h.until(has(EventConnected))
	boom := errors.Join(serverlink.ErrPanic, errors.New("reader: boom"))
	h.link.Push(serverlink.Event{Kind: serverlink.EventReconnecting, Err: boom})
	evs := h.until(has(EventReconnecting))
	assert.Equal(t, []string{"error", "reconnecting"}, kinds(evs))
	h.link.Push(serverlink.Event{Kind: serverlink.EventDisconnected, Err: boom})
	evs = h.until(has(EventDisconnected))
	assert.Equal(t, []string{"error", "disconnected"}, kinds(evs))
	assert.Equal(t, protocol.Code(CodeLocal), evs[0].Code)
}

// TestSetLagLive: the lag simulator changes on the open connection, and
// an invalid setting is refused.
func TestSetLagLive(t *testing.T) {
	h := newHarness(t, Config{})
	lag := serverlink.LagConfig{Latency: 30 * time.Millisecond}
	require.NoError(t, h.room.SetLag(lag), "before connecting: for the next connect")
	require.NoError(t, h.room.Connect())
	h.until(has(EventConnected))
	more := serverlink.LagConfig{Latency: 80 * time.Millisecond, Loss: 0.1}
	require.NoError(t, h.room.SetLag(more))
	assert.Equal(t, []serverlink.LagConfig{more}, h.link.Lags(), "applied live")
	assert.Error(t, h.room.SetLag(serverlink.LagConfig{Loss: 2}))
	assert.Equal(t, []string{"error"}, kinds(h.update()))
	h.mu.Lock()
	assert.Equal(t, 30*time.Millisecond, h.dials[0].opts.Lag.Latency)
	h.mu.Unlock()
}
