package room

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/identity"
)

// TestFullRoomStateFits builds the largest room state a room can send (every
// seat taken, the longest names, each character one that JSON escapes to six
// bytes, the largest game settings, every flag set) and checks it fits one
// control message: a room that outgrows it could no longer tell its players
// who is in it.
func TestFullRoomStateFits(t *testing.T) {
	secret, err := identity.NewSecret()
	require.NoError(t, err)
	iss, err := identity.NewIssuer(secret)
	require.NoError(t, err)
	user, _, err := iss.New()
	require.NoError(t, err)
	name, err := protocol.NormalizeName(strings.Repeat("<", protocol.MaxNameLen))
	require.NoError(t, err, "the worst-case name is a legal name")

	rs := protocol.RoomState{
		Code: "ABCDEF", Rev: 1 << 62, Phase: protocol.PhaseResults,
		PhaseUS: 1 << 62, DeadlineUS: 1 << 62, GoUS: 1 << 62, Round: 1 << 30, Host: MaxSlots - 1,
		Settings: protocol.Settings{RoundUS: 1 << 62,
			Game: json.RawMessage(`"` + strings.Repeat("x", protocol.MaxGameSettings-2) + `"`)},
		Draining: true,
	}
	for i := range MaxSlots {
		rs.Players = append(rs.Players, protocol.PlayerState{
			Slot: i, User: user, Name: name, Connected: true, Loaded: 0.12345678901234567,
			Ready: true, Participant: true, InPosition: true, Finished: true, Voted: true,
		})
	}
	b, err := protocol.Marshal(&rs)
	require.NoError(t, err, "a full room's state must encode")
	t.Logf("room state with %d players at worst: %d bytes of %d", MaxSlots, len(b), wire.ControlHeaderSize+wire.MaxControlBody)
	assert.LessOrEqual(t, len(b), wire.ControlHeaderSize+wire.MaxControlBody)
}
