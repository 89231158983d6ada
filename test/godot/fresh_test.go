package godottest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A new user's first steps: a project of their own with nothing but a
// project.godot, into which they copy addons/nearzero/, then open it. The
// first open of such a project is the one path every user takes, and the
// one the demo project's tests never see (their import cache is warm).

// freshProject makes a project holding only project.godot and a copy of
// the addon as a user gets it (its .gdextension, icons and the library
// ./build.sh addon built), plus the files given (path -> content).
func freshProject(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fresh")
	require.NoError(t, copyProject(filepath.Join(root, "godot_project", "addons", "nearzero"),
		filepath.Join(dir, "addons", "nearzero")))
	for _, f := range []string{"nearzero.gdextension", "bin"} {
		_, err := os.Stat(filepath.Join(dir, "addons", "nearzero", f))
		require.NoError(t, err, "the addon copy has %s", f)
	}
	files["project.godot"] = "config_version=5\n\n[application]\n\nconfig/name=\"Fresh\"\n" + files["project.godot"]
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return dir
}

// buildAddon builds the addon's library for this machine once per test.
func buildAddon(t *testing.T, ctx context.Context) (root string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	build := exec.CommandContext(ctx, "./build.sh", "addon")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "./build.sh addon:\n%s", out)
	return root
}

// godotRun runs bin with args in dir; it returns the output and the exit
// code (-1 when it did not exit by itself within limit).
func godotRun(t *testing.T, ctx context.Context, env []string, limit time.Duration, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok && ctx.Err() == nil {
			code = ee.ExitCode()
		}
	}
	return string(out), code
}

// requireClean fails on a non-zero exit or an engine crash report.
func requireClean(t *testing.T, what, out string, code int) {
	t.Helper()
	require.Equal(t, 0, code, "%s exited %d:\n%s", what, code, tail(out, 60))
	require.NotContains(t, out, "handle_crash", "%s crashed:\n%s", what, tail(out, 60))
	require.NotContains(t, out, "Program crashed", "%s crashed:\n%s", what, tail(out, 60))
}

func godotBin(t *testing.T) string {
	bin := os.Getenv("GODOT")
	if bin == "" {
		t.Skip("skipped: GODOT is not set. This test drives a real Godot: set GODOT to a Godot 4.4+ " +
			"editor binary to run it, e.g. GODOT=$(which godot) go test ./test/godot/ -run Fresh -v")
	}
	return bin
}

// TestGodotFreshImport: the first `--import` of a fresh project with the
// addon exits 0 without a crash and lists the extension; so does removing
// the addon and opening the project again.
func TestGodotFreshImport(t *testing.T) {
	bin := godotBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	godotVersion(t, ctx, bin)
	root := buildAddon(t, ctx)
	env := isolatedEnv(t)

	dir := freshProject(t, root, map[string]string{})
	out, code := godotRun(t, ctx, env, 3*time.Minute, bin, "--headless", "--path", dir, "--import")
	t.Logf("first --import of a fresh project: exit %d", code)
	requireClean(t, "the first --import", out, code)
	list, err := os.ReadFile(filepath.Join(dir, ".godot", "extension_list.cfg"))
	require.NoError(t, err, "the import lists the extensions")
	assert.Contains(t, string(list), "res://addons/nearzero/nearzero.gdextension")
	assert.Contains(t, out, "nearzero ", "the library loaded and said so")

	// A second, now with the extension loaded at start-up.
	out, code = godotRun(t, ctx, env, 3*time.Minute, bin, "--headless", "--path", dir, "--import")
	t.Logf("second --import: exit %d", code)
	requireClean(t, "the second --import", out, code)

	// The user removes the addon: the next editor run unloads nothing it
	// cannot, forgets the extension and exits cleanly.
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "addons")))
	out, code = godotRun(t, ctx, env, 3*time.Minute, bin, "--headless", "--path", dir, "--import")
	t.Logf("--import after removing the addon: exit %d", code)
	requireClean(t, "the --import after removing the addon", out, code)
	list, _ = os.ReadFile(filepath.Join(dir, ".godot", "extension_list.cfg"))
	assert.NotContains(t, string(list), "nearzero", "the extension is no longer listed")
}

// TestGodotFreshEditor: the editor itself (not headless: a real window
// under xvfb, drawn with OpenGL) opens a fresh project with the addon and
// quits by itself without a crash.
func TestGodotFreshEditor(t *testing.T) {
	bin := godotBin(t)
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		t.Skip("skipped: xvfb-run is not installed (Debian: apt-get install xvfb); the editor needs a display")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	godotVersion(t, ctx, bin)
	root := buildAddon(t, ctx)
	env := isolatedEnv(t)
	dir := freshProject(t, root, map[string]string{})
	out, code := godotRun(t, ctx, env, 4*time.Minute, xvfb, "-a", bin, "--rendering-driver", "opengl3",
		"--path", dir, "--editor", "--quit-after", "600")
	t.Logf("editor on a fresh project (--quit-after 600): exit %d", code)
	requireClean(t, "the editor", out, code)
	assert.Contains(t, out, "nearzero ", "the library loaded in the editor")
}

// quitWithRoom is a game that quits while its NetRoom is in a room. It
// prints every NetRoom signal it receives, and what a handler touching
// the tree would hit.
const quitWithRoom = `extends Node

var room: NetRoom

func _ready() -> void:
	room = NetRoom.new()
	room.server_address = OS.get_environment("NZ_SERVER")
	add_child(room)
	for s in ["connected", "disconnected", "room_joined", "room_left", "room_error"]:
		room.connect(s, _on_signal.bind(s))
	room.create_room()

func _on_signal(a = null, b = null, name := "") -> void:
	if name == "":
		name = str(b) if b != null else str(a)
	print("NZ_SIGNAL ", name, " inside_tree=", is_inside_tree())
	if name == "room_joined":
		print("NZ_JOINED")
		get_tree().quit()
`

// TestGodotQuitWithRoomOpen: quitting a running game with a room open
// exits 0 with no crash, no error, and no signal emitted while the tree
// goes away.
func TestGodotQuitWithRoomOpen(t *testing.T) {
	bin := godotBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	godotVersion(t, ctx, bin)
	root := buildAddon(t, ctx)
	env := append(isolatedEnv(t), "NZ_SERVER="+startServer(t))
	dir := freshProject(t, root, map[string]string{
		"main.gd":       quitWithRoom,
		"main.tscn":     "[gd_scene load_steps=2 format=3]\n\n[ext_resource type=\"Script\" path=\"res://main.gd\" id=\"1\"]\n\n[node name=\"Main\" type=\"Node\"]\nscript = ExtResource(\"1\")\n",
		"project.godot": "run/main_scene=\"res://main.tscn\"\n",
	})
	out, code := godotRun(t, ctx, env, 3*time.Minute, bin, "--headless", "--path", dir, "--import")
	requireClean(t, "the first --import", out, code)

	out, code = godotRun(t, ctx, env, 2*time.Minute, bin, "--headless", "--path", dir)
	t.Logf("game quit with a room open: exit %d", code)
	requireClean(t, "the game", out, code)
	require.Contains(t, out, "NZ_JOINED", "it joined a room before quitting:\n%s", tail(out, 40))
	after := out[strings.Index(out, "NZ_JOINED"):]
	assert.NotContains(t, after, "NZ_SIGNAL", "no signal while quitting")
	assert.NotContains(t, out, "ERROR", "no error:\n%s", tail(out, 40))
}
