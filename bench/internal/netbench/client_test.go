package netbench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSendingSideIsTheGames: the players send through client/netroom's
// Local, as a NetPredictor does, so a bot standing still sends at
// entity.RestKeepAlive instead of the full rate: the rounds' bots wait
// at their spawn points through the lobby and the countdown. Seed 1, 15
// simulated seconds: 1249 states; 1496 with a bare sender.Sender (the
// bench before) and 1515 with Local's rest rate off, the joins and the
// sync taking the rest of the 1800 of two players at 60 Hz.
func TestSendingSideIsTheGames(t *testing.T) {
	sc, err := Lookup("round-start")
	require.NoError(t, err)
	res, err := Run(sc, Options{Seed: testSeed, Duration: 10 * time.Second})
	require.NoError(t, err)
	full := 2 * 60 * res.Rows[0].SimSeconds
	t.Logf("%d states sent in %.0f s (%.0f at the full rate)", res.Stats.StatesSent, res.Rows[0].SimSeconds, full)
	assert.Less(t, float64(res.Stats.StatesSent), 0.8*full)
}
