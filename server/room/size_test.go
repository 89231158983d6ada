package room

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// TestRoomSize: the host sizes the room (Settings.MaxPlayers, sent with
// create_room(max_players)); a join past it is refused as room full, a
// size below the players seated or above the server's maximum is a bad
// request, and 0 means the server's maximum.
func TestRoomSize(t *testing.T) {
	h := newHarness(t, testConfig()) // rooms of at most 4
	host, _ := h.join("ann")
	assert.Equal(t, 4, h.r.Snapshot().Settings.MaxPlayers, "the room state says the size in force")

	h.send(host, &protocol.Settings{MaxPlayers: 2})
	assert.Empty(t, errorsIn(msgs(host)))
	assert.Equal(t, 2, h.r.Snapshot().Settings.MaxPlayers)
	h.join("bob")
	_, err := h.r.Join(h.now, &MemPeer{}, Member{User: "cy", Name: "Cy"})
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, protocol.CodeRoomFull, pe.Code, "a third player in a two-player room")

	h.send(host, &protocol.Settings{MaxPlayers: 1})
	errs := errorsIn(msgs(host))
	require.Len(t, errs, 1)
	assert.Equal(t, protocol.CodeBadRequest, errs[0].Code, "below the two seated")
	h.send(host, &protocol.Settings{MaxPlayers: 5})
	errs = errorsIn(msgs(host))
	require.Len(t, errs, 1)
	assert.Equal(t, protocol.CodeBadRequest, errs[0].Code, "above the server's 4")
	assert.Contains(t, errs[0].Message, "at most 4")

	h.send(host, &protocol.Settings{})
	assert.Empty(t, errorsIn(msgs(host)))
	assert.Equal(t, 4, h.r.Snapshot().Settings.MaxPlayers, "0: the server's maximum")
	h.join("cy")
}
