package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The declarations in bindings/godot are what this generator writes: a
// change to the template, or a hand edit of the file, shows here until
// go generate ./bindings/godot/ runs.
func TestGeneratedFileIsUpToDate(t *testing.T) {
	want, err := Generate(MaxArgs)
	require.NoError(t, err)
	got, err := os.ReadFile("../../godot/declare_gen.go")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "bindings/godot/declare_gen.go is stale: run go generate ./bindings/godot/")
}

func TestGenerateRefusesArities(t *testing.T) {
	_, err := Generate(-1)
	assert.Error(t, err)
	_, err = Generate(len(typeParams) + 1)
	assert.Error(t, err)
	src, err := Generate(len(typeParams))
	require.NoError(t, err, "every arity with a type parameter name compiles to gofmt'ed code")
	assert.Contains(t, string(src), "func Method6R[T any, A, B, C, D, E, F, R Convertible]")
}
