package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idleSocket opens a TCP connection from local address ip that sends
// nothing (a half-open handshake).
func (e *env) idleSocket(ip string) net.Conn {
	e.t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", e.s.Addr().String())
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedByServer reports whether the server closed c (a read ends with
// EOF or a reset) before the bound, rather than the read timing out.
func closedByServer(t *testing.T, c net.Conn, bound time.Duration) bool {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(bound)))
	_, err := c.Read(make([]byte, 1))
	require.Error(t, err, "the server sends nothing unasked")
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// refusedSocket reports whether a socket from ip is closed by the server
// unasked: reset while connecting, or closed before the bound.
func (e *env) refusedSocket(ip string, bound time.Duration) bool {
	e.t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", e.s.Addr().String())
	if err != nil {
		return true
	}
	defer c.Close()
	return closedByServer(e.t, c, bound)
}

// Attack: 100 addresses held 2000 idle upgraded connections; nothing
// capped the total.
func TestConnectionCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxConns = 3 })
	var rs []*raw
	for i := range 3 {
		r := e.rawFrom(fmt.Sprintf("127.0.0.%d", i+1))
		r.hello()
		rs = append(rs, r)
	}
	_, resp, err := e.dialFrom("127.0.0.4")
	require.Error(t, err, "a fourth connection over a cap of 3")
	require.NotNil(t, resp)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "10", resp.Header.Get("Retry-After"))

	_ = rs[0].ws.CloseNow()
	eventually(t, "a closed connection frees its place", func() (error, bool) {
		r, _, err := e.dialFrom("127.0.0.4")
		if err == nil {
			r.hello()
		}
		return err, err == nil
	})
	assert.NotContains(t, metricsBody(e), `nearzero_limited_total{limit="conns"} 0`)
}

// Attack: 21000 half-open sockets used up the process's descriptors
// (accept4: too many open files) and an honest join took 3.6-4.8 s.
func TestSocketCapClosesAtAccept(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxSockets, c.MaxConns, c.HeaderTimeout = 4, 2, time.Minute })
	var idle []net.Conn
	for i := range 4 {
		idle = append(idle, e.idleSocket(fmt.Sprintf("127.0.0.%d", i+1)))
	}
	assert.True(t, e.refusedSocket("127.0.0.5", 5*time.Second), "a socket over the cap is closed at once")

	for _, c := range idle {
		_ = c.Close()
	}
	eventually(t, "closed sockets free their places", func() (error, bool) {
		r, _, err := e.dialFrom("127.0.0.6")
		if err == nil {
			r.hello()
		}
		return err, err == nil
	})
	assert.NotContains(t, metricsBody(e), `nearzero_limited_total{limit="sockets"} 0`)
}

// One address may hold twice MaxConnsPerAddr sockets, not the whole cap.
func TestSocketsPerAddress(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxConnsPerAddr, c.HeaderTimeout = 2, time.Minute })
	var idle []net.Conn
	for range 4 {
		idle = append(idle, e.idleSocket("127.0.0.1"))
	}
	assert.True(t, e.refusedSocket("127.0.0.1", 5*time.Second), "a fifth socket from one address")
	e.rawFrom("127.0.0.2").hello() // another address is not affected
	for _, c := range idle {
		_ = c.Close()
	}
	eventually(t, "the address's sockets are free again", func() (error, bool) {
		resp, err := http.Get(e.base + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
		}
		return err, err == nil
	})
	assert.NotContains(t, metricsBody(e), `nearzero_limited_total{limit="sockets_per_addr"} 0`)
}

// A socket that never sends its handshake is closed after HeaderTimeout.
func TestHalfOpenSocketsClose(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.HeaderTimeout = 200 * time.Millisecond })
	assert.True(t, closedByServer(t, e.idleSocket("127.0.0.1"), 5*time.Second))
}

func TestConnectionCapDefaults(t *testing.T) {
	assert.Equal(t, 896, defaultMaxSockets(1024))
	assert.Equal(t, 50, defaultMaxSockets(100))
	assert.Equal(t, DefaultMaxSockets, defaultMaxSockets(0), "unknown")
	assert.Equal(t, DefaultMaxSockets, defaultMaxSockets(1<<20))
	c := (&Config{MaxSockets: 400}).withDefaults()
	assert.Equal(t, 300, c.MaxConns, "three quarters of the sockets")
	assert.Equal(t, DefaultHeaderTimeout, c.HeaderTimeout)
	assert.ErrorIs(t, (&Config{MaxSockets: 10, MaxConns: 11}).Validate(), ErrInvalidConfig)
}
