package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/server"
	"github.com/nearzero/nearzero/server/cluster"
	"github.com/nearzero/nearzero/server/metrics/prom"
	"github.com/nearzero/nearzero/server/room"
)

// startCluster runs an embedded NATS server and n nodes on loopback (the
// load test itself has no NATS code: a real deployment runs nats-server)
// and returns the nodes' WebSocket URLs.
func startCluster(t *testing.T, n, rooms, players int) []string {
	t.Helper()
	var urls []string
	for _, nd := range startNodes(t, n, rooms, players, 0) {
		urls = append(urls, nd.url)
	}
	return urls
}

// loadNode is one node of startNodes.
type loadNode struct {
	url     string
	srv     *server.Server
	cl      *cluster.Node
	players func() int
	once    sync.Once
	done    chan error
}

// kill stops the node as a crash would: its directory entries stay until
// they expire.
func (nd *loadNode) kill(t *testing.T) {
	nd.once.Do(func() {
		nd.cl.Kill()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, nd.srv.Shutdown(ctx))
		assert.NoError(t, <-nd.done)
	})
}

// startNodes is startCluster with the nodes' handles, and a directory TTL
// (0: the default).
func startNodes(t *testing.T, n, rooms, players int, ttl time.Duration) []*loadNode {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second))
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	secret := []byte("0123456789abcdef0123456789abcdef-load")
	var out []*loadNode
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		u := "ws://" + ln.Addr().String() + "/ws"
		reg := prometheus.NewRegistry()
		cl, err := cluster.Start(context.Background(), &cluster.Config{URL: ns.ClientURL(), NodeID: fmt.Sprintf("n%d", i),
			PublicURL: u, Memory: true, Registry: reg, TTL: ttl})
		require.NoError(t, err)
		m, h, err := prom.New(reg)
		require.NoError(t, err)
		s, err := server.New(&server.Config{MaxRooms: rooms + 1, MaxConnsPerAddr: -1, MaxRoomsPerAddr: -1,
			MaxRoomsPerPrefix: -1, PlayingReserve: -1, SmallNetReserve: -1, NewIdentityRate: -1, JoinFailRate: -1, OverloadAfter: -1,
			Room: room.Config{MaxPlayers: max(players, 2)}},
			server.Deps{Cluster: cl, Secret: secret, Metrics: m, MetricsHandler: h})
		require.NoError(t, err)
		nd := &loadNode{url: u, srv: s, cl: cl, done: make(chan error, 1)}
		nd.players = func() int { return s.Health().Players }
		go func() { nd.done <- s.Serve(ln) }()
		<-s.Ready()
		t.Cleanup(func() {
			nd.once.Do(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				assert.NoError(t, s.Shutdown(ctx))
				assert.NoError(t, <-nd.done)
				assert.NoError(t, cl.Close(ctx))
			})
		})
		out = append(out, nd)
	}
	return out
}

// TestClusterRunRecovers: a node crashes during a run; the bots reconnect,
// those of its rooms are told their room is lost, and the report says so,
// with the server figures unknown (the dead node's metrics cannot be read)
// rather than a wrong sum.
func TestClusterRunRecovers(t *testing.T) {
	nodes := startNodes(t, 3, 3, 3, 1500*time.Millisecond)
	var urls []string
	for _, nd := range nodes {
		urls = append(urls, nd.url)
	}
	var out bytes.Buffer
	var errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-url", strings.Join(urls, ","), "-rooms", "3", "-players", "3", "-duration", "8s", "-json"}, &out, &errOut)
	}()
	require.Eventually(t, func() bool { return strings.Contains(errOut.String(), "3 of 3 rooms playing") },
		time.Minute, 10*time.Millisecond, "every room playing")
	victim := nodes[0]
	for _, nd := range nodes {
		if nd.players() > victim.players() {
			victim = nd
		}
	}
	victim.kill(t)
	code := <-done
	require.Equal(t, 1, code, "a lost room is an error: %s", errOut.String())
	var rep Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	assert.Positive(t, rep.Reconnects.N, "bots reconnected")
	assert.Positive(t, rep.RoomsLost, "the crashed node's rooms are lost")
	assert.Equal(t, []string{strings.Replace(strings.Replace(victim.url, "ws://", "http://", 1), "/ws", "/metrics", 1)},
		rep.MetricsMissing)
	assert.Zero(t, rep.ServerRelayedPS, "unknown, not a partial sum")
	var text bytes.Buffer
	printReport(&text, &rep)
	assert.Contains(t, text.String(), "relayed/s (server)     unknown")
	assert.Contains(t, text.String(), "reconnects ")
}

// TestClusterRun spreads a small run over three nodes: some joins are
// redirected, every state is relayed.
func TestClusterRun(t *testing.T) {
	urls := startCluster(t, 3, 3, 4)
	var out, errOut bytes.Buffer
	code := run([]string{"-url", strings.Join(urls, ","), "-rooms", "3", "-players", "4", "-duration", "1s", "-json"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	var rep Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	assert.Equal(t, 3, rep.Nodes)
	assert.Equal(t, 3, rep.Rooms)
	assert.Equal(t, 9, rep.JoinDirect.N+rep.JoinRedirected.N)
	assert.Positive(t, rep.JoinRedirected.N, "joins through other nodes are redirected")
	assert.Positive(t, rep.ServerRelayedPS, "summed over the nodes")
	assert.Empty(t, rep.Errors)
}

// TestClusterLoad is the measured run across three nodes; it runs only
// with NEARZERO_CLUSTER_LOAD=ROOMSxPLAYERSxSECONDS, e.g. 10x4x15:
//
//	NEARZERO_CLUSTER_LOAD=10x4x15 go test ./loadtest -run ClusterLoad -v
func TestClusterLoad(t *testing.T) {
	spec := os.Getenv("NEARZERO_CLUSTER_LOAD")
	if spec == "" {
		t.Skip("set NEARZERO_CLUSTER_LOAD=ROOMSxPLAYERSxSECONDS to run")
	}
	f := strings.Split(spec, "x")
	require.Len(t, f, 3, "want ROOMSxPLAYERSxSECONDS")
	rooms, err1 := strconv.Atoi(f[0])
	players, err2 := strconv.Atoi(f[1])
	secs, err3 := strconv.Atoi(f[2])
	require.NoError(t, err1)
	require.NoError(t, err2)
	require.NoError(t, err3)
	urls := startCluster(t, 3, rooms, players)
	var out, errOut bytes.Buffer
	code := run([]string{"-url", strings.Join(urls, ","), "-rooms", f[0], "-players", f[1],
		"-duration", strconv.Itoa(secs) + "s"}, &out, &errOut)
	t.Log("\n" + out.String())
	require.Equal(t, 0, code, errOut.String())
}

func TestURLList(t *testing.T) {
	var errOut bytes.Buffer
	c, err := parse([]string{"-url", "ws://127.0.0.1:1/ws, ws://127.0.0.1:2/ws,"}, &errOut)
	require.NoError(t, err)
	assert.Equal(t, []string{"ws://127.0.0.1:1/ws", "ws://127.0.0.1:2/ws"}, c.urls)
	_, err = parse([]string{"-url", "ws://127.0.0.1:1/ws,ws://192.0.2.1:2/ws"}, &errOut)
	assert.Error(t, err, "every node must be on loopback")
}

// syncBuffer is a writer safe for concurrent use.
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
