package release

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPatchelfedLibraryLoads edits a copy of the zip's linux x86_64
// library the way AppImage, linuxdeploy and Nix's autoPatchelf edit the
// libraries they bundle (patchelf moves the dynamic section to grow it),
// and loads each copy as TestLinuxLibraryLoads does: the library must
// still start its Go runtime. It needs patchelf (Debian: apt-get install
// patchelf), which .ci/run installs; without it the test skips, except
// under CI.
func TestPatchelfedLibraryLoads(t *testing.T) {
	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		t.Skipf("skipped: loads the linux x86_64 library (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	patchelf, err := exec.LookPath("patchelf")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no patchelf: .ci/run installs it (Debian: apt-get install patchelf)")
		}
		t.Skip("skipped: no patchelf (Debian: apt-get install patchelf; .ci/run installs it)")
	}
	files := readZip(t, buildPackage(t))
	b := files[addonDir+"bin/libnearzero.linux.x86_64.so"]
	require.NotEmpty(t, b)
	dir := t.TempDir()
	loader := buildLoader(t, dir)

	rpath := []string{"--set-rpath", "$ORIGIN"}
	needed := []string{"--add-needed", "libm.so.6"}
	soname := []string{"--set-soname", "libnearzero.so"}
	cases := []struct {
		name  string
		edits [][]string // one patchelf run each: patchelf 0.14 garbles strings given several at once
	}{
		{"set-rpath", [][]string{rpath}},
		{"add-needed", [][]string{needed}},
		{"set-soname", [][]string{soname}},
		{"all three", [][]string{rpath, needed, soname}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := commandContext(t)
			defer cancel()
			lib := filepath.Join(dir, "edit"+string(rune('a'+i)), "libnearzero.linux.x86_64.so")
			require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755))
			require.NoError(t, os.WriteFile(lib, b, 0o755))
			for _, args := range c.edits {
				out, err := exec.CommandContext(ctx, patchelf, append(args, lib)...).CombinedOutput()
				require.NoError(t, err, "patchelf %s: %s", strings.Join(args, " "), out)
			}
			checkEdited(t, lib, c.edits)

			out, err := exec.CommandContext(ctx, loader, lib).CombinedOutput()
			require.NoError(t, err, "the library after %v must load: %s", c.edits, out)
			assert.Equal(t, "loaded", strings.TrimSpace(string(out)))
		})
	}
}

// checkEdited checks that patchelf made each edit: the test loads what it
// means to load.
func checkEdited(t *testing.T, lib string, edits [][]string) {
	t.Helper()
	f, err := elf.Open(lib)
	require.NoError(t, err)
	defer f.Close()
	for _, e := range edits {
		var tags []elf.DynTag
		switch e[0] {
		case "--set-rpath":
			tags = []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH}
		case "--add-needed":
			tags = []elf.DynTag{elf.DT_NEEDED}
		case "--set-soname":
			tags = []elf.DynTag{elf.DT_SONAME}
		}
		var got []string
		for _, tag := range tags {
			v, err := f.DynString(tag)
			require.NoError(t, err)
			got = append(got, v...)
		}
		assert.Contains(t, got, e[1], "after patchelf %s", strings.Join(e, " "))
	}
}
