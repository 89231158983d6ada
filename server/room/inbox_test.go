package room

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// linkPeer is a recipient on a slow link: what it is sent drains at rate
// bytes a second of the harness's time, in the order sent, and
// ReliableBacklog is what still waits. It keeps no frames.
type linkPeer struct {
	h          *harness
	rate       float64
	queued     float64 // bytes waiting at time at
	at         time.Duration
	eventBytes int // bytes of relayed events received
	closed     bool
}

func (p *linkPeer) drain() {
	p.queued = max(0, p.queued-p.rate*(p.h.now-p.at).Seconds())
	p.at = p.h.now
}

func (p *linkPeer) Send(f []byte, reliable bool) {
	p.drain()
	p.queued += float64(len(f))
	if reliable && len(f) > 3 && f[3] == byte(protocol.TypeEvent) {
		p.eventBytes += len(f)
	}
}

func (p *linkPeer) Close(protocol.Code, string) { p.closed = true }

func (p *linkPeer) ReliableBacklog() int {
	p.drain()
	return int(p.queued)
}

// TestEventFloodAgainstSlowRecipient replays the flood that delayed a
// victim's states by 11.7 s after 45 s: two players send events of the
// largest size within their own rate (30 a second) to a third on a
// 2 Mbit/s link. The recipient's budget is shared by its senders; the
// senders are closed with CodeRateLimited, never the victim, and what
// waits for the victim stays short.
func TestEventFloodAgainstSlowRecipient(t *testing.T) {
	h := newHarness(t, testConfig())
	victim := &linkPeer{h: h, rate: 2e6 / 8, at: h.now}
	vslot, err := h.r.Join(h.now, victim, Member{User: "victim", Name: "victim"})
	require.NoError(t, err)
	a, _ := h.join("a")
	b, _ := h.join("b")
	args, err := json.Marshal([]string{strings.Repeat("x", protocol.MaxEventSize-16)})
	require.NoError(t, err)
	ev := &protocol.Event{Name: "boom", Args: args, To: vslot}
	require.LessOrEqual(t, ev.Size(), protocol.MaxEventSize)

	const secs = 45
	start := h.now
	closedAt := time.Duration(0)
	for i := 0; i < secs*30; i++ {
		h.advance(time.Second / 30)
		for _, p := range []*MemPeer{a, b} {
			if !p.Closed {
				h.send(p, ev)
			}
			p.Take()
		}
		if closedAt == 0 && a.Closed && b.Closed {
			closedAt = h.now - start
		}
	}
	backlog := float64(victim.ReliableBacklog()) / victim.rate
	perSec := float64(victim.eventBytes) / secs
	t.Logf("event bytes to the victim: %.0f/s; its backlog after %d s: %.2f s of its link; senders closed after %v",
		perSec, secs, backlog, closedAt)
	assert.True(t, a.Closed && b.Closed, "the senders are closed")
	assert.Equal(t, protocol.CodeRateLimited, a.CloseCode)
	assert.Equal(t, protocol.CodeRateLimited, b.CloseCode)
	assert.False(t, victim.closed, "never the victim")
	assert.Less(t, backlog, 1.0, "the victim's link is not buried")
	assert.Positive(t, h.metrics.rejected[RejectRecipient])
}

// A backed-up recipient is not sent more events; their sender is charged.
func TestEventsToABackedUpRecipientAreRefused(t *testing.T) {
	h := newHarness(t, testConfig())
	victim := &linkPeer{h: h, rate: 1, at: h.now, queued: DefaultBacklogBytes + 1}
	_, err := h.r.Join(h.now, victim, Member{User: "victim", Name: "victim"})
	require.NoError(t, err)
	a, _ := h.join("a")
	other, _ := h.join("other")
	a.Take()
	other.Take()
	before := victim.eventBytes
	h.send(a, &protocol.Event{Name: "hi", To: protocol.ToAll})
	assert.Equal(t, before, victim.eventBytes, "nothing more for a recipient that reads too slowly")
	assert.Len(t, ofType[*protocol.Event](msgs(other)), 1, "the others still get it")
	errs := errorsIn(msgs(a))
	require.Len(t, errs, 1)
	assert.Equal(t, protocol.CodeRateLimited, errs[0].Code)
	assert.Contains(t, errs[0].Message, "reads too slowly")
	assert.False(t, victim.closed)
}
