package testkit

import (
	"sync"
	"time"
)

// Clock is a local clock (client/realtime.Clock) the test steps with Add;
// safe for concurrent use. The zero value reads 0.
type Clock struct {
	mu sync.Mutex
	t  time.Duration
}

// Now returns the time.
func (c *Clock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the time on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t += d
	c.mu.Unlock()
}
