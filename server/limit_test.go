package server

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestClientAddr(t *testing.T) {
	proxies, err := parseProxies([]string{"10.0.0.0/8", "192.168.1.1", "::ffff:172.16.0.1"})
	require.NoError(t, err)
	s := &Server{proxies: proxies}
	cases := []struct{ name, remote, xff, want string }{
		{"v4", "127.0.0.1:5000", "", "127.0.0.1"},
		{"v4 in v6", "[::ffff:203.0.113.1]:80", "", "203.0.113.1"},
		{"v6 by /64", "[2001:db8:1:2:3:4:5:6]:443", "", "2001:db8:1:2::/64"},
		{"v6 same /64", "[2001:db8:1:2:ffff::1]:443", "", "2001:db8:1:2::/64"},
		{"untrusted remote: header ignored", "203.0.113.1:1", "198.51.100.7", "203.0.113.1"},
		{"trusted proxy", "10.1.2.3:1", "198.51.100.7", "198.51.100.7"},
		{"rightmost untrusted hop", "10.1.2.3:1", "1.1.1.1, 198.51.100.7, 192.168.1.1", "198.51.100.7"},
		{"trusted proxy, no header", "192.168.1.1:1", "", "192.168.1.1"},
		{"only proxies", "10.1.2.3:1", "10.9.9.9", "10.9.9.9"},
		{"malformed hop", "10.1.2.3:1", "198.51.100.7, junk", "10.1.2.3"},
		{"mapped proxy", "172.16.0.1:1", "2001:db8::1", "2001:db8::/64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/ws", nil)
			r.RemoteAddr = tc.remote
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			assert.Equal(t, tc.want, s.clientAddr(r))
		})
	}
	_, err = parseProxies([]string{"nope"})
	assert.ErrorContains(t, err, `trusted proxy "nope"`)
}
