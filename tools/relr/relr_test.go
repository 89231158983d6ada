package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tableC is a library whose answer depends on relocated pointers: a
// table of strings and a pointer to a function, the kind of data a Go
// library holds 64,000 of.
const tableC = `
static const char *const words[] = {"near", "zero", "lag", "free"};
static int twice(int x) { return 2 * x; }
static int (*const fn)(int) = twice;
int answer(void) {
	int n = 0;
	for (unsigned i = 0; i < sizeof words / sizeof words[0]; i++) {
		for (const char *p = words[i]; *p; p++) n += *p;
	}
	return fn(n);
}
`

// loaderC loads a library and prints answer(); a library whose pointers
// are not relocated crashes it or prints another number.
const loaderC = `
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
	int (*answer)(void) = (int (*)(void))dlsym(h, "answer");
	if (!answer) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 3; }
	printf("%d\n", answer());
	return 0;
}
`

// wantAnswer is answer() relocated: twice the byte sum of the words.
func wantAnswer() string {
	n := 0
	for _, w := range []string{"near", "zero", "lag", "free"} {
		for _, c := range []byte(w) {
			n += int(c)
		}
	}
	return strconv.Itoa(2 * n)
}

// buildRelr links tableC with the library's own relocator
// (bindings/godot/relr_linux.c) as build.sh links the game library, and
// returns the library's path and a loader's.
func buildRelr(t *testing.T) (lib, loader string) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("skipped: links and loads an x86-64 Linux library (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("skipped: no gcc")
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	relr, err := filepath.Abs("../../bindings/godot/relr_linux.c")
	require.NoError(t, err)
	lib = filepath.Join(dir, "libtable.so")
	out, err := exec.Command(cc, "-O2", "-fPIC", "-shared", "-o", lib, write("table.c", tableC), relr,
		"-Wl,-z,pack-relative-relocs", "-Wl,-init,nearzero_relr_init").CombinedOutput()
	require.NoError(t, err, "%s", out)
	if bytes.Contains(out, []byte("ignored")) {
		t.Skipf("skipped: this linker does not pack relocations: %s", out)
	}
	loader = filepath.Join(dir, "loader")
	out, err = exec.Command(cc, "-o", loader, write("loader.c", loaderC), "-ldl").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return lib, loader
}

func load(loader, lib string) (string, error) {
	out, err := exec.Command(loader, lib).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestLibraryRelocatesItself: after relr, no loader applies the packed
// table (the tags are renamed, the version need gone), and the library's
// DT_INIT does: its pointers are right. With DT_INIT renamed too, nothing
// relocates them, and the same library fails (the check can fail).
func TestLibraryRelocatesItself(t *testing.T) {
	lib, loader := buildRelr(t)
	out, err := load(loader, lib)
	require.NoError(t, err, "as linked (this machine's glibc applies DT_RELR itself): %s", out)
	assert.Equal(t, wantAnswer(), out)

	require.NoError(t, run(lib, false))
	b, err := os.ReadFile(lib)
	require.NoError(t, err)
	f, err := elf.NewFile(bytes.NewReader(b))
	require.NoError(t, err)
	l, err := open(b)
	require.NoError(t, err)
	_, plain := l.tag(dtRelr)
	_, hidden := l.tag(dtRelr + dtHidden)
	assert.False(t, plain, "no DT_RELR a loader would apply")
	assert.True(t, hidden, "the table, renamed")
	vr, err := f.Section(".gnu.version_r").Data()
	require.NoError(t, err)
	assert.NotContains(t, verneedNames(t, f, vr), relrVersion)

	out, err = load(loader, lib)
	require.NoError(t, err, "after relr: %s", out)
	assert.Equal(t, wantAnswer(), out, "relocated by its DT_INIT")

	broken := filepath.Join(t.TempDir(), "libbroken.so")
	require.NoError(t, os.WriteFile(broken, b, 0o755))
	require.NoError(t, run(broken, true))
	out, err = load(loader, broken)
	assert.False(t, err == nil && out == wantAnswer(), "with DT_INIT renamed nothing relocates; got %q, %v", out, err)
	t.Logf("with DT_INIT renamed: %q, %v", out, err)
}

// verneedNames lists the version names .gnu.version_r links (the chains
// a loader walks).
func verneedNames(t *testing.T, f *elf.File, vr []byte) []string {
	t.Helper()
	strs, err := f.Section(".dynstr").Data()
	require.NoError(t, err)
	str := func(off uint32) string {
		s := strs[off:]
		return string(s[:bytes.IndexByte(s, 0)])
	}
	var names []string
	le := f.ByteOrder
	for vn := 0; vn+16 <= len(vr); {
		cnt, aux, next := le.Uint16(vr[vn+2:]), le.Uint32(vr[vn+8:]), le.Uint32(vr[vn+12:])
		for i, a := 0, vn+int(aux); i < int(cnt); i++ {
			names = append(names, str(le.Uint32(vr[a+8:])))
			a += int(le.Uint32(vr[a+12:]))
		}
		if next == 0 {
			break
		}
		vn += int(next)
	}
	return names
}

// TestPrepareRefuses: a library without a packed table, or whose DT_INIT
// is not the relocator, is refused with a reason, not patched.
func TestPrepareRefuses(t *testing.T) {
	_, err := Prepare([]byte("not an ELF file at all"))
	assert.ErrorContains(t, err, "not an ELF file")

	lib, _ := buildRelr(t)
	b, err := os.ReadFile(lib)
	require.NoError(t, err)
	noInit := bytes.Clone(b)
	require.NoError(t, Hide(noInit, true))
	_, err = Prepare(noInit)
	assert.ErrorContains(t, err, "no DT_INIT")

	self, err := os.Executable() // a Go test binary: no DT_RELR, not a shared object
	require.NoError(t, err)
	exe, err := os.ReadFile(self)
	require.NoError(t, err)
	_, err = Prepare(exe)
	assert.Error(t, err)
}
