package handle

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTableBasics(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, tb *Table[string])
	}{
		{"zero handle is never live", func(t *testing.T, tb *Table[string]) {
			_, ok := tb.Get(0)
			assert.False(t, ok)
			_, ok = tb.Delete(0)
			assert.False(t, ok)
		}},
		{"add then get", func(t *testing.T, tb *Table[string]) {
			h := tb.Add("a")
			require.NotZero(t, h)
			v, ok := tb.Get(h)
			assert.True(t, ok)
			assert.Equal(t, "a", v)
			assert.Equal(t, 1, tb.Len())
		}},
		{"delete returns value once", func(t *testing.T, tb *Table[string]) {
			h := tb.Add("a")
			v, ok := tb.Delete(h)
			assert.True(t, ok)
			assert.Equal(t, "a", v)
			_, ok = tb.Delete(h)
			assert.False(t, ok)
			_, ok = tb.Get(h)
			assert.False(t, ok)
			assert.Zero(t, tb.Len())
		}},
		{"stale handle misses reused slot", func(t *testing.T, tb *Table[string]) {
			old := tb.Add("old")
			tb.Delete(old)
			fresh := tb.Add("fresh")
			require.Equal(t, old.Index(), fresh.Index(), "slot should be reused")
			assert.NotEqual(t, old, fresh)
			_, ok := tb.Get(old)
			assert.False(t, ok)
			v, ok := tb.Get(fresh)
			assert.True(t, ok)
			assert.Equal(t, "fresh", v)
		}},
		{"foreign handle out of range", func(t *testing.T, tb *Table[string]) {
			tb.Add("a")
			_, ok := tb.Get(makeHandle(5, 1))
			assert.False(t, ok)
		}},
		{"range visits live values in slot order", func(t *testing.T, tb *Table[string]) {
			a, b, c := tb.Add("a"), tb.Add("b"), tb.Add("c")
			tb.Delete(b)
			var got []Handle
			tb.Range(func(h Handle, _ string) bool { got = append(got, h); return true })
			assert.Equal(t, []Handle{a, c}, got)
			n := 0
			tb.Range(func(Handle, string) bool { n++; return false })
			assert.Equal(t, 1, n)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, new(Table[string])) })
	}
}

// TestTableModel checks a random sequence of operations against a map.
func TestTableModel(t *testing.T) {
	const seed = 20251130
	rng := rand.New(rand.NewPCG(seed, 0))
	var tb Table[int]
	model := map[Handle]int{}
	var dead []Handle
	for step := range 5000 {
		switch op := rng.IntN(3); {
		case op == 0 || len(model) == 0:
			h := tb.Add(step)
			_, dup := model[h]
			require.False(t, dup, "seed %d step %d: handle %x issued twice", seed, step, h)
			model[h] = step
		case op == 1:
			for h, want := range model {
				got, ok := tb.Delete(h)
				require.True(t, ok, "seed %d step %d", seed, step)
				require.Equal(t, want, got, "seed %d step %d", seed, step)
				delete(model, h)
				dead = append(dead, h)
				break
			}
		default:
			for h, want := range model {
				got, ok := tb.Get(h)
				require.True(t, ok, "seed %d step %d", seed, step)
				require.Equal(t, want, got, "seed %d step %d", seed, step)
				break
			}
		}
		require.Equal(t, len(model), tb.Len(), "seed %d step %d", seed, step)
	}
	for _, h := range dead {
		_, ok := tb.Get(h)
		assert.False(t, ok, "seed %d: dead handle %x still live", seed, h)
	}
}

func TestTableConcurrent(t *testing.T) {
	var tb Table[int]
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				h := tb.Add(w*1000 + i)
				v, ok := tb.Get(h)
				assert.True(t, ok)
				assert.Equal(t, w*1000+i, v)
				_, ok = tb.Delete(h)
				assert.True(t, ok)
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, tb.Len())
}

func BenchmarkTableGet(b *testing.B) {
	var tb Table[*int]
	hs := make([]Handle, 64)
	for i := range hs {
		v := i
		hs[i] = tb.Add(&v)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok := tb.Get(hs[i&63]); !ok {
			b.Fatal("missing")
		}
	}
}
