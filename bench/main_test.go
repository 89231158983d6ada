package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bench/internal/netbench"
)

func TestRunJSON(t *testing.T) {
	var out, errs bytes.Buffer
	require.NoError(t, run([]string{"-json", "-scenario", "direct-20,server-only", "-duration", "2s", "-seed", "7"}, &out, &errs))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2*2*len(netbench.Methods), "two scenarios, two entities, every method")
	var row map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &row))
	assert.Equal(t, "direct-20", row["scenario"])
	assert.Equal(t, float64(7), row["seed"])
	assert.Empty(t, errs.String(), "no progress bar when stderr is not a terminal")
}

func TestRunTextTraceAndRecord(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "inputs.csv")
	var out, errs bytes.Buffer
	require.NoError(t, run([]string{"-scenario", "direct-50", "-duration", "2s", "-trace", dir, "-record", rec}, &out, &errs))
	assert.Contains(t, out.String(), "pop>.3")
	assert.Contains(t, out.String(), "simulated seconds")
	for _, f := range []string{"direct-50-vehicle.csv", "direct-50-vehicle.png", "direct-50-character-methods.png", "inputs.csv"} {
		_, err := os.Stat(filepath.Join(dir, f))
		assert.NoError(t, err, f)
	}

	var again bytes.Buffer
	require.NoError(t, run([]string{"-scenario", "direct-50", "-duration", "2s", "-inputs", rec, "-json"}, &again, &errs))
	assert.Contains(t, again.String(), `"scenario":"direct-50"`)
}

func TestRunSeeds(t *testing.T) {
	var out, errs bytes.Buffer
	require.NoError(t, run([]string{"-scenario", "direct-20", "-duration", "2s", "-seeds", "3,4", "-json"}, &out, &errs))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2*len(netbench.Methods), "one averaged row per entity and method")
	var row map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &row))
	assert.Equal(t, float64(2), row["seeds"])
	assert.Error(t, run([]string{"-seeds", "x"}, &out, &errs))
}

func TestRunErrors(t *testing.T) {
	var out, errs bytes.Buffer
	assert.ErrorContains(t, run([]string{"-scenario", "nope"}, &out, &errs), "no scenario")
	assert.ErrorContains(t, run([]string{"-record", "x.csv"}, &out, &errs), "exactly one -scenario")
	assert.Error(t, run([]string{"-inputs", filepath.Join(t.TempDir(), "missing.csv")}, &out, &errs))
	require.NoError(t, run([]string{"-list"}, &out, &errs))
	assert.Contains(t, out.String(), "round-start")
}

// TestShippedRecording: the racer demo's bot, recorded in Godot, covers a
// whole run as player A; player B keeps its scripted driver.
func TestShippedRecording(t *testing.T) {
	const path = "testdata/racer-bot-inputs.csv"
	f, err := os.Open(path)
	require.NoError(t, err)
	rec, err := netbench.ReadRecording(f)
	f.Close()
	require.NoError(t, err)
	require.NotEmpty(t, rec.Events)
	for _, e := range rec.Events {
		require.Equal(t, "a", e.Client, "the vehicle only")
	}
	last := rec.Events[len(rec.Events)-1].At
	assert.GreaterOrEqual(t, last, netbench.DefaultDuration+netbench.Warmup, "covers a full run")

	var out, errs bytes.Buffer
	require.NoError(t, run([]string{"-scenario", "direct-50", "-duration", "3s", "-inputs", path, "-json"}, &out, &errs))
	moved := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &row))
		if row["method"] == "snap" {
			// Snap on arrival is a data age behind: zero only for a still bot.
			moved[row["entity"].(string)] = row["mean_m"].(float64) > 0.05
		}
	}
	assert.Equal(t, map[string]bool{"vehicle": true, "character": true}, moved,
		"the replayed vehicle drives and the scripted character still runs")
}
