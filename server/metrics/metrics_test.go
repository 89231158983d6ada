package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/room"
)

func TestRoomMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	require.NoError(t, err)
	_, err = New(reg)
	assert.Error(t, err, "registering twice on one registry fails")

	m.StatesIn(3)
	m.StatesRelayed(6)
	m.StatesRelayed(0)
	for _, r := range room.Rejects() {
		m.Rejected(r)
	}
	m.Rejected(room.RejectSpeed)
	m.RejectedConn(ReasonOversized)
	m.RestampAge(20 * time.Millisecond)
	m.PhaseChanged("", protocol.PhaseLobby)
	m.PhaseChanged(protocol.PhaseLobby, protocol.PhaseHandshake)
	m.PhaseChanged(protocol.PhaseHandshake, "")
	m.Kicked(protocol.CodeRateLimited)
	m.Closed(protocol.CodeGoingAway)
	var em room.EntityMetrics = m
	em.StatesNotOwner(2)

	assert.InDelta(t, 3, testutil.ToFloat64(m.StatesInTotal), 0)
	assert.InDelta(t, 6, testutil.ToFloat64(m.RelayedTotal), 0)
	assert.InDelta(t, 2, testutil.ToFloat64(m.rejected.WithLabelValues("speed")), 0)
	assert.InDelta(t, 1, testutil.ToFloat64(m.rejected.WithLabelValues("oversized")), 0)
	assert.InDelta(t, 0, testutil.ToFloat64(m.phases.WithLabelValues("lobby")), 0)
	assert.InDelta(t, 0, testutil.ToFloat64(m.phases.WithLabelValues("handshake")), 0)
	assert.InDelta(t, 1, testutil.ToFloat64(m.RoundsTotal), 0)
	assert.InDelta(t, 1, testutil.ToFloat64(m.kicked.WithLabelValues("rate_limited")), 0)
	assert.InDelta(t, 1, testutil.ToFloat64(m.closes.WithLabelValues("going_away")), 0)
	assert.InDelta(t, 2, testutil.ToFloat64(m.NotOwnerTotal), 0)
	assert.InDelta(t, 1, testutil.ToFloat64(m.rejected.WithLabelValues("entities")), 0)

	n, err := testutil.GatherAndCount(reg, "nearzero_restamp_age_seconds")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	err = testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP nearzero_states_relayed_total State frames relayed to other players (one per recipient).
# TYPE nearzero_states_relayed_total counter
nearzero_states_relayed_total 6
`), "nearzero_states_relayed_total")
	assert.NoError(t, err)
	for _, r := range room.Rejects() {
		assert.NotEqual(t, "unknown", r.String())
	}
}
