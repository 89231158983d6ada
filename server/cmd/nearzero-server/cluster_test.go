package main

import (
	"encoding/json"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterFlagsNeedEachOther(t *testing.T) {
	cases := map[string][]string{
		"node id without nats": {"-node-id", "a", "-db", ":memory:", "-addr", "127.0.0.1:0"},
		"nats without node id": {"-nats", "nats://127.0.0.1:1", "-node-url", "ws://x/ws", "-db", ":memory:", "-addr", "127.0.0.1:0"},
		"nats without secret": {"-nats", "nats://127.0.0.1:1", "-node-id", "a", "-node-url", "ws://x/ws",
			"-db", ":memory:", "-addr", "127.0.0.1:0"},
		"http node url": {"-nats", "nats://127.0.0.1:1", "-node-id", "a", "-node-url", "http://x/ws",
			"-db", ":memory:", "-addr", "127.0.0.1:0"},
	}
	t.Setenv("NEARZERO_SECRET", "")
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out syncBuf
			assert.NotZero(t, run(args, nil, &out, &out, nil), out.String())
		})
	}
}

// TestServeInCluster runs the command as one node of a cluster on an
// embedded NATS server: /healthz reports the cluster, SIGTERM leaves it.
func TestServeInCluster(t *testing.T) {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second))
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()

	t.Setenv("NEARZERO_SECRET", "0123456789abcdef0123456789abcdef-main-test")
	sig := make(chan os.Signal, 2)
	var out, logs syncBuf
	addrCh := make(chan string, 1)
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-addr", "127.0.0.1:0", "-db", ":memory:", "-drain-grace", "1s", "-nats", ns.ClientURL(),
			"-node-id", "eu-1", "-node-url", "ws://127.0.0.1:1/ws", "-region", "eu"}, sig, &out, &logs,
			func(a string) { addrCh <- a })
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case code := <-done:
		t.Fatalf("exited early with %d: %s", code, logs.String())
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	var h struct {
		State   string `json:"state"`
		Cluster struct {
			Node, Region, NATS string
		} `json:"cluster"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	resp.Body.Close()
	assert.Equal(t, "ready", h.State)
	assert.Equal(t, "eu-1", h.Cluster.Node)
	assert.Equal(t, "eu", h.Cluster.Region)
	assert.Equal(t, "CONNECTED", h.Cluster.NATS)

	sig <- syscall.SIGTERM
	select {
	case code := <-done:
		assert.Equal(t, 0, code, logs.String())
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop")
	}
	assert.Contains(t, logs.String(), "left the cluster")
}
