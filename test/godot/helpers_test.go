package godottest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/server"
)

// startServer runs a room server with every default on a loopback port
// for the rest of the test, and returns its WebSocket URL.
func startServer(t *testing.T) string {
	t.Helper()
	return testkit.StartServer(t, server.Deps{}).URL()
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
