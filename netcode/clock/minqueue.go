package clock

import "time"

// minQueue is a monotonic deque: the minimum of values pushed within a
// sliding time window, in O(1) amortised time per push. It keeps only the
// values that can still become the minimum: from front to back, their times
// increase strictly and their values increase strictly. Its ring buffer
// grows by doubling and never shrinks, so a warm queue does not allocate.
type minQueue struct {
	buf  []entry // len is zero or a power of two
	head int     // index of the front entry
	n    int     // entries in use
}

type entry struct{ at, v time.Duration }

// push adds value v observed at time at, dropping the entries it makes
// useless: older ones that are not smaller. A time earlier than the newest
// entry's is taken as that time, so the times never decrease.
func (q *minQueue) push(at, v time.Duration) {
	if q.n > 0 {
		at = max(at, q.back().at)
	}
	for q.n > 0 && q.back().v >= v {
		q.n--
	}
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = entry{at, v}
	q.n++
}

// expire drops front entries observed before `before`, keeping at least
// `keep` entries (0 or 1).
func (q *minQueue) expire(before time.Duration, keep int) {
	for q.n > keep && q.front().at < before {
		q.popFront()
	}
}

func (q *minQueue) popFront() {
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
}

func (q *minQueue) front() entry { return q.buf[q.head] }

func (q *minQueue) back() entry { return q.buf[(q.head+q.n-1)&(len(q.buf)-1)] }

// min returns the smallest value in the window; ok is false when empty.
func (q *minQueue) min() (v time.Duration, ok bool) {
	if q.n == 0 {
		return 0, false
	}
	return q.front().v, true
}

func (q *minQueue) clear() { q.head, q.n = 0, 0 }

func (q *minQueue) grow() {
	size := 2 * len(q.buf)
	if size == 0 {
		size = 64
	}
	buf := make([]entry, size)
	for i := 0; i < q.n; i++ {
		buf[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = buf, 0
}
