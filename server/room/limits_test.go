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

// TestFullRoomStateFits builds the largest messages a room sends about all
// its players (every seat taken, the longest names made of the characters
// that encode longest, the largest game settings, every optional field set,
// the longest invite link) and checks each fits one control message: a room
// that outgrew it could no longer tell its players who is in it.
func TestFullRoomStateFits(t *testing.T) {
	secret, err := identity.NewSecret()
	require.NoError(t, err)
	iss, err := identity.NewIssuer(secret)
	require.NoError(t, err)
	user, _, err := iss.New()
	require.NoError(t, err)
	limit := wire.ControlHeaderSize + wire.MaxControlBody
	invite := protocol.InviteLink(strings.Repeat("x", MaxInviteBase), "ABCDEF")

	for _, tc := range []struct{ name, char string }{
		{"html escapes", "<"},
		{"ampersand", "&"},
		{"json escapes", `"`},
		{"backslash", `\`},
		{"two-byte runes", "é"},
		{"three-byte runes", "€"},
		{"four-byte runes", "😀"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, err := protocol.NormalizeName(strings.Repeat(tc.char, protocol.MaxNameLen))
			require.NoError(t, err, "the worst-case name is a legal name")

			rs := protocol.RoomState{
				Code: "ABCDEF", Rev: 1 << 62, Phase: protocol.PhaseResults,
				PhaseUS: 1 << 62, DeadlineUS: 1 << 62, GoUS: 1 << 62, Round: 1 << 30, Host: MaxSlots - 1,
				Settings: protocol.Settings{RoundUS: 1 << 62,
					Game: json.RawMessage(`"` + strings.Repeat("x", protocol.MaxGameSettings-2) + `"`)},
				Draining: true,
			}
			res := protocol.Results{Code: "ABCDEF", Round: 1 << 30, Aborted: true, StartUS: 1 << 62, EndUS: 1 << 62,
				RoundUS: 1 << 62}
			for i := range MaxSlots {
				rs.Players = append(rs.Players, protocol.PlayerState{
					Slot: i, User: user, Name: name, Connected: true, Loaded: 0.12345678901234567,
					Ready: true, Participant: true, InPosition: true, Finished: true, Voted: true,
				})
				res.Players = append(res.Players, protocol.PlayerResult{Slot: i, User: user, Name: name,
					Status: protocol.StatusFinished, TimeUS: 1 << 62, Score: -1.2345678901234567e-300, Place: i + 1})
			}
			for _, m := range []protocol.Message{
				&rs,
				&protocol.Joined{Code: "ABCDEF", Invite: invite, Slot: MaxSlots - 1, Reconnected: true, Room: rs},
				&res,
			} {
				b, err := protocol.Marshal(m)
				require.NoError(t, err, "%s with a full room must encode", protocol.TypeName(m.Type()))
				t.Logf("%s with %d players at worst: %d bytes of %d", protocol.TypeName(m.Type()), MaxSlots, len(b), limit)
				assert.LessOrEqual(t, len(b), limit)
			}
			b, err := protocol.Marshal(&rs)
			require.NoError(t, err)
			// Keep a margin for fields added later: a full room at its worst
			// must stay under three quarters of the limit.
			assert.LessOrEqual(t, len(b), limit*3/4, "room state needs a margin for growth")
		})
	}
}
