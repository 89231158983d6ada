package netroom

import (
	"context"
	"math"
	"net"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/server"
	"github.com/nearzero/nearzero/server/metrics/prom"
)

// loopbackOnly restricts direct links to UDP over 127.0.0.1 with short
// ICE timeouts: everything stays on this machine.
var loopbackOnly = []ice.AgentOption{
	ice.WithNetworkTypes([]ice.NetworkType{ice.NetworkTypeUDP4}),
	ice.WithIPFilter(func(ip net.IP) bool { return ip.IsLoopback() }),
	ice.WithDisconnectedTimeout(time.Second),
	ice.WithFailedTimeout(2 * time.Second),
	ice.WithKeepaliveInterval(200 * time.Millisecond),
}

// startServerWith runs a room server on loopback with metrics and deps.
func startServerWith(t *testing.T, deps server.Deps) (string, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, h, err := prom.New(reg)
	require.NoError(t, err)
	deps.Metrics, deps.MetricsHandler = m, h
	s, err := server.New(nil, deps)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	<-s.Ready()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-done
	})
	return ln.Addr().String(), reg
}

// counter reads a counter of reg by name.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func newDirectPeer(t *testing.T, addr, name string, dc direct.Config) *peer {
	t.Helper()
	return newLaggedPeer(t, addr, name, dc, serverlink.LagConfig{})
}

// newLaggedPeer is newDirectPeer with the lag simulator on the server
// link (lag) and on the direct links (dc.Lag) apart.
func newLaggedPeer(t *testing.T, addr, name string, dc direct.Config, lag serverlink.LagConfig) *peer {
	t.Helper()
	dc.ICEOptions = loopbackOnly
	dc.RetryAfter = time.Hour // a killed link stays down for the test
	r, err := New(Config{Server: addr, Options: serverlink.Options{Name: name, Sync: quickSync, Lag: lag}, Direct: dc, DirectLagApart: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		r.Close()
		assert.True(t, r.Wait(5*time.Second))
	})
	return &peer{t: t, room: r, remotes: map[int]*Remote{}}
}

// directRun is two players on a real server with direct links: Ann moves
// on a 5 m circle at 1 rad/s, Bob on a smaller one; each frame both send
// and Bob draws Ann.
type directRun struct {
	t        *testing.T
	ann, bob *peer
	anl, bol *Local
	phys     FrameClock
	i        uint64
	t0       time.Time // the frame schedule's origin
	errPrev  geom.Vec3
	hasPrev  bool
	valid    int     // frames Bob drew Ann
	maxJump  float64 // largest frame-to-frame change of Bob's drawing error, after warmUp frames
	maxErr   float64 // largest drawing error, after warmUp frames
	paths    map[predict.Path]int
}

// warmUp is how many drawn frames the jump measure skips: the predictor's
// first states (no velocity history, Auto learning) are not a path switch.
const warmUp = 30

func annPath(server time.Duration) geom.Vec3 {
	a := server.Seconds()
	return geom.Vec3{X: 5 * math.Cos(a), Z: 5 * math.Sin(a)}
}

func newDirectRun(t *testing.T, ann, bob *peer) *directRun {
	frames := func(cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "ann %v / bob %v", kinds(ann.events), kinds(bob.events))
			ann.frame()
			bob.frame()
			time.Sleep(2 * time.Millisecond)
		}
	}
	require.NoError(t, ann.room.Create())
	frames(func() bool { return ann.room.InRoom() })
	require.NoError(t, bob.room.Join(ann.room.Code()))
	frames(func() bool {
		return bob.room.InRoom() && ann.remotes[1] != nil && bob.remotes[0] != nil && ann.room.Synced() && bob.room.Synced()
	})
	anl, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	bol, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	return &directRun{t: t, ann: ann, bob: bob, anl: anl, bol: bol, paths: map[predict.Path]int{}}
}

// frame runs one 60 Hz frame of both players and returns Bob's pose of Ann.
func (d *directRun) frame() predict.Pose {
	const step = time.Second / 60
	now := d.phys.At(d.i, d.ann.room.Now(), step)
	d.i++
	st, _ := d.ann.room.ServerTime(now)
	d.anl.Sample(now, annPath(st), geom.Identity, geom.Vec3{}, false)
	if s, ok := d.anl.Poll(d.ann.room.Slot()); ok {
		require.NoError(d.t, d.ann.room.SendState(s))
	}
	bnow := d.bob.room.Now()
	d.bol.Sample(bnow, geom.Vec3{X: math.Sin(bnow.Seconds())}, geom.Identity, geom.Vec3{}, false)
	if s, ok := d.bol.Poll(d.bob.room.Slot()); ok {
		require.NoError(d.t, d.bob.room.SendState(s))
	}
	d.ann.frame()
	d.bob.frame()
	bnow = d.bob.room.Now()
	pose, _ := d.bob.remotes[0].Frame(bnow)
	if d.t0.IsZero() {
		d.t0 = time.Now()
	}
	if bst, _ := d.bob.room.ServerTime(bnow); pose.Valid {
		e := pose.Pos.Sub(annPath(bst))
		if d.valid++; d.hasPrev && d.valid > warmUp {
			d.maxJump = max(d.maxJump, e.Sub(d.errPrev).Len())
			d.maxErr = max(d.maxErr, e.Len())
		}
		d.errPrev, d.hasPrev = e, true
		d.paths[pose.Path]++
	}
	// Frames on a fixed 60 Hz schedule, as an engine runs them: a loop that
	// slept a step after its work would run slow, and its frame clock
	// would fall MaxStepLag behind the wall clock.
	time.Sleep(time.Until(d.t0.Add(time.Duration(d.i) * step)))
	return pose
}

// until runs frames until cond holds, within limit.
func (d *directRun) until(limit time.Duration, what string, cond func(predict.Pose) bool) time.Duration {
	d.t.Helper()
	start := time.Now()
	for {
		p := d.frame()
		if cond(p) {
			return time.Since(start)
		}
		require.Less(d.t, time.Since(start), limit, "waiting for %s", what)
	}
}

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
	addr, reg := startServerWith(t, server.Deps{})
	dc := direct.Config{Lag: lagsim.Config{Latency: directLag}}
	ann := newLaggedPeer(t, addr, "Ann", dc, serverlink.LagConfig{Latency: serverLag})
	bob := newLaggedPeer(t, addr, "Bob", dc, serverlink.LagConfig{Latency: serverLag})
	// Off at first: Bob draws Ann from the server for a second, then the
	// links are turned on and he switches to the direct path.
	ann.room.SetDirectLinks(false)
	bob.room.SetDirectLinks(false)
	d := newDirectRun(t, ann, bob)
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
	relayed := counter(t, reg, "nearzero_states_relayed_total")
	skipped := counter(t, reg, "nearzero_states_skipped_direct_total")
	for range 60 {
		p := d.frame()
		require.Equal(t, predict.PathDirect, p.Path, "drawn from the direct path while it is up")
	}
	relayed2 := counter(t, reg, "nearzero_states_relayed_total")
	skipped2 := counter(t, reg, "nearzero_states_skipped_direct_total")
	t.Logf("one second with the link up: server relayed %v states, skipped %v", relayed2-relayed, skipped2-skipped)
	assert.Zero(t, relayed2-relayed, "no relay to a linked pair")
	assert.Greater(t, skipped2-skipped, 90.0, "both players' states skipped")
	assert.Positive(t, bob.room.Stats().DirectRouted)
	jumpUp, errUp := d.maxJump, d.maxErr
	d.maxJump, d.maxErr = 0, 0

	// The link dies (Ann's side closes it): Bob reports it down after
	// DirectSilence, the server relays again, Bob draws the server's copy.
	ann.room.Direct().(*direct.Mesh).Kill(1)
	took = d.until(2*time.Second, "the server path", func(p predict.Pose) bool { return p.Path == predict.PathServer })
	t.Logf("fell back to the server path %v after the link died (direct silence %v)", took.Round(time.Millisecond), DefaultDirectSilence)
	assert.Less(t, took, DefaultDirectSilence+2*serverLag+500*time.Millisecond, "within the outage window")
	for range 60 {
		require.Equal(t, predict.PathServer, d.frame().Path)
	}
	assert.Greater(t, counter(t, reg, "nearzero_states_relayed_total"), relayed2, "relaying resumed")
	largest := max(jumpServer, jumpUp, d.maxJump)
	t.Logf("largest drawn jump: %.4f m (server path only: %.4f m; switch to direct: %.4f m; fallback to server: %.4f m; frames by path %v)",
		largest, jumpServer, jumpUp, d.maxJump, d.paths)
	assert.Less(t, largest, 0.05, "no drawn jump above 5 cm on any switch")
	t.Logf("largest drawing error: %.4f m on the server path, %.4f m from the switch to direct on, %.4f m from the fallback on",
		errServer, errUp, d.maxErr)
}

// TestDirectLinkTURNOnly: with relay candidates only, the link comes up
// through the server's embedded TURN relay on 127.0.0.1.
func TestDirectLinkTURNOnly(t *testing.T) {
	tr, err := server.StartTURN(server.TURNConfig{Addr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Close() })
	addr, reg := startServerWith(t, server.Deps{ICE: tr.ICEServers})
	ann := newDirectPeer(t, addr, "Ann", direct.Config{RelayOnly: true})
	bob := newDirectPeer(t, addr, "Bob", direct.Config{RelayOnly: true})
	d := newDirectRun(t, ann, bob)
	took := d.until(10*time.Second, "the direct path over TURN", func(p predict.Pose) bool {
		return p.Path == predict.PathDirect && ann.room.DirectUp(1) && bob.room.DirectUp(0)
	})
	t.Logf("TURN-only link up and drawn %v after both were seated", took.Round(time.Millisecond))
	for range 30 {
		d.frame()
	}
	skipped := counter(t, reg, "nearzero_states_skipped_direct_total")
	for range 30 {
		require.Equal(t, predict.PathDirect, d.frame().Path)
	}
	assert.Greater(t, counter(t, reg, "nearzero_states_skipped_direct_total"), skipped)
	t.Logf("largest drawn jump over TURN: %.4f m", d.maxJump)
}

// TestDirectLinksOff: with direct_links off every state comes by the server.
func TestDirectLinksOff(t *testing.T) {
	addr, reg := startServerWith(t, server.Deps{})
	ann := newDirectPeer(t, addr, "Ann", direct.Config{})
	bob := newDirectPeer(t, addr, "Bob", direct.Config{})
	ann.room.SetDirectLinks(false)
	bob.room.SetDirectLinks(false)
	d := newDirectRun(t, ann, bob)
	for range 60 {
		assert.NotEqual(t, predict.PathDirect, d.frame().Path)
	}
	assert.Nil(t, bob.room.Direct())
	assert.Zero(t, counter(t, reg, "nearzero_states_skipped_direct_total"))
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
	addr, reg := startServerWith(t, server.Deps{})
	ps := make([]*peer, n)
	locals := make([]*Local, n)
	for i := range ps {
		ps[i] = newDirectPeer(t, addr, string(rune('A'+i)), direct.Config{})
		ps[i].room.SetDirectLinks(false)
		l, err := NewLocal(sender.Config{})
		require.NoError(t, err)
		locals[i] = l
	}
	all := func() {
		for _, p := range ps {
			p.frame()
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "waiting for %s", what)
			all()
			time.Sleep(2 * time.Millisecond)
		}
	}
	require.NoError(t, ps[0].room.Create())
	waitFor("the room", func() bool { return ps[0].room.InRoom() })
	for _, p := range ps[1:] {
		require.NoError(t, p.room.Join(ps[0].room.Code()))
	}
	waitFor("everyone seated and synced", func() bool {
		for _, p := range ps {
			if !p.room.InRoom() || !p.room.Synced() || len(p.room.Players()) != n {
				return false
			}
		}
		return true
	})
	var size int
	run := func(d time.Duration) {
		const step = time.Second / 60
		t0 := time.Now()
		end := t0.Add(d)
		for k := 1; time.Now().Before(end); k++ {
			for i, p := range ps {
				now := p.room.Now()
				locals[i].Sample(now, geom.Vec3{X: float64(i), Z: math.Sin(now.Seconds())}, geom.Identity, geom.Vec3{}, false)
				if s, ok := locals[i].Poll(p.room.Slot()); ok {
					require.NoError(t, p.room.SendState(s))
					if b, err := wireSize(s); err == nil {
						size = b
					}
				}
			}
			all()
			time.Sleep(time.Until(t0.Add(time.Duration(k) * step)))
		}
	}
	measure := func(what string) float64 {
		r0, s0 := counter(t, reg, "nearzero_states_relayed_total"), counter(t, reg, "nearzero_states_skipped_direct_total")
		start := time.Now()
		run(2 * time.Second)
		secs := time.Since(start).Seconds()
		r1, s1 := counter(t, reg, "nearzero_states_relayed_total"), counter(t, reg, "nearzero_states_skipped_direct_total")
		perPlayer := (r1 - r0) / secs / n
		t.Logf("%s: server relayed %.0f states/s per player (%.0f skipped), egress %.0f B/s per player (%d-byte frames + 2)",
			what, perPlayer, (s1-s0)/secs/n, perPlayer*float64(size+2), size)
		return perPlayer
	}
	run(500 * time.Millisecond)
	off := measure("direct links off")
	for _, p := range ps {
		p.room.SetDirectLinks(true)
	}
	waitFor("every link up", func() bool {
		for _, p := range ps {
			for _, q := range ps {
				if p != q && !p.room.DirectUp(q.room.Slot()) {
					run(20 * time.Millisecond)
					return false
				}
			}
		}
		return true
	})
	run(500 * time.Millisecond) // the server hears every report
	on := measure("direct links on")
	assert.Greater(t, off, 100.0, "three senders at 60 Hz each")
	assert.Less(t, on, off/10, "linked pairs are not relayed")
}
