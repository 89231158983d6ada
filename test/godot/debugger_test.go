package godottest

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// costReport is what tests/debug_cost.gd writes: the NetRooms' _process
// per frame, in microseconds.
type costReport struct {
	Mean     float64 `json:"mean_us"`
	P50      float64 `json:"p50_us"`
	P95      float64 `json:"p95_us"`
	P99      float64 `json:"p99_us"`
	Max      float64 `json:"max_us"`
	Frames   float64 `json:"frames"`
	Debugger bool    `json:"debugger"`
}

// TestGodotDebuggerTab checks the editor's nearzero tab as a user sees it:
// the editor (under xvfb, OpenGL) opens a copy of the demo project with
// the addon's plugin enabled, runs tests/debug_cost.tscn (a host and a
// lagged bot, examples/debugger/two_players.tscn) from the editor, and a
// test plugin (testdata/nz_shot) opens Debugger > nearzero once samples
// arrive, saves a screenshot and the samples as CSV. The same scene run
// from the command line, with no debugger, gives the NetRooms' per-frame
// cost without the tab; the editor's run gives it with the tab listening.
// NZ_SHOT_KEEP=DIR keeps the screenshot and the CSV there.
func TestGodotDebuggerTab(t *testing.T) {
	bin := os.Getenv("GODOT")
	if bin == "" {
		t.Skip("skipped: GODOT is not set (a Godot 4.4+ editor binary)")
	}
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		t.Skip("skipped: xvfb-run is not installed (Debian: apt-get install xvfb); the editor needs a display")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	godotVersion(t, ctx, bin)
	root := buildAddon(t, ctx)
	g := &godot{t: t, bin: bin, project: filepath.Join(t.TempDir(), "project")}
	require.NoError(t, copyProject(filepath.Join(root, "godot_project"), g.project))
	require.NoError(t, copyProject(filepath.Join(root, "test", "godot", "testdata", "nz_shot"),
		filepath.Join(g.project, "addons", "nz_shot")))
	pg := filepath.Join(g.project, "project.godot")
	b, err := os.ReadFile(pg)
	require.NoError(t, err)
	const enabled = `enabled=PackedStringArray("res://addons/nearzero/plugin.cfg")`
	require.Contains(t, string(b), enabled, "the demo project enables the nearzero plugin")
	b = []byte(strings.Replace(string(b), enabled,
		`enabled=PackedStringArray("res://addons/nearzero/plugin.cfg", "res://addons/nz_shot/plugin.cfg")`, 1))
	require.NoError(t, os.WriteFile(pg, b, 0o644))
	g.env = isolatedEnv(t)
	g.importProject(ctx)

	dir := t.TempDir()
	if keep := os.Getenv("NZ_SHOT_KEEP"); keep != "" {
		dir = keep
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	screen := []string{"-a", "-s", "-screen 0 1600x1000x24"}

	// Without a debugger: the command line.
	offEnv := append(append([]string(nil), g.env...), "NZ_COST_OUT="+filepath.Join(dir, "off.json"))
	out, code := godotRun(t, ctx, offEnv, 3*time.Minute, xvfb, append(screen, bin, "--rendering-driver", "opengl3",
		"--path", g.project, "res://tests/debug_cost.tscn")...)
	requireClean(t, "the scene without a debugger", out, code)
	off := readCost(t, filepath.Join(dir, "off.json"), out)
	assert.False(t, off.Debugger)

	// From the editor, the tab listening.
	onEnv := append(append([]string(nil), g.env...), "NZ_SHOT_DIR="+dir, "NZ_COST_OUT="+filepath.Join(dir, "on.json"))
	out, code = godotRun(t, ctx, onEnv, 5*time.Minute, xvfb, append(screen, bin, "--rendering-driver", "opengl3",
		"--editor", "--resolution", "1600x1000", "--path", g.project)...)
	requireClean(t, "the editor", out, code)
	for _, bad := range []string{"Parse Error", "SCRIPT ERROR", "Unknown message"} {
		assert.NotContains(t, out, bad, "the editor:\n%s", tail(out, 60))
	}
	var shot struct {
		Samples float64  `json:"samples"`
		CSV     float64  `json:"csv"`
		Rooms   []string `json:"rooms"`
		Live    bool     `json:"live"`
		Paused  bool     `json:"paused"`
		Size    []float64
	}
	raw, err := os.ReadFile(filepath.Join(dir, "shot.json"))
	require.NoError(t, err, "the editor:\n%s", tail(out, 60))
	require.NoError(t, json.Unmarshal(raw, &shot))
	t.Logf("the tab: %s", raw)
	assert.GreaterOrEqual(t, shot.Samples, 60.0, "samples arrive, ten a second")
	assert.True(t, shot.Live, "the screenshot shows a game in play: a room code and a remote entity")
	// The slider's range moving under its value once paused the view at
	// the first second (Range clamps and signals value_changed).
	assert.False(t, shot.Paused, "the view follows the game: nobody paused it")
	assert.ElementsMatch(t, []string{"Host/NetRoom", "Bot/NetRoom"}, shot.Rooms, "one list per NetRoom")
	f, err := os.Open(filepath.Join(dir, "debugger.png"))
	require.NoError(t, err)
	img, err := png.Decode(f)
	_ = f.Close()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, img.Bounds().Dx(), 1000, "the editor's window")

	// The CSV: every sample's entity and links, with live figures.
	cf, err := os.Open(filepath.Join(dir, "samples.csv"))
	require.NoError(t, err)
	rows, err := csv.NewReader(cf).ReadAll()
	_ = cf.Close()
	require.NoError(t, err)
	require.Greater(t, len(rows), 100)
	head := map[string]int{}
	for i, h := range rows[0] {
		head[h] = i
	}
	entities, links := 0, 0
	for _, r := range rows[1:] {
		switch r[head["kind"]] {
		case "entity":
			entities++
			assert.NotEqual(t, "", r[head["age_ms"]])
		case "link":
			links++
		}
	}
	assert.Positive(t, entities, "the bot's player, drawn by the host")
	assert.Positive(t, links, "the server link")

	on := readCost(t, filepath.Join(dir, "on.json"), out)
	assert.True(t, on.Debugger, "run from the editor: a debugger is attached")
	t.Logf("NetRooms' _process per frame (two rooms, µs): without a debugger mean %.1f p50 %.0f p95 %.0f p99 %.0f max %.0f; "+
		"from the editor, the tab listening: mean %.1f p50 %.0f p95 %.0f p99 %.0f max %.0f",
		off.Mean, off.P50, off.P95, off.P99, off.Max, on.Mean, on.P50, on.P95, on.P99, on.Max)
}

func readCost(t *testing.T, path, out string) costReport {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err, "no cost report:\n%s", tail(out, 40))
	var c costReport
	require.NoError(t, json.Unmarshal(raw, &c))
	require.Positive(t, c.Frames)
	return c
}
