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

// sockets counts accepted connections, in all, by address and by
// network, and the embedded TURN relay's sockets in all. Safe for
// concurrent use.
type sockets struct {
	mu      sync.Mutex
	n       int            // accepted connections and relay sockets
	relays  int            // relay sockets among n
	by      map[string]int // accepted connections by address
	in      map[string]int // the same by network (prefixKeyOf)
	warnAt  time.Duration  // server time of the last "cap reached" line
	warned  bool
	refused int // since the last line
}

// admitSocket counts c and returns it wrapped to uncount on Close, or nil
// when a cap refuses it: MaxSockets; twice MaxConnsPerAddr (room for HTTP
// requests beside the WebSockets) and twice MaxConnsPerPrefix; and the
// last ConnReserve of MaxSockets for addresses holding fewer than
// fewSockets, so that /healthz and honest joins still get in. Trusted
// proxies have no per-address cap and no reserve (every client behind
// them shares their address).
func (s *Server) admitSocket(c net.Conn) net.Conn {
	key, netKey := "", ""
	if ip, ok := socketIP(c); ok && !s.trusted(ip) {
		key = addrKeyOf(ip)
		netKey = prefixKeyOf(key)
	}
	perAddr, perNet := 0, 0
	if s.cfg.MaxConnsPerAddr > 0 {
		perAddr = 2 * s.cfg.MaxConnsPerAddr
	}
	if s.cfg.MaxConnsPerPrefix > 0 {
		perNet = 2 * s.cfg.MaxConnsPerPrefix
	}
	reserve := s.socketReserve()
	k := &s.socks
	k.mu.Lock()
	over := ""
	switch {
	case s.cfg.MaxSockets > 0 && k.n >= s.cfg.MaxSockets:
		over = metrics.LimitSockets
	case key != "" && perAddr > 0 && k.by[key] >= perAddr:
		over = metrics.LimitSocketsPerAddr
	case netKey != "" && perNet > 0 && k.in[netKey] >= perNet:
		over = metrics.LimitSocketsPerNet
	case key != "" && reserve > 0 && k.n >= s.cfg.MaxSockets-reserve && k.by[key] >= fewSockets:
		over = metrics.LimitSocketsReserve
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
		k.in[netKey]++
	}
	k.mu.Unlock()
	return &capConn{Conn: c, release: func() {
		k.mu.Lock()
		k.n--
		if key != "" {
			if k.by[key]--; k.by[key] <= 0 {
				delete(k.by, key)
			}
			if k.in[netKey]--; k.in[netKey] <= 0 {
				delete(k.in, netKey)
			}
		}
		k.mu.Unlock()
	}}
}

// socketReserve is the part of MaxSockets kept for addresses holding few
// (ConnReserve); 0 for none.
func (s *Server) socketReserve() int {
	if s.cfg.MaxSockets <= 0 || s.cfg.ConnReserve <= 0 {
		return 0
	}
	return int(float64(s.cfg.MaxSockets) * s.cfg.ConnReserve)
}

// takeRelaySocket counts one socket of the embedded TURN relay in
// MaxSockets, and reports whether it fits: relays may not take the
// reserve (ConnReserve).
func (s *Server) takeRelaySocket() bool {
	k := &s.socks
	k.mu.Lock()
	defer k.mu.Unlock()
	if s.cfg.MaxSockets > 0 && k.n >= s.cfg.MaxSockets-s.socketReserve() {
		return false
	}
	k.n++
	k.relays++
	return true
}

// giveRelaySocket uncounts a relay socket takeRelaySocket counted.
func (s *Server) giveRelaySocket() {
	k := &s.socks
	k.mu.Lock()
	k.n--
	k.relays--
	k.mu.Unlock()
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
