package release

import (
	"archive/zip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTwoGoRuntimesInOneProcess loads the zip's linux x86_64 library and two
// copies of testdata/golib (each its own Go runtime) into one C process
// with dlopen, then runs both golib copies at once from four threads:
// goroutines, allocation, GC and preempted loops in two runtimes together
// while the nearzero runtime is loaded and initialised. Go does not
// support several runtimes in one process officially; this is what a
// project with two Go-built GDExtensions does, and this test shows whether
// it holds on this platform (the addon README reports the result).
func TestTwoGoRuntimesInOneProcess(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("skipped: loads the linux x86_64 library; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	zipPath := buildPackage(t) // skips in -short mode, and without the compilers
	cc := "gcc"
	if _, err := exec.LookPath(cc); err != nil {
		t.Skip("skipped: no gcc to build the C host")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()

	nz := filepath.Join(dir, "libnearzero.linux.x86_64.so")
	extract(t, zipPath, addonDir+"bin/libnearzero.linux.x86_64.so", nz)
	golibA, golibB := filepath.Join(dir, "golib_a.so"), filepath.Join(dir, "golib_b.so")
	build := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-o", golibA, "./testdata/golib")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build testdata/golib:\n%s", out)
	b, err := os.ReadFile(golibA)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(golibB, b, 0o755), "a second file: dlopen loads it again, with its own runtime")
	host := filepath.Join(dir, "twogo_host")
	out, err = exec.CommandContext(ctx, cc, "-O1", "-o", host, "testdata/twogo_host.c", "-ldl", "-lpthread").CombinedOutput()
	require.NoError(t, err, "build testdata/twogo_host.c:\n%s", out)

	for run := range 3 {
		out, err := exec.CommandContext(ctx, host, nz, golibA, golibB, "10").CombinedOutput()
		require.NoError(t, err, "run %d:\n%s", run, out)
		assert.Contains(t, string(out), "twogo: ok", "run %d", run)
		if run == 0 {
			t.Logf("%s", out)
		}
	}
}

// extract copies one file out of a zip.
func extract(t *testing.T, zipPath, name, to string) {
	t.Helper()
	zr, err := zip.OpenReader(zipPath)
	require.NoError(t, err)
	defer zr.Close()
	rc, err := zr.Open(name)
	require.NoError(t, err, name)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o755))
}
