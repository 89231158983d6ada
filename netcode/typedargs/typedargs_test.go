package typedargs

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

func TestEncodeDecode(t *testing.T) {
	args := []any{nil, true, 3, int64(-7), 2.5, float32(0.5), "héllo", []any{1, "a"},
		map[string]any{"k": []any{map[string]any{"x": 1.25}}}}
	raw, err := Encode(args)
	require.NoError(t, err)
	got, err := Decode(raw)
	require.NoError(t, err)
	assert.Equal(t, []any{nil, true, int64(3), int64(-7), 2.5, 0.5, "héllo",
		[]any{int64(1), "a"}, Dict{{"k", []any{Dict{{"x", 1.25}}}}}}, got)

	none, err := Encode(nil)
	require.NoError(t, err)
	assert.Nil(t, none)
	back, err := Decode(none)
	require.NoError(t, err)
	assert.Empty(t, back)

	deep := any(1)
	for range MaxDepth + 1 {
		deep = []any{deep}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), struct{}{}, map[int]any{1: 2}, []any{1, make(chan int)}, deep,
		Vector2{float32(math.NaN()), 0}, []float64{1, math.Inf(-1)}, Dict{{1.5, 2}}, Dict{{nil, 2}}} {
		_, err := Encode([]any{bad})
		assert.ErrorIs(t, err, ErrBadArg, "%T", bad)
	}
}

// TestTypedArgsRoundTrip sends every Godot type events carry and gets
// each back as the same type and value, bit for bit.
func TestTypedArgsRoundTrip(t *testing.T) {
	args := []any{
		Vector2{1.5, -0.1}, Vector2i{-3, 7}, Vector3{1, 2, 3.25}, Vector3i{1, -2, 3},
		Vector4{0.1, 0.2, 0.3, 0.4}, Color{1, 0.5, 0, 0.75}, Quaternion{0, 0.7071068, 0, 0.7071068},
		Basis{1, 0, 0, 0, 0.5, -0.8660254, 0, 0.8660254, 0.5}, Transform2D{1, 0, 0, 1, 320.5, -12},
		Transform3D{1, 0, 0, 0, 1, 0, 0, 0, 1, 4, 5, 6}, Rect2{10, 20, 30.5, 40},
		[]byte{0, 1, 254, 255}, []float32{0.1, -2}, []float64{0.1, 1e300}, []int32{-1, 1 << 30},
		[]int64{-1, 1 << 62}, PackedVector2Array{{1, 2}, {3, 4}}, PackedVector3Array{{1, 2, 3}},
		[]string{"a", "", "é\\\""}, StringName("jump"),
		Dict{{int64(2), "two"}, {"name", "Ann"}, {int64(-1), Vector2{1, 2}}, {StringName("sn"), true}, {"@", int64(1)}, {"1", "s"}},
		[]any{Vector3i{1, 1, 1}, Dict{}, []byte{}},
	}
	raw, err := Encode(args)
	require.NoError(t, err)
	require.NoError(t, protocol.CheckEvent("e", raw))
	got, err := Decode(raw)
	require.NoError(t, err)
	assert.Equal(t, args, got)
	// Floats arrive bit for bit, negative zero too.
	raw, err = Encode([]any{Vector2{float32(math.Copysign(0, -1)), 0.1}})
	require.NoError(t, err)
	got, err = Decode(raw)
	require.NoError(t, err)
	assert.True(t, math.Signbit(float64(got[0].(Vector2)[0])))
	// A typed value nests one level, like the array a vector used to be:
	// the deepest argument may be one.
	deep := any(Vector2{1, 2})
	for range MaxDepth - 1 {
		deep = []any{deep}
	}
	raw, err = Encode([]any{deep})
	require.NoError(t, err)
	assert.NoError(t, protocol.CheckEvent("deep", raw))
}

// TestTypedArgsOnTheWire pins the wire form of typed values
// (docs/protocol.md) and refuses malformed ones.
func TestTypedArgsOnTheWire(t *testing.T) {
	raw, err := Encode([]any{Vector2{1, 2}, StringName("a"), []string{"x"}, Dict{{int64(1), 2}, {"k", 3}}})
	require.NoError(t, err)
	assert.Equal(t, `[{"@":"Vector2","v":"AACAPwAAAEA="},{"@":"StringName","v":"a"},`+
		`{"@":"PackedStringArray","v":["x"]},{"@":"Dictionary","i1":2,"sk":3}]`, string(raw))
	// An older client's object: a Dictionary of String keys, in its order.
	got, err := Decode([]byte(`[{"b":1,"a":[2.5]}]`))
	require.NoError(t, err)
	assert.Equal(t, []any{Dict{{"b", int64(1)}, {"a", []any{2.5}}}}, got)
	for _, bad := range []string{
		`[{"@":"Node"}]`, `[{"@":"Vector2","v":"AAA="}]`, `[{"@":"Vector2","v":"!"}]`,
		`[{"@":"Vector2","v":"AACAPwAAAEA=","w":1}]`, `[{"@":"Vector2","v":"AADAfwAAAEA="}]`, // NaN
		`[{"@":"Dictionary","x1":1}]`, `[{"@":"Dictionary","iz":1}]`, `[{"@":"StringName","v":1}]`,
		`[{"@":"PackedStringArray","v":[1]}]`, `[{"@":"PackedInt32Array","v":"AAA="}]`, `[1] 2`,
	} {
		_, err := Decode([]byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestFloatsStayFloats(t *testing.T) {
	raw, err := Encode([]any{1.0, float32(2), 3, []any{4.0, 1e300}, map[string]any{"f": 5.0}})
	require.NoError(t, err)
	assert.JSONEq(t, `[1.0, 2.0, 3, [4.0, 1e300], {"@":"Dictionary", "sf": 5.0}]`, string(raw))
	got, err := Decode(raw)
	require.NoError(t, err)
	assert.Equal(t, []any{1.0, 2.0, int64(3), []any{4.0, 1e300}, Dict{{"f", 5.0}}}, got)
}
