package release

import (
	"archive/zip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/version"
)

// checkScript prints whether both classes are registered, and NetRoom's
// version property when it has one.
const checkScript = `extends SceneTree

func _init():
	var room = ClassDB.instantiate("NetRoom") if ClassDB.class_exists("NetRoom") else null
	var version = ""
	if room != null and "version" in room:
		version = str(room.get("version"))
	print("NZ_CLASSES=", ClassDB.class_exists("NetRoom"), ",", ClassDB.class_exists("NetPredictor"), ",", version)
	if room != null:
		room.free()
	quit()
`

// TestPackageInGodot unpacks the zip into a fresh, empty project, imports
// it headless and checks that NetRoom and NetPredictor load, as a user who
// installs the zip gets them. It runs only when GODOT names a Godot 4.4+
// editor binary (an editor build, for --import).
func TestPackageInGodot(t *testing.T) {
	bin := os.Getenv("GODOT")
	if bin == "" {
		t.Skip("skipped: GODOT is not set. This test loads the packaged addon in a real Godot: set GODOT to a " +
			"Godot 4.4+ editor binary to run it, e.g. GODOT=$(which godot) go test ./test/release/ -run Godot -v")
	}
	ctx, cancel := commandContext(t)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--headless", "--version").Output()
	require.NoError(t, err, "GODOT=%s --version", bin)
	v := strings.TrimSpace(string(out))
	if lines := strings.Split(v, "\n"); len(lines) > 1 {
		v = lines[len(lines)-1]
	}
	m := regexp.MustCompile(`^(\d+)\.(\d+)`).FindStringSubmatch(v)
	require.NotNil(t, m, "GODOT=%s: unrecognised version %q", bin, v)
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < 4 || (major == 4 && minor < 4) {
		t.Skipf("skipped: GODOT=%s is Godot %s; the addon needs 4.4 or later", bin, v)
	}
	zipPath := buildPackage(t)

	project := filepath.Join(t.TempDir(), "project")
	unzip(t, zipPath, project)
	require.NoError(t, os.WriteFile(filepath.Join(project, "project.godot"),
		[]byte("config_version=5\n\n[application]\n\nconfig/name=\"nearzero package test\"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(project, "check.gd"), []byte(checkScript), 0o644))
	data := t.TempDir()
	env := append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(data, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(data, "config"), "XDG_CACHE_HOME="+filepath.Join(data, "cache"))
	godot := func(limit time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--headless", "--path", project}, args...)...)
		cmd.Env = env
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// The first import of a fresh project with a class-registering
	// extension may crash at exit (see test/godot); a second one is clean.
	var imported string
	for attempt := 1; attempt <= 2; attempt++ {
		if imported, err = godot(3*time.Minute, "--import"); err == nil {
			break
		}
		t.Logf("import attempt %d: %v", attempt, err)
	}
	require.NoError(t, err, "godot --import:\n%s", imported)
	list, err := os.ReadFile(filepath.Join(project, ".godot", "extension_list.cfg"))
	require.NoError(t, err, "the import lists the extension")
	assert.Contains(t, string(list), "res://addons/nearzero/nearzero.gdextension")

	got, err := godot(time.Minute, "--script", "res://check.gd")
	require.NoError(t, err, got)
	var line string
	for _, l := range strings.Split(got, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "NZ_CLASSES="); ok {
			line = rest
		}
	}
	require.NotEmpty(t, line, "no NZ_CLASSES line:\n%s", got)
	fields := strings.SplitN(line, ",", 3)
	require.Len(t, fields, 3, line)
	assert.Equal(t, "true", fields[0], "NetRoom loads")
	assert.Equal(t, "true", fields[1], "NetPredictor loads")
	if fields[2] != "" {
		assert.Equal(t, version.Version, fields[2], "NetRoom.version")
	} else {
		t.Log("NetRoom has no version property in this build")
	}
	assert.NotContains(t, got, "ERROR:", "loading the extension printed no error")
}

// unzip unpacks a zip into dir.
func unzip(t *testing.T, zipPath, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(zipPath)
	require.NoError(t, err)
	defer zr.Close()
	for _, f := range zr.File {
		target := filepath.Join(dir, filepath.FromSlash(f.Name))
		require.True(t, strings.HasPrefix(target, dir+string(filepath.Separator)), "%s stays in the project", f.Name)
		if f.FileInfo().IsDir() {
			require.NoError(t, os.MkdirAll(target, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(target, b, 0o755))
	}
}
