package netcode

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/nearzero/nearzero/"

// forbidden reports why an import path may not appear under netcode/, or "".
func forbidden(path string) string {
	switch {
	case path == "C":
		return "cgo"
	case strings.HasPrefix(path, module+"bindings"),
		strings.HasPrefix(path, module+"extension"),
		strings.HasPrefix(path, module+"client"),
		strings.HasPrefix(path, module+"server"):
		return "a package outside the pure core"
	}
	return ""
}

func TestForbidden(t *testing.T) {
	for path, bad := range map[string]bool{
		"C": true, module + "bindings": true, module + "extension/x": true, module + "server/room": true,
		module + "client": true, module + "client/netroom": true,
		"fmt": false, module + "netcode/wire": false, "github.com/x448/float16": false,
	} {
		assert.Equal(t, bad, forbidden(path) != "", path)
	}
}

// TestNoDirectImports parses every Go file under netcode/, tests included.
func TestNoDirectImports(t *testing.T) {
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			assert.Empty(t, forbidden(p), "%s imports %s", path, p)
		}
		return nil
	})
	require.NoError(t, err)
	require.Positive(t, n, "no Go files found under netcode/")
}

// TestNoTransitiveImports asks the go command for every dependency of the
// netcode packages, so an indirect path through another package is caught.
func TestNoTransitiveImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: the go command is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-test", "-json=ImportPath,CgoFiles", "./...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath string
			CgoFiles   []string
		}
		require.NoError(t, dec.Decode(&p))
		seen++
		assert.Empty(t, forbidden(p.ImportPath), "netcode depends on %s", p.ImportPath)
		if strings.HasPrefix(p.ImportPath, module) {
			assert.Empty(t, p.CgoFiles, "%s uses cgo", p.ImportPath)
		}
	}
	require.Positive(t, seen)
}
