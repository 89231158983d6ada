package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/nearzero/nearzero/netcode/ratelimit"
)

// keyLimiter is a token bucket per key (a client address). A key whose
// bucket has refilled to burst is indistinguishable from a new one, so
// sweep forgets it: memory is bounded by the keys active in the last
// burst/rate seconds. Safe for concurrent use.
type keyLimiter struct {
	rate, burst float64 // read-only; rate < 0 means no limit

	mu      sync.Mutex
	buckets map[string]*ratelimit.Bucket
}

func newKeyLimiter(rate, burst float64) *keyLimiter {
	return &keyLimiter{rate: rate, burst: burst, buckets: map[string]*ratelimit.Bucket{}}
}

// bucket returns key's bucket refilled to now (l.mu held).
func (l *keyLimiter) bucket(key string, now time.Duration) *ratelimit.Bucket {
	b := l.buckets[key]
	if b == nil {
		full := ratelimit.Full(now, l.burst)
		b = &full
		l.buckets[key] = b
	}
	b.Refill(now, l.rate, l.burst)
	return b
}

// allow takes a token for key and reports whether there was one.
func (l *keyLimiter) allow(key string, now time.Duration) bool {
	if l.rate < 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bucket(key, now).Take(now, l.rate, l.burst)
}

// ok reports whether key has a token, without taking it.
func (l *keyLimiter) ok(key string, now time.Duration) bool {
	if l.rate < 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bucket(key, now).Tokens >= 1
}

// spend takes a token for key if there is one (for costs counted after
// the fact, such as a failed join).
func (l *keyLimiter) spend(key string, now time.Duration) { l.allow(key, now) }

// sweep forgets keys whose buckets are full again.
func (l *keyLimiter) sweep(now time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, b := range l.buckets {
		if b.Refill(now, l.rate, l.burst); b.Tokens >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// size returns the number of keys remembered (tests).
func (l *keyLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// clientAddr is the key per-address limits use for a request: the remote
// IP, with IPv6 addresses grouped by /64 (one subscriber usually holds a
// whole /64, so limits on single v6 addresses would be free to dodge).
// When the remote is a trusted proxy, the client is the rightmost address
// in X-Forwarded-For that is not a trusted proxy itself (the ones to its
// left are whatever the client chose to send).
func (s *Server) clientAddr(r *http.Request) string {
	ip, ok := s.clientIP(r)
	if !ok {
		return r.RemoteAddr
	}
	return addrKeyOf(ip)
}

// clientIP is the client's address as clientAddr finds it (through
// trusted proxies); ok is false when the request's remote address does
// not parse.
func (s *Server) clientIP(r *http.Request) (netip.Addr, bool) {
	ip, ok := remoteIP(r.RemoteAddr)
	if !ok {
		return netip.Addr{}, false
	}
	if s.trusted(ip) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break // a malformed hop: trust nothing further left
			}
			if ip = hop.Unmap(); !s.trusted(ip) {
				break
			}
		}
	}
	return ip, true
}

// trusted reports whether ip is one of Config.TrustedProxies.
func (s *Server) trusted(ip netip.Addr) bool {
	for _, p := range s.proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func remoteIP(remote string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	return ip.Unmap(), err == nil
}

// addrKeyOf is the limit key of ip: itself, or its /64 for IPv6.
func addrKeyOf(ip netip.Addr) string {
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}

// prefixKeyOf is the network of an address key (addrKeyOf) that the
// per-network limits count by: its /24 for IPv4, its /48 for IPv6; a key
// that is neither is its own network.
func prefixKeyOf(key string) string { return netOf(key, 24, 48) }

// kickNetOf is the network a host's kick bans (room.Member.Net): the /24
// of an IPv4 address key, the /56 of an IPv6 one.
func kickNetOf(key string) string { return netOf(key, 24, 56) }

// netOf is the /v4 or /v6 network of an address key (addrKeyOf).
func netOf(key string, v4, v6 int) string {
	if ip, err := netip.ParseAddr(key); err == nil {
		bits := v4
		if ip.Is6() {
			bits = v6
		}
		if p, err := ip.Prefix(bits); err == nil {
			return p.String()
		}
	}
	if p, err := netip.ParsePrefix(key); err == nil && p.Addr().Is6() {
		if q, err := p.Addr().Prefix(min(v6, p.Bits())); err == nil {
			return q.String()
		}
	}
	return key
}

// parseProxies parses Config.TrustedProxies: addresses or CIDR prefixes.
func parseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range list {
		if p, err := netip.ParsePrefix(v); err == nil {
			out = append(out, p.Masked())
			continue
		}
		ip, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: not an address or CIDR prefix", v)
		}
		ip = ip.Unmap()
		out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
	}
	return out, nil
}
