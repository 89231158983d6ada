package godottest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// directPeerGD is tests/peer.gd plus a count of the paths the watcher's
// NetPredictor draws the mover from (debug_path), printed as NZ_PATHS= when
// it is done. It goes into the test's copy of the project only.
const directPeerGD = `extends "res://tests/peer.gd"

var paths := {}
var printed := false


func _process(delta: float) -> void:
	super._process(delta)
	if role != "watcher" or printed:
		return
	if done:
		printed = true
		print("NZ_PATHS=" + JSON.stringify(paths))
		return
	var remote := room.get_player_node(0)
	if remote == null or not room.is_synced():
		return
	var pred: NetPredictor = remote.get_node("NetPredictor")
	if pred.is_hidden():
		return
	var p: String = pred.debug_path
	paths[p] = paths.get(p, 0) + 1
`

// TestGodotDirectLinks runs two Godot processes on this machine in one
// room with direct links on (NetRoom's default): they link over host
// candidates, the watcher's NetPredictor reports the direct path, and the
// drawn error is printed.
func TestGodotDirectLinks(t *testing.T) {
	bin := os.Getenv("GODOT")
	if bin == "" {
		t.Skip("skipped: GODOT is not set (a Godot 4.4+ editor build; see TestGodotIntegration)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	version := godotVersion(t, ctx, bin)
	root := buildAddon(t, ctx)

	g := &godot{t: t, bin: bin, project: filepath.Join(t.TempDir(), "project")}
	require.NoError(t, copyProject(filepath.Join(root, "godot_project"), g.project))
	tests := filepath.Join(g.project, "tests")
	require.NoError(t, os.WriteFile(filepath.Join(tests, "direct_peer.gd"), []byte(directPeerGD), 0o644))
	scene, err := os.ReadFile(filepath.Join(tests, "peer.tscn"))
	require.NoError(t, err)
	require.Contains(t, string(scene), `path="res://tests/peer.gd"`)
	scene = []byte(strings.Replace(string(scene), `path="res://tests/peer.gd"`, `path="res://tests/direct_peer.gd"`, 1))
	require.NoError(t, os.WriteFile(filepath.Join(tests, "direct_peer.tscn"), scene, 0o644))
	g.env = isolatedEnv(t)
	g.importProject(ctx)

	url := startServer(t)
	dir := t.TempDir()
	peerArgs := func(role string, extra ...string) []string {
		return append([]string{"--max-fps", "60", "res://tests/direct_peer.tscn", "--",
			"--nz-server=" + url, "--nz-role=" + role, "--nz-out=" + dir,
			fmt.Sprintf("--nz-radius=%g", circleRadius), fmt.Sprintf("--nz-omega=%g", circleOmega)}, extra...)
	}
	moverCtx, stopMover := context.WithTimeout(ctx, 2*time.Minute)
	defer stopMover()
	mover := exec.CommandContext(moverCtx, g.bin, append([]string{"--headless", "--path", g.project}, peerArgs("mover")...)...)
	mover.Env = g.env
	mover.WaitDelay = 10 * time.Second
	var moverOut lockedBuffer
	mover.Stdout, mover.Stderr = &moverOut, &moverOut
	require.NoError(t, mover.Start())
	moverDone := make(chan struct{})
	go func() { _ = mover.Wait(); close(moverDone) }()
	defer func() { stopMover(); <-moverDone }()

	code := waitFile(t, ctx, filepath.Join(dir, "code.txt"), time.Minute, moverDone, &moverOut)
	out2, err := g.run(ctx, 2*time.Minute, peerArgs("watcher", "--nz-code="+code,
		fmt.Sprintf("--nz-seconds=%g", recordFor.Seconds()))...)
	require.NoError(t, err, "watcher:\n%s\nmover:\n%s", tail(out2, 40), tail(moverOut.String(), 40))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644))

	var paths map[string]int
	line := prefixed(out2, "NZ_PATHS=")
	require.NotEmpty(t, line, "watcher:\n%s", tail(out2, 40))
	require.NoError(t, json.Unmarshal([]byte(line), &paths))
	b, err := os.ReadFile(filepath.Join(dir, "track.json"))
	require.NoError(t, err)
	var track struct {
		Track [][]float64 `json:"track"`
	}
	require.NoError(t, json.Unmarshal(b, &track))
	require.NotEmpty(t, track.Track)
	start := track.Track[0][0]
	var steady []float64
	for _, r := range track.Track {
		st := r[0]
		want := [3]float64{circleRadius * math.Cos(circleOmega*st), 1, circleRadius * math.Sin(circleOmega*st)}
		if st-start >= warmup.Seconds() {
			steady = append(steady, math.Sqrt(sq(r[1]-want[0])+sq(r[2]-want[1])+sq(r[3]-want[2])))
		}
	}
	require.NotEmpty(t, steady)
	p50, p95, mx := percentiles(steady)
	t.Logf("Godot %s, direct links on loopback: frames by drawn path %v; drawn error after the %v warm-up over %d frames: "+
		"p50 %.4f m, p95 %.4f m, max %.4f m", version, paths, warmup, len(steady), p50, p95, mx)
	assert.Greater(t, paths["direct"], paths["server"], "NetPredictor draws from the direct path")
	assert.Less(t, p95, 0.05, "p95 error after the warm-up")
}
