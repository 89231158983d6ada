package realtime

import (
	"sync"
	"time"
)

// Clock is the local clock: time since an arbitrary origin, never going
// back. It is read from goroutines too (the network client stamps
// arrivals with it), so an implementation must be safe for concurrent use
// and must not call the engine. The Godot extension passes one clock to
// everything so that the local sample times of received states are in the
// same time base as its frames.
type Clock interface {
	Now() time.Duration
}

// Wall is the monotonic wall clock since its creation. Safe for
// concurrent use.
type Wall struct{ origin time.Time }

// NewWall returns a wall clock that reads zero now.
func NewWall() *Wall { return &Wall{origin: time.Now()} }

// Now returns the time since the clock was made (monotonic: time.Since
// reads the monotonic reading of both ends).
func (w *Wall) Now() time.Duration { return time.Since(w.origin) }

// Group counts goroutines so that a part can wait for them, bounded, when
// it closes. The zero value is ready; it must not be copied after use.
type Group struct {
	wg sync.WaitGroup
	mu sync.Mutex
	n  int
}

// Go runs f in a goroutine counted by the group. A panic in f is f's to
// recover: the count still drops when f ends.
func (g *Group) Go(f func()) {
	g.mu.Lock()
	g.n++
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer func() {
			g.mu.Lock()
			g.n--
			g.mu.Unlock()
		}()
		f()
	}()
}

// Running returns how many of the group's goroutines have not ended.
func (g *Group) Running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// Wait waits up to d for every goroutine of the group to end, and
// reports whether they did. A goroutine still running when d passes keeps
// running; Wait does not stop anything.
func (g *Group) Wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
