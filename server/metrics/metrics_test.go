package metrics

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/room"
)

func TestRoomMetrics(t *testing.T) {
	m := New()
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

	assert.InDelta(t, 3, m.StatesInTotal.Value(), 0)
	assert.InDelta(t, 6, m.RelayedTotal.Value(), 0)
	assert.InDelta(t, 2, m.rejected.With("speed").Value(), 0)
	assert.InDelta(t, 1, m.rejected.With("oversized").Value(), 0)
	assert.InDelta(t, 0, m.phases.With("lobby").Value(), 0)
	assert.InDelta(t, 0, m.phases.With("handshake").Value(), 0)
	assert.InDelta(t, 1, m.RoundsTotal.Value(), 0)
	assert.InDelta(t, 1, m.kicked.With("rate_limited").Value(), 0)
	assert.InDelta(t, 1, m.closes.With("going_away").Value(), 0)
	assert.InDelta(t, 2, m.NotOwnerTotal.Value(), 0)
	assert.InDelta(t, 1, m.rejected.With("entities").Value(), 0)
	n, sum, cum := m.RestampAgeSecs.Snapshot()
	assert.Equal(t, uint64(1), n)
	assert.InDelta(t, 0.02, sum, 1e-12)
	assert.Equal(t, uint64(0), cum[0.01])
	assert.Equal(t, uint64(1), cum[0.02], "le: 0.02 falls in the 0.02 bucket")
	for _, r := range room.Rejects() {
		assert.NotEqual(t, "unknown", r.String())
	}
}

func TestSeries(t *testing.T) {
	var g Gauge
	g.Inc()
	g.Add(2.5)
	g.Dec()
	assert.InDelta(t, 2.5, g.Value(), 0)
	g.Set(-1)
	assert.InDelta(t, -1, g.Value(), 0)

	var v Vec[Counter]
	v.With("b").Inc()
	v.With("a").Add(2)
	v.With("b").Inc()
	var got []string
	v.Each(func(l string, c *Counter) { got = append(got, l) })
	assert.Equal(t, []string{"b", "a"}, got, "in the order first seen")
	assert.InDelta(t, 2, v.With("b").Value(), 0)
}

func TestFamiliesNameEveryMetric(t *testing.T) {
	m := New()
	seen := map[string]bool{}
	for _, f := range m.Families() {
		assert.False(t, seen[f.Name], "%s twice", f.Name)
		seen[f.Name] = true
		set := 0
		for _, p := range []bool{f.Counter != nil, f.Gauge != nil, f.Histogram != nil, f.Counters != nil, f.Gauges != nil} {
			if p {
				set++
			}
		}
		assert.Equal(t, 1, set, "%s has exactly one series or family", f.Name)
		assert.Equal(t, f.Counters != nil || f.Gauges != nil, f.Label != "", "%s: a label exactly for families", f.Name)
		assert.NotEmpty(t, f.Help)
	}
	assert.True(t, seen["limited_total"] && seen["panics_total"] && seen["restamp_age_seconds"])
}
