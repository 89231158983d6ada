package godot

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func captureFallback(t *testing.T) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	saved := fallbackOut
	fallbackOut = &out
	t.Cleanup(func() { fallbackOut = saved })
	return &out
}

func TestPrintReportsCaller(t *testing.T) {
	out := captureFallback(t)
	PrintError("boom")
	assert.Contains(t, out.String(), "ERROR: boom")
	assert.Contains(t, out.String(), "log_test.go:")
	assert.Contains(t, out.String(), "TestPrintReportsCaller")
	out.Reset()
	PrintWarningf("w%d", 2)
	assert.Contains(t, out.String(), "WARNING: w2")
}

func TestLogHandler(t *testing.T) {
	out := captureFallback(t)
	l := slog.New(NewLogHandler(nil)).With("room", "ABC123").WithGroup("net")
	l.Error("dial failed", "tries", 3, "why", "no route")
	s := out.String()
	assert.Contains(t, s, `ERROR: dial failed room=ABC123 net.tries=3 net.why="no route"`)
	assert.Contains(t, s, "log_test.go:", "the log call's file is reported")

	out.Reset()
	l.Debug("hidden")
	assert.Empty(t, out.String(), "debug is below the default level")

	out.Reset()
	dbg := slog.New(NewLogHandler(&HandlerOptions{Level: slog.LevelDebug}))
	dbg.Debug("shown", slog.Group("g", "a", 1))
	assert.Contains(t, out.String(), "shown g.a=1")
	assert.NotContains(t, out.String(), "ERROR")

	out.Reset()
	dbg.Warn("careful")
	assert.Contains(t, out.String(), "WARNING: careful")
}

func TestCatchRecoversPanics(t *testing.T) {
	out := captureFallback(t)
	assert.NotPanics(t, func() {
		defer catch("test callback")
		var m map[string]int
		m["x"] = 1 // the panic site
	})
	s := out.String()
	assert.Contains(t, s, "Go panic in test callback: assignment to entry in nil map")
	assert.Contains(t, s, "log_test.go:", "the panic site is reported")
}
