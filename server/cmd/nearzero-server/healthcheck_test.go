package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/version"
	"github.com/nearzero/nearzero/netcode/wire"
)

func TestVersionFlag(t *testing.T) {
	var out syncBuf
	require.Zero(t, run([]string{"-version"}, nil, &out, &out, nil))
	assert.Equal(t, fmt.Sprintf("nearzero-server %s protocol %d rules %d\n",
		version.Version, wire.ProtocolVersion, wire.RulesVersion), out.String())
}

// TestHealthcheck runs the server and probes it the way the image's
// HEALTHCHECK does (nearzero-server -healthcheck -addr ...).
func TestHealthcheck(t *testing.T) {
	sig := make(chan os.Signal, 1)
	var logs syncBuf
	addrCh := make(chan string, 1)
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-addr", "127.0.0.1:0", "-db", ":memory:", "-drain-grace", "1s"},
			sig, &logs, &logs, func(a string) { addrCh <- a })
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case code := <-done:
		t.Fatalf("exited early with %d: %s", code, logs.String())
	}
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)

	for _, probe := range []string{addr, ":" + port, "0.0.0.0:" + port} {
		var out, errOut syncBuf
		assert.Zero(t, run([]string{"-healthcheck", "-addr", probe}, nil, &out, &errOut, nil), "probe %s: %s", probe, errOut.String())
		assert.Contains(t, out.String(), "200 OK", probe)
		assert.Contains(t, out.String(), `"state": "ready"`, probe)
	}

	sig <- syscall.SIGTERM
	select {
	case code := <-done:
		require.Zero(t, code, logs.String())
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop")
	}
	var out, errOut syncBuf
	assert.Equal(t, 1, run([]string{"-healthcheck", "-addr", addr}, nil, &out, &errOut, nil), "a stopped server is unhealthy")
	assert.Contains(t, errOut.String(), "healthcheck")
}

func TestHealthcheckNotReady(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/healthz", r.URL.Path)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"state":"draining"}`))
	}))
	defer srv.Close()
	var out, errOut syncBuf
	addr := srv.Listener.Addr().String()
	assert.Equal(t, 1, run([]string{"-healthcheck", "-addr", addr}, nil, &out, &errOut, nil), "503 while draining")
	assert.Contains(t, out.String(), "503")
	assert.Equal(t, 1, run([]string{"-healthcheck", "-addr", "no-port"}, nil, &out, &errOut, nil))
}
