package cluster_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server"
	"github.com/nearzero/nearzero/server/cluster"
	"github.com/nearzero/nearzero/server/metrics/prom"
	"github.com/nearzero/nearzero/server/room"
)

// waitFor bounds every wait; generous for a busy machine.
const waitFor = 15 * time.Second

// ttl keeps directory entries short-lived so that failures show in seconds.
const ttl = 1500 * time.Millisecond

// secret is shared by every node, as NEARZERO_SECRET must be in production.
var secret = []byte("0123456789abcdef0123456789abcdef-cluster-test")

// startNATS runs an embedded NATS server with JetStream on a random port.
func startNATS(t *testing.T) string {
	t.Helper()
	return startNATSAt(t, -1).ClientURL()
}

// startNATSAt runs an embedded NATS server with JetStream on port (-1 for
// a random one) with a fresh store.
func startNATSAt(t *testing.T, port int) *natsserver.Server {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: port, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(waitFor), "nats did not start")
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// node is one room server of the cluster on loopback.
type node struct {
	t      *testing.T
	id     string
	url    string // ws://.../ws
	base   string // http://...
	srv    *server.Server
	cl     *cluster.Node
	reg    *prometheus.Registry
	served chan error
	once   sync.Once
}

func serverConfig() *server.Config {
	return &server.Config{
		Room: room.Config{SeatHold: 5 * time.Second, HandshakeTimeout: 400 * time.Millisecond,
			Countdown: 100 * time.Millisecond, RoundLimit: 20 * time.Second, MinRoundLimit: time.Second,
			TimeWarning: 200 * time.Millisecond, ResultsFor: 300 * time.Millisecond},
		HelloTimeout: 2 * time.Second, DrainGrace: 5 * time.Second, CloseSpread: 50 * time.Millisecond,
		// A loaded test machine must not take the nodes out of placement
		// (an overloaded node takes no rooms: README "Overload").
		OverloadAfter: -1,
	}
}

func startNode(t *testing.T, natsURL, id string) *node {
	t.Helper()
	return startNodeVia(t, natsURL, id, nil)
}

// startNodeVia starts a node whose public URL is p's, when p is not nil:
// players reach it through the proxy, which a test can cut.
func startNodeVia(t *testing.T, natsURL, id string, p *proxy) *node {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	n := &node{t: t, id: id, url: "ws://" + ln.Addr().String() + "/ws", base: "http://" + ln.Addr().String(),
		reg: prometheus.NewRegistry(), served: make(chan error, 1)}
	if p != nil {
		p.mu.Lock()
		p.target = ln.Addr().String()
		p.mu.Unlock()
		n.url = "ws://" + p.ln.Addr().String() + "/ws"
	}
	var log *slog.Logger
	if os.Getenv("NEARZERO_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("n", id)
	}
	n.cl, err = cluster.Start(context.Background(), &cluster.Config{URL: natsURL, NodeID: id, PublicURL: n.url,
		TTL: ttl, Memory: true, Registry: n.reg, Log: log})
	require.NoError(t, err)
	m, h, err := prom.New(n.reg)
	require.NoError(t, err)
	n.srv, err = server.New(serverConfig(), server.Deps{Cluster: n.cl, Secret: secret, Metrics: m, MetricsHandler: h, Log: log})
	require.NoError(t, err)
	go func() { n.served <- n.srv.Serve(ln) }()
	<-n.srv.Ready()
	t.Cleanup(n.stop)
	return n
}

// stop shuts the node down gracefully: it leaves the directory.
func (n *node) stop() {
	n.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		assert.NoError(n.t, n.srv.Shutdown(ctx))
		assert.NoError(n.t, <-n.served)
		assert.NoError(n.t, n.cl.Close(ctx))
	})
}

// kill stops the node as a crash would: its directory entries stay
// until they expire.
func (n *node) kill() {
	n.once.Do(func() {
		n.cl.Kill()
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		assert.NoError(n.t, n.srv.Shutdown(ctx))
		assert.NoError(n.t, <-n.served)
	})
}

func (n *node) rooms() int { return n.srv.Health().Rooms }

// sees waits until n's view of the directory satisfies ok for node id.
func (n *node) sees(id string, ok func(cluster.Info, bool) bool) {
	n.t.Helper()
	require.Eventually(n.t, func() bool {
		for _, in := range n.cl.Nodes() {
			if in.ID == id {
				return ok(in, true)
			}
		}
		return ok(cluster.Info{}, false)
	}, waitFor, 10*time.Millisecond, "%s's view of %s", n.id, id)
}

var fastSync = clock.SyncConfig{WarmupInterval: 10 * time.Millisecond, SyncedAfter: 2, WarmupSamples: 4}

// player is a client that keeps every event.
type player struct {
	*serverlink.Conn
	t    *testing.T
	seen []serverlink.Event
}

func dial(t *testing.T, url, name string) *player {
	t.Helper()
	return dialSync(t, url, name, fastSync)
}

// dialSync is dial with a clock sync configuration: the default one pings
// every 250 ms while warming up, fastSync every 10 ms (which a server that
// blocks on its directory for seconds rate-limits).
func dialSync(t *testing.T, url, name string, sync clock.SyncConfig) *player {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var log *slog.Logger
	if os.Getenv("NEARZERO_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("p", name)
	}
	c, err := serverlink.Dial(ctx, url, &serverlink.Options{Name: name, Sync: sync, ReconnectFor: 3 * waitFor,
		BackoffMin: 50 * time.Millisecond, BackoffMax: 300 * time.Millisecond, Log: log})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = c.Close(ctx)
	})
	return &player{Conn: c, t: t}
}

// poll collects the events so far.
func (p *player) poll() []serverlink.Event {
	p.seen = p.PollEvents(p.seen)
	return p.seen
}

// wait waits for an event matching ok and returns it.
func (p *player) wait(desc string, ok func(serverlink.Event) bool) serverlink.Event {
	p.t.Helper()
	var got serverlink.Event
	require.Eventually(p.t, func() bool {
		for _, e := range p.poll() {
			if ok(e) {
				got = e
				return true
			}
		}
		return false
	}, waitFor, 5*time.Millisecond, "waiting for %s", desc)
	return got
}

// noErrors checks that the player was shown no error message.
func (p *player) noErrors() {
	p.t.Helper()
	for _, e := range p.poll() {
		if m, ok := e.Msg.(*protocol.Error); ok {
			p.t.Errorf("the player saw an error: %v", m)
		}
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

func health(t *testing.T, n *node) (int, server.Health, cluster.Health) {
	t.Helper()
	resp, err := http.Get(n.base + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var raw struct {
		server.Health
		Cluster cluster.Health `json:"cluster"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&raw))
	return resp.StatusCode, raw.Health, raw.Cluster
}

// TestClusterPlacementRedirectDrain: a create lands on the least-loaded
// node, a join through another node is redirected there without the
// player seeing it, and a draining node gets no new rooms.
func TestClusterPlacementRedirectDrain(t *testing.T) {
	nats := startNATS(t)
	a, b, c := startNode(t, nats, "a"), startNode(t, nats, "b"), startNode(t, nats, "c")
	for _, n := range []*node{a, b, c} {
		for _, id := range []string{"a", "b", "c"} {
			n.sees(id, func(_ cluster.Info, ok bool) bool { return ok })
		}
	}

	// A room on a (a tie keeps the room here) and one on c: b is the
	// least loaded.
	p1 := dial(t, a.url, "P1")
	_, err := p1.Create(ctxT(t), nil)
	require.NoError(t, err)
	p2 := dial(t, c.url, "P2")
	_, err = p2.Create(ctxT(t), nil)
	require.NoError(t, err)
	require.Equal(t, 1, a.rooms())
	require.Equal(t, 1, c.rooms())
	a.sees("c", func(in cluster.Info, ok bool) bool { return ok && in.Rooms == 1 })

	// A create on a is placed on b.
	host := dial(t, a.url, "Host")
	j, err := host.Create(ctxT(t), nil)
	require.NoError(t, err, "the redirect is followed transparently")
	assert.Equal(t, 1, b.rooms(), "placed on the least-loaded node")
	assert.Equal(t, 1, a.rooms())
	assert.True(t, host.Connected())
	assert.Equal(t, 1.0, counter(t, a.reg, "nearzero_cluster_redirects_total", "create"))

	// A join of that room through c is redirected to b, and succeeds.
	guest := dial(t, c.url, "Guest")
	gj, err := guest.Join(ctxT(t), j.Code)
	require.NoError(t, err)
	assert.Equal(t, j.Code, gj.Code)
	assert.Len(t, gj.Room.Players, 2)
	assert.Equal(t, 1.0, counter(t, c.reg, "nearzero_cluster_redirects_total", "join"))
	host.wait("the guest in the host's room", func(e serverlink.Event) bool {
		rs, ok := e.Msg.(*protocol.RoomState)
		return ok && len(rs.Players) == 2
	})
	// States flow between the two on b, after the clocks synced with b.
	guest.wait("synced with b", func(e serverlink.Event) bool { return e.Kind == serverlink.EventSynced })
	host.noErrors()
	guest.noErrors()

	// An unknown code is a clear not-found, from any node.
	_, err = dial(t, c.url, "Typo").Join(ctxT(t), "ZZZZZZ")
	require.Error(t, err)
	assert.Equal(t, protocol.CodeRoomNotFound, protocol.CodeOf(err))

	// Health and metrics carry the cluster figures.
	code, h, ch := health(t, c)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ready", h.State)
	assert.Equal(t, cluster.Health{Node: "c", Region: cluster.DefaultRegion, URL: c.url, NATS: "CONNECTED", Nodes: 3,
		Rooms: 1, RedirectsJoin: 1}, ch)
	assert.Equal(t, 1.0, gauge(t, c.reg, "nearzero_cluster_nats_connected"))

	// Drain b: once every node sees it, creates go elsewhere.
	require.NoError(t, guest.Leave(ctxT(t)))
	require.NoError(t, host.Leave(ctxT(t)))
	drained := make(chan error, 1)
	go func() { drained <- b.srv.Drain(ctxT(t)) }()
	a.sees("b", func(in cluster.Info, ok bool) bool { return ok && in.Draining })
	c.sees("b", func(in cluster.Info, ok bool) bool { return ok && in.Draining })
	for i := range 3 {
		p := dial(t, a.url, "After"+string(rune('0'+i)))
		_, err := p.Create(ctxT(t), nil)
		require.NoError(t, err)
	}
	assert.Equal(t, 0, b.rooms(), "a draining node gets no new rooms")
	assert.Equal(t, 5, a.rooms()+c.rooms(), "one each before, three after")
	require.NoError(t, <-drained)
}

// counter reads a counter with one label value from reg.
func counter(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// gauge reads an unlabelled gauge from reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// TestClusterNodeDies: a node that crashes leaves the directory when its
// entries expire; its players, reconnecting through another node, are
// told the room is gone; the node restarted with the same id serves again.
func TestClusterNodeDies(t *testing.T) {
	nats := startNATS(t)
	a, c := startNode(t, nats, "a"), startNode(t, nats, "c")
	c.sees("a", func(_ cluster.Info, ok bool) bool { return ok })
	a.sees("c", func(_ cluster.Info, ok bool) bool { return ok })

	// Two players of a room on a; they came in through c (their "home",
	// as a load balancer would be).
	c.sees("c", func(in cluster.Info, ok bool) bool { return ok })
	_, err := dial(t, c.url, "Filler").Create(ctxT(t), nil) // c now has one room: a is the lighter
	require.NoError(t, err)
	a.sees("c", func(in cluster.Info, ok bool) bool { return ok && in.Rooms == 1 })
	c.sees("c", func(in cluster.Info, ok bool) bool { return ok && in.Rooms == 1 })
	host := dial(t, c.url, "Host")
	j, err := host.Create(ctxT(t), nil)
	require.NoError(t, err)
	require.Equal(t, 1, a.rooms(), "placed on a")
	guest := dial(t, c.url, "Guest")
	_, err = guest.Join(ctxT(t), j.Code)
	require.NoError(t, err)
	_, here, found, err := c.cl.Locate(ctxT(t), j.Code)
	require.NoError(t, err)
	require.True(t, found && !here)

	a.kill()
	start := time.Now()
	for _, p := range []*player{host, guest} {
		e := p.wait("room lost", func(e serverlink.Event) bool { return e.Kind == serverlink.EventRoomLost })
		assert.Equal(t, protocol.CodeRoomNotFound, protocol.CodeOf(e.Err), "%v", e.Err)
		assert.Contains(t, e.Err.Error(), "gone")
		p.wait("reconnected to c", func(e serverlink.Event) bool { return e.Kind == serverlink.EventReconnected })
		assert.True(t, p.Connected())
	}
	t.Logf("players told the room is gone %v after the crash (ttl %v)", time.Since(start).Round(time.Millisecond), ttl)
	c.sees("a", func(_ cluster.Info, ok bool) bool { return !ok })
	require.Eventually(t, func() bool {
		_, _, found, err := c.cl.Locate(ctxT(t), j.Code)
		return err == nil && !found
	}, waitFor, 20*time.Millisecond, "a's room expires from the directory")

	// The players can go on: a new room lands on the remaining node.
	_, err = host.Create(ctxT(t), nil)
	require.NoError(t, err)
	assert.Equal(t, 2, c.rooms())

	// a comes back under the same id (on another port) and takes rooms again.
	a2 := startNode(t, nats, "a")
	c.sees("a", func(in cluster.Info, ok bool) bool { return ok && in.URL == a2.url })
	p := dial(t, c.url, "Later")
	j2, err := p.Create(ctxT(t), nil)
	require.NoError(t, err)
	assert.Equal(t, 1, a2.rooms(), "the restarted node is the lighter one")
	q := dial(t, c.url, "Later2")
	_, err = q.Join(ctxT(t), j2.Code)
	require.NoError(t, err)
}

// TestClusterRestartDropsStaleRooms: a node restarted with the same id
// before its entries expired removes the rooms of its earlier run at
// once, so that joins of them fail fast instead of being redirected.
func TestClusterRestartDropsStaleRooms(t *testing.T) {
	nats := startNATS(t)
	a, c := startNode(t, nats, "a"), startNode(t, nats, "c")
	c.sees("a", func(_ cluster.Info, ok bool) bool { return ok })
	p := dial(t, a.url, "P")
	j, err := p.Create(ctxT(t), nil)
	require.NoError(t, err)
	require.Equal(t, 1, a.rooms())
	a.kill()
	a2 := startNode(t, nats, "a")
	_, _, found, err := c.cl.Locate(ctxT(t), j.Code)
	require.NoError(t, err)
	assert.False(t, found, "the earlier run's room is gone from the directory")
	c.sees("a", func(in cluster.Info, ok bool) bool { return ok && in.URL == a2.url })
	q := dial(t, c.url, "Q")
	_, err = q.Join(ctxT(t), j.Code)
	require.Error(t, err)
	assert.Equal(t, protocol.CodeRoomNotFound, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), "gone")
}

// TestClusterGracefulStop: a node that stops cleanly removes its entries
// at once (no wait for the TTL).
func TestClusterGracefulStop(t *testing.T) {
	nats := startNATS(t)
	a, c := startNode(t, nats, "a"), startNode(t, nats, "c")
	c.sees("a", func(_ cluster.Info, ok bool) bool { return ok })
	j, err := dial(t, a.url, "P").Create(ctxT(t), nil)
	require.NoError(t, err)
	stopped := time.Now()
	a.stop()
	_, _, found, err := c.cl.Locate(ctxT(t), j.Code)
	require.NoError(t, err)
	assert.False(t, found)
	// c's view follows the directory through a watch: the deletion reaches
	// it a moment later, but well before the entry could have expired.
	c.sees("a", func(_ cluster.Info, ok bool) bool { return !ok })
	assert.Less(t, time.Since(stopped), ttl, "removed at once, not expired")
}

// TestClusterNATSOutage: while NATS is down, running rooms go on and
// joins of rooms on the node asked work; creates and joins of rooms
// elsewhere fail with a clear, retryable error. NATS comes back without
// its data (a memory store): the nodes make the buckets again and write
// their entries, and the cluster works as before.
func TestClusterNATSOutage(t *testing.T) {
	ns := startNATSAt(t, -1)
	port := ns.Addr().(*net.TCPAddr).Port
	a, c := startNode(t, ns.ClientURL(), "a"), startNode(t, ns.ClientURL(), "c")
	c.sees("a", func(_ cluster.Info, ok bool) bool { return ok })
	host := dial(t, a.url, "Host")
	j, err := host.Create(ctxT(t), nil)
	require.NoError(t, err)
	require.Equal(t, 1, a.rooms())

	ns.Shutdown()
	ns.WaitForShutdown()
	require.Eventually(t, func() bool {
		_, _, ch := health(t, c)
		return ch.NATS != "CONNECTED"
	}, waitFor, 10*time.Millisecond)
	assert.Equal(t, 0.0, gauge(t, c.reg, "nearzero_cluster_nats_connected"))

	// A join of the room on the node asked still works.
	_, err = dial(t, a.url, "Local").Join(ctxT(t), j.Code)
	require.NoError(t, err)
	// A create or a join needing the directory fails, clearly.
	late := dialSync(t, c.url, "Late", clock.SyncConfig{})
	_, err = late.Join(ctxT(t), j.Code)
	require.Error(t, err)
	assert.Equal(t, protocol.CodeInternal, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), "directory is unreachable")
	_, err = dialSync(t, c.url, "Maker", clock.SyncConfig{}).Create(ctxT(t), nil)
	require.Error(t, err)
	assert.Equal(t, protocol.CodeInternal, protocol.CodeOf(err))

	// NATS is back, empty: within a refresh or two everything is listed again.
	startNATSAt(t, port)
	require.Eventually(t, func() bool {
		_, here, found, err := c.cl.Locate(ctxT(t), j.Code)
		return err == nil && found && !here
	}, waitFor, 20*time.Millisecond, "a's room listed again")
	c.sees("a", func(_ cluster.Info, ok bool) bool { return ok })
	a.sees("c", func(_ cluster.Info, ok bool) bool { return ok })
	_, err = late.Join(ctxT(t), j.Code)
	require.NoError(t, err, "redirected to a again")
	_, err = dial(t, c.url, "Maker2").Create(ctxT(t), nil)
	require.NoError(t, err)
	a.stop() // while NATS runs: its cleanup, registered last, runs first
	c.stop()
}

func ids(in []cluster.Info) string {
	var b strings.Builder
	for _, i := range in {
		b.WriteString(i.ID + " ")
	}
	return b.String()
}

func TestConfigValidate(t *testing.T) {
	ok := cluster.Config{URL: "nats://x:4222", NodeID: "eu-1", PublicURL: "wss://eu-1.example.com/ws"}
	require.NoError(t, ok.Validate())
	for name, mutate := range map[string]func(*cluster.Config){
		"no url":        func(c *cluster.Config) { c.URL = "" },
		"bad id":        func(c *cluster.Config) { c.NodeID = "eu 1" },
		"http url":      func(c *cluster.Config) { c.PublicURL = "http://x/ws" },
		"refresh > ttl": func(c *cluster.Config) { c.TTL, c.Refresh = time.Second, 2*time.Second },
		"replicas":      func(c *cluster.Config) { c.Replicas = 2 },
	} {
		c := ok
		mutate(&c)
		assert.ErrorIs(t, c.Validate(), cluster.ErrInvalidConfig, name)
	}
}

// TestPlace checks placement on the directory alone: regions, load,
// draining, capacity, and pending placements.
func TestPlace(t *testing.T) {
	nats := startNATS(t)
	start := func(id, region string, maxRooms int) *cluster.Node {
		n, err := cluster.Start(ctxT(t), &cluster.Config{URL: nats, NodeID: id, PublicURL: "ws://" + id + ".test/ws",
			Region: region, TTL: ttl, Memory: true, MaxRooms: maxRooms})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, n.Close(context.Background())) })
		return n
	}
	x, y, z := start("x", "eu", 0), start("y", "eu", 0), start("z", "us", 1)
	var yDraining atomic.Bool
	y.Bind(func() (int, bool) { return 0, yDraining.Load() })
	seen := func(n *cluster.Node, ok func([]cluster.Info) bool) {
		t.Helper()
		require.Eventually(t, func() bool { return ok(n.Nodes()) }, waitFor, 10*time.Millisecond)
	}
	seen(x, func(in []cluster.Info) bool { return len(in) == 3 })

	url, here, err := x.Place("")
	require.NoError(t, err)
	assert.True(t, here, "a tie keeps the room here: %s", url)

	taken, err := x.Claim(ctxT(t), "AAAAAA")
	require.NoError(t, err)
	require.False(t, taken)
	taken, err = y.Claim(ctxT(t), "AAAAAA")
	require.NoError(t, err)
	assert.True(t, taken, "codes are unique across nodes")

	url, here, err = x.Place("")
	require.NoError(t, err)
	assert.False(t, here)
	assert.Equal(t, "ws://y.test/ws", url, "y has fewer rooms")
	url, here, err = x.Place("")
	require.NoError(t, err)
	assert.True(t, here, "y counts the room just placed there (1 each): %s", url)

	url, _, err = x.Place("us")
	require.NoError(t, err)
	assert.Equal(t, "ws://z.test/ws", url, "the region asked for")
	_, _, err = x.Place("asia")
	assert.ErrorIs(t, err, cluster.ErrNoNode)

	// z is full at one room.
	taken, err = z.Claim(ctxT(t), "ZZZZZZ")
	require.NoError(t, err)
	require.False(t, taken)
	seen(x, func(in []cluster.Info) bool { return in[2].ID == "z" && in[2].Rooms == 1 })
	_, _, err = x.Place("us")
	assert.ErrorIs(t, err, cluster.ErrNoNode, "z is full")

	// y drains: nothing goes there any more, even with fewer rooms.
	yDraining.Store(true)
	y.Changed()
	seen(x, func(in []cluster.Info) bool { return in[1].ID == "y" && in[1].Draining })
	for range 3 {
		_, here, err = x.Place("eu")
		require.NoError(t, err)
		assert.True(t, here)
	}
	_, _, err = y.Place("eu")
	require.NoError(t, err, "a draining node places its creates elsewhere")

	// A room released is gone from the directory.
	x.Release("AAAAAA")
	require.Eventually(t, func() bool {
		_, _, found, err := y.Locate(ctxT(t), "AAAAAA")
		return err == nil && !found
	}, waitFor, 10*time.Millisecond)
}

// proxy forwards TCP to a node until cut.
type proxy struct {
	ln     net.Listener
	mu     sync.Mutex // guards target, conns and refuse
	target string     // set before the first connection
	conns  []net.Conn
	refuse bool
	wg     sync.WaitGroup
}

func newProxy(t *testing.T) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { _ = ln.Close(); p.cut(); p.wg.Wait() })
	return p
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse, target := p.refuse, p.target
		p.mu.Unlock()
		if refuse {
			_ = down.Close()
			continue
		}
		up, err := net.Dial("tcp", target)
		if err != nil {
			_ = down.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, down, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, down)
		go p.pipe(down, up)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

// cut drops every connection and refuses new ones until allow.
func (p *proxy) cut() {
	p.mu.Lock()
	p.refuse = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
}

func (p *proxy) allow() {
	p.mu.Lock()
	p.refuse = false
	p.mu.Unlock()
}

// TestClusterReconnectThroughAnotherNode: players of a room whose node is
// unreachable for a moment retry it and the node they first dialled, which
// redirects them back; once it answers again they have their seats back,
// with no error shown.
func TestClusterReconnectThroughAnotherNode(t *testing.T) {
	nats := startNATS(t)
	bp := newProxy(t)
	a, b, c := startNode(t, nats, "a"), startNodeVia(t, nats, "b", bp), startNode(t, nats, "c")
	for _, id := range []string{"a", "b", "c"} {
		c.sees(id, func(_ cluster.Info, ok bool) bool { return ok })
		a.sees(id, func(_ cluster.Info, ok bool) bool { return ok })
	}
	// One room each on a and c: b is the lightest.
	_, err := dial(t, a.url, "FillA").Create(ctxT(t), nil)
	require.NoError(t, err)
	_, err = dial(t, c.url, "FillC").Create(ctxT(t), nil)
	require.NoError(t, err)
	c.sees("a", func(in cluster.Info, ok bool) bool { return ok && in.Rooms == 1 })
	host := dial(t, c.url, "Host")
	j, err := host.Create(ctxT(t), nil)
	require.NoError(t, err)
	require.Equal(t, 1, b.rooms())
	guest := dial(t, a.url, "Guest")
	_, err = guest.Join(ctxT(t), j.Code)
	require.NoError(t, err)

	before := host.Stats().Redirects + guest.Stats().Redirects
	homeRedirects := func() float64 {
		return counter(t, a.reg, "nearzero_cluster_redirects_total", "join") +
			counter(t, c.reg, "nearzero_cluster_redirects_total", "join")
	}
	sent := homeRedirects()
	bp.cut()
	for _, p := range []*player{host, guest} {
		p.wait("reconnecting", func(e serverlink.Event) bool { return e.Kind == serverlink.EventReconnecting })
	}
	// b stays unreachable until both players were sent back to it from
	// the node they first dialled (a redirect they could not follow).
	require.Eventually(t, func() bool { return homeRedirects() >= sent+2 }, waitFor, 5*time.Millisecond)
	bp.allow()
	for _, p := range []*player{host, guest} {
		p.wait("reconnected", func(e serverlink.Event) bool { return e.Kind == serverlink.EventReconnected })
		for _, e := range p.poll() {
			assert.NotEqual(t, serverlink.EventRoomLost, e.Kind, "the room was never lost: %v", e.Err)
		}
		p.noErrors()
		assert.Equal(t, j.Code, p.Room().Code)
	}
	require.Eventually(t, func() bool {
		rs := host.Room()
		return len(rs.Players) == 2 && rs.Players[0].Connected && rs.Players[1].Connected
	}, waitFor, 10*time.Millisecond, "both seated again")
	assert.Greater(t, host.Stats().Redirects+guest.Stats().Redirects, before,
		"back through the node first dialled, redirected to b")
}

// TestClusterDrainPlacesElsewhere: while a node drains with a round still
// running, a create that reaches it is placed on another node, and its
// running round goes on to the end.
func TestClusterDrainPlacesElsewhere(t *testing.T) {
	nats := startNATS(t)
	a, b := startNode(t, nats, "a"), startNode(t, nats, "b")
	b.sees("a", func(_ cluster.Info, ok bool) bool { return ok })
	a.sees("b", func(_ cluster.Info, ok bool) bool { return ok })

	// A round runs on b.
	host := dial(t, b.url, "Host")
	_, err := host.Create(ctxT(t), nil)
	require.NoError(t, err)
	require.Equal(t, 1, b.rooms())
	require.NoError(t, host.Send(&protocol.Loading{Progress: 1}))
	require.NoError(t, host.Send(&protocol.Ready{Ready: true}))
	require.Eventually(t, func() bool {
		rs := host.Room()
		return len(rs.Players) == 1 && rs.Players[0].Ready && rs.Players[0].Loaded >= 1
	}, waitFor, 5*time.Millisecond)
	require.NoError(t, host.Send(&protocol.Start{}))
	require.Eventually(t, func() bool { return host.Room().Phase == protocol.PhaseHandshake }, waitFor, 5*time.Millisecond)
	require.NoError(t, host.Send(&protocol.InPosition{}))
	require.Eventually(t, func() bool { return host.Room().Phase == protocol.PhasePlaying }, waitFor, 5*time.Millisecond)

	// A newcomer connected to b before the drain: b then drains.
	newcomer := dial(t, b.url, "Newcomer")
	drained := make(chan error, 1)
	go func() { drained <- b.srv.Drain(ctxT(t)) }()
	host.wait("server updating", func(e serverlink.Event) bool {
		n, ok := e.Msg.(*protocol.Notice)
		return ok && n.Kind == protocol.NoticeServerUpdating
	})
	_, err = newcomer.Create(ctxT(t), nil)
	require.NoError(t, err, "placed on a, not refused")
	assert.Equal(t, 1, a.rooms())
	assert.Equal(t, 1, b.rooms(), "no new room on the draining node")
	newcomer.noErrors()

	// The round on b goes on; when it ends, the drain completes.
	assert.Equal(t, protocol.PhasePlaying, host.Room().Phase)
	require.NoError(t, host.Send(&protocol.Finish{}))
	host.wait("results", func(e serverlink.Event) bool { _, ok := e.Msg.(*protocol.Results); return ok })
	require.NoError(t, <-drained)
}
