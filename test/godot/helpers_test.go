package godottest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/server"
)

// startServer runs a room server with every default on a loopback port
// for the rest of the test, and returns its WebSocket URL.
func startServer(t *testing.T) string {
	t.Helper()
	srv, err := server.New(nil, server.Deps{})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	<-srv.Ready()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	})
	return "ws://" + ln.Addr().String() + "/ws"
}

// isolatedEnv is the environment with Godot's data, config and cache
// folders under a fresh temporary directory, so a test run neither reads
// nor writes the user's editor settings.
func isolatedEnv(t *testing.T) []string {
	t.Helper()
	data := t.TempDir()
	return append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(data, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(data, "config"), "XDG_CACHE_HOME="+filepath.Join(data, "cache"))
}
