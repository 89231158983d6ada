package room

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

func TestRelayRestampsAndFansOut(t *testing.T) {
	h := newHarness(t, testConfig())
	a, slotA := h.join("a")
	b, _ := h.join("b")
	c, _ := h.join("c")
	h.settle()
	const latency = 20 * time.Millisecond
	senderOrigin := h.now - 5*time.Second // the sender's clock reads 5 s less than ours... plus its own origin
	h.send(a, &protocol.Ping{TUS: 1, RTTUS: protocol.US(2 * latency)})
	a.Take()
	b.Take()
	c.Take()

	var sampled []time.Duration
	for i := 0; i < 30; i++ {
		sample := h.now
		sampled = append(sampled, sample)
		frame := stateFrame(t, i, sample-senderOrigin, geom.Vec3{X: float64(i) * 0.3}, geom.Vec3{X: 18}, 0)
		h.now += latency
		h.r.HandleFrame(h.now, a, frame)
		h.now += time.Second/60 - latency
	}
	for _, p := range []*MemPeer{b, c} {
		fs := p.Take()
		require.Len(t, fs, 30)
		for i, f := range fs {
			assert.False(t, f.Reliable, "states are unreliable")
			var s wire.State
			require.NoError(t, wire.DecodeState(f.Data, &s))
			assert.Equal(t, uint8(slotA), s.Slot, "the slot is the sender's, whatever it wrote")
			assert.Equal(t, wire.Seq(i), s.Seq)
			got := s.Stamp.Near(sampled[i])
			assert.InDelta(t, float64(sampled[i]), float64(got), float64(20*time.Microsecond),
				"state %d: re-stamped onto the server clock at its sample time", i)
			assert.InDelta(t, float64(i)*0.3, s.Pos.X, 1e-6)
		}
	}
	assert.Empty(t, a.Take(), "no echo to the sender")
	assert.Equal(t, 30, h.metrics.in)
	assert.Equal(t, 60, h.metrics.relayed)
	assert.Positive(t, h.metrics.offsets)

	last, arrival, ok := h.r.LastState(slotA)
	require.True(t, ok, "a copy of the last state is kept")
	assert.Equal(t, wire.Seq(29), last.Seq)
	assert.Equal(t, h.now-time.Second/60+latency, arrival)
	_, _, ok = h.r.LastState(3)
	assert.False(t, ok)

	// A late joiner gets everyone's last state at once.
	d, _ := h.join("d")
	states := States(d.Take())
	require.Len(t, states, 1)
	assert.Equal(t, wire.Seq(29), states[0].Seq)
}

func TestDirectLinkStopsRelayForThePair(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, slotB := h.join("b")
	c, _ := h.join("c")
	seq := 0
	sendA := func() {
		h.now += 10 * time.Millisecond
		h.r.HandleFrame(h.now, a, stateFrame(t, seq, h.now, geom.Vec3{}, geom.Vec3{}, 0))
		seq++
	}
	count := func(p *MemPeer) int { return len(States(p.Take())) }
	b.Take()
	c.Take()

	h.send(a, &protocol.DirectLink{Slot: slotB, Up: true})
	sendA()
	assert.Equal(t, 1, count(b), "one side reporting is not enough")
	c.Take()
	h.send(b, &protocol.DirectLink{Slot: 0, Up: true})
	sendA()
	relayed, skipped := h.metrics.relayed, h.metrics.skipped
	sendA()
	assert.Equal(t, 0, count(b), "both report: the server stops relaying the pair")
	assert.Equal(t, 2, count(c), "others still get it")
	assert.Equal(t, 1, h.metrics.relayed-relayed, "metrics: relayed to c")
	assert.Equal(t, 1, h.metrics.skipped-skipped, "metrics: skipped for b")
	last, _, ok := h.r.LastState(0)
	require.True(t, ok)
	assert.Equal(t, wire.Seq(2), last.Seq, "the server still receives every state")

	h.send(b, &protocol.DirectLink{Slot: 0, Up: false})
	sendA()
	assert.Equal(t, 1, count(b), "down again: relay resumes")

	h.send(b, &protocol.DirectLink{Slot: 0, Up: true})
	h.r.Disconnect(h.now, b)
	b2 := &MemPeer{}
	_, err := h.r.Join(h.now, b2, Member{User: "b"})
	require.NoError(t, err)
	b2.Take()
	sendA()
	assert.Equal(t, 1, count(b2), "a reconnect forgets direct links")
	h.send(b2, &protocol.DirectLink{Slot: 0, Up: true})
	sendA()
	assert.Equal(t, 0, count(b2), "the reconnected player reports again; the other's report stood")
	h.send(b2, &protocol.DirectLink{Slot: 0, Up: false})

	h.send(a, &protocol.DirectLink{Slot: 0, Up: true})
	assert.Equal(t, protocol.CodeBadRequest, errorsIn(msgs(a))[0].Code, "no link to yourself")
}

// motion describes one state for the checks table: sent dt after the
// previous one, stamped sdt after it, at position x, speed v.
type move struct {
	dt, sdt time.Duration
	x, v    float64
	flags   wire.Flags
	seq     int  // 0: next sequence number
	dim2D   bool // a 2D state (pixels)
}

func TestChecks(t *testing.T) {
	const tick = time.Second / 60
	steady := func(n int, speed float64) []move {
		out := make([]move, n)
		for i := range out {
			out[i] = move{dt: tick, sdt: tick, x: speed * float64(i+1) * tick.Seconds(), v: speed}
		}
		return out
	}
	steady2D := func(n int, speed float64) []move {
		out := steady(n, speed)
		for i := range out {
			out[i].dim2D = true
		}
		return out
	}
	cases := []struct {
		name     string
		cfg      func(*Config)
		states   []move
		rejected map[Reject]int
		kicked   protocol.Code // 0: not kicked
	}{
		{name: "steady 60 Hz at top speed passes", states: steady(240, 100)},
		{name: "twice top speed passes", states: steady(60, 199)},
		{name: "absurd speed", states: append(steady(10, 50), move{dt: tick, sdt: tick, x: 10, v: 250}),
			rejected: map[Reject]int{RejectSpeed: 1}},
		{name: "teleport", states: append(steady(10, 50), move{dt: tick, sdt: tick, x: 1000, v: 50}),
			rejected: map[Reject]int{RejectTeleport: 1}},
		{name: "2D pixels at 1500 px/s pass", states: steady2D(240, 1500)},
		{name: "2D absurd speed", states: append(steady2D(10, 500),
			move{dt: tick, sdt: tick, x: 100, v: 5000, dim2D: true}),
			rejected: map[Reject]int{RejectSpeed: 1}},
		{name: "2D teleport", states: append(steady2D(10, 500),
			move{dt: tick, sdt: tick, x: 5000, v: 500, dim2D: true}),
			rejected: map[Reject]int{RejectTeleport: 1}},
		{name: "teleport flag once per second", states: append(steady(10, 50),
			move{dt: tick, sdt: tick, x: 1000, v: 0, flags: wire.FlagTeleport},
			move{dt: 100 * time.Millisecond, sdt: 100 * time.Millisecond, x: 2000, v: 0, flags: wire.FlagTeleport},
			move{dt: time.Second, sdt: time.Second, x: 3000, v: 0, flags: wire.FlagTeleport}),
			rejected: map[Reject]int{RejectTeleport: 1}},
		{name: "states bunched by a stall pass", states: func() []move {
			m := steady(10, 100)
			x := m[len(m)-1].x
			m = append(m, move{dt: 300 * time.Millisecond, sdt: tick, x: x + 100*tick.Seconds(), v: 100})
			for i := 2; i <= 18; i++ { // 17 more, all arriving at once
				m = append(m, move{dt: 0, sdt: tick, x: x + 100*float64(i)*tick.Seconds(), v: 100})
			}
			return m
		}()},
		{name: "forged stamps buy at most the allowance", states: append(steady(10, 50),
			move{dt: tick, sdt: 10 * time.Second, x: 50*10 + 10, v: 50}),
			rejected: map[Reject]int{RejectTeleport: 1}},
		{name: "stale sequence", states: append(steady(5, 10), move{dt: tick, sdt: tick, x: 0.9, v: 10, seq: 3}),
			rejected: map[Reject]int{RejectStale: 1}},
		{name: "motion checks off", cfg: func(c *Config) { c.NoMotionChecks = true },
			states: append(steady(10, 50), move{dt: tick, sdt: tick, x: 1e6, v: 60000})},
		{name: "flood is rate limited then kicked", states: func() []move {
			m := make([]move, 200)
			for i := range m {
				m[i] = move{x: 0, v: 0}
			}
			return m
		}(), rejected: map[Reject]int{RejectRate: -1}, kicked: protocol.CodeRateLimited},
		{name: "repeated speeding is kicked", states: func() []move {
			m := make([]move, 100)
			for i := range m {
				m[i] = move{dt: tick, sdt: tick, v: 1000}
			}
			return m
		}(), rejected: map[Reject]int{RejectSpeed: -1}, kicked: protocol.CodeImplausible},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			h := newHarness(t, cfg)
			a, _ := h.join("a")
			b, _ := h.join("b")
			b.Take()
			stamp := time.Minute
			seq := 0
			for _, m := range tc.states {
				h.now += m.dt
				stamp += m.sdt
				s := seq
				if m.seq != 0 {
					s = m.seq
				}
				seq++
				frame := stateFrame(t, s, stamp, geom.Vec3{X: m.x}, geom.Vec3{X: m.v}, m.flags)
				if m.dim2D {
					frame = stateFrame2D(t, s, stamp, m.x, m.v, m.flags)
				}
				h.r.HandleFrame(h.now, a, frame)
			}
			total := 0
			for r, n := range tc.rejected {
				if n < 0 { // until kicked: past the abuse limit, net of decay
					assert.Greater(t, h.metrics.rejected[r], int(DefaultAbuseLimit), "rejected for %s", r)
					continue
				}
				assert.Equal(t, n, h.metrics.rejected[r], "rejected for %s", r)
				total += n
			}
			for r, n := range h.metrics.rejected {
				if _, ok := tc.rejected[r]; !ok {
					assert.Zero(t, n, "unexpected rejections for %s", r)
				}
			}
			if tc.kicked != 0 {
				assert.True(t, a.Closed)
				assert.Equal(t, tc.kicked, a.CloseCode)
				assert.Equal(t, 1, h.metrics.kicked[tc.kicked])
				assert.Equal(t, 1, h.r.Players(), "the abuser's seat is freed")
				return
			}
			assert.False(t, a.Closed)
			assert.Len(t, States(b.Take()), len(tc.states)-total, "every accepted state is relayed")
			if total > 0 {
				errs := errorsIn(msgs(a))
				require.NotEmpty(t, errs, "the sender hears why")
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	ctl := func(ty wire.ControlType, body string) []byte {
		b, err := wire.AppendControl(nil, ty, []byte(body))
		require.NoError(t, err)
		return b
	}
	good := stateFrame(t, 1, time.Second, geom.Vec3{}, geom.Vec3{}, 0)
	nan := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(nan[8:], math.Float32bits(float32(math.NaN())))
	otherVersion := ctl(protocol.TypeReady, `{}`)
	otherVersion[1]++
	cases := []struct {
		name   string
		frame  []byte
		code   protocol.Code
		reject Reject
		closed bool
	}{
		{"truncated state", good[:12], protocol.CodeBadFrame, RejectMalformed, false},
		{"oversized state", append(append([]byte(nil), good...), 0), protocol.CodeBadFrame, RejectMalformed, false},
		{"NaN position", nan, protocol.CodeBadFrame, RejectMalformed, false},
		{"invalid kind", []byte{0x00, 1, 2}, protocol.CodeBadFrame, RejectMalformed, false},
		{"empty", nil, protocol.CodeBadFrame, RejectMalformed, false},
		{"unknown control type", ctl(250, `{}`), protocol.CodeUnknownType, RejectUnknownType, false},
		{"bad body", ctl(protocol.TypeLoading, `{"progress":"all"}`), protocol.CodeBadRequest, RejectBadRequest, false},
		{"other protocol version", otherVersion, protocol.CodeUpdateRequired, RejectVersion, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			a, _ := h.join("a")
			b, _ := h.join("b")
			a.Take()
			h.r.HandleFrame(h.now, a, tc.frame)
			errs := errorsIn(msgs(a))
			require.Len(t, errs, 1)
			assert.Equal(t, tc.code, errs[0].Code, errs[0].Message)
			assert.Equal(t, 1, h.metrics.rejected[tc.reject])
			assert.Equal(t, tc.closed, a.Closed)
			if tc.closed {
				assert.Equal(t, tc.code, a.CloseCode)
			}
			assert.Empty(t, States(b.Take()), "nothing bad is relayed")
		})
	}
}

func TestControlFloodIsLimited(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	ping := protocol.MustMarshal(&protocol.Ping{TUS: 1})
	for i := 0; i < 40; i++ {
		h.r.HandleFrame(h.now, a, ping)
	}
	assert.Len(t, ofType[*protocol.Pong](msgs(a)), 40, "the burst passes")
	h.r.HandleFrame(h.now, a, ping)
	errs := errorsIn(msgs(a))
	require.Len(t, errs, 1)
	assert.Equal(t, protocol.CodeRateLimited, errs[0].Code)
	for i := 0; i < 100 && !a.Closed; i++ {
		h.r.HandleFrame(h.now, a, ping)
	}
	assert.True(t, a.Closed, "a sustained flood disconnects")
	assert.Equal(t, protocol.CodeRateLimited, a.CloseCode)
	assert.Equal(t, 1, h.r.Players())
	h.send(b, &protocol.Ping{TUS: 2})
	assert.Len(t, ofType[*protocol.Pong](msgs(b)), 1, "the other player is unaffected")
}

func TestAbuseDecays(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	// 50 malformed frames a second would pass the limit; 3 a second do not.
	for i := 0; i < 300; i++ {
		h.now += 333 * time.Millisecond
		h.r.HandleFrame(h.now, a, []byte{0x40})
	}
	assert.False(t, a.Closed, "occasional bad frames are forgiven")
	assert.Equal(t, 300, h.metrics.rejected[RejectMalformed])
}

// TestDirectLinkReportAboutAPlayerWhoLeft checks that a direct-link
// report about a slot whose player just left is ignored: the client's
// watchdog reports a link down after its peer went silent, which is
// often because the peer left. Before, it got a bad_request error that
// games showed as room_error.
func TestDirectLinkReportAboutAPlayerWhoLeft(t *testing.T) {
	h := newHarness(t, testConfig())
	a, slotA := h.join("a")
	b, slotB := h.join("b")
	require.True(t, h.r.Leave(h.now, b))
	a.Take()
	h.send(a, &protocol.DirectLink{Slot: slotB, Up: false})
	assert.Empty(t, errorsIn(msgs(a)), "nothing to answer")
	h.send(a, &protocol.DirectLink{Slot: slotA, Up: true})
	assert.Len(t, errorsIn(msgs(a)), 1, "a link to yourself is still a bad request")
}

// TestPingGapTightensRestamping: a player's ping says its fastest pong
// down (GapUS, on its clock, less the server's reading); the room adds the
// fastest of the player's states up and maps its stamps by that round
// trip where it is below the claimed one. A claimed round trip 10 ms above
// the fastest trips (a jittery ping's) alone maps every state 5 ms early.
func TestPingGapTightensRestamping(t *testing.T) {
	const latency = 20 * time.Millisecond
	for _, withGap := range []bool{true, false} {
		h := newHarness(t, testConfig())
		a, _ := h.join("a")
		b, _ := h.join("b")
		h.settle()
		senderOrigin := h.now - 5*time.Second // the sender's clock: ours less 5 s and its origin
		ping := &protocol.Ping{TUS: 1, RTTUS: protocol.US(2*latency + 10*time.Millisecond)}
		if withGap {
			// A pong read at server time s arrives at s + latency, which the
			// sender's clock reads as s + latency - senderOrigin.
			gap := protocol.US(latency - senderOrigin)
			ping.GapUS = &gap
		}
		h.send(a, ping)
		a.Take()
		b.Take()
		var off time.Duration
		for i := range 30 {
			sample := h.now
			frame := stateFrame(t, i, sample-senderOrigin, geom.Vec3{X: float64(i) * 0.3}, geom.Vec3{X: 18}, 0)
			h.now += latency
			h.r.HandleFrame(h.now, a, frame)
			for _, st := range States(b.Take()) {
				off = st.Stamp.Near(sample) - sample
			}
			h.now += time.Second/60 - latency
		}
		if withGap {
			assert.InDelta(t, 0, float64(off), float64(20*time.Microsecond), "with the gap: stamped at the sample time")
		} else {
			assert.InDelta(t, float64(-5*time.Millisecond), float64(off), float64(20*time.Microsecond), "the claim alone: 5 ms early")
		}
	}
}
