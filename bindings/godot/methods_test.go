package godot

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bindings/internal/apihash"
)

// apiRows is testdata/engine_methods.json: rows of extension_api.json.
type apiRows struct {
	Methods []struct {
		Class, Method string
		Hash          uint32
		Const, Vararg bool
		Return        string
		Args          []apihash.Arg
		// Hash44 and Args44 give the 4.4 signature of a method that changed
		// since (the row's Hash and Args are the current ones).
		Hash44 uint32        `json:"hash_4_4"`
		Args44 []apihash.Arg `json:"args_4_4"`
		// Hash47 and Args47 give the 4.7 signature of a method that
		// changed in 4.7 (the row's Hash and Args are 4.6's).
		Hash47            uint32        `json:"hash_4_7"`
		Args47            []apihash.Arg `json:"args_4_7"`
		HashCompatibility []uint32      `json:"hash_compatibility"`
	}
	Builtins []struct {
		Type, Method          string
		Hash                  uint32
		Const, Static, Vararg bool
		Return                string
		Args                  []string
	}
	Virtuals []struct {
		Class, Method string
		Hash          uint32
		Const         bool
		Return        string
		Args          []apihash.Arg
	}
}

func loadAPIRows(t *testing.T) apiRows {
	t.Helper()
	b, err := os.ReadFile("../testdata/engine_methods.json")
	require.NoError(t, err)
	var rows apiRows
	require.NoError(t, json.Unmarshal(b, &rows))
	require.NotEmpty(t, rows.Methods)
	return rows
}

// TestMethodTable checks every engine method row against the copied API
// rows, and recomputes each hash from the row's signature.
func TestMethodTable(t *testing.T) {
	rows := loadAPIRows(t)
	type key struct{ class, method string }
	byName := map[key]int{}
	for i, r := range rows.Methods {
		byName[key{r.Class, r.Method}] = i
		h, err := apihash.MethodHash(apihash.Method{Return: r.Return, Args: r.Args, Const: r.Const, Vararg: r.Vararg})
		require.NoError(t, err, "%s.%s", r.Class, r.Method)
		assert.Equal(t, r.Hash, h, "%s.%s: recomputed hash", r.Class, r.Method)
		if r.Hash44 != 0 {
			h, err := apihash.MethodHash(apihash.Method{Return: r.Return, Args: r.Args44, Const: r.Const, Vararg: r.Vararg})
			require.NoError(t, err)
			assert.Equal(t, r.Hash44, h, "%s.%s: recomputed 4.4 hash", r.Class, r.Method)
			assert.Contains(t, r.HashCompatibility, r.Hash44, "%s.%s: the 4.4 hash is still accepted", r.Class, r.Method)
		}
		if r.Hash47 != 0 {
			h, err := apihash.MethodHash(apihash.Method{Return: r.Return, Args: r.Args47, Const: r.Const, Vararg: r.Vararg})
			require.NoError(t, err)
			assert.Equal(t, r.Hash47, h, "%s.%s: recomputed 4.7 hash", r.Class, r.Method)
		}
	}
	seen := map[key]bool{}
	for _, m := range methodTable {
		k := key{m.Class, m.Method}
		assert.False(t, seen[k], "%s.%s listed twice", m.Class, m.Method)
		seen[k] = true
		i, ok := byName[k]
		if !assert.True(t, ok, "%s.%s missing from testdata/engine_methods.json", m.Class, m.Method) {
			continue
		}
		r := rows.Methods[i]
		if r.Hash47 != 0 {
			assert.Equal(t, r.Hash47, m.NewHash, "%s.%s: the 4.7 hash from 4.7 on", m.Class, m.Method)
			assert.Equal(t, [2]int{4, 7}, m.NewSince, "%s.%s", m.Class, m.Method)
			assert.Equal(t, r.Hash, m.Hash, "%s.%s: the hash until 4.6", m.Class, m.Method)
			continue
		}
		if m.NewHash != 0 {
			assert.Equal(t, r.Hash, m.NewHash, "%s.%s: current hash", m.Class, m.Method)
			assert.Equal(t, r.Hash44, m.Hash, "%s.%s: 4.4 hash", m.Class, m.Method)
			continue
		}
		assert.Zero(t, r.Hash44, "%s.%s changed since 4.4: the row needs engineMethodSince", m.Class, m.Method)
		assert.Equal(t, r.Hash, m.Hash, "%s.%s", m.Class, m.Method)
	}
}

func TestBuiltinTable(t *testing.T) {
	rows := loadAPIRows(t)
	type key struct{ typ, method string }
	byName := map[key]uint32{}
	for _, r := range rows.Builtins {
		byName[key{r.Type, r.Method}] = r.Hash
		h := apihash.BuiltinHash(apihash.Builtin{Return: r.Return, Args: r.Args, Const: r.Const, Static: r.Static, Vararg: r.Vararg})
		assert.Equal(t, r.Hash, h, "%s.%s: recomputed hash", r.Type, r.Method)
	}
	for _, m := range builtinTable {
		want, ok := byName[key{m.Type.String(), m.Method}]
		if assert.True(t, ok, "%s.%s missing from testdata", m.Type, m.Method) {
			assert.Equal(t, want, m.Hash, "%s.%s", m.Type, m.Method)
		}
	}
}

func TestVirtualHashes(t *testing.T) {
	rows := loadAPIRows(t)
	byName := map[string]uint32{}
	for _, r := range rows.Virtuals {
		byName[r.Method] = r.Hash
		h, err := apihash.MethodHash(apihash.Method{Return: r.Return, Args: r.Args, Const: r.Const})
		require.NoError(t, err)
		assert.Equal(t, r.Hash, h, "%s: recomputed hash", r.Method)
	}
	for _, v := range virtualDefs {
		want, ok := byName[v.name]
		if assert.True(t, ok, "%s missing from testdata", v.name) {
			assert.Equal(t, want, v.hash, v.name)
		}
	}
}
