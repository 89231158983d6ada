package direct

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Loopback restricts a setting engine to UDP over 127.0.0.1 with short
// ICE timeouts, for tests on one machine.
func loopback(se *webrtc.SettingEngine) {
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetIncludeLoopbackCandidate(true)
	se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
	se.SetICETimeouts(time.Second, 2*time.Second, 200*time.Millisecond)
}

var start = time.Now()

func now() time.Duration { return time.Since(start) }

// logBuf is a concurrency-safe log sink for checking log lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newMesh(t *testing.T, log *logBuf, mod func(*Config)) *Mesh {
	t.Helper()
	cfg := Config{Now: now, Tune: loopback, RetryAfter: time.Hour}
	if log != nil {
		cfg.Log = slog.New(slog.NewTextHandler(log, nil))
	}
	if mod != nil {
		mod(&cfg)
	}
	m, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		m.Close()
		assert.True(t, m.Wait(5*time.Second), "mesh goroutines end")
	})
	return m
}

// pump relays signals between the meshes (the server's job) until cond
// holds or the deadline passes.
func pump(t *testing.T, ms []*Mesh, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	var sigs []protocol.Signal
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition not met within %v", within)
		for _, m := range ms {
			m.Tick()
			sigs = m.PollSignals(sigs[:0])
			for i := range sigs {
				s := sigs[i]
				ms[s.To].Signal(&s)
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func stateFrame(t *testing.T, seq int, at time.Duration) []byte {
	t.Helper()
	st := wire.State{Seq: wire.Seq(seq), Stamp: wire.StampOf(at), Slot: 9, Pos: geom.Vec3{X: float64(seq)}, Rot: geom.Identity}
	b, err := wire.AppendState(nil, &st)
	require.NoError(t, err)
	return b
}

func link(t *testing.T, a, b *Mesh) {
	t.Helper()
	a.SetPeers(0, []int{0, 1})
	b.SetPeers(1, []int{0, 1})
	pump(t, []*Mesh{a, b}, 10*time.Second, func() bool { return a.Open(1) && b.Open(0) })
}

func TestLinkCarriesStates(t *testing.T) {
	a, b := newMesh(t, nil, nil), newMesh(t, nil, nil)
	link(t, a, b)
	var got []State
	pump(t, []*Mesh{a, b}, 5*time.Second, func() bool {
		a.Send(stateFrame(t, len(got)+1, now()))
		got = b.Poll(got)
		return len(got) >= 20
	})
	st := got[len(got)-1]
	assert.EqualValues(t, 0, st.State.Slot, "the slot is the link's, not the frame's")
	assert.InDelta(t, st.Arrival.Seconds(), st.Local.Seconds(), 0.05, "re-stamped onto our clock")
	assert.Positive(t, a.Stats().Sent)
	assert.Positive(t, b.Stats().Received)
}

func TestLagUnderTheLink(t *testing.T) {
	lag := lagsim.Config{Latency: 40 * time.Millisecond}
	a, b := newMesh(t, nil, nil), newMesh(t, nil, func(c *Config) { c.Lag = lag })
	link(t, a, b)
	sent := map[wire.Seq]time.Duration{}
	var got []State
	seq := 0
	pump(t, []*Mesh{a, b}, 5*time.Second, func() bool {
		seq++
		sent[wire.Seq(seq)] = now()
		a.Send(stateFrame(t, seq, now()))
		got = b.Poll(got)
		return len(got) >= 10
	})
	for _, s := range got {
		assert.GreaterOrEqual(t, s.Arrival-sent[s.State.Seq], 40*time.Millisecond)
	}
	require.NoError(t, b.SetLag(lagsim.Config{}))
}

func TestGarbageDropsThePeer(t *testing.T) {
	var log logBuf
	a, b := newMesh(t, nil, nil), newMesh(t, &log, nil)
	link(t, a, b)
	pump(t, []*Mesh{a, b}, 5*time.Second, func() bool {
		a.Send([]byte{0x00, 0xde, 0xad}) // kind 00: invalid
		return b.Stats().Dropped > 0
	})
	assert.False(t, b.Open(0))
	assert.Contains(t, log.String(), "dropped from direct play")
	assert.Contains(t, log.String(), "garbage")
}

func TestFloodDropsThePeer(t *testing.T) {
	var log logBuf
	a, b := newMesh(t, nil, nil), newMesh(t, &log, nil)
	link(t, a, b)
	pump(t, []*Mesh{a, b}, 5*time.Second, func() bool {
		for i := range 100 {
			a.Send(stateFrame(t, i, now()))
		}
		return b.Stats().Dropped > 0
	})
	assert.Contains(t, log.String(), "flood")
	// A dropped peer gets no new link, even when it offers again.
	a.Kill(1)
	a.cfg.RetryAfter = 0
	time.Sleep(50 * time.Millisecond)
	pump(t, []*Mesh{a, b}, time.Second, func() bool { return a.Stats().Failed >= 1 })
	assert.False(t, b.Open(0))
}

func TestKillAndRetry(t *testing.T) {
	a := newMesh(t, nil, func(c *Config) { c.RetryAfter = 100 * time.Millisecond })
	b := newMesh(t, nil, nil)
	link(t, a, b)
	a.Kill(1)
	assert.False(t, a.Open(1))
	pump(t, []*Mesh{a, b}, 10*time.Second, func() bool { return a.Open(1) && b.Open(0) && a.Stats().Opened == 2 })
}

func TestPeersLeaving(t *testing.T) {
	a, b := newMesh(t, nil, nil), newMesh(t, nil, nil)
	link(t, a, b)
	a.SetPeers(0, []int{0})
	assert.False(t, a.Open(1))
	pump(t, []*Mesh{a, b}, 5*time.Second, func() bool { return !b.Open(0) })
}

func TestConfigValidate(t *testing.T) {
	assert.ErrorIs(t, Config{}.Validate(), ErrConfig, "Now is required")
	assert.ErrorIs(t, Config{Now: now, MaxRate: -1}.Validate(), ErrConfig)
	assert.ErrorIs(t, Config{Now: now, Lag: lagsim.Config{Loss: 2}}.Validate(), ErrConfig)
	assert.NoError(t, Config{Now: now}.Validate())
}

// TestPanicInCallbackDropsThePeer: a panic in our code under a pion
// callback is recovered and logged, and the peer is dropped; nothing else
// stops.
func TestPanicInCallbackDropsThePeer(t *testing.T) {
	var log logBuf
	a, b := newMesh(t, nil, nil), newMesh(t, &log, nil)
	link(t, a, b)
	func() {
		defer b.recoverIn(0, "test")
		panic("boom")
	}()
	assert.False(t, b.Open(0))
	assert.Equal(t, uint64(1), b.Stats().Dropped)
	assert.Contains(t, log.String(), "recovered a panic")
	assert.Contains(t, log.String(), "boom")
	b.Signal(&protocol.Signal{From: 0, To: 1, Kind: KindOffer, Data: "v=0"}) // a dropped peer is ignored
	b.Tick()
}

// TestBadSignals: signals out of turn or from strangers change nothing.
func TestBadSignals(t *testing.T) {
	var log logBuf
	a := newMesh(t, &log, nil)
	a.SetPeers(0, []int{0, 1})
	a.Signal(&protocol.Signal{From: 1, To: 0, Kind: KindOffer, Data: "x"})  // only the lower slot offers
	a.Signal(&protocol.Signal{From: 7, To: 0, Kind: KindAnswer, Data: "x"}) // not a peer
	a.Signal(&protocol.Signal{From: 1, To: 0, Kind: "nonsense", Data: "x"})
	deadline := time.Now().Add(5 * time.Second)
	for len(a.PollSignals(nil)) == 0 { // our offer, which goes nowhere
		require.True(t, time.Now().Before(deadline), "an offer")
		a.Tick()
		time.Sleep(5 * time.Millisecond)
	}
	a.Signal(&protocol.Signal{From: 1, To: 0, Kind: KindAnswer, Data: "not sdp"}) // fails the attempt, no crash
	for a.Stats().Failed == 0 {
		require.True(t, time.Now().Before(deadline), "the bad answer fails the attempt")
		a.Tick()
		_ = a.PollSignals(nil)
		time.Sleep(5 * time.Millisecond)
	}
	assert.False(t, a.Open(1))
	assert.Contains(t, log.String(), "unexpected signal")
	assert.True(t, strings.Contains(log.String(), "set answer"), log.String())
}
