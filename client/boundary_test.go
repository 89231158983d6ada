package client_test

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

// serverOnly reports whether an import path is the room server's, which the
// game client must not need: the client ships inside the game, the server
// does not (tests may still start a real server).
func serverOnly(path string) bool {
	return path == module+"server" || strings.HasPrefix(path, module+"server/") ||
		strings.HasPrefix(path, module+"extension") || strings.HasPrefix(path, module+"bindings")
}

func TestServerOnly(t *testing.T) {
	for path, bad := range map[string]bool{
		module + "server": true, module + "server/room": true, module + "extension": true,
		module + "bindings/godot": true, module + "netcode/wire": false, module + "client/netroom": false,
		module + "serverless": false, "fmt": false,
	} {
		assert.Equal(t, bad, serverOnly(path), path)
	}
}

// TestNoServerImports parses every non-test Go file under client/.
func TestNoServerImports(t *testing.T) {
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			assert.False(t, serverOnly(p), "%s imports %s", path, p)
		}
		return nil
	})
	require.NoError(t, err)
	require.Positive(t, n, "no Go files found under client/")
}

// TestNoTransitiveServerImports asks the go command for the dependencies of
// the client packages (without tests), so an indirect path is caught too.
func TestNoTransitiveServerImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: the go command is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-json=ImportPath", "./...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct{ ImportPath string }
		require.NoError(t, dec.Decode(&p))
		seen++
		assert.False(t, serverOnly(p.ImportPath), "client depends on %s", p.ImportPath)
	}
	require.Positive(t, seen)
}
