package predict

import (
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// entry is a stored sample with what the predictor derives from it.
type entry struct {
	Sample
	arrival time.Duration
	// gen is the predictor's epoch when the sample was added: entries of
	// the current epoch arrived after the last PoseAt, so the previous
	// prediction did not know them.
	gen uint64
	// accRest is Acc without the centripetal part the turn explains.
	accRest geom.Vec3
}

// ring is a fixed-capacity buffer of entries sorted by sample time, oldest
// first. Index i (0 = oldest) lives at buf[(start+i) % len(buf)].
type ring struct {
	buf      []entry
	start, n int
}

func newRing(capacity int) ring { return ring{buf: make([]entry, capacity)} }

// at returns the i-th oldest entry.
func (r *ring) at(i int) *entry {
	j := r.start + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return &r.buf[j]
}

// newest returns the newest entry, or nil when r is empty.
func (r *ring) newest() *entry {
	if r.n == 0 {
		return nil
	}
	return r.at(r.n - 1)
}

// insert stores e in time order, dropping the oldest entry when r is full.
// It refuses (returns false) an entry whose Seq or Time is already present,
// and one older than every entry of a full buffer.
func (r *ring) insert(e *entry) bool {
	k := 0 // entries older than e
	for i := 0; i < r.n; i++ {
		x := r.at(i)
		if x.Seq == e.Seq || x.Time == e.Time {
			return false
		}
		if x.Time < e.Time {
			k++
		}
	}
	if r.n == len(r.buf) {
		if k == 0 {
			return false
		}
		r.start++
		if r.start == len(r.buf) {
			r.start = 0
		}
		r.n--
		k--
	}
	// Shift the newer entries up by one; in order arrivals shift nothing.
	for i := r.n; i > k; i-- {
		*r.at(i) = *r.at(i - 1)
	}
	*r.at(k) = *e
	r.n++
	return true
}

// jitter returns the population standard deviation of arrival - Time over
// the buffer.
func (r *ring) jitter() time.Duration {
	if r.n < 2 {
		return 0
	}
	var sum float64
	for i := 0; i < r.n; i++ {
		e := r.at(i)
		sum += float64(e.arrival - e.Time)
	}
	mean := sum / float64(r.n)
	var sq float64
	for i := 0; i < r.n; i++ {
		e := r.at(i)
		d := float64(e.arrival-e.Time) - mean
		sq += d * d
	}
	return time.Duration(math.Sqrt(sq / float64(r.n)))
}

func (r *ring) reset() {
	clear(r.buf)
	r.start, r.n = 0, 0
}
