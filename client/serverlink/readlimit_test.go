package serverlink

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
)

// TestReadsMessageOfExactlyMaxSize: a control frame with the largest body
// the protocol allows is a message of exactly maxMessage bytes; the client
// must take it, not drop the connection.
func TestReadsMessageOfExactlyMaxSize(t *testing.T) {
	prefix, suffix := `{"kind":"big","text":"`, `"}`
	body := prefix + strings.Repeat("x", wire.MaxControlBody-len(prefix)-len(suffix)) + suffix
	big, err := wire.AppendControl(nil, protocol.TypeNotice, []byte(body))
	require.NoError(t, err)
	require.Len(t, big, maxMessage)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		if _, _, err := ws.Read(ctx); err != nil { // hello
			return
		}
		if ws.Write(ctx, websocket.MessageBinary, protocol.MustMarshal(&protocol.Welcome{User: "u1", Token: "t"})) != nil ||
			ws.Write(ctx, websocket.MessageBinary, big) != nil {
			return
		}
		for { // pings, until the client goes
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", &Options{NoReconnect: true})
	require.NoError(t, err)
	defer c.Close(ctx)
	for {
		for _, ev := range c.PollEvents(nil) {
			require.NotEqual(t, EventDisconnected, ev.Kind, "connection dropped: %v", ev.Err)
			if n, ok := ev.Msg.(*protocol.Notice); ok {
				assert.Equal(t, "big", n.Kind)
				assert.Len(t, n.Text, wire.MaxControlBody-len(prefix)-len(suffix))
				return
			}
		}
		select {
		case <-c.Notify():
		case <-ctx.Done():
			t.Fatal("no notice within 10 s")
		}
	}
}
