package typedargs

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzDecode: Decode never panics, and what it decodes within MaxDepth
// encodes and decodes again to the same values.
func FuzzDecode(f *testing.F) {
	for _, args := range [][]any{
		{nil, true, int64(3), 2.5, "é", []any{int64(1)}, Dict{{int64(1), "one"}, {StringName("n"), Vector2{1, 2}}}},
		{Transform3D{1, 0, 0, 0, 1, 0, 0, 0, 1, 4, 5, 6}, []byte{1, 2}, []float64{0.5}, PackedVector3Array{{1, 2, 3}}, []string{"a"}},
	} {
		raw, err := Encode(args)
		require.NoError(f, err)
		f.Add([]byte(raw))
	}
	for _, s := range []string{``, `[]`, `[{"b":1}]`, `[{"@":"Vector2","v":"AAA="}]`, `[1e400]`, `[-0, 9223372036854775808]`, `[[[[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		vals, err := Decode(json.RawMessage(b))
		if err != nil {
			assert.Nil(t, vals)
			return
		}
		raw, err := Encode(vals)
		if err != nil {
			// Decode takes any depth the JSON decoder takes; Encode keeps
			// to the protocol's.
			require.ErrorIs(t, err, ErrBadArg)
			require.Greater(t, depth(vals), MaxDepth, "%s", b)
			return
		}
		back, err := Decode(raw)
		require.NoError(t, err, "%s", raw)
		if len(vals) == 0 {
			assert.Empty(t, back)
			return
		}
		assert.Equal(t, vals, back, "%s -> %s", b, raw)
	})
}

// depth is how deeply vals nest, as Encode counts: an argument is at
// depth 1, a typed value's contents one deeper.
func depth(vals []any) int {
	d := 0
	for _, v := range vals {
		d = max(d, 1+inner(v))
	}
	return d
}

func inner(v any) int {
	switch v := v.(type) {
	case []any:
		return depth(v)
	case Dict:
		d := 0
		for _, kv := range v {
			d = max(d, 1+inner(kv.Value))
		}
		return d
	case []string:
		return 1
	}
	return 0
}
