package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestKeyLimiter(t *testing.T) {
	l := newKeyLimiter(2, 3) // 2 per second, burst 3
	for i := range 3 {
		assert.True(t, l.allow("a", 0), "burst token %d", i)
	}
	assert.False(t, l.allow("a", 0), "burst spent")
	assert.True(t, l.allow("b", 0), "keys are independent")
	assert.False(t, l.ok("a", 400*time.Millisecond), "0.8 tokens earned")
	assert.True(t, l.ok("a", 500*time.Millisecond), "one token after 1/rate")
	assert.True(t, l.ok("a", 500*time.Millisecond), "ok does not take")
	assert.True(t, l.allow("a", 500*time.Millisecond))
	assert.False(t, l.allow("a", 500*time.Millisecond))
	l.spend("a", 500*time.Millisecond) // nothing to take: no debt
	assert.True(t, l.allow("a", time.Second))

	// Idle keys are forgotten once full again: memory does not grow.
	assert.Equal(t, 2, l.size())
	l.sweep(1500 * time.Millisecond) // a: 0.5+... not yet full; b: full
	assert.Equal(t, 1, l.size())
	l.sweep(10 * time.Second)
	assert.Equal(t, 0, l.size())

	off := newKeyLimiter(-1, 0)
	for range 100 {
		assert.True(t, off.allow("a", 0), "a negative rate means no limit")
	}
	assert.Equal(t, 0, off.size())
}

func TestAddrKey(t *testing.T) {
	cases := []struct{ remote, want string }{
		{"127.0.0.1:5000", "127.0.0.1"},
		{"[::ffff:10.0.0.1]:80", "10.0.0.1"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:443", "2001:db8:1:2::/64"},
		{"[::1]:1", "::/64"},
		{"pipe", "pipe"},
	}
	for _, tc := range cases {
		t.Run(tc.remote, func(t *testing.T) { assert.Equal(t, tc.want, addrKeyOf(tc.remote)) })
	}
}
