package apihash

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStringHash(t *testing.T) {
	assert.Equal(t, uint32(5381), StringHash(""))
	assert.Equal(t, uint32(5381*33+'N'), StringHash("N"))
	// Code points, not bytes: "é" is one step.
	assert.Equal(t, uint32(5381*33+0xE9), StringHash("é"))
}

func TestTypeOf(t *testing.T) {
	tests := []struct {
		name  string
		typ   uint32
		class string
	}{
		{"bool", 1, ""},
		{"Vector3", 9, ""},
		{"PackedStringArray", 34, ""},
		{"Variant", 0, ""},
		{"Object", 24, "Object"},
		{"Node", 24, "Node"},
		{"enum::Error", 2, "Error"},
		{"enum::Node.InternalMode", 2, "Node.InternalMode"},
		{"bitfield::MethodFlags", 2, "MethodFlags"},
		{"typedarray::Node", 28, ""},
		{"typeddictionary::String;int", 27, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			typ, class := TypeOf(tc.name)
			assert.Equal(t, tc.typ, typ)
			assert.Equal(t, tc.class, class)
		})
	}
}

// TestEngineRows recomputes the hashes of the rows copied from
// extension_api.json (see the file's _source note).
func TestEngineRows(t *testing.T) {
	b, err := os.ReadFile("../../testdata/engine_methods.json")
	require.NoError(t, err)
	var rows struct {
		Methods, Virtuals []struct {
			Class, Method string
			Hash          uint32
			Const, Vararg bool
			Return        string
			Args          []Arg
		}
		Builtins []struct {
			Type, Method          string
			Hash                  uint32
			Const, Static, Vararg bool
			Return                string
			Args                  []string
		}
	}
	require.NoError(t, json.Unmarshal(b, &rows))
	require.NotEmpty(t, rows.Methods)
	for _, r := range append(rows.Methods, rows.Virtuals...) {
		h, err := MethodHash(Method{Return: r.Return, Args: r.Args, Const: r.Const, Vararg: r.Vararg})
		require.NoError(t, err, "%s.%s", r.Class, r.Method)
		assert.Equal(t, r.Hash, h, "%s.%s", r.Class, r.Method)
	}
	for _, r := range rows.Builtins {
		h := BuiltinHash(Builtin{Return: r.Return, Args: r.Args, Const: r.Const, Static: r.Static, Vararg: r.Vararg})
		assert.Equal(t, r.Hash, h, "%s.%s", r.Type, r.Method)
	}
}

func TestSignatureChangesHash(t *testing.T) {
	base := Method{Return: "Node", Args: []Arg{{Type: "NodePath"}}, Const: true}
	h0, err := MethodHash(base)
	require.NoError(t, err)
	variants := map[string]Method{
		"not const":     {Return: "Node", Args: []Arg{{Type: "NodePath"}}},
		"other return":  {Return: "Node3D", Args: []Arg{{Type: "NodePath"}}, Const: true},
		"other arg":     {Return: "Node", Args: []Arg{{Type: "String"}}, Const: true},
		"with default":  {Return: "Node", Args: []Arg{{Type: "NodePath", Default: ptr(`NodePath("")`)}}, Const: true},
		"vararg":        {Return: "Node", Args: []Arg{{Type: "NodePath"}}, Const: true, Vararg: true},
		"void":          {Args: []Arg{{Type: "NodePath"}}, Const: true},
		"extra int arg": {Return: "Node", Args: []Arg{{Type: "NodePath"}, {Type: "int", Default: ptr("0")}}, Const: true},
	}
	for name, m := range variants {
		h, err := MethodHash(m)
		if name == "with default" {
			assert.Error(t, err, "a NodePath default is not supported and must not be guessed")
			continue
		}
		require.NoError(t, err, name)
		assert.NotEqual(t, h0, h, name)
	}
}

func TestDefaultHashes(t *testing.T) {
	tests := []struct {
		typ, lit string
		ok       bool
	}{
		{"bool", "true", true},
		{"bool", "maybe", false},
		{"int", "-1", true},
		{"float", "-1", true},
		{"float", "0.5", true},
		{"String", `"abc"`, true},
		{"Object", "null", true},
		{"Variant", "null", true},
		{"Vector2", "Vector2(0, 0)", false},
	}
	for _, tc := range tests {
		_, err := defaultHash(tc.typ, tc.lit)
		assert.Equal(t, tc.ok, err == nil, "%s %s", tc.typ, tc.lit)
	}
	// An integer literal is an int Variant even for a float argument.
	hi, _ := defaultHash("int", "-1")
	hf, _ := defaultHash("float", "-1")
	assert.Equal(t, hi, hf)
	h0, _ := defaultHash("float", "0.0")
	hn, _ := defaultHash("float", "-0.0")
	assert.Equal(t, h0, hn, "+0 and -0 hash alike")
}

func ptr(s string) *string { return &s }
