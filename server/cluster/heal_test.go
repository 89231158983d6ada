package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/cluster"
)

// stallProxy forwards TCP to NATS; paused, it holds what it reads until
// resumed, as a NATS server that stops (SIGSTOP) and goes on: nothing is
// lost, everything lands late.
type stallProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	done   bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stallProxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		p.done, p.paused = true, false
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.cond.Broadcast()
		p.wg.Wait()
	})
	return p
}

func (p *stallProxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *stallProxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
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

// pipe copies src to dst, holding each read while paused.
func (p *stallProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.paused && !p.done {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			_ = dst.Close()
			_ = src.Close()
			return
		}
	}
}

func (p *stallProxy) pause() {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
}

func (p *stallProxy) resume() {
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
	p.cond.Broadcast()
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startBare starts a cluster node with no room server on natsURL.
func startBare(t *testing.T, cfg cluster.Config) *cluster.Node {
	t.Helper()
	cfg.PublicURL = "ws://" + cfg.NodeID + ".test/ws"
	cfg.Memory = true
	if cfg.Log == nil && os.Getenv("NEARZERO_TEST_LOG") != "" {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	n, err := cluster.Start(ctxT(t), &cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = n.Close(ctx)
	})
	return n
}

// locate reports whether n finds code on another live node.
func locate(t *testing.T, n *cluster.Node, code string) bool {
	_, here, found, err := n.Locate(ctxT(t), code)
	return err == nil && found && !here
}

// TestClusterAdoptsLateRefresh: NATS stops for a moment and goes on; the
// refresh that timed out meanwhile lands late, so the node's next write
// finds a revision it never recorded. The entry still names the node: it
// is adopted and kept fresh, not taken for another node's and left to
// expire.
func TestClusterAdoptsLateRefresh(t *testing.T) {
	const ttl = 3 * time.Second
	nats := startNATS(t)
	sp := newStallProxy(t, strings.TrimPrefix(nats, "nats://"))
	reg := prometheus.NewRegistry()
	a := startBare(t, cluster.Config{URL: sp.url(), NodeID: "a", TTL: ttl, Timeout: 300 * time.Millisecond, Registry: reg})
	c := startBare(t, cluster.Config{URL: nats, NodeID: "c", TTL: ttl})
	taken, err := a.Claim(ctxT(t), "AAAAAA")
	require.NoError(t, err)
	require.False(t, taken)
	require.Eventually(t, func() bool { return locate(t, c, "AAAAAA") }, waitFor, 10*time.Millisecond)

	// Paused until a's directory writes time out (its entry, then the
	// room's), then on: the writes land late.
	errs := counterValue(t, reg, "nearzero_cluster_directory_errors_total")
	sp.pause()
	require.Eventually(t, func() bool {
		return counterValue(t, reg, "nearzero_cluster_directory_errors_total") >= errs+3
	}, waitFor, 10*time.Millisecond, "a's writes time out")
	sp.resume()

	// For two TTLs a keeps its room, and the room stays listed through c.
	// A loaded machine may hold one of a's refreshes past its short
	// time-out, so the entry may lapse for a moment; an entry taken for
	// another node's is never refreshed again and is gone for good.
	deadline := time.Now().Add(2 * ttl)
	looks, missing := 0, 0
	for time.Now().Before(deadline) {
		_, here, found, err := c.Locate(ctxT(t), "AAAAAA")
		if err == nil { // a slow answer says nothing
			looks++
			if !found || here {
				missing++
			}
		}
		require.Equal(t, 1.0, gauge(t, reg, "nearzero_cluster_rooms"), "a gave its room up")
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("a's room missing from the directory in %d of %d looks over two TTLs", missing, looks)
	require.Eventually(t, func() bool { return locate(t, c, "AAAAAA") }, ttl, 10*time.Millisecond, "a's room dropped from the directory")
}

// TestClusterRemovesLateClaims: a claim that timed out (NATS paused)
// lands later, naming the node for a room it never opened; the node
// removes it, long before it would expire.
func TestClusterRemovesLateClaims(t *testing.T) {
	nats := startNATS(t)
	sp := newStallProxy(t, strings.TrimPrefix(nats, "nats://"))
	cfg := cluster.Config{URL: sp.url(), NodeID: "a", TTL: time.Hour, Refresh: 200 * time.Millisecond,
		Timeout: 300 * time.Millisecond}
	a := startBare(t, cfg)
	c := startBare(t, cluster.Config{URL: nats, NodeID: "c", TTL: time.Hour, Refresh: 200 * time.Millisecond})
	landed := watchKey(t, nats, cluster.DefaultRoomsBucket, "BBBBBB")
	sp.pause()
	_, err := a.Claim(ctxT(t), "BBBBBB")
	require.Error(t, err, "the claim times out")
	sp.resume()
	select {
	case v := <-landed:
		require.Equal(t, "a", v, "the claim landed late")
	case <-time.After(waitFor):
		t.Fatal("the claim never landed")
	}
	require.Eventually(t, func() bool {
		_, _, found, err := c.Locate(ctxT(t), "BBBBBB")
		return err == nil && !found
	}, waitFor, 10*time.Millisecond, "a removes the entry of a room it does not run")
}

// TestClusterHealsAtOnceAfterNATSRestart: NATS restarts without its data;
// the nodes do not wait for their next refresh (here a long one): they
// write their entries again and restart their watches as soon as they
// reconnect.
func TestClusterHealsAtOnceAfterNATSRestart(t *testing.T) {
	ns := startNATSAt(t, -1)
	port := ns.Addr().(*net.TCPAddr).Port
	cfg := func(id string) cluster.Config {
		return cluster.Config{URL: ns.ClientURL(), NodeID: id, TTL: time.Hour, Refresh: 20 * time.Minute}
	}
	a, c := startBare(t, cfg("a")), startBare(t, cfg("c"))
	taken, err := a.Claim(ctxT(t), "CCCCCC")
	require.NoError(t, err)
	require.False(t, taken)
	require.Eventually(t, func() bool { return len(a.Nodes()) == 2 && len(c.Nodes()) == 2 }, waitFor, 10*time.Millisecond)

	ns.Shutdown()
	ns.WaitForShutdown()
	startNATSAt(t, port)
	require.Eventually(t, func() bool { return locate(t, c, "CCCCCC") }, waitFor, 20*time.Millisecond,
		"a's room listed again")
	// Each sees the other's entry, written after the restart: both
	// watches follow the new stream.
	for _, n := range []*cluster.Node{a, c} {
		require.Eventually(t, func() bool {
			_, _, ch := healthOf(n)
			return ch.Nodes == 2
		}, waitFor, 20*time.Millisecond, "%s sees both nodes", n.ID())
	}
}

func healthOf(n *cluster.Node) (int, int, cluster.Health) {
	h := n.Health().(cluster.Health)
	return h.Nodes, h.Rooms, h
}

// TestPlaceSpreadsABurst: creates placed at once, before any is claimed,
// spread over the nodes instead of piling on the node asked.
func TestPlaceSpreadsABurst(t *testing.T) {
	nats := startNATS(t)
	x := startBare(t, cluster.Config{URL: nats, NodeID: "x", TTL: ttl})
	startBare(t, cluster.Config{URL: nats, NodeID: "y", TTL: ttl})
	startBare(t, cluster.Config{URL: nats, NodeID: "z", TTL: ttl})
	require.Eventually(t, func() bool { return len(x.Nodes()) == 3 }, waitFor, 10*time.Millisecond)
	count := map[string]int{}
	for range 10 {
		url, here, err := x.Place("")
		require.NoError(t, err)
		if here {
			url = "here"
		}
		count[url]++
	}
	assert.Len(t, count, 3, "every node gets rooms: %v", count)
	for where, n := range count {
		assert.LessOrEqual(t, n, 4, "%s: %v", where, count)
	}
}

// TestClusterLogsPeerDeath: a node that dies is reported by the others
// once its entry expires; one that leaves cleanly, at once.
func TestClusterLogsPeerDeath(t *testing.T) {
	nats := startNATS(t)
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	c := startBare(t, cluster.Config{URL: nats, NodeID: "c", TTL: ttl, Log: log})
	a := startBare(t, cluster.Config{URL: nats, NodeID: "a", TTL: ttl})
	b := startBare(t, cluster.Config{URL: nats, NodeID: "b", TTL: ttl})
	require.Eventually(t, func() bool { return len(c.Nodes()) == 3 }, waitFor, 10*time.Millisecond)
	assert.Contains(t, logs.String(), "node joined the cluster")
	a.Kill()
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "taken for dead") && strings.Contains(logs.String(), "peer=a")
	}, waitFor, 20*time.Millisecond, "c says a died:\n%s", logs.String())
	require.NoError(t, b.Close(ctxT(t)))
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `msg="node left the cluster" node=c peer=b`)
	}, waitFor, 20*time.Millisecond, "c says b left:\n%s", logs.String())
}

// TestClusterStartsWithoutNATS: a node started while NATS is unreachable
// starts, refuses what needs the directory, and joins once NATS answers.
func TestClusterStartsWithoutNATS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	a := startBare(t, cluster.Config{URL: url, NodeID: "a", TTL: ttl})
	_, err = a.Claim(ctxT(t), "DDDDDD")
	require.Error(t, err, "no directory yet")
	_, _, _, err = a.Locate(ctxT(t), "DDDDDD")
	require.Error(t, err)
	assert.NotEqual(t, "CONNECTED", a.Health().(cluster.Health).NATS)

	startNATSAt(t, port)
	require.Eventually(t, func() bool {
		taken, err := a.Claim(ctxT(t), "DDDDDD")
		return err == nil && !taken
	}, waitFor, 50*time.Millisecond, "a joins once NATS answers")
	c := startBare(t, cluster.Config{URL: url, NodeID: "c", TTL: ttl})
	require.Eventually(t, func() bool { return locate(t, c, "DDDDDD") }, waitFor, 10*time.Millisecond)
}

// watchKey sends the value of every write of key in bucket.
func watchKey(t *testing.T, url, bucket, key string) <-chan string {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	kv, err := js.KeyValue(ctxT(t), bucket)
	require.NoError(t, err)
	w, err := kv.Watch(context.Background(), key, jetstream.UpdatesOnly())
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Stop() })
	out := make(chan string, 16)
	go func() {
		for e := range w.Updates() {
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				select {
				case out <- string(e.Value()):
				default:
				}
			}
		}
	}()
	return out
}

// counterValue reads an unlabelled counter from reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestClusterRoomLostWhereverFirstConnected: players who dialled the node
// that then died (no other address to go back to) still learn that the
// room is lost: the welcome named the other nodes, and they ask there.
func TestClusterRoomLostWhereverFirstConnected(t *testing.T) {
	nats := startNATS(t)
	a, c := startNode(t, nats, "a"), startNode(t, nats, "c")
	a.sees("c", func(_ cluster.Info, ok bool) bool { return ok })
	c.sees("a", func(_ cluster.Info, ok bool) bool { return ok })
	host := dial(t, a.url, "Host")
	assert.Equal(t, []string{c.url}, host.Welcome().Nodes, "the welcome names the other node")
	j, err := host.Create(ctxT(t), nil)
	require.NoError(t, err)
	require.Equal(t, 1, a.rooms(), "a tie keeps the room here")
	guest := dial(t, a.url, "Guest")
	_, err = guest.Join(ctxT(t), j.Code)
	require.NoError(t, err)

	a.kill()
	for _, p := range []*player{host, guest} {
		e := p.wait("room lost", func(e serverlink.Event) bool {
			return e.Kind == serverlink.EventRoomLost || e.Kind == serverlink.EventDisconnected
		})
		require.Equal(t, serverlink.EventRoomLost, e.Kind, "%v", e.Err)
		assert.Equal(t, protocol.CodeRoomNotFound, protocol.CodeOf(e.Err), "%v", e.Err)
		p.wait("reconnected to c", func(e serverlink.Event) bool { return e.Kind == serverlink.EventReconnected })
	}
	_, err = host.Create(ctxT(t), nil)
	require.NoError(t, err, "the players go on, on c")
	assert.Equal(t, 1, c.rooms())
}

// TestClusterCreateWhenPlacedNodeIsDown: a create placed on a node that
// does not answer (it died since its last entry, or players cannot reach
// it) is made on the node asked instead of failing.
func TestClusterCreateWhenPlacedNodeIsDown(t *testing.T) {
	nats := startNATS(t)
	bp := newProxy(t)
	a, b, c := startNode(t, nats, "a"), startNodeVia(t, nats, "b", bp), startNode(t, nats, "c")
	for _, id := range []string{"a", "b", "c"} {
		a.sees(id, func(_ cluster.Info, ok bool) bool { return ok })
	}
	_, err := dial(t, a.url, "FillA").Create(ctxT(t), nil)
	require.NoError(t, err)
	_, err = dial(t, c.url, "FillC").Create(ctxT(t), nil)
	require.NoError(t, err)
	a.sees("c", func(in cluster.Info, ok bool) bool { return ok && in.Rooms == 1 })
	url, here, err := a.cl.Place("")
	require.NoError(t, err)
	require.False(t, here)
	require.Equal(t, b.url, url, "b is the lightest")
	bp.cut()

	p := dial(t, a.url, "Maker")
	_, err = p.Create(ctxT(t), nil)
	require.NoError(t, err, "made on a when b does not answer")
	assert.Equal(t, 2, a.rooms())
	assert.Equal(t, 0, b.rooms())
	p.noErrors()
}
