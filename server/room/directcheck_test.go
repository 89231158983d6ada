package room

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// cheatMetrics is countMetrics that also counts direct cheat reports.
type cheatMetrics struct {
	*countMetrics
	cheats int
}

func (m *cheatMetrics) DirectCheatReported() { m.cheats++ }

// A player whose own motion checks failed a direct peer's states reports
// the link down with DirectCheat: the server relays that pair again, logs
// the report and counts it.
func TestDirectCheatReport(t *testing.T) {
	var log bytes.Buffer
	m := &cheatMetrics{countMetrics: newCountMetrics()}
	now := time.Hour
	r, err := New("ABCDEF", testConfig(), &Hooks{Metrics: m, Log: slog.New(slog.NewTextHandler(&log, nil))}, now)
	require.NoError(t, err)
	h := &harness{t: t, r: r, now: now, metrics: m.countMetrics}
	a, _ := h.join("a")
	b, slotB := h.join("b")
	seq := 0
	sendA := func() {
		h.now += 10 * time.Millisecond
		h.r.HandleFrame(h.now, a, stateFrame(t, seq, h.now, geom.Vec3{}, geom.Vec3{}, 0))
		seq++
	}
	h.send(a, &protocol.DirectLink{Slot: slotB, Up: true})
	h.send(b, &protocol.DirectLink{Slot: 0, Up: true})
	b.Take()
	sendA()
	assert.Empty(t, States(b.Take()), "direct: not relayed")

	h.send(b, &protocol.DirectLink{Slot: 0, Up: false, Reason: protocol.DirectCheat})
	sendA()
	assert.Len(t, States(b.Take()), 1, "reported: relayed (and checked) by the server again")
	assert.Equal(t, 1, m.cheats, "counted")
	assert.Contains(t, log.String(), "direct peer failed motion checks")
	assert.Contains(t, log.String(), "user=a")

	h.send(b, &protocol.DirectLink{Slot: 0, Up: false})
	assert.Equal(t, 1, m.cheats, "a link down for silence is no report")
}
