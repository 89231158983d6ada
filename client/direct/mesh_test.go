package direct

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// loopback restricts ICE to UDP over 127.0.0.1 with short timeouts, for
// tests on one machine (with Config.LoopbackCandidates and
// ShareHostCandidates, which newMesh sets).
var loopback = []ice.AgentOption{
	ice.WithNetworkTypes([]ice.NetworkType{ice.NetworkTypeUDP4}),
	ice.WithIPFilter(func(ip net.IP) bool { return ip.IsLoopback() }),
	ice.WithDisconnectedTimeout(time.Second),
	ice.WithFailedTimeout(2 * time.Second),
	ice.WithKeepaliveInterval(200 * time.Millisecond),
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
	cfg := Config{Now: now, ICEOptions: loopback, RetryAfter: time.Hour, ShareHostCandidates: true, LoopbackCandidates: true}
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
	pumpVia(t, ms, within, nil, cond)
}

// pumpVia is pump with a relay that may change each signal: it returns
// the signals to deliver in its place (nil relay: each as it is).
func pumpVia(t *testing.T, ms []*Mesh, within time.Duration, relay func(protocol.Signal) []protocol.Signal, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	var sigs []protocol.Signal
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition not met within %v", within)
		for _, m := range ms {
			m.Tick()
			sigs = m.PollSignals(sigs[:0])
			for i := range sigs {
				out := []protocol.Signal{sigs[i]}
				if relay != nil {
					out = relay(sigs[i])
				}
				for _, s := range out {
					ms[s.To].Signal(&s)
				}
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

// TestLagKeepsStatesAtTheirAge checks the clock mapping under the lag
// simulator: states are mapped to when they were sent (both meshes share
// this process's clock), not to when they arrived. ICE's round trip,
// measured beneath the simulator (ours or the peer's), once made the
// mapping take the simulated latency for a clock offset: every state
// 100 ms too new at 50 ms on each side. A player who changes its lag while linked maps its
// peer's states afresh (the round trips of the old setting would hold for
// a minute).
func TestLagKeepsStatesAtTheirAge(t *testing.T) {
	lag := lagsim.Config{Latency: 50 * time.Millisecond}
	seq := 0 // one sequence per test: a receiver refuses older numbers
	var sent map[wire.Seq]time.Duration
	var last time.Duration
	// send sends from's next state, at most 120 a second (the peer's
	// flood limit is 240).
	send := func(t *testing.T, from *Mesh) {
		if now()-last < 8*time.Millisecond {
			return
		}
		seq++
		last = now()
		sent[wire.Seq(seq)] = last
		from.Send(stateFrame(t, seq, last))
	}
	// check sends from -> to until to took 60 states and checks the
	// mapping of the last 20, whose latency is at least least.
	check := func(t *testing.T, from, to *Mesh, least time.Duration) {
		t.Helper()
		sent = map[wire.Seq]time.Duration{}
		var got []State
		pump(t, []*Mesh{from, to}, 10*time.Second, func() bool {
			send(t, from)
			got = to.Poll(got)
			return len(got) >= 60
		})
		var worst time.Duration
		for _, s := range got[len(got)-20:] {
			off := s.Local - sent[s.State.Seq]
			if off < 0 {
				off = -off
			}
			worst = max(worst, off)
			assert.GreaterOrEqual(t, s.Arrival-sent[s.State.Seq], least, "the simulator delayed it")
		}
		t.Logf("largest mapping error of the last 20 states: %v", worst)
		assert.Less(t, worst, 25*time.Millisecond, "states mapped to their send time, not their arrival")
	}
	t.Run("from the start", func(t *testing.T) {
		mod := func(c *Config) { c.Lag = lag }
		a, b := newMesh(t, nil, mod), newMesh(t, nil, mod)
		link(t, a, b)
		check(t, a, b, 100*time.Millisecond)
	})
	t.Run("the peer's lag", func(t *testing.T) {
		// b has none: ICE's round trip placed a's states until b's first
		// pong, and then for a minute, 50 ms too new.
		a, b := newMesh(t, nil, func(c *Config) { c.Lag = lag }), newMesh(t, nil, nil)
		link(t, a, b)
		check(t, a, b, 50*time.Millisecond)
	})
	t.Run("set live", func(t *testing.T) {
		// A short gap window: the old setting's gaps are gone within the
		// test, its round trips (a minute) are not.
		a := newMesh(t, nil, func(c *Config) {
			c.Restamp = clock.RestampConfig{GapWindow: 300 * time.Millisecond, StepAfter: 100 * time.Millisecond}
		})
		b := newMesh(t, nil, nil)
		link(t, a, b)
		check(t, b, a, 0)
		require.NoError(t, a.SetLag(lag))
		until := now() + 500*time.Millisecond
		pump(t, []*Mesh{a, b}, 5*time.Second, func() bool {
			send(t, b)
			a.Poll(nil)
			return now() > until
		})
		check(t, b, a, 50*time.Millisecond)
	})
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
	assert.ErrorIs(t, Config{Now: now, ICEServers: []protocol.ICEServer{{URLs: []string{"http://x"}}}}.Validate(), ErrConfig)
	assert.ErrorIs(t, Config{Now: now, ICEServers: []protocol.ICEServer{{URLs: []string{"turn:198.51.100.7:3478"}}}}.Validate(), ErrConfig,
		"TURN without credentials")
	assert.NoError(t, Config{Now: now, ICEServers: []protocol.ICEServer{
		{URLs: []string{"stun:198.51.100.7:3478"}},
		{URLs: []string{"turn:198.51.100.7:3478?transport=udp"}, Username: "u", Credential: "c"},
	}}.Validate())
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
	b.Signal(&protocol.Signal{From: 0, To: 1, Kind: KindOffer, Data: `{"v":1}`}) // a dropped peer is ignored
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
	a.Signal(&protocol.Signal{From: 1, To: 0, Kind: KindAnswer, Data: "not json"}) // fails the attempt, no crash
	for a.Stats().Failed == 0 {
		require.True(t, time.Now().Before(deadline), "the bad answer fails the attempt")
		a.Tick()
		_ = a.PollSignals(nil)
		time.Sleep(5 * time.Millisecond)
	}
	assert.False(t, a.Open(1))
	assert.Contains(t, log.String(), "unexpected signal")
	assert.True(t, strings.Contains(log.String(), "decode answer"), log.String())
}

// TestFingerprintMismatchNeverOpens: a peer whose DTLS certificate is not
// the one its signal names (here the relay swaps the fingerprint for a
// third Mesh's, in the offer or in the answer) never gets a link: the
// handshake fails on both sides.
func TestFingerprintMismatchNeverOpens(t *testing.T) {
	for _, kind := range []string{KindOffer, KindAnswer} {
		t.Run(kind, func(t *testing.T) {
			var log logBuf
			short := func(c *Config) { c.ConnectTimeout = 5 * time.Second }
			a, b := newMesh(t, &log, short), newMesh(t, &log, short)
			other := newMesh(t, nil, nil)
			forged := 0
			relay := func(s protocol.Signal) []protocol.Signal {
				if s.Kind == kind {
					d, _, err := decodeSignal(s.Data)
					require.NoError(t, err)
					d.FP = other.fp
					s.Data, err = encodeSignal(&d)
					require.NoError(t, err)
					forged++
				}
				return []protocol.Signal{s}
			}
			a.SetPeers(0, []int{0, 1})
			b.SetPeers(1, []int{0, 1})
			pumpVia(t, []*Mesh{a, b}, 15*time.Second, relay, func() bool {
				require.False(t, a.Open(1) || b.Open(0), "a link opened on a forged fingerprint")
				return a.Stats().Failed >= 1 && b.Stats().Failed >= 1
			})
			assert.Equal(t, 1, forged)
			assert.Zero(t, a.Stats().Opened)
			assert.Zero(t, b.Stats().Opened)
			assert.Contains(t, log.String(), "does not match its signalled fingerprint")
		})
	}
}

// TestTrickledCandidates: offers and answers carry no candidates, which
// follow them as "candidate" signals, each as it is gathered; without
// those signals (the control) no link can come up.
func TestTrickledCandidates(t *testing.T) {
	for _, trickle := range []bool{true, false} {
		t.Run(fmt.Sprint("trickle=", trickle), func(t *testing.T) {
			short := func(c *Config) { c.ConnectTimeout = time.Second }
			a, b := newMesh(t, nil, short), newMesh(t, nil, short)
			trickled := 0
			relay := func(s protocol.Signal) []protocol.Signal {
				switch s.Kind {
				case KindOffer, KindAnswer:
					d, _, err := decodeSignal(s.Data)
					require.NoError(t, err)
					assert.Empty(t, d.Cands, "candidates are trickled, not bundled")
				case KindCandidate:
					trickled++
					if !trickle {
						return nil
					}
				}
				return []protocol.Signal{s}
			}
			a.SetPeers(0, []int{0, 1})
			b.SetPeers(1, []int{0, 1})
			if trickle {
				pumpVia(t, []*Mesh{a, b}, 10*time.Second, relay, func() bool { return a.Open(1) && b.Open(0) })
				assert.Positive(t, trickled)
				return
			}
			pumpVia(t, []*Mesh{a, b}, 10*time.Second, relay, func() bool {
				require.False(t, a.Open(1) || b.Open(0), "linked without candidates")
				return a.Stats().Failed >= 1 && b.Stats().Failed >= 1
			})
		})
	}
}

// TestBadOffers: an offer that does not decode (garbage, another version)
// fails the answerer's attempt with a log line; nothing panics, and a
// good offer after it links.
func TestBadOffers(t *testing.T) {
	var log logBuf
	b := newMesh(t, &log, func(c *Config) { c.OfferBurst = 4 }) // the bad offers spend the burst
	b.SetPeers(1, []int{0, 1})
	for i, data := range []string{"not json", `{"v":1,"ufrag":"abcd","pwd":"p","fp":"x"}`, strings.Repeat("x", protocol.MaxSignalData+1)} {
		b.Signal(&protocol.Signal{From: 0, To: 1, Kind: KindOffer, Data: data})
		deadline := time.Now().Add(5 * time.Second)
		for b.Stats().Failed < uint64(i+1) {
			require.True(t, time.Now().Before(deadline), "offer %d fails the attempt", i)
			b.Tick()
			time.Sleep(2 * time.Millisecond)
		}
	}
	assert.Equal(t, 3, strings.Count(log.String(), "decode offer"), log.String())
	assert.Contains(t, log.String(), "version 1")
	assert.Contains(t, log.String(), "over the signal limit")
	a := newMesh(t, nil, nil)
	link(t, a, b)
}

// TestLinkBytes: a link's round trip and its bytes each way, for the
// editor's debugger.
func TestLinkBytes(t *testing.T) {
	a, b := newMesh(t, nil, nil), newMesh(t, nil, nil)
	_, ok := a.LinkStats(1)
	assert.False(t, ok, "no link yet")
	link(t, a, b)
	pump(t, []*Mesh{a, b}, 10*time.Second, func() bool {
		f, ok := a.LinkStats(1)
		return ok && f.RTT > 0 && f.BytesIn > 0 && f.BytesOut > 0
	})
	f, _ := a.LinkStats(1)
	assert.True(t, f.Open)
}
