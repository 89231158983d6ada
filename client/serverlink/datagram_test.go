package serverlink_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/internal/testkit/udpproxy"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server"
)

// dgWait bounds each test's waits (never reached when all is well).
const dgWait = 30 * time.Second

// pair is two clients in one room on one clock: a sends, b receives.
type pair struct {
	srv   *testkit.Server
	clk   *realtime.Wall
	a, b  *serverlink.Conn
	proxy *udpproxy.Proxy // between a and the server's UDP port, when asked
}

// newPair seats a (through a UDP proxy when proxied) and b in a room.
func newPair(t *testing.T, ctx context.Context, proxied, blockedFromStart bool) *pair {
	t.Helper()
	p := &pair{srv: testkit.StartServer(t, server.Deps{}), clk: realtime.NewWall()}
	oa := serverlink.Options{Sync: quickSync, Clock: p.clk}
	if proxied {
		p.proxy = udpproxy.Start(t, p.srv.DatagramAddr())
		p.proxy.Block(blockedFromStart)
		oa.DatagramAddr = p.proxy.Addr()
	}
	var err error
	p.a, err = serverlink.Dial(ctx, p.srv.URL(), &oa)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.a.Close(context.Background()) })
	p.b, err = serverlink.Dial(ctx, p.srv.URL(), &serverlink.Options{Sync: quickSync, Clock: p.clk})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.b.Close(context.Background()) })
	j, err := p.a.Create(ctx, nil)
	require.NoError(t, err)
	_, err = p.b.Join(ctx, j.Code)
	require.NoError(t, err)
	waitUntil(t, ctx, "both synced", func() bool { return p.a.Synced() && p.b.Synced() })
	return p
}

func waitUntil(t *testing.T, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// sender sends a's states at 60 Hz along the x axis at 5 m/s, stamped on
// the shared clock, until stop; sampled[seq] is each state's sample time.
type sender struct {
	mu      sync.Mutex
	sampled map[wire.Seq]time.Duration
	stop    chan struct{}
	done    chan struct{}
}

const speed = 5.0 // m/s

func (p *pair) send(t *testing.T) *sender { return sendFrom(t, p.a, p.clk) }

// sendFrom sends c's states as (*pair).send does.
func sendFrom(t *testing.T, c *serverlink.Conn, clk *realtime.Wall) *sender {
	s := &sender{sampled: map[wire.Seq]time.Duration{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second / 60)
		defer tick.Stop()
		for seq := wire.Seq(1); ; seq++ {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			now := clk.Now()
			x := speed * now.Seconds()
			st := &wire.State{Seq: seq, Stamp: wire.StampOf(now), Pos: geom.Vec3{X: x}, Vel: geom.Vec3{X: speed}, Rot: geom.Quat{W: 1}}
			s.mu.Lock()
			s.sampled[seq] = now
			s.mu.Unlock()
			if err := c.SendState(st); err != nil {
				t.Errorf("send state: %v", err)
				return
			}
		}
	}()
	return s
}

func (s *sender) halt() { close(s.stop); <-s.done }

func (s *sender) sampledAt(seq wire.Seq) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.sampled[seq]
	return at, ok
}

// receiver collects b's states from a.
type receiver struct {
	got []serverlink.RemoteState
}

func (r *receiver) poll(b *serverlink.Conn) int {
	n := len(r.got)
	r.got = b.PollStates(r.got)
	return len(r.got) - n
}

// checkStream asserts that every state arrived once, and that each maps
// onto the time its position was at on the sender's clock (one clock for
// both: a jump of the mapping at a switch would show as an error).
func checkStream(t *testing.T, s *sender, got []serverlink.RemoteState) {
	t.Helper()
	seen := map[wire.Seq]bool{}
	worst := time.Duration(0)
	for _, rs := range got {
		assert.False(t, seen[rs.State.Seq], "state %d arrived twice", rs.State.Seq)
		seen[rs.State.Seq] = true
		_, ok := s.sampledAt(rs.State.Seq)
		require.True(t, ok, "state %d was sent", rs.State.Seq)
		// The writer carries a state to its write (the send lead) and
		// stamps it then: its position is where the sender was at its
		// stamp.
		at := time.Duration(float64(rs.State.Pos.X) / speed * float64(time.Second))
		worst = max(worst, (rs.Local - at).Abs())
	}
	t.Logf("%d states; largest error of a mapped sample time: %v", len(got), worst)

	// Drawn: the states through a predictor, in arrival order, drawn at
	// 60 Hz over the whole stream. The mover's true position at a frame is
	// speed x the frame's time (one clock): a state drawn twice or a jump
	// of the mapping at a switch would show as an error; a gap is coasted
	// over at the mover's constant speed.
	pr, err := predict.New(predict.Config{})
	require.NoError(t, err)
	// A writer that wakes late (a loaded machine) stamps the states it
	// found queued at its write: two may share a sample time, and the
	// predictor keeps the first. Any other refusal is a state taken twice.
	stamps := map[time.Duration]int{}
	for _, rs := range got {
		stamps[rs.Local]++
	}
	next, drawErr := 0, 0.0
	for f := got[0].Arrival; f <= got[len(got)-1].Arrival; f += time.Second / 60 {
		for ; next < len(got) && got[next].Arrival <= f; next++ {
			rs := got[next]
			if !pr.Add(predict.PathServer, predict.SampleOf(&rs.State, rs.Local), rs.Arrival) {
				assert.Greater(t, stamps[rs.Local], 1, "state %d taken once", rs.State.Seq)
			}
		}
		pose := pr.PoseAt(f)
		drawErr = max(drawErr, math.Abs(float64(pose.Pos.X)-speed*f.Seconds()))
	}
	t.Logf("largest drawn error: %.3f m", drawErr)
	assert.Less(t, drawErr, 0.5, "drawn where the mover is, within half a metre at 5 m/s")
	// A jump of the mapping at a switch would be a path's one-way delay
	// or more, and a wrong clock seconds; the bound leaves a busy
	// machine's sync error room.
	assert.Less(t, worst, 100*time.Millisecond, "sample times map onto the sender's clock throughout")
}

func TestDatagramPathCarriesStates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dgWait)
	defer cancel()
	p := newPair(t, ctx, false, false)
	waitUntil(t, ctx, "the datagram path", func() bool { return p.a.DatagramUp() && p.b.DatagramUp() })
	in0 := p.srv.Counter(t, "nearzero_datagram_states_in_total")

	s := p.send(t)
	var r receiver
	waitUntil(t, ctx, "120 states", func() bool { r.poll(p.b); return len(r.got) >= 120 })
	s.halt()
	checkStream(t, s, r.got)

	// A machine too busy to run the keepalives in time may take the path
	// for down for a moment (states then go by the WebSocket): most go
	// as datagrams all the same.
	sa, sb := p.a.Stats(), p.b.Stats()
	assert.GreaterOrEqual(t, sa.StatesSentDatagram, int64(60), "a's states went as datagrams")
	assert.GreaterOrEqual(t, sb.StatesReceivedDatagram, int64(60), "and reached b as datagrams")
	assert.Equal(t, int64(1), sa.DatagramBinds)
	assert.GreaterOrEqual(t, p.srv.Counter(t, "nearzero_datagram_states_in_total")-in0, 60.0, "the server took them as datagrams")
	// The debugger's bytes per second count the datagram path too.
	assert.GreaterOrEqual(t, sa.BytesOut, sa.StatesSentDatagram*wire.MinState3DSize, "a's datagrams are counted in BytesOut")
	assert.GreaterOrEqual(t, sb.BytesIn, sb.StatesReceivedDatagram*wire.MinState3DSize, "b's in BytesIn")
	t.Logf("a sent %d of %d states as datagrams; fall backs: a %d, server %.0f", sa.StatesSentDatagram, sa.StatesSent,
		sa.DatagramFallbacks, p.srv.Counter(t, "nearzero_datagram_fallbacks_total"))
}

// TestLagSimulatorOverDatagrams: while the datagram path is up, the lag
// simulator treats states as UDP does: a loss loses that state alone
// (none sent again, nothing behind it held up), where on the WebSocket
// (TestLagSimulator) a loss delays everything behind it.
func TestLagSimulatorOverDatagrams(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dgWait)
	defer cancel()
	srv := testkit.StartServer(t, server.Deps{})
	clk := realtime.NewWall()
	const latency = 40 * time.Millisecond
	lagged, err := serverlink.Dial(ctx, srv.URL(), &serverlink.Options{Sync: quickSync, Clock: clk,
		Lag: serverlink.LagConfig{Latency: latency, Loss: 0.1}, Seed: 3})
	require.NoError(t, err)
	defer lagged.Close(ctx)
	plain, err := serverlink.Dial(ctx, srv.URL(), &serverlink.Options{Sync: quickSync, Clock: clk})
	require.NoError(t, err)
	defer plain.Close(ctx)
	j, err := lagged.Create(ctx, nil)
	require.NoError(t, err)
	_, err = plain.Join(ctx, j.Code)
	require.NoError(t, err)
	waitUntil(t, ctx, "synced, on the datagram path", func() bool {
		return lagged.Synced() && plain.Synced() && lagged.DatagramUp() && plain.DatagramUp()
	})
	dropped0, wsSent0 := lagged.Stats().LagDropped, lagged.Stats().StatesSent-lagged.Stats().StatesSentDatagram

	const n = 120
	for i := 1; i <= n; i++ {
		require.NoError(t, lagged.SendState(&wire.State{Seq: wire.Seq(i), Rot: geom.Quat{W: 1}}))
		time.Sleep(time.Second / 60)
	}
	var got []serverlink.RemoteState
	seen := map[wire.Seq]bool{}
	// Every state the simulator did not lose arrives: wait for them.
	waitUntil(t, ctx, "the states not lost", func() bool {
		for _, st := range plain.PollStates(nil) {
			assert.False(t, seen[st.State.Seq], "state %d twice", st.State.Seq)
			seen[st.State.Seq] = true
			got = append(got, st)
		}
		st := lagged.Stats()
		return int64(len(got))+st.LagDropped-dropped0 >= n
	})
	st := lagged.Stats()
	lost := st.LagDropped - dropped0
	t.Logf("%d of %d states lost by the simulator, %d sent again; %d sent by the WebSocket",
		lost, n, st.LagRetransmitted, st.StatesSent-st.StatesSentDatagram-wsSent0)
	assert.Less(t, len(got), n, "seed 3, 10 %% loss: the simulator loses states on the datagram path")
	assert.Positive(t, lost)
	assert.Less(t, lost, int64(n/3))
	if st.StatesSent-st.StatesSentDatagram == wsSent0 { // all went as datagrams: none came twice or late
		assert.Equal(t, int64(n), int64(len(got))+lost, "each state arrives once or is lost")
	}
}

func TestDatagramPathOff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dgWait)
	defer cancel()
	srv := testkit.StartServer(t, server.Deps{})
	c, err := serverlink.Dial(ctx, srv.URL(), &serverlink.Options{NoDatagrams: true, Sync: quickSync})
	require.NoError(t, err)
	defer c.Close(ctx)
	require.NotNil(t, c.Welcome().Datagram, "the server offers it")
	time.Sleep(100 * time.Millisecond)
	assert.False(t, c.DatagramUp(), "NoDatagrams: not dialled")
	assert.Zero(t, c.Stats().DatagramBinds)
}

// TestDatagramPathDiesMidGame cuts a's UDP at the router while it sends:
// its states go on over the WebSocket, none twice, none mapped elsewhere,
// and back over datagrams once UDP passes again.
func TestDatagramPathDiesMidGame(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dgWait)
	defer cancel()
	p := newPair(t, ctx, true, false)
	waitUntil(t, ctx, "the datagram path", func() bool { return p.a.DatagramUp() && p.b.DatagramUp() })
	s := p.send(t)
	var r receiver
	waitUntil(t, ctx, "60 states", func() bool { r.poll(p.b); return len(r.got) >= 60 })
	require.Positive(t, p.a.Stats().StatesSentDatagram)

	p.proxy.Block(true)
	cut := p.clk.Now()
	before := len(r.got)
	waitUntil(t, ctx, "a's fall back", func() bool { r.poll(p.b); return !p.a.DatagramUp() })
	fellBack := p.clk.Now()
	onWS := p.a.Stats().StatesSent - p.a.Stats().StatesSentDatagram
	waitUntil(t, ctx, "60 states after the cut", func() bool { r.poll(p.b); return len(r.got) >= before+60 })
	assert.Greater(t, p.a.Stats().StatesSent-p.a.Stats().StatesSentDatagram, onWS, "a's states go by the WebSocket")

	// The gap: the longest time between two of a's states arriving at b
	// around the cut.
	gap := time.Duration(0)
	for i := max(1, before-5); i < len(r.got); i++ {
		gap = max(gap, r.got[i].Arrival-r.got[i-1].Arrival)
	}
	t.Logf("UDP cut: a fell back after %v; the longest gap between a's states at b: %v", (fellBack - cut).Round(time.Millisecond), gap.Round(time.Millisecond))
	assert.Positive(t, p.a.Stats().DatagramFallbacks)
	waitUntil(t, ctx, "the server's fall back", func() bool { return p.srv.Counter(t, "nearzero_datagram_fallbacks_total") >= 1 })

	p.proxy.Block(false)
	waitUntil(t, ctx, "the path back", func() bool { r.poll(p.b); return p.a.DatagramUp() })
	dg := p.a.Stats().StatesSentDatagram
	waitUntil(t, ctx, "states as datagrams again", func() bool { r.poll(p.b); return p.a.Stats().StatesSentDatagram > dg+30 })
	assert.Positive(t, p.a.Stats().DatagramResumes)
	s.halt()
	time.Sleep(50 * time.Millisecond)
	r.poll(p.b)
	checkStream(t, s, r.got)
}

// TestDatagramsBlockedFromStart: with UDP blocked, the WebSocket carries
// everything as it always did.
func TestDatagramsBlockedFromStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dgWait)
	defer cancel()
	p := newPair(t, ctx, true, true)
	s := p.send(t)
	var r receiver
	waitUntil(t, ctx, "120 states", func() bool { r.poll(p.b); return len(r.got) >= 120 })
	s.halt()
	checkStream(t, s, r.got)
	assert.False(t, p.a.DatagramUp())
	st := p.a.Stats()
	assert.Zero(t, st.DatagramBinds)
	assert.Zero(t, st.StatesSentDatagram)
	assert.GreaterOrEqual(t, st.StatesSent, int64(120))
	for _, pk := range p.proxy.Packets() {
		assert.True(t, pk.ToServer, "nothing came back through a blocked router")
	}
}

// TestSetDatagramsLive turns a's datagram path off and on while it sends:
// off, its states go by the WebSocket and the server sends to it that way
// too; on, both take the path again.
func TestSetDatagramsLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dgWait)
	defer cancel()
	p := newPair(t, ctx, false, false)
	waitUntil(t, ctx, "the datagram path", func() bool { return p.a.DatagramUp() && p.b.DatagramUp() })
	s := p.send(t)
	defer s.halt()
	bs := sendFrom(t, p.b, p.clk) // b sends too, for a to receive
	defer bs.halt()
	var r receiver
	waitUntil(t, ctx, "30 states", func() bool { r.poll(p.b); return len(r.got) >= 30 })

	p.a.SetDatagrams(false)
	assert.False(t, p.a.DatagramUp())
	// The server hears a's next keepalive say it hears nothing, and stops.
	got := p.a.Stats().StatesReceivedDatagram
	for {
		time.Sleep(100 * time.Millisecond)
		now := p.a.Stats().StatesReceivedDatagram
		if now == got {
			break
		}
		got = now
		require.NoError(t, ctx.Err(), "the server keeps sending as datagrams")
	}
	sent := p.a.Stats().StatesSentDatagram
	n := len(r.got)
	waitUntil(t, ctx, "30 states more", func() bool { r.poll(p.b); p.a.PollStates(nil); return len(r.got) >= n+30 })
	assert.Equal(t, sent, p.a.Stats().StatesSentDatagram, "off: a sends none as datagrams")
	assert.Equal(t, got, p.a.Stats().StatesReceivedDatagram, "and the server sends it none")

	p.a.SetDatagrams(true)
	waitUntil(t, ctx, "the path again", func() bool { r.poll(p.b); p.a.PollStates(nil); return p.a.DatagramUp() })
	waitUntil(t, ctx, "states both ways as datagrams", func() bool {
		r.poll(p.b)
		p.a.PollStates(nil)
		st := p.a.Stats()
		return st.StatesSentDatagram > sent+10 && st.StatesReceivedDatagram > got+10
	})
}

// TestDatagramPathAfterNATRebinding moves a's outer UDP port, as a NAT
// that forgot its mapping does: QUIC's connection migration keeps the
// path (the server follows the new address), with no new binding.
func TestDatagramPathAfterNATRebinding(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dgWait)
	defer cancel()
	p := newPair(t, ctx, true, false)
	waitUntil(t, ctx, "the datagram path", func() bool { return p.a.DatagramUp() && p.b.DatagramUp() })
	s := p.send(t)
	bs := sendFrom(t, p.b, p.clk)
	var r receiver
	waitUntil(t, ctx, "30 states", func() bool { r.poll(p.b); p.a.PollStates(nil); return len(r.got) >= 30 })

	require.NoError(t, p.proxy.Rebind())
	sent, got := p.a.Stats().StatesSentDatagram, p.a.Stats().StatesReceivedDatagram
	waitUntil(t, ctx, "datagrams both ways from the new address", func() bool {
		r.poll(p.b)
		p.a.PollStates(nil)
		st := p.a.Stats()
		return st.StatesSentDatagram > sent+60 && st.StatesReceivedDatagram > got+60
	})
	s.halt()
	bs.halt()
	st := p.a.Stats()
	t.Logf("after the rebinding: binds %d, fall backs %d", st.DatagramBinds, st.DatagramFallbacks)
	assert.Equal(t, int64(1), st.DatagramBinds, "the same QUIC connection, migrated")
	time.Sleep(50 * time.Millisecond)
	r.poll(p.b)
	checkStream(t, s, r.got)
}
