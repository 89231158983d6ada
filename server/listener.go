package server

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/nearzero/nearzero/server/metrics"
)

// capListener closes connections over Config.MaxSockets, or over the
// per-address share of it, as they are accepted: before they cost a
// goroutine, a buffer or a header time-out, and before the process runs
// out of descriptors (then accept fails and every new connection waits).
type capListener struct {
	net.Listener
	s *Server
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if sc := l.s.admitSocket(c); sc != nil {
			return sc, nil
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset: no TIME_WAIT kept for a refused socket
		}
		_ = c.Close()
	}
}

// sockets counts accepted connections, in all and by address. Safe for
// concurrent use.
type sockets struct {
	mu      sync.Mutex
	n       int
	by      map[string]int
	warnAt  time.Duration // server time of the last "cap reached" line
	warned  bool
	refused int // since the last line
}

// admitSocket counts c and returns it wrapped to uncount on Close, or nil
// when a cap refuses it. Trusted proxies have no per-address cap (every
// client behind them shares their address).
func (s *Server) admitSocket(c net.Conn) net.Conn {
	key := ""
	if ip, ok := socketIP(c); ok && !s.trusted(ip) {
		key = addrKeyOf(ip)
	}
	perAddr := 0
	if s.cfg.MaxConnsPerAddr > 0 {
		perAddr = 2 * s.cfg.MaxConnsPerAddr // room for HTTP requests beside the WebSockets
	}
	k := &s.socks
	k.mu.Lock()
	over := ""
	switch {
	case s.cfg.MaxSockets > 0 && k.n >= s.cfg.MaxSockets:
		over = metrics.LimitSockets
	case key != "" && perAddr > 0 && k.by[key] >= perAddr:
		over = metrics.LimitSocketsPerAddr
	}
	if over != "" {
		now := s.now()
		k.refused++
		logIt := over == metrics.LimitSockets && (!k.warned || now-k.warnAt >= dropLogEvery)
		n := k.refused
		if logIt {
			k.warned, k.warnAt, k.refused = true, now, 0
		}
		k.mu.Unlock()
		s.m.Limited(over)
		if logIt { // at most one line per dropLogEvery: a flood must not become a log flood
			s.log.Warn("connection cap reached: closing new connections at accept", "max_sockets", s.cfg.MaxSockets,
				"refused", n, "per", dropLogEvery)
		}
		return nil
	}
	k.n++
	if key != "" {
		k.by[key]++
	}
	k.mu.Unlock()
	return &capConn{Conn: c, release: func() {
		k.mu.Lock()
		k.n--
		if key != "" {
			if k.by[key]--; k.by[key] <= 0 {
				delete(k.by, key)
			}
		}
		k.mu.Unlock()
	}}
}

func socketIP(c net.Conn) (netip.Addr, bool) {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap(), true
	}
	return remoteIP(c.RemoteAddr().String())
}

// capConn gives its place back once, on the first Close.
type capConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *capConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes one with an error answer.
func (c *capConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
