package serverlink_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// TestKick: only the host kicks; the kicked client is closed with
// CodeKicked and does not reconnect on its own.
func TestKick(t *testing.T) {
	url := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	host, err := serverlink.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer host.Close(ctx)
	guest, err := serverlink.Dial(ctx, url, nil)
	require.NoError(t, err)
	defer guest.Close(ctx)
	assert.ErrorIs(t, host.Kick(1), serverlink.ErrNotInRoom)

	j, err := host.Create(ctx, nil)
	require.NoError(t, err)
	jg, err := guest.Join(ctx, j.Code)
	require.NoError(t, err)

	require.NoError(t, guest.Kick(j.Slot))
	require.Eventually(t, func() bool {
		for _, e := range guest.PollEvents(nil) {
			if m, ok := e.Msg.(*protocol.Error); ok && m.Request == protocol.TypeKick {
				return m.Code == protocol.CodeNotHost
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "a guest may not kick")

	require.NoError(t, host.Kick(jg.Slot))
	require.Eventually(t, func() bool { return protocol.CodeOf(guest.Err()) == protocol.CodeKicked },
		5*time.Second, 5*time.Millisecond, "the guest is closed with kicked")
	require.Eventually(t, func() bool { return len(host.Room().Players) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.False(t, guest.Connected(), "a kicked client does not reconnect on its own")
}
