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

// A platform the two-runtimes host runs on, natively or emulated.
type hostPlatform struct {
	name           string // subtest name
	lib            string // the zip's library, under bin/
	goos, goarch   string
	cc             string   // C compiler for golib and the host
	ext            string   // shared library extension
	hostFlags      []string // extra flags to link the host
	exe            string   // the host's file name
	prepare        func(t *testing.T, ctx context.Context, dir string) (runner []string, env []string)
	unavailableWhy func() string // "" when this machine can run it
}

var hostPlatforms = []hostPlatform{
	{
		name: "linux_x86_64", lib: "libnearzero.linux.x86_64.so", goos: "linux", goarch: "amd64", cc: "gcc", ext: ".so",
		hostFlags: []string{"-ldl", "-lpthread"}, exe: "twogo_host",
		prepare:        func(*testing.T, context.Context, string) ([]string, []string) { return nil, nil },
		unavailableWhy: func() string { return needTools("gcc") },
	},
	{
		// Emulated with qemu-user (Debian: qemu-user) and the arm64 sysroot
		// that gcc-aarch64-linux-gnu installs.
		name: "linux_arm64_qemu", lib: "libnearzero.linux.arm64.so", goos: "linux", goarch: "arm64", cc: "aarch64-linux-gnu-gcc",
		ext: ".so", hostFlags: []string{"-ldl", "-lpthread"}, exe: "twogo_host",
		prepare: func(*testing.T, context.Context, string) ([]string, []string) {
			return []string{"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"}, nil
		},
		unavailableWhy: func() string {
			if _, err := os.Stat("/usr/aarch64-linux-gnu/lib"); err != nil {
				return "no arm64 sysroot at /usr/aarch64-linux-gnu"
			}
			return needTools("aarch64-linux-gnu-gcc", "qemu-aarch64")
		},
	},
	{
		// Under Wine (Debian: wine64), in a fresh WINEPREFIX.
		name: "windows_x86_64_wine", lib: "nearzero.windows.x86_64.dll", goos: "windows", goarch: "amd64",
		cc: "x86_64-w64-mingw32-gcc", ext: ".dll", hostFlags: []string{"-static", "-lpthread"}, exe: "twogo_host.exe",
		prepare: prepareWine,
		unavailableWhy: func() string {
			if wine() == "" {
				return "no wine64 (Debian: apt-get install wine64)"
			}
			return needTools("x86_64-w64-mingw32-gcc")
		},
	},
}

// needTools says which of the commands are missing, or "".
func needTools(names ...string) string {
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			return "no " + n
		}
	}
	return ""
}

// wine returns the 64-bit Wine loader, or "".
func wine() string {
	for _, n := range []string{"wine64", "wine"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/lib/wine/wine64"); err == nil {
		return "/usr/lib/wine/wine64" // Debian's wine64 without the wine package
	}
	return ""
}

// wineserver returns Wine's server beside the loader (or on PATH).
func wineserver() string {
	if p := filepath.Join(filepath.Dir(wine()), "wineserver"); wine() != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "wineserver"
}

// prepareWine makes a fresh WINEPREFIX in dir, with the ProcessPrng shim
// when this Wine has no bcryptprimitives.dll.
func prepareWine(t *testing.T, ctx context.Context, dir string) ([]string, []string) {
	prefix := filepath.Join(dir, "wineprefix")
	env := append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml=")
	t.Cleanup(func() { // stop this prefix's wineserver before its files are removed
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		kill := exec.CommandContext(ctx, wineserver(), "-k")
		kill.Env = env
		_ = kill.Run() // none left running is fine
		wait := exec.CommandContext(ctx, wineserver(), "-w")
		wait.Env = env
		_ = wait.Run()
	})
	boot := exec.CommandContext(ctx, wine(), "wineboot", "--init")
	boot.Env = env
	out, err := boot.CombinedOutput()
	require.NoError(t, err, "wineboot:\n%s", out)
	sys32 := filepath.Join(prefix, "drive_c", "windows", "system32")
	if _, err := os.Stat(filepath.Join(sys32, "bcryptprimitives.dll")); err != nil {
		t.Log("this Wine has no bcryptprimitives.dll (Go needs its ProcessPrng): using testdata/processprng_shim.c")
		out, err := exec.CommandContext(ctx, "x86_64-w64-mingw32-gcc", "-shared", "-O1", "-o",
			filepath.Join(sys32, "bcryptprimitives.dll"), "testdata/processprng_shim.c", "-ladvapi32").CombinedOutput()
		require.NoError(t, err, "build the shim:\n%s", out)
	}
	return []string{wine()}, env
}

// TestTwoGoRuntimesInOneProcess loads a library from the zip and two copies
// of testdata/golib (each its own Go runtime) into one C process, then runs
// both golib copies at once from four threads: goroutines, allocation, GC
// and preempted loops in two runtimes together while the nearzero runtime
// is loaded and initialised. Go does not support several runtimes in one
// process officially; this is what a project with two Go-built
// GDExtensions does, and this test shows whether it holds (the addon
// README reports the result). On linux x86_64 it runs natively; linux arm64
// under qemu-user and windows x86_64 under Wine when they are installed
// (skipped, saying so, otherwise). Each also shows the zip's library loads
// and starts its runtime.
func TestTwoGoRuntimesInOneProcess(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("skipped: runs on a linux x86_64 machine; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	zipPath := buildPackage(t) // skips in -short mode, and without the compilers
	for _, p := range hostPlatforms {
		t.Run(p.name, func(t *testing.T) {
			if why := p.unavailableWhy(); why != "" {
				t.Skip("skipped: " + why)
			}
			runTwoGo(t, zipPath, p)
		})
	}
}

func runTwoGo(t *testing.T, zipPath string, p hostPlatform) {
	ctx, cancel := commandContext(t)
	defer cancel()
	dir := t.TempDir()

	nz := filepath.Join(dir, p.lib)
	extract(t, zipPath, addonDir+"bin/"+p.lib, nz)
	golibA, golibB := filepath.Join(dir, "golib_a"+p.ext), filepath.Join(dir, "golib_b"+p.ext)
	build := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-o", golibA, "./testdata/golib")
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "GOOS="+p.goos, "GOARCH="+p.goarch, "CC="+p.cc)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build testdata/golib:\n%s", out)
	b, err := os.ReadFile(golibA)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(golibB, b, 0o755), "a second file: it loads again, with its own runtime")
	host := filepath.Join(dir, p.exe)
	args := append([]string{"-O1", "-o", host, "testdata/twogo_host.c"}, p.hostFlags...)
	out, err = exec.CommandContext(ctx, p.cc, args...).CombinedOutput()
	require.NoError(t, err, "build testdata/twogo_host.c:\n%s", out)

	runner, env := p.prepare(t, ctx, dir)
	argv := append(runner, host, nz, golibA, golibB, "10")
	for run := range 3 {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = env
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.CombinedOutput()
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
