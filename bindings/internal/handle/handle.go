package handle

import "sync"

// Handle names one value in a Table. It fits in a C pointer on 64-bit
// targets: the low 32 bits are the slot index plus one, the high 32 bits the
// slot's generation.
type Handle uint64

// Index returns the slot index of h, or -1 for the zero Handle.
func (h Handle) Index() int { return int(uint32(h)) - 1 }

// Generation returns the generation part of h.
func (h Handle) Generation() uint32 { return uint32(h >> 32) }

func makeHandle(index int, gen uint32) Handle {
	return Handle(uint64(gen)<<32 | uint64(uint32(index+1)))
}

type slot[V any] struct {
	value V
	gen   uint32
	used  bool
}

// Table holds values of type V under handles. The zero Table is empty and
// ready to use. A Table must not be copied after first use.
type Table[V any] struct {
	mu    sync.RWMutex
	slots []slot[V] // guarded by mu
	free  []int     // indices of unused slots, guarded by mu
	n     int       // values held, guarded by mu
}

// Add stores v and returns its new, non-zero handle.
func (t *Table[V]) Add(v V) Handle {
	t.mu.Lock()
	defer t.mu.Unlock()
	var i int
	if k := len(t.free); k > 0 {
		i = t.free[k-1]
		t.free = t.free[:k-1]
	} else {
		t.slots = append(t.slots, slot[V]{})
		i = len(t.slots) - 1
	}
	s := &t.slots[i]
	s.gen++
	if s.gen == 0 { // keep handles non-zero-generation after a wrap too
		s.gen = 1
	}
	s.value, s.used = v, true
	t.n++
	return makeHandle(i, s.gen)
}

// Get returns the value stored under h and whether h is live.
func (t *Table[V]) Get(h Handle) (V, bool) {
	t.mu.RLock()
	i := h.Index()
	if i >= 0 && i < len(t.slots) {
		if s := &t.slots[i]; s.used && s.gen == h.Generation() {
			v := s.value
			t.mu.RUnlock()
			return v, true
		}
	}
	t.mu.RUnlock()
	var zero V
	return zero, false
}

// Delete removes the value stored under h and returns it; false when h was
// not live (already deleted, or never issued by this table).
func (t *Table[V]) Delete(h Handle) (V, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var zero V
	i := h.Index()
	if i < 0 || i >= len(t.slots) {
		return zero, false
	}
	s := &t.slots[i]
	if !s.used || s.gen != h.Generation() {
		return zero, false
	}
	v := s.value
	s.value, s.used = zero, false // drop the reference for the GC
	t.free = append(t.free, i)
	t.n--
	return v, true
}

// Len returns how many values the table holds.
func (t *Table[V]) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.n
}

// Range calls f for every value, in slot order, until f returns false. f
// must not call Add or Delete on t.
func (t *Table[V]) Range(f func(Handle, V) bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for i := range t.slots {
		if s := &t.slots[i]; s.used && !f(makeHandle(i, s.gen), s.value) {
			return
		}
	}
}
