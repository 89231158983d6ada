package netroom_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server"
)

// TestDirectLinkOnLoopback: the link comes up over host candidates, Ann's
// states reach Bob directly and the server stops relaying the pair; when
// the link dies Bob falls back to the server path within the outage
// window, and no switch makes a visible jump.
func TestDirectLinkOnLoopback(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name              string
		server, directLag time.Duration // each player's, each way
	}{
		{name: "loopback"},
		// 2 x 40 ms server path, 20 ms direct link (10 ms on each side).
		{name: "lag_direct20_server2x40", server: 40 * ms, directLag: 10 * ms},
	} {
		t.Run(c.name, func(t *testing.T) { directFallback(t, c.server, c.directLag) })
	}
}

func directFallback(t *testing.T, serverLag, directLag time.Duration) {
	srv := testkit.StartServer(t, server.Deps{})
	dc := direct.Config{Lag: lagsim.Config{Latency: directLag}}
	ann := newLaggedPeer(t, srv, "Ann", dc, serverlink.LagConfig{Latency: serverLag})
	bob := newLaggedPeer(t, srv, "Bob", dc, serverlink.LagConfig{Latency: serverLag})
	// Off at first: Bob draws Ann from the server for a second, then the
	// links are turned on and he switches to the direct path.
	ann.room.SetDirectLinks(false)
	bob.room.SetDirectLinks(false)
	d := seatTwo(t, ann, bob)
	for range 60 {
		require.Equal(t, predict.PathServer, d.frame().Path)
	}
	jumpServer, errServer := d.maxJump, d.maxErr
	d.maxJump, d.maxErr = 0, 0
	ann.room.SetDirectLinks(true)
	bob.room.SetDirectLinks(true)

	took := d.until(10*time.Second, "the direct path", func(p predict.Pose) bool {
		return p.Path == predict.PathDirect && ann.room.DirectUp(1) && bob.room.DirectUp(0)
	})
	t.Logf("direct link up and drawn %v after links were turned on", took.Round(time.Millisecond))
	for range 30 { // the server hears both reports
		d.frame()
	}
	relayed := srv.Counter(t, "nearzero_states_relayed_total")
	skipped := srv.Counter(t, "nearzero_states_skipped_direct_total")
	sent := d.sent
	for range 60 {
		p := d.frame()
		require.Equal(t, predict.PathDirect, p.Path, "drawn from the direct path while it is up")
	}
	sent = d.sent - sent
	// How many states a second of frames sends depends on the machine's
	// load; wait until the server has counted as many as were sent.
	var relayed2, skipped2 float64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		relayed2 = srv.Counter(t, "nearzero_states_relayed_total")
		skipped2 = srv.Counter(t, "nearzero_states_skipped_direct_total")
		if relayed2-relayed+skipped2-skipped >= float64(sent) || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("one second with the link up: players sent %d states, server relayed %v, skipped %v", sent, relayed2-relayed, skipped2-skipped)
	assert.Zero(t, relayed2-relayed, "no relay to a linked pair")
	assert.Greater(t, sent, 60, "both players sent")
	assert.GreaterOrEqual(t, skipped2-skipped, float64(sent), "both players' states skipped")
	assert.Positive(t, bob.room.Stats().DirectRouted)
	jumpUp, errUp := d.maxJump, d.maxErr
	d.maxJump, d.maxErr = 0, 0

	// The link dies (Ann's side closes it): Bob reports it down after
	// DirectSilence, the server relays again, Bob draws the server's copy.
	ann.room.Direct().(*direct.Mesh).Kill(1)
	took = d.until(2*time.Second, "the server path", func(p predict.Pose) bool { return p.Path == predict.PathServer })
	t.Logf("fell back to the server path %v after the link died (direct silence %v)", took.Round(time.Millisecond), netroom.DefaultDirectSilence)
	assert.Less(t, took, netroom.DefaultDirectSilence+2*serverLag+500*time.Millisecond, "within the outage window")
	for range 60 {
		require.Equal(t, predict.PathServer, d.frame().Path)
	}
	assert.Greater(t, srv.Counter(t, "nearzero_states_relayed_total"), relayed2, "relaying resumed")
	largest := max(jumpServer, jumpUp, d.maxJump)
	t.Logf("largest drawn jump: %.4f m (server path only: %.4f m; switch to direct: %.4f m; fallback to server: %.4f m; frames by path %v)",
		largest, jumpServer, jumpUp, d.maxJump, d.paths)
	// Frames held back by a loaded machine make jumps on any path: a
	// switch may add no more than 5 cm to the server path's own.
	assert.Less(t, max(jumpUp, d.maxJump), 0.05+jumpServer, "no drawn jump above 5 cm on any switch")
	t.Logf("largest drawing error: %.4f m on the server path, %.4f m from the switch to direct on, %.4f m from the fallback on",
		errServer, errUp, d.maxErr)
}

// TestDirectLinkTURNOnly: with relay candidates only, the link comes up
// through the server's embedded TURN relay on 127.0.0.1.
func TestDirectLinkTURNOnly(t *testing.T) {
	tr, err := server.StartTURN(server.TURNConfig{Addr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Close() })
	srv := testkit.StartServer(t, server.Deps{ICE: tr.ICEServers})
	ann := newDirectPeer(t, srv, "Ann", direct.Config{RelayOnly: true})
	bob := newDirectPeer(t, srv, "Bob", direct.Config{RelayOnly: true})
	d := seatTwo(t, ann, bob)
	took := d.until(10*time.Second, "the direct path over TURN", func(p predict.Pose) bool {
		return p.Path == predict.PathDirect && ann.room.DirectUp(1) && bob.room.DirectUp(0)
	})
	t.Logf("TURN-only link up and drawn %v after both were seated", took.Round(time.Millisecond))
	for range 30 {
		d.frame()
	}
	skipped := srv.Counter(t, "nearzero_states_skipped_direct_total")
	for range 30 {
		require.Equal(t, predict.PathDirect, d.frame().Path)
	}
	assert.Greater(t, srv.Counter(t, "nearzero_states_skipped_direct_total"), skipped)
	t.Logf("largest drawn jump over TURN: %.4f m", d.maxJump)
}

// TestDirectLinksOff: with direct_links off every state comes by the server.
func TestDirectLinksOff(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	ann := newDirectPeer(t, srv, "Ann", direct.Config{})
	bob := newDirectPeer(t, srv, "Bob", direct.Config{})
	ann.room.SetDirectLinks(false)
	bob.room.SetDirectLinks(false)
	d := seatTwo(t, ann, bob)
	for range 60 {
		assert.NotEqual(t, predict.PathDirect, d.frame().Path)
	}
	assert.Nil(t, bob.room.Direct())
	assert.Zero(t, srv.Counter(t, "nearzero_states_skipped_direct_total"))
	assert.Zero(t, bob.room.Stats().DirectRouted)
}

// TestDirectLinksEgress measures the server's state egress per player in a
// room of four, with direct links off and then on, from the relay counters
// (relayed states times the frame size plus the 2-byte WebSocket header of
// a small server frame; control messages and pings are not counted).
func TestDirectLinksEgress(t *testing.T) {
	if testing.Short() {
		t.Skip("four players on a real server for a few seconds")
	}
	const n = 4
	srv := testkit.StartServer(t, server.Deps{})
	ps := make([]*peer, n)
	locals := make([]*entity.Local, n)
	for i := range ps {
		ps[i] = newDirectPeer(t, srv, string(rune('A'+i)), direct.Config{})
		ps[i].room.SetDirectLinks(false)
		l, err := entity.NewLocal(sender.Config{})
		require.NoError(t, err)
		locals[i] = l
	}
	seat(t, ps...)
	var size int
	// run plays d of 60 Hz frames and returns how many states were sent.
	run := func(d time.Duration) (sent int) {
		const step = time.Second / 60
		t0 := time.Now()
		end := t0.Add(d)
		for k := 1; time.Now().Before(end); k++ {
			for i, p := range ps {
				now := p.room.Now()
				locals[i].Sample(now, geom.Vec3{X: float64(i), Z: math.Sin(now.Seconds())}, geom.Identity, geom.Vec3{}, false)
				if s, ok := locals[i].Poll(p.room.Slot()); ok {
					require.NoError(t, p.room.SendState(s))
					sent++
					if b, err := wire.AppendState(nil, s); err == nil {
						size = len(b)
					}
				}
			}
			for _, p := range ps {
				p.frame()
			}
			time.Sleep(time.Until(t0.Add(time.Duration(k) * step)))
		}
		return sent
	}
	// measure returns the share of the sent states' copies (one per other
	// player) that the server relayed. How many states a loaded machine
	// sends varies, so the server's counts are waited for and compared
	// with what was sent.
	measure := func(what string) float64 {
		r0, s0 := srv.Counter(t, "nearzero_states_relayed_total"), srv.Counter(t, "nearzero_states_skipped_direct_total")
		start := time.Now()
		sent := run(2 * time.Second)
		secs := time.Since(start).Seconds()
		copies := float64(sent * (n - 1))
		var r1, s1 float64
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			r1, s1 = srv.Counter(t, "nearzero_states_relayed_total"), srv.Counter(t, "nearzero_states_skipped_direct_total")
			if r1-r0+s1-s0 >= copies || time.Now().After(deadline) {
				break
			}
		}
		require.Positive(t, sent, "states sent")
		perPlayer := (r1 - r0) / secs / n
		t.Logf("%s: %d states sent; server relayed %.0f states/s per player (%.0f skipped), egress %.0f B/s per player (%d-byte frames + 2)",
			what, sent, perPlayer, (s1-s0)/secs/n, perPlayer*float64(size+2), size)
		return (r1 - r0) / copies
	}
	run(500 * time.Millisecond)
	off := measure("direct links off")
	for _, p := range ps {
		p.room.SetDirectLinks(true)
	}
	frames(t, func() bool { // every link up
		for _, p := range ps {
			for _, q := range ps {
				if p != q && !p.room.DirectUp(q.room.Slot()) {
					run(20 * time.Millisecond)
					return false
				}
			}
		}
		return true
	}, ps...)
	run(500 * time.Millisecond) // the server hears every report
	on := measure("direct links on")
	assert.GreaterOrEqual(t, off, 0.99, "every state relayed to the three others")
	assert.Less(t, on, 0.1, "linked pairs are not relayed")
}
