package room

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// TestHostSetsInputDelay checks the host's input delay: set in the lobby,
// in every room state from then on (a late joiner's joined.room too), slid
// to at inputdelay.Slew on the server clock, and off again when a later
// settings message asks for none; another player may not set it.
func TestHostSetsInputDelay(t *testing.T) {
	h := newHarness(t, testConfig())
	host, _ := h.join("host")
	guest, _ := h.join("guest")
	h.send(guest, &protocol.Settings{InputDelay: &protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 100_000}})
	require.Len(t, errorsIn(msgs(guest)), 1, "not the host")
	assert.Nil(t, h.r.Snapshot().InputDelay)

	set := h.now
	h.send(host, &protocol.Settings{InputDelay: &protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 100_000}})
	h.settle()
	st, ok := lastRoom(msgs(guest))
	require.True(t, ok)
	require.NotNil(t, st.InputDelay)
	assert.Equal(t, protocol.InputDelayState{InputDelay: protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 100_000},
		AtUS: protocol.US(set)}, *st.InputDelay)
	assert.Equal(t, &protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 100_000}, st.Settings.InputDelay)
	assert.Equal(t, 50*time.Millisecond, h.r.InputDelay(set+500*time.Millisecond), "half-way after 0.5 s")
	assert.Equal(t, 100*time.Millisecond, h.r.InputDelay(set+2*time.Second))

	late := &MemPeer{}
	_, err := h.r.Join(h.now, late, Member{User: "late", Name: "late"})
	require.NoError(t, err)
	joined := ofType[*protocol.Joined](msgs(late))
	require.Len(t, joined, 1)
	require.NotNil(t, joined[0].Room.InputDelay, "a late joiner gets it")
	assert.Equal(t, int64(100_000), joined[0].Room.InputDelay.US)

	h.now += 2 * time.Second
	off := h.now
	h.send(host, &protocol.Settings{RoundUS: 90_000_000})
	h.settle()
	st, _ = lastRoom(msgs(guest))
	require.NotNil(t, st.InputDelay, "still sliding down")
	assert.Equal(t, protocol.InputDelayState{FromUS: 100_000, AtUS: protocol.US(off)}, *st.InputDelay)
	assert.Equal(t, 60*time.Millisecond, h.r.InputDelay(off+400*time.Millisecond))
	assert.Zero(t, h.r.InputDelay(off+time.Second))

	h.send(host, &protocol.Settings{InputDelay: &protocol.InputDelay{Mode: "soon"}})
	require.Len(t, errorsIn(msgs(host)), 1, "an unknown mode")
	h.send(host, &protocol.Settings{InputDelay: &protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 300_000}})
	require.Len(t, errorsIn(msgs(host)), 1, "over 250 ms")
}

// TestServerSetsInputDelay checks a server's input delay (Config): in
// force from the room's start, kept through a host's settings that do not
// name one, and a host's other delay is refused.
func TestServerSetsInputDelay(t *testing.T) {
	cfg := testConfig()
	cfg.InputDelay = protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 80_000}
	h := newHarness(t, cfg)
	assert.Equal(t, 80*time.Millisecond, h.r.InputDelay(h.now), "from the start, no slide")
	host, _ := h.join("host")
	h.send(host, &protocol.Settings{RoundUS: 90_000_000})
	assert.Empty(t, errorsIn(msgs(host)))
	assert.Equal(t, 80*time.Millisecond, h.r.InputDelay(h.now+time.Hour))
	h.send(host, &protocol.Settings{InputDelay: &protocol.InputDelay{Mode: protocol.InputDelayFixed, US: 80_000}})
	assert.Empty(t, errorsIn(msgs(host)), "the same one is fine")
	h.send(host, &protocol.Settings{InputDelay: &protocol.InputDelay{}})
	e := errorsIn(msgs(host))
	require.Len(t, e, 1)
	assert.Equal(t, protocol.CodeBadRequest, e[0].Code)
	assert.Contains(t, e[0].Message, "fixed at 80ms")
	assert.Equal(t, int64(80_000), h.r.Snapshot().Settings.InputDelay.US)

	bad := testConfig()
	bad.InputDelay = protocol.InputDelay{Mode: protocol.InputDelayAdaptive, CapUS: 400_000}
	assert.ErrorIs(t, bad.Validate(), ErrInvalidConfig)
}

// TestAdaptiveInputDelay checks an adaptive delay: it follows the round
// trips the room measured (the slowest pair's one-way delay plus the
// margin, under the cap), moves only by AdaptiveHysteresis or more, and
// needs two measured players.
func TestAdaptiveInputDelay(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.send(a, &protocol.Settings{InputDelay: &protocol.InputDelay{Mode: protocol.InputDelayAdaptive, CapUS: 150_000}})
	assert.Equal(t, protocol.InputDelayAdaptive, h.r.Snapshot().InputDelay.Mode)
	assert.Zero(t, h.r.Snapshot().InputDelay.US, "no round trip measured yet")
	measure := func(p *MemPeer, rtt time.Duration) {
		h.now += 2 * time.Second // the last slide is over
		p.Take()
		h.send(p, &protocol.Ping{TUS: 1})
		h.now += rtt
		require.Equal(t, 1, echoProbes(h, p))
	}
	measure(a, 60*time.Millisecond)
	assert.Zero(t, h.r.Snapshot().InputDelay.US, "one player")
	measure(b, 100*time.Millisecond)
	assert.Equal(t, int64(105_000), h.r.Snapshot().InputDelay.US, "(60+100)/2 + 25 ms")
	measure(b, 90*time.Millisecond) // the smallest of the kept ones counts: 100 -> 90 is 5 ms one way less
	assert.Equal(t, int64(105_000), h.r.Snapshot().InputDelay.US, "within the hysteresis")
	measure(a, 20*time.Millisecond)
	assert.Equal(t, int64(80_000), h.r.Snapshot().InputDelay.US, "(20+90)/2 + 25 ms, rounded up")
	c, _ := h.join("c")
	measure(c, 400*time.Millisecond)
	assert.Equal(t, int64(150_000), h.r.Snapshot().InputDelay.US, "the cap")
	from := h.now
	assert.Equal(t, 130*time.Millisecond, h.r.InputDelay(from+500*time.Millisecond), "sliding at 0.1 s/s")
}
