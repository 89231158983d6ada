package release

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/version"
	"github.com/nearzero/nearzero/netcode/wire"
)

const (
	addonDir  = "addons/nearzero/"
	addonRepo = "godot_project/addons/nearzero/"
	// maxGlibc is the newest glibc symbol version the linux libraries may
	// need (the addon README's Platforms section says so): 2.34 is Debian
	// 12, Ubuntu 22.04, Fedora 35.
	maxGlibc = "2.34"
	// maxZip bounds the release zip, the download a game developer gets:
	// 24.70 MB measured with the datagram path (24,703,483 bytes: five
	// libraries, the Linux ones as the linker makes them) before the
	// editor's debugger feed joined it (+0.14 MB a library on its own);
	// 21.94 MB before the datagram path (quic-go, issue 32), 20.56 MB when
	// the Linux libraries still packed their own relocations (README,
	// Release).
	maxZip = 25_500_000
	// maxLibrary bounds each stripped library, the size a game ships.
	// Measured: linux x86_64 14.96 MB, linux arm64 13.87, windows x86_64
	// 13.44, macOS arm64 12.31, macOS x86_64 13.34 before the debugger
	// feed (linux x86_64 +0.14 MB); quic-go's datagram path added
	// 1.36-1.68 MB to each (issue 32); down from 21.4 MB (linux x86_64)
	// when the game library still linked Prometheus, html/template and
	// pion/webrtc's media stack (README, Release, says what each step
	// took).
	maxLibrary = 15_500_000
)

// A library the zip must hold, and how to read it. These three always;
// zipLibraries adds macosLibraries when zig is installed.
type library struct {
	key     string // the .gdextension [libraries] key
	file    string // under addons/nearzero/bin/
	elf     elf.Machine
	windows bool
	macho   macho.Cpu // a macOS library (macos_test.go)
}

var libraries = []library{
	{key: "linux.x86_64", file: "libnearzero.linux.x86_64.so", elf: elf.EM_X86_64},
	{key: "linux.arm64", file: "libnearzero.linux.arm64.so", elf: elf.EM_AARCH64},
	{key: "windows.x86_64", file: "nearzero.windows.x86_64.dll", windows: true},
}

var (
	root string // the repository root
	work string // a temporary directory for this run's builds

	pkgOnce sync.Once
	pkgZip  string // the zip ./build.sh package wrote
	pkgErr  error

	srvOnce sync.Once
	srvBin  string // the server built as the Dockerfile builds it
	srvErr  error
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		var err error
		if root, err = filepath.Abs("../.."); err != nil {
			fmt.Fprintln(os.Stderr, "release test:", err)
			return 1
		}
		if work, err = os.MkdirTemp("", "nearzero-release-test-"); err != nil {
			fmt.Fprintln(os.Stderr, "release test:", err)
			return 1
		}
		defer os.RemoveAll(work)
		return m.Run()
	}())
}

// missingCompilers names what ./build.sh package needs and this machine
// lacks (the same choice of compilers as build.sh's target_package).
func missingCompilers() []string {
	has := func(names ...string) bool {
		for _, n := range names {
			if _, err := exec.LookPath(n); err == nil {
				return true
			}
		}
		return false
	}
	var missing []string
	host := runtime.GOOS + "/" + runtime.GOARCH
	need := map[string]string{
		"x86_64-linux-gnu-gcc":   "gcc-x86-64-linux-gnu",
		"aarch64-linux-gnu-gcc":  "gcc-aarch64-linux-gnu",
		"x86_64-w64-mingw32-gcc": "gcc-mingw-w64-x86-64",
	}
	switch host {
	case "linux/amd64":
		delete(need, "x86_64-linux-gnu-gcc")
	case "linux/arm64":
		delete(need, "aarch64-linux-gnu-gcc")
	}
	if (host == "linux/amd64" || host == "linux/arm64") && !has("gcc", "cc", "clang") {
		missing = append(missing, "gcc")
	}
	for cc, pkg := range need {
		if !has(cc) {
			missing = append(missing, pkg+" ("+cc+")")
		}
	}
	if !has("zip", "python3") {
		missing = append(missing, "zip")
	}
	// Without it the macOS libraries are built, but over maxLibrary:
	// llvm-strip drops their local symbols (build.sh).
	if zigCommand() != "" && !has("llvm-strip", "llvm-strip-14", "llvm-strip-15", "llvm-strip-16", "llvm-strip-17", "llvm-strip-18", "llvm-strip-19") {
		missing = append(missing, "llvm (llvm-strip)")
	}
	slices.Sort(missing)
	return missing
}

// commandContext bounds a command run by test t by the test binary's own
// deadline (go test -timeout), less a margin to report what the command
// printed; without a deadline, only by t. Nothing here has a wall-clock
// budget of its own: on a loaded machine a build is slower, not broken.
func commandContext(t *testing.T) (context.Context, context.CancelFunc) {
	deadline, ok := t.Deadline()
	if !ok {
		return context.WithCancel(t.Context())
	}
	margin := min(time.Until(deadline)/10, 30*time.Second)
	return context.WithDeadline(t.Context(), deadline.Add(-margin))
}

// buildPackage runs ./build.sh package once per test run and returns the
// zip's path. It skips in -short mode, and without the C compilers (fails
// under CI, whose .ci/run installs them).
func buildPackage(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped in -short mode: ./build.sh package builds three c-shared libraries (about a minute)")
	}
	if missing := missingCompilers(); len(missing) > 0 {
		msg := "./build.sh package needs C compilers this machine lacks: " + strings.Join(missing, ", ") +
			" (Debian: apt-get install gcc gcc-aarch64-linux-gnu gcc-mingw-w64-x86-64 llvm zip; .ci/run installs them)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip("skipped: " + msg)
	}
	pkgOnce.Do(func() {
		ctx, cancel := commandContext(t)
		defer cancel()
		dist := filepath.Join(work, "dist")
		cmd := exec.CommandContext(ctx, "./build.sh", "package")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "DIST="+dist)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			pkgErr = fmt.Errorf("./build.sh package: %w\n%s", err, out)
			return
		}
		t.Logf("./build.sh package took %s:\n%s", time.Since(start).Round(time.Second), out)
		zips, err := filepath.Glob(filepath.Join(dist, "*.zip"))
		if err != nil || len(zips) != 1 {
			pkgErr = fmt.Errorf("want one zip in DIST, found %v (%v)", zips, err)
			return
		}
		pkgZip = zips[0]
	})
	require.NoError(t, pkgErr)
	return pkgZip
}

// buildServer builds nearzero-server as the Dockerfile does (static, no
// cgo), once per test run.
func buildServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped in -short mode: builds the server")
	}
	srvOnce.Do(func() {
		ctx, cancel := commandContext(t)
		defer cancel()
		bin := filepath.Join(work, "nearzero-server")
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./server/cmd/nearzero-server")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			srvErr = fmt.Errorf("go build the server: %w\n%s", err, out)
			return
		}
		srvBin = bin
	})
	require.NoError(t, srvErr)
	return srvBin
}

// readZip returns the zip's files (directories left out) by name.
func readZip(t *testing.T, name string) map[string][]byte {
	t.Helper()
	zr, err := zip.OpenReader(name)
	require.NoError(t, err)
	defer zr.Close()
	files := map[string][]byte{}
	for _, f := range zr.File {
		require.True(t, f.Name == "addons/" || strings.HasPrefix(f.Name, addonDir),
			"%s: everything is under %s (the zip's root is addons/)", f.Name, addonDir)
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err, f.Name)
		files[f.Name] = b
	}
	return files
}

// gdextension is a parsed .gdextension: section, then key, then the value
// with its quotes removed.
type gdextension map[string]map[string]string

func parseGDExtension(t *testing.T, b []byte) gdextension {
	t.Helper()
	g := gdextension{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			g[section] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, "a key = value line: %q", line)
			require.NotEmpty(t, section, "%q is in a section", line)
			g[section][strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	require.NoError(t, sc.Err())
	return g
}

func readRepo(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	require.NoError(t, err)
	return b
}

func TestPackageFiles(t *testing.T) {
	zipPath := buildPackage(t)
	assert.Equal(t, "nearzero-"+version.Version+".zip", filepath.Base(zipPath), "the zip is named for netcode/version")
	st, err := os.Stat(zipPath)
	require.NoError(t, err)
	t.Logf("%s: %d bytes (%.2f MB)", filepath.Base(zipPath), st.Size(), float64(st.Size())/1e6)
	assert.LessOrEqual(t, st.Size(), int64(maxZip), "the zip is larger than the bound")
	files := readZip(t, zipPath)

	want := []string{addonDir + "LICENSE", addonDir + "README.md", addonDir + "nearzero.gdextension", addonDir + "plugin.cfg"}
	icons, err := filepath.Glob(filepath.Join(root, addonRepo, "icons", "*.svg"))
	require.NoError(t, err)
	require.NotEmpty(t, icons)
	for _, icon := range icons {
		want = append(want, addonDir+"icons/"+filepath.Base(icon))
	}
	// The editor plugin (the Debugger's nearzero tab), as in the repository.
	scripts, err := filepath.Glob(filepath.Join(root, addonRepo, "debugger", "*.gd"))
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, sc := range append(scripts, filepath.Join(root, addonRepo, "plugin.cfg")) {
		rel, err := filepath.Rel(filepath.Join(root, addonRepo), sc)
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		if rel != "plugin.cfg" {
			want = append(want, addonDir+rel)
		}
		assert.Equal(t, string(readRepo(t, addonRepo+rel)), string(files[addonDir+rel]), "%s as in the repository", rel)
	}
	for _, l := range zipLibraries(t) {
		want = append(want, addonDir+"bin/"+l.file)
	}
	got := slices.Sorted(func(yield func(string) bool) {
		for name := range files {
			if !yield(name) {
				return
			}
		}
	})
	slices.Sort(want)
	assert.Equal(t, want, got, "the zip's files")

	assert.Equal(t, string(readRepo(t, "LICENSE")), string(files[addonDir+"LICENSE"]), "LICENSE is the repository's")
	assert.Contains(t, string(files[addonDir+"LICENSE"]), "MIT License")
	assert.Equal(t, string(readRepo(t, addonRepo+"README.md")), string(files[addonDir+"README.md"]), "the addon README")
	for _, icon := range icons {
		assert.Equal(t, string(readRepo(t, addonRepo+"icons/"+filepath.Base(icon))),
			string(files[addonDir+"icons/"+filepath.Base(icon)]), "icon %s", filepath.Base(icon))
	}
}

func TestPackageGDExtension(t *testing.T) {
	files := readZip(t, buildPackage(t))
	raw := files[addonDir+"nearzero.gdextension"]
	require.NotEmpty(t, raw)
	got := parseGDExtension(t, raw)
	repo := parseGDExtension(t, readRepo(t, addonRepo+"nearzero.gdextension"))

	assert.Equal(t, repo["configuration"], got["configuration"], "[configuration] as in the repository")
	assert.Equal(t, "nearzero_init", got["configuration"]["entry_symbol"])
	assert.Equal(t, repo["icons"], got["icons"], "[icons] as in the repository")
	for class, p := range got["icons"] {
		assert.Contains(t, files, strings.TrimPrefix(p, "res://"), "icon of %s is in the zip", class)
	}

	wantLibs := map[string]string{}
	for _, l := range zipLibraries(t) {
		wantLibs[l.key] = "res://" + addonDir + "bin/" + l.file
	}
	assert.Equal(t, wantLibs, got["libraries"], "[libraries] lists exactly the libraries in the zip")
	for key, p := range got["libraries"] {
		assert.Equal(t, repo["libraries"][key], p, "%s as in the repository", key)
		assert.Contains(t, files, strings.TrimPrefix(p, "res://"), "%s: %s is in the zip", key, p)
	}
	listed := map[string]bool{}
	for _, p := range got["libraries"] {
		listed[strings.TrimPrefix(p, "res://")] = true
	}
	for name := range files {
		if strings.HasPrefix(name, addonDir+"bin/") {
			assert.True(t, listed[name], "%s in the zip is listed in [libraries]", name)
		}
	}
	assert.Contains(t, string(raw), "; nearzero "+version.Version+":", "the header names the version")
}

func TestPackageLibraries(t *testing.T) {
	files := readZip(t, buildPackage(t))
	for _, l := range zipLibraries(t) {
		t.Run(l.key, func(t *testing.T) {
			b := files[addonDir+"bin/"+l.file]
			require.NotEmpty(t, b, l.file)
			t.Logf("%s: %d bytes (%.1f MB)", l.file, len(b), float64(len(b))/1e6)
			assert.LessOrEqual(t, len(b), maxLibrary, "%s is larger than the bound", l.file)
			switch {
			case l.windows:
				checkPE(t, b)
			case l.macho != 0:
				checkMachO(t, b, l)
			default:
				checkELF(t, b, l.elf)
			}
		})
	}
}

// checkELF checks a linux library: its machine, the nearzero_init export,
// and that it links against libc alone, no newer than maxGlibc.
func checkELF(t *testing.T, b []byte, machine elf.Machine) {
	f, err := elf.NewFile(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, machine, f.Machine)
	assert.Equal(t, elf.ET_DYN, f.Type, "a shared library")
	syms, err := f.DynamicSymbols()
	require.NoError(t, err)
	i := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == "nearzero_init" })
	require.GreaterOrEqual(t, i, 0, "nearzero_init is exported")
	assert.Equal(t, elf.STT_FUNC, elf.ST_TYPE(syms[i].Info), "nearzero_init is a function")
	assert.Equal(t, elf.STB_GLOBAL, elf.ST_BIND(syms[i].Info))
	assert.NotEqual(t, elf.SHN_UNDEF, syms[i].Section, "nearzero_init is defined here")

	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	for _, l := range libs {
		assert.Contains(t, []string{"libc.so.6", "libpthread.so.0", "libdl.so.2", "libm.so.6"}, l, "links only against glibc")
	}
	imported, err := f.ImportedSymbols()
	require.NoError(t, err)
	newest := ""
	for _, s := range imported {
		if v, ok := strings.CutPrefix(s.Version, "GLIBC_"); ok && versionLess(newest, v) {
			newest = v
		}
	}
	t.Logf("needs glibc %s or newer", newest)
	assert.False(t, versionLess(maxGlibc, newest), "needs glibc %s; the README promises %s", newest, maxGlibc)
	checkPlainRelocations(t, f)
}

// checkPlainRelocations checks that a linux library holds its relocations
// as every glibc from maxGlibc on applies them: no packed table (DT_RELR,
// which a linker may be set to make and only glibc 2.36 and later apply)
// and no need of GLIBC_ABI_DT_RELR, which older loaders refuse.
func checkPlainRelocations(t *testing.T, f *elf.File) {
	t.Helper()
	const dtRelr = elf.DynTag(36)
	relr, err := f.DynValue(dtRelr)
	require.NoError(t, err)
	assert.Empty(t, relr, "no DT_RELR: glibc before 2.36 ignores it")
	needs, err := f.DynamicVersionNeeds()
	require.NoError(t, err)
	for _, n := range needs {
		for _, d := range n.Needs {
			assert.NotEqual(t, "GLIBC_ABI_DT_RELR", d.Dep, "%s: a need glibc before 2.36 refuses", n.Name)
		}
	}
}

// TestLinuxLibraryLoads loads the zip's library for this machine (linux
// x86_64) with the system's loader, from a small C program: the Go
// runtime starts in its constructor, within dlopen.
func TestLinuxLibraryLoads(t *testing.T) {
	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		t.Skipf("skipped: loads the linux x86_64 library (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	files := readZip(t, buildPackage(t))
	b := files[addonDir+"bin/libnearzero.linux.x86_64.so"]
	require.NotEmpty(t, b)
	dir := t.TempDir()
	lib := filepath.Join(dir, "libnearzero.linux.x86_64.so")
	require.NoError(t, os.WriteFile(lib, b, 0o755))
	loader := buildLoader(t, dir)

	out, err := exec.Command(loader, lib).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "loaded", strings.TrimSpace(string(out)))
}

// buildLoader compiles, into dir, a C program that loads the library named
// by its argument with dlopen, finds nearzero_init and prints "loaded". The
// Go runtime starts in the library's constructor, within dlopen.
func buildLoader(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "load.c")
	require.NoError(t, os.WriteFile(src, []byte(`#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
	if (!dlsym(h, "nearzero_init")) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 3; }
	printf("loaded\n");
	return 0;
}
`), 0o644))
	loader := filepath.Join(dir, "load")
	out, err := exec.Command("gcc", "-o", loader, src, "-ldl").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return loader
}

// versionLess compares dotted numeric versions ("" is the oldest).
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// windowsSystemDLLs are the DLLs every Windows has; the library must need
// no other (no MinGW runtime DLL such as libwinpthread-1.dll).
var windowsSystemDLLs = []string{"kernel32.dll", "msvcrt.dll", "ws2_32.dll", "advapi32.dll", "winmm.dll",
	"ntdll.dll", "user32.dll", "shell32.dll", "bcrypt.dll", "bcryptprimitives.dll", "powrprof.dll", "iphlpapi.dll",
	"dnsapi.dll", "userenv.dll", "crypt32.dll", "secur32.dll", "netapi32.dll", "mswsock.dll"}

// checkPE checks the windows DLL: machine, that it is a DLL, the
// nearzero_init export, and only system DLLs imported.
func checkPE(t *testing.T, b []byte) {
	f, err := pe.NewFile(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, uint16(pe.IMAGE_FILE_MACHINE_AMD64), f.Machine)
	assert.NotZero(t, f.Characteristics&pe.IMAGE_FILE_DLL, "a DLL")
	exports, err := peExports(f)
	require.NoError(t, err)
	assert.Contains(t, exports, "nearzero_init", "nearzero_init is exported")
	syms, err := f.ImportedSymbols() // "name:DLL" (f.ImportedLibraries is not implemented for PE)
	require.NoError(t, err)
	dlls := map[string]bool{}
	for _, s := range syms {
		if _, dll, ok := strings.Cut(s, ":"); ok {
			dlls[strings.ToLower(dll)] = true
		}
	}
	require.NotEmpty(t, dlls)
	for dll := range dlls {
		assert.Contains(t, windowsSystemDLLs, dll, "imports only system DLLs")
	}
}

// peExports returns the names in a PE file's export directory (debug/pe
// reads imports only).
func peExports(f *pe.File) ([]string, error) {
	oh, ok := f.OptionalHeader.(*pe.OptionalHeader64)
	if !ok {
		return nil, errors.New("not a PE32+ file")
	}
	if len(oh.DataDirectory) <= pe.IMAGE_DIRECTORY_ENTRY_EXPORT {
		return nil, errors.New("no export directory entry")
	}
	dd := oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_EXPORT]
	if dd.VirtualAddress == 0 {
		return nil, nil
	}
	// at returns the file's bytes from an RVA to the end of its section.
	at := func(rva uint32) ([]byte, error) {
		for _, s := range f.Sections {
			if rva >= s.VirtualAddress && rva < s.VirtualAddress+max(s.VirtualSize, s.Size) {
				data, err := s.Data()
				if err != nil {
					return nil, fmt.Errorf("section %s: %w", s.Name, err)
				}
				if off := rva - s.VirtualAddress; off < uint32(len(data)) {
					return data[off:], nil
				}
			}
		}
		return nil, fmt.Errorf("RVA %#x is in no section", rva)
	}
	dir, err := at(dd.VirtualAddress)
	if err != nil {
		return nil, fmt.Errorf("export directory: %w", err)
	}
	if len(dir) < 40 {
		return nil, errors.New("export directory: short")
	}
	le := binary.LittleEndian
	n, namesRVA := le.Uint32(dir[24:]), le.Uint32(dir[32:])
	table, err := at(namesRVA)
	if err != nil {
		return nil, fmt.Errorf("export names: %w", err)
	}
	if uint64(len(table)) < 4*uint64(n) {
		return nil, errors.New("export names: short")
	}
	names := make([]string, 0, n)
	for i := range n {
		s, err := at(le.Uint32(table[4*i:]))
		if err != nil {
			return nil, fmt.Errorf("export name %d: %w", i, err)
		}
		if end := bytes.IndexByte(s, 0); end >= 0 {
			s = s[:end]
		}
		names = append(names, string(s))
	}
	return names, nil
}

// TestVersion checks the one release version where it shows without a
// build: build.sh reads it from netcode/version.
func TestVersion(t *testing.T) {
	require.Regexp(t, `^\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$`, version.Version, "semantic versioning without a v")
	ctx, cancel := commandContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./build.sh", "version")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, version.Version, strings.TrimSpace(string(out)), "./build.sh version")
}

// TestVersionEverywhere checks the zip's name and header and the server's
// -version against netcode/version.
func TestVersionEverywhere(t *testing.T) {
	bin := buildServer(t)
	ctx, cancel := commandContext(t)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-version").Output()
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("nearzero-server %s protocol %d rules %d\n", version.Version, wire.ProtocolVersion, wire.RulesVersion),
		string(out), "nearzero-server -version")

	zipPath := buildPackage(t)
	assert.Equal(t, "nearzero-"+version.Version+".zip", path.Base(filepath.ToSlash(zipPath)))
	gd := readZip(t, zipPath)[addonDir+"nearzero.gdextension"]
	assert.Contains(t, string(gd), version.Version)
}
