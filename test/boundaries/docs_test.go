package boundaries

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// outsideDocs are the names of the design documents that live outside the
// repository (beside it, in the team's shared folder). Written in pieces so
// that this file does not name them itself.
var outsideDocs = []string{
	"shared" + "/design",
	"ARCHITECTURE" + ".md",
	"PREDICTOR-NOTES" + ".md",
	"STYLE" + ".md",
	"gdextension-abi" + ".md",
}

// TestNoOutsideDocs: the repository explains itself; no file cites a
// design document outside it (the architecture lives in docs/).
func TestNoOutsideDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			switch {
			case path == root:
				return nil
			case name == ".git", name == ".godot", name == "bin", name == "dist", name == "node_modules":
				return filepath.SkipDir // git, Godot's cache, build outputs
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go", ".md", ".gd", ".h", ".c", ".sh", ".xml", ".tscn", ".cfg", ".json", ".yaml", ".yml", "":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, doc := range outsideDocs {
			if bytes.Contains(b, []byte(doc)) {
				t.Errorf("%s cites %s, a document outside the repository: cite docs/ instead", path, doc)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
