package simnet

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// event is one scheduled callback. seq breaks ties so that events due at the
// same time run in the order they were scheduled.
type event struct {
	at  time.Duration
	seq uint64
	fn  func()
}

// Scheduler is a virtual clock with a queue of callbacks. Time moves only
// when Step or RunUntil runs an event; nothing happens in the background and
// no goroutine is started.
//
// It is not safe for concurrent use: the test or the bench drives it from one
// goroutine, and callbacks run on that goroutine.
type Scheduler struct {
	now  time.Duration
	seq  uint64
	q    []event // binary min-heap on (at, seq)
	seed uint64
	// running is set while an event runs, to catch a callback that calls
	// Step or RunUntil (time would jump under the event).
	running bool
	// unnamed counts the links and frame schedules created without a name,
	// to give each its own default random stream.
	unnamed int
}

// NewScheduler returns a scheduler at time 0 with no events. Every random
// stream it hands out (Rand) derives from seed.
func NewScheduler(seed uint64) *Scheduler {
	return &Scheduler{seed: seed, q: make([]event, 0, 64)}
}

// Now returns the virtual time: the due time of the event running, or of the
// last one run, or the time given to the last RunUntil, whichever is latest.
func (s *Scheduler) Now() time.Duration { return s.now }

// Seed returns the seed given to NewScheduler.
func (s *Scheduler) Seed() uint64 { return s.seed }

// Pending returns the number of events queued, including the inert event a
// stopped Every may leave behind.
func (s *Scheduler) Pending() int { return len(s.q) }

// Next returns the due time of the next event, and false when none is queued.
func (s *Scheduler) Next() (time.Duration, bool) {
	if len(s.q) == 0 {
		return 0, false
	}
	return s.q[0].at, true
}

// Rand returns a generator for the stream named name, derived from the seed
// and the name alone: creating, removing or reordering other streams never
// changes this one. Two calls with the same name return two generators that
// produce the same sequence, so give every consumer its own name.
func (s *Scheduler) Rand(name string) *rand.Rand {
	h := fnv1a(name)
	return rand.New(rand.NewPCG(mix64(s.seed^h), mix64(h+0x9e3779b97f4a7c15)))
}

// At schedules fn to run at virtual time t. A time in the past runs at Now,
// after the events already due then. fn must not be nil.
func (s *Scheduler) At(t time.Duration, fn func()) {
	if fn == nil {
		panic("simnet: At with a nil func")
	}
	if t < s.now {
		t = s.now
	}
	s.seq++
	s.q = append(s.q, event{at: t, seq: s.seq, fn: fn})
	s.up(len(s.q) - 1)
}

// After schedules fn to run d after Now; a negative d runs at Now.
func (s *Scheduler) After(d time.Duration, fn func()) { s.At(s.now+d, fn) }

// Every runs fn at Now+period, Now+2*period and so on, on exact multiples
// (a late event never shifts the next), until stop is called. stop may be
// called from inside fn and more than once. After stop, one inert event may
// stay queued until its time comes. It panics when period is not positive,
// which would never let time move.
func (s *Scheduler) Every(period time.Duration, fn func()) (stop func()) {
	if period <= 0 {
		panic(fmt.Sprintf("simnet: Every with period %v; it must be positive", period))
	}
	if fn == nil {
		panic("simnet: Every with a nil func")
	}
	stopped := false
	next := s.now + period
	var tick func()
	tick = func() {
		if stopped {
			return
		}
		fn()
		if stopped {
			return
		}
		next += period
		s.At(next, tick)
	}
	s.At(next, tick)
	return func() { stopped = true }
}

// Step runs the next event, moving Now to its time, and reports whether
// there was one.
func (s *Scheduler) Step() bool {
	if s.running {
		panic("simnet: Step or RunUntil called from inside an event")
	}
	if len(s.q) == 0 {
		return false
	}
	ev := s.q[0]
	last := len(s.q) - 1
	s.q[0] = s.q[last]
	s.q[last] = event{} // let the closure be collected
	s.q = s.q[:last]
	if last > 0 {
		s.down(0)
	}
	s.now = ev.at
	s.running = true
	defer func() { s.running = false }()
	ev.fn()
	return true
}

// RunUntil runs every event due at or before t, including those the events
// schedule on the way, then sets Now to t. A t before Now runs what is due
// now and leaves Now unchanged: time never goes back.
func (s *Scheduler) RunUntil(t time.Duration) {
	if s.running {
		panic("simnet: Step or RunUntil called from inside an event")
	}
	for len(s.q) > 0 && s.q[0].at <= t {
		s.Step()
	}
	if t > s.now {
		s.now = t
	}
}

// RunFor runs every event due in the next d, then sets Now to Now+d.
func (s *Scheduler) RunFor(d time.Duration) { s.RunUntil(s.now + d) }

// autoName returns a default stream name, unique within this scheduler.
func (s *Scheduler) autoName(prefix string) string {
	s.unnamed++
	return fmt.Sprintf("%s%d", prefix, s.unnamed)
}

// before reports whether a runs before b.
func before(a, b *event) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// up moves the event at i towards the root. It carries the event in a hole
// rather than swapping, which halves the copies.
func (s *Scheduler) up(i int) {
	q := s.q
	ev := q[i]
	for i > 0 {
		p := (i - 1) / 2
		if !before(&ev, &q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = ev
}

// down moves the event at i towards the leaves.
func (s *Scheduler) down(i int) {
	q := s.q
	n := len(q)
	ev := q[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && before(&q[r], &q[c]) {
			c = r
		}
		if !before(&q[c], &ev) {
			break
		}
		q[i] = q[c]
		i = c
	}
	q[i] = ev
}

// fnv1a is the 64-bit FNV-1a hash of a name, without allocating.
func fnv1a(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return h
}

// mix64 is the splitmix64 finalizer: it spreads nearby inputs (seeds 1, 2, 3)
// over unrelated generator states.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
