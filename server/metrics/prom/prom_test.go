package prom

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/server/metrics"
	"github.com/nearzero/nearzero/server/room"
)

func TestExposition(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New()
	require.NoError(t, Register(reg, m))
	assert.Error(t, Register(reg, metrics.New()), "registering twice on one registry fails")

	m.StatesRelayed(6)
	m.Rejected(room.RejectSpeed)
	m.RestampAge(20 * time.Millisecond)
	m.Limited(metrics.LimitIdle)
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP nearzero_states_relayed_total State frames relayed to other players (one per recipient).
# TYPE nearzero_states_relayed_total counter
nearzero_states_relayed_total 6
`), "nearzero_states_relayed_total"))
	n, err := testutil.GatherAndCount(reg, "nearzero_restamp_age_seconds", "nearzero_build_info")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	n, err = testutil.GatherAndCount(reg, "nearzero_limited_total")
	require.NoError(t, err)
	assert.Equal(t, len(metrics.Limits()), n, "every limit has its series from the start")

	rec := httptest.NewRecorder()
	Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	assert.Contains(t, body, `nearzero_rejected_total{reason="speed"} 1`)
	assert.Contains(t, body, `nearzero_restamp_age_seconds_bucket{le="0.02"} 1`)
	assert.Contains(t, body, `nearzero_limited_total{limit="idle"} 1`)
}
