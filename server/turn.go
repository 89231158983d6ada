package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // the TURN REST scheme is HMAC-SHA1
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/logging"
	"github.com/pion/stun/v4"
	"github.com/pion/turn/v5"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/metrics"
)

// Defaults of TURNConfig.
const (
	// DefaultTURNRealm is the embedded relay's realm.
	DefaultTURNRealm = "nearzero"
	// DefaultTURNTTL is how long handed-out credentials stay valid. A
	// relay checks them on every allocation refresh, so they must outlive
	// a session on one connection; a reconnect gets fresh ones.
	DefaultTURNTTL = 4 * time.Hour
	// DefaultTURNAllocationLifetime is how long an embedded relay's
	// allocation lives unless refreshed (clients refresh at half of it).
	DefaultTURNAllocationLifetime = 2 * time.Minute
	// DefaultTURNAllocationsPerUser is one allocation per other player of
	// the largest room, and one to spare.
	DefaultTURNAllocationsPerUser = 32
	// DefaultTURNAllocationsPerAddr is two players' worth per address.
	DefaultTURNAllocationsPerAddr = 64
	// DefaultTURNMaxAllocations bounds a relay that serves no Server (see
	// TURNConfig.MaxAllocations).
	DefaultTURNMaxAllocations = 4096
)

// ErrTURNConfig indicates an invalid TURNConfig.
var ErrTURNConfig = errors.New("server: invalid TURN config")

// TURNConfig configures the ICE servers handed to players for direct
// links (STUN in the welcome, STUN and TURN in the joined that seats
// them): the server's own STUN responder (STUNAddr), an
// embedded TURN relay (Addr) or an external one (URL and Secret), plus
// other STUN servers. The zero value hands out none (players link over
// host candidates only, or stay on the server path); the room server's
// command runs the STUN responder on its own port by default.
type TURNConfig struct {
	// STUNAddr is the UDP listen address of the server's STUN responder,
	// e.g. ":8787" (the room server's port number over UDP); empty runs
	// none. A STUN answer tells a player the address its NAT maps it to,
	// which is what lets two players behind NATs link.
	STUNAddr string
	// STUNConn, when set, is the STUN responder's socket in place of
	// STUNAddr: one side of ShareUDP, so that it shares the datagram
	// path's port. StartTURN takes it over (TURN.Close closes it).
	STUNConn net.PacketConn
	// Addr is the embedded relay's UDP listen address, e.g. ":3478";
	// empty runs none. The relay also answers STUN.
	Addr string
	// Realm is the embedded relay's realm. Default "nearzero".
	Realm string
	// PublicHost is the host (an IP or a DNS name) players reach this
	// server at, named in the STUN and TURN URLs handed out and, resolved
	// at start, the address of the relay's relayed sockets. Default: each
	// player is handed the host it connected to (its request's Host), and
	// the relay's address is PublicIP, Addr's IP, or else the host's first
	// global IPv4 address (a public one if it has one).
	PublicHost string
	// PublicIP is the address of the relay's relayed sockets (and, when
	// PublicHost is empty and a player's host is unknown, the one in the
	// URLs). Default: see PublicHost.
	PublicIP string
	// RelayPorts is the range of UDP ports the relay allocates relayed
	// sockets from, inclusive ({50000, 50999}: a firewall opens that
	// range); zero: any port the system gives.
	RelayPorts [2]uint16
	// URL is an external TURN server ("turn:host:3478"), used with Secret
	// instead of the embedded relay.
	URL string
	// Secret is the shared secret of the TURN REST scheme. Required with
	// URL; the embedded relay generates one when empty.
	Secret string
	// STUN lists extra STUN URLs to hand out ("stun:host:3478").
	STUN []string
	// TTL is how long handed-out credentials stay valid. Default 4 h.
	TTL time.Duration

	// The embedded relay's quotas: one hello's credentials once made
	// 19,983 allocations, a socket each, until the server ran out of file
	// descriptors. An allocation over a quota is refused with 486
	// (allocation quota reached).

	// AllocationLifetime is how long an allocation lives unless the client
	// refreshes it, whatever lifetime it asked for (a client that asks
	// for none is told this one, and refreshes at half of it). Default
	// 2 min.
	AllocationLifetime time.Duration
	// AllocationsPerUser is the most allocations one player (the user in
	// its credentials) may hold at once. Default 32; negative means none.
	AllocationsPerUser int
	// AllocationsPerAddr is the most allocations one client address (IP;
	// /64 for IPv6) may hold at once. Default 64; negative means none.
	AllocationsPerAddr int
	// MaxAllocations is the most allocations in all. Default: a quarter of
	// the Server's MaxSockets when the relay serves one (Deps.TURN), else
	// 4096; negative means none. With a Server each relay socket also
	// counts in its MaxSockets.
	MaxAllocations int
}

// ICEClient is what the server knows of where a player came from, to hand
// it STUN and TURN addresses it can reach.
type ICEClient struct {
	// Host is the host the player connected to (its request's Host, the
	// port ignored); empty when unknown.
	Host string
	// Remote is the player's address (after trusted proxies); the zero
	// value when unknown.
	Remote netip.Addr
}

// TURN hands out ICE servers with short-lived credentials and runs the
// server's STUN responder and the embedded relay when configured. Close
// it when the server stops.
//
// Given to a Server (Deps.TURN), the embedded relay serves seated players
// only: credentials of a player holding no seat are refused, and a
// player's allocations close when it leaves its last seat. Its sockets
// count in the server's MaxSockets.
type TURN struct {
	cfg      TURNConfig
	log      *slog.Logger
	secret   []byte
	url      string   // an external relay's URL
	stun     []string // extra STUN URLs
	srv      *turn.Server
	conn     net.PacketConn
	stunConn net.PacketConn
	relayIP  net.IP // the embedded relay's relayed address
	stunPort int    // the port of the embedded STUN answers (responder, or relay)
	turnPort int
	// defaultHost names this server in URLs when neither PublicHost nor
	// the player's Host is known.
	defaultHost string
	warned      sync.Map // refusal kinds already logged

	static turn.RelayAddressGenerator // makes the relay sockets (filtered)
	host   atomic.Pointer[Server]     // the server it serves, if any

	mu      sync.Mutex
	byUser  map[string]int
	byAddr  map[string]int
	total   int
	relays  map[string]*relayConn // by relay address
	bySrc   map[string]*relayConn // by client address (the 5-tuple's source)
	pending quotaGrant            // QuotaHandler's grant, for AllocatePacketConn
}

// quotaGrant is an allocation QuotaHandler let through: the relay's one
// read loop per listener asks the quota, then makes the socket.
type quotaGrant struct{ user, addr string }

// StartTURN validates cfg and starts the STUN responder and the embedded
// relay where cfg asks for them.
func StartTURN(cfg TURNConfig, log *slog.Logger) (*TURN, error) {
	if cfg.Realm == "" {
		cfg.Realm = DefaultTURNRealm
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTURNTTL
	}
	if cfg.AllocationLifetime == 0 {
		cfg.AllocationLifetime = DefaultTURNAllocationLifetime
	}
	if cfg.AllocationsPerUser == 0 {
		cfg.AllocationsPerUser = DefaultTURNAllocationsPerUser
	}
	if cfg.AllocationsPerAddr == 0 {
		cfg.AllocationsPerAddr = DefaultTURNAllocationsPerAddr
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &TURN{cfg: cfg, log: log, secret: []byte(cfg.Secret), stun: cfg.STUN}
	switch {
	case cfg.TTL < 0:
		return nil, fmt.Errorf("%w: TTL %v is negative", ErrTURNConfig, cfg.TTL)
	case cfg.AllocationLifetime < time.Second:
		return nil, fmt.Errorf("%w: AllocationLifetime %v below 1 s", ErrTURNConfig, cfg.AllocationLifetime)
	case cfg.Addr != "" && cfg.URL != "":
		return nil, fmt.Errorf("%w: an embedded relay (-turn-addr) or an external one (-turn-url), not both", ErrTURNConfig)
	case cfg.URL != "" && cfg.Secret == "":
		return nil, fmt.Errorf("%w: an external TURN server needs its shared secret (-turn-secret)", ErrTURNConfig)
	case cfg.URL != "" && !strings.HasPrefix(cfg.URL, "turn:") && !strings.HasPrefix(cfg.URL, "turns:"):
		return nil, fmt.Errorf("%w: TURN URL %q: want turn:host:port or turns:host:port", ErrTURNConfig, cfg.URL)
	case cfg.PublicIP != "" && net.ParseIP(cfg.PublicIP) == nil:
		return nil, fmt.Errorf("%w: public IP %q is not an IP address", ErrTURNConfig, cfg.PublicIP)
	case cfg.RelayPorts != [2]uint16{} && (cfg.RelayPorts[0] == 0 || cfg.RelayPorts[1] < cfg.RelayPorts[0]):
		return nil, fmt.Errorf("%w: relay ports %d-%d: want LOW-HIGH, 1 <= LOW <= HIGH", ErrTURNConfig, cfg.RelayPorts[0], cfg.RelayPorts[1])
	}
	if h := cfg.PublicHost; h != "" {
		if strings.ContainsAny(h, ":/ ") && net.ParseIP(h) == nil {
			return nil, fmt.Errorf("%w: public host %q: want a host name or an IP address, no port", ErrTURNConfig, h)
		}
		if ip := net.ParseIP(h); ip != nil && localIP(ip) {
			log.Warn("the public address is loopback or private: players from other networks get no STUN or TURN from this server, and link directly only where their NATs allow; set -public-addr to an address they can reach",
				"public_addr", h)
		}
	}
	t.url = cfg.URL
	if conn := cfg.STUNConn; conn != nil || cfg.STUNAddr != "" && cfg.STUNAddr != cfg.Addr {
		if conn == nil {
			var err error
			if conn, err = net.ListenPacket("udp", cfg.STUNAddr); err != nil {
				return nil, fmt.Errorf("stun: listen on %s: %w", cfg.STUNAddr, err)
			}
		}
		t.stunConn = conn
		t.stunPort = conn.LocalAddr().(*net.UDPAddr).Port
		go serveSTUN(conn, log)
		log.Info("STUN responder", "listen", conn.LocalAddr().String())
		t.defaultHost = listenHost(conn.LocalAddr())
	}
	if cfg.Addr != "" {
		if err := t.startRelay(); err != nil {
			_ = t.Close()
			return nil, err
		}
	}
	if cfg.PublicHost != "" {
		t.defaultHost = cfg.PublicHost
	}
	return t, nil
}

// listenHost returns a listen address's IP as a host for URLs, or "" when
// it is unspecified.
func listenHost(a net.Addr) string {
	ua, ok := a.(*net.UDPAddr)
	if !ok || ua.IP.IsUnspecified() {
		return ""
	}
	return ua.IP.String()
}

// startRelay runs the embedded TURN relay.
func (t *TURN) startRelay() error {
	cfg := t.cfg
	if len(t.secret) == 0 {
		b := make([]byte, 32)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		t.secret = []byte(hex.EncodeToString(b))
	}
	conn, err := net.ListenPacket("udp4", cfg.Addr)
	if err != nil {
		return fmt.Errorf("turn: listen on %s: %w", cfg.Addr, err)
	}
	t.conn = conn
	ua := conn.LocalAddr().(*net.UDPAddr)
	relayIP, how := t.relayAddress(ua.IP)
	if relayIP.IsLoopback() || relayIP.IsPrivate() {
		t.log.Warn("the TURN relay hands out a loopback or private relayed address: players from other networks cannot use it; set -public-addr (or -turn-public-ip)",
			"relay_address", relayIP.String(), "chosen", how)
	}
	t.relayIP = relayIP
	relayHost := ua.IP.String()
	if ua.IP.IsUnspecified() {
		relayHost = "0.0.0.0"
	}
	var gen turn.RelayAddressGenerator = &turn.RelayAddressGeneratorStatic{RelayAddress: relayIP, Address: relayHost}
	if r := cfg.RelayPorts; r != [2]uint16{} {
		gen = &turn.RelayAddressGeneratorPortRange{RelayAddress: relayIP, Address: relayHost, MinPort: r[0], MaxPort: r[1]}
	}
	lf := &logging.DefaultLoggerFactory{DefaultLogLevel: logging.LogLevelDisabled}
	t.static = filteredRelay{gen: gen, allowed: peerAllowed(relayIP)}
	t.byUser, t.byAddr = map[string]int{}, map[string]int{}
	t.relays, t.bySrc = map[string]*relayConn{}, map[string]*relayConn{}
	rest := turn.LongTermTURNRESTAuthHandler(string(t.secret), lf.NewLogger("turn"))
	srv, err := turn.NewServer(turn.ServerConfig{
		Realm:              cfg.Realm,
		AuthHandler:        t.authHandler(rest),
		QuotaHandler:       t.quota,
		AllocationLifetime: t.cfg.AllocationLifetime,
		EventHandler: turn.EventHandler{
			OnAllocationCreated: t.created,
			OnAuth:              t.authed,
		},
		LoggerFactory: lf,
		PacketConnConfigs: []turn.PacketConnConfig{{PacketConn: conn,
			RelayAddressGenerator: (*relayGen)(t),
			PermissionHandler:     permitted}},
	})
	if err != nil {
		return fmt.Errorf("turn: start relay: %w", err)
	}
	t.srv = srv
	t.turnPort = ua.Port
	if t.stunConn == nil {
		t.stunPort = ua.Port // the relay answers STUN
	}
	if t.defaultHost == "" {
		t.defaultHost = relayIP.String()
	}
	t.log.Info("embedded TURN relay", "listen", conn.LocalAddr().String(), "relay_address", relayIP.String(),
		"relay_ports", fmt.Sprintf("%d-%d", cfg.RelayPorts[0], cfg.RelayPorts[1]), "realm", cfg.Realm)
	return nil
}

// relayAddress picks the relay's relayed address and says how.
func (t *TURN) relayAddress(listen net.IP) (net.IP, string) {
	cfg := t.cfg
	if h := cfg.PublicHost; h != "" {
		if ip := net.ParseIP(h); ip != nil {
			return ip, "-public-addr"
		}
		if ips, err := net.LookupIP(h); err == nil {
			for _, ip := range ips {
				if ip.To4() != nil {
					return ip.To4(), "-public-addr, resolved"
				}
			}
		}
	}
	if ip := net.ParseIP(cfg.PublicIP); ip != nil {
		return ip, "-turn-public-ip"
	}
	if !listen.IsUnspecified() {
		return listen, "the listen address"
	}
	if ip := hostAddress(); ip != nil {
		return ip, "the host's first global address"
	}
	return net.IPv4(127, 0, 0, 1), "no global address on the host"
}

// hostAddress returns the host's first global unicast IPv4 address, a
// public one where there is one.
func hostAddress() net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var private net.IP
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.To4() == nil || !n.IP.IsGlobalUnicast() {
			continue
		}
		if !n.IP.IsPrivate() {
			return n.IP.To4()
		}
		if private == nil {
			private = n.IP.To4()
		}
	}
	return private
}

// localIP reports whether ip is only reachable nearby: loopback, private,
// link-local or unspecified.
func localIP(ip net.IP) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()
}

// peerAllowed keeps the relay from reaching into the server's own
// networks: with a public relay address, peers must be public too (no
// loopback, private, link-local, multicast or unspecified address); a relay
// on a private or loopback address (a LAN, a test) may reach its like.
func peerAllowed(public net.IP) func(peer net.IP) bool {
	local := public.IsLoopback() || public.IsPrivate()
	return func(peer net.IP) bool {
		switch {
		case peer.IsUnspecified() || peer.IsMulticast() || peer.IsLinkLocalUnicast():
			return false
		case peer.IsLoopback() || peer.IsPrivate():
			return local
		}
		return true
	}
}

// permitted grants every TURN permission a relay could ever use. Which
// peers the relay really reaches is filteredRelay's to decide, silently:
// a client's ICE agent asks for a permission for each peer candidate,
// private ones included, and pion's TURN client retries a refused
// permission, a round trip to the server each time, in the agent's one
// loop, holding every other check back (a link took a second longer).
func permitted(_ net.Addr, peer net.IP) bool {
	return !peer.IsUnspecified() && !peer.IsMulticast()
}

// filteredRelay makes the relayed sockets of gen, which neither send to
// nor take packets from peers that allowed refuses.
type filteredRelay struct {
	gen     turn.RelayAddressGenerator
	allowed func(net.IP) bool
}

func (f filteredRelay) Validate() error { return f.gen.Validate() }

func (f filteredRelay) AllocatePacketConn(c turn.AllocateListenerConfig) (net.PacketConn, net.Addr, error) {
	conn, addr, err := f.gen.AllocatePacketConn(c)
	if err != nil {
		return nil, nil, err
	}
	return &filteredConn{PacketConn: conn, allowed: f.allowed}, addr, nil
}

func (f filteredRelay) AllocateListener(c turn.AllocateListenerConfig) (net.Listener, net.Addr, error) {
	return f.gen.AllocateListener(c)
}

func (f filteredRelay) AllocateConn(c turn.AllocateConnConfig) (net.Conn, error) {
	return f.gen.AllocateConn(c)
}

// filteredConn is a relayed socket that drops what goes to or comes from
// a peer it may not reach.
type filteredConn struct {
	net.PacketConn
	allowed func(net.IP) bool
}

func (c *filteredConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if ua, ok := addr.(*net.UDPAddr); ok && !c.allowed(ua.IP) {
		return len(b), nil // dropped, as a lossy network would
	}
	return c.PacketConn.WriteTo(b, addr)
}

func (c *filteredConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.PacketConn.ReadFrom(b)
		if ua, ok := addr.(*net.UDPAddr); err == nil && ok && !c.allowed(ua.IP) {
			continue
		}
		return n, addr, err
	}
}

// Addr returns the embedded relay's listen address, nil when none runs.
func (t *TURN) Addr() net.Addr {
	if t == nil || t.conn == nil {
		return nil
	}
	return t.conn.LocalAddr()
}

// STUNAddr returns the STUN responder's listen address, nil when none
// runs.
func (t *TURN) STUNAddr() net.Addr {
	if t == nil || t.stunConn == nil {
		return nil
	}
	return t.stunConn.LocalAddr()
}

// ICEServers returns the STUN and TURN servers for user, named by the
// configured host (ICEServersFor with nothing known of the player).
func (t *TURN) ICEServers(user string) []protocol.ICEServer {
	out, _ := t.ICEServersFor(user, ICEClient{})
	return out
}

// ICEServersFor returns the STUN and TURN servers for user, who came from
// c: the server's own named by PublicHost, or else by the host the player
// connected to; a TURN server's with credentials valid for the configured
// TTL (TURN REST scheme: username "expiry:user", credential
// base64(HMAC-SHA1(secret, username))). refused reports that the server's
// own were withheld: their address is loopback or private and the player
// came from elsewhere (it could not reach them; the first of each kind is
// logged). Nil when none is configured. Safe for concurrent use.
func (t *TURN) ICEServersFor(user string, c ICEClient) (servers []protocol.ICEServer, refused bool) {
	if t == nil {
		return nil, false
	}
	stun := append([]string(nil), t.stun...)
	var turnURL string
	if t.stunPort != 0 || t.srv != nil {
		host := t.cfg.PublicHost
		if host == "" {
			host = hostOf(c.Host)
		}
		if host == "" {
			host = t.defaultHost
		}
		switch {
		case host == "":
		case !reachableFrom(host, c.Remote):
			t.refuse("host", "a player from elsewhere connected to a loopback or private address: it gets no STUN or TURN from this server; set -public-addr",
				"host", host, "player", c.Remote)
			refused = true
		default:
			if t.stunPort != 0 {
				stun = append([]string{"stun:" + net.JoinHostPort(host, strconv.Itoa(t.stunPort))}, stun...)
			}
			if t.srv != nil {
				if relay, ok := netip.AddrFromSlice(t.relayIP.To4()); ok && !reachableFrom(relay.String(), c.Remote) {
					t.refuse("relay", "a player from elsewhere gets no TURN: the relay's address is loopback or private; set -public-addr",
						"relay_address", relay, "player", c.Remote)
					refused = true
				} else {
					turnURL = "turn:" + net.JoinHostPort(host, strconv.Itoa(t.turnPort)) + "?transport=udp"
				}
			}
		}
	}
	if turnURL == "" {
		turnURL = t.url
	}
	if len(stun) > 0 {
		servers = append(servers, protocol.ICEServer{URLs: stun})
	}
	if turnURL != "" {
		name, cred := TURNCredentials(t.secret, user, time.Now().Add(t.cfg.TTL))
		servers = append(servers, protocol.ICEServer{URLs: []string{turnURL}, Username: name, Credential: cred})
	}
	return servers, refused
}

// refuse logs the first refusal of each kind.
func (t *TURN) refuse(kind, msg string, args ...any) {
	if _, seen := t.warned.LoadOrStore(kind, true); !seen {
		t.log.Warn(msg, args...)
	}
}

// hostOf returns the host of a request's Host ("host:port", "[v6]:port"
// or "host"), brackets removed.
func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// reachableFrom reports whether a player at from can be expected to reach
// host: a name, or a public address, yes; a loopback or private address
// only from a loopback or private address (the same machine, a LAN).
func reachableFrom(host string, from netip.Addr) bool {
	ip := net.ParseIP(host)
	if ip == nil || !localIP(ip) || !from.IsValid() {
		return true
	}
	f := net.IP(from.Unmap().AsSlice())
	return localIP(f)
}

// authHandler wraps the TURN REST check: with a Server, a player holding
// no seat is refused (so credentials are good only while seated).
func (t *TURN) authHandler(rest turn.AuthHandler) turn.AuthHandler {
	return func(ra *turn.RequestAttributes) (string, []byte, bool) {
		user, key, ok := rest(ra)
		if !ok {
			return user, key, ok
		}
		if s := t.host.Load(); s != nil && !s.isSeated(user) {
			s.m.Limited(metrics.LimitTURNUnseated)
			return "", nil, false
		}
		return user, key, true
	}
}

// quota is the relay's QuotaHandler: an allocation for user from src
// within every quota is granted (and remembered for the socket it gets).
func (t *TURN) quota(user, _ string, src net.Addr) bool {
	addr := ""
	if ip, ok := remoteIP(src.String()); ok {
		addr = addrKeyOf(ip)
	}
	t.mu.Lock()
	over := t.overLocked(user, addr)
	if !over {
		t.pending = quotaGrant{user: user, addr: addr}
	}
	t.mu.Unlock()
	if over {
		t.limited(metrics.LimitTURNQuota)
	}
	return !over
}

// overLocked reports whether one more allocation for user from addr is
// over a quota (t.mu held).
func (t *TURN) overLocked(user, addr string) bool {
	c := &t.cfg
	most := t.maxAllocations()
	return (c.AllocationsPerUser > 0 && t.byUser[user] >= c.AllocationsPerUser) ||
		(c.AllocationsPerAddr > 0 && addr != "" && t.byAddr[addr] >= c.AllocationsPerAddr) ||
		(most > 0 && t.total >= most)
}

// maxAllocations is MaxAllocations in force; 0 for no bound.
func (t *TURN) maxAllocations() int {
	switch m := t.cfg.MaxAllocations; {
	case m < 0:
		return 0
	case m > 0:
		return m
	}
	if s := t.host.Load(); s != nil && s.cfg.MaxSockets > 0 {
		return max(1, s.cfg.MaxSockets/4)
	}
	return DefaultTURNMaxAllocations
}

func (t *TURN) limited(limit string) {
	if s := t.host.Load(); s != nil {
		s.m.Limited(limit)
	}
}

// relayGen makes the relay sockets: the static generator's, counted in
// the quotas and the server's socket cap, and closed when not refreshed.
type relayGen TURN

// Validate implements turn.RelayAddressGenerator.
func (g *relayGen) Validate() error { return g.static.Validate() }

// AllocatePacketConn implements turn.RelayAddressGenerator.
func (g *relayGen) AllocatePacketConn(conf turn.AllocateListenerConfig) (net.PacketConn, net.Addr, error) {
	t := (*TURN)(g)
	t.mu.Lock()
	grant := t.pending
	t.pending = quotaGrant{}
	if grant.user != conf.UserID { // cannot happen: QuotaHandler granted it just before
		grant = quotaGrant{user: conf.UserID}
	}
	if t.overLocked(grant.user, grant.addr) {
		t.mu.Unlock()
		t.limited(metrics.LimitTURNQuota)
		return nil, nil, errTURNQuota
	}
	t.byUser[grant.user]++ // held now, given back if the socket fails
	if grant.addr != "" {
		t.byAddr[grant.addr]++
	}
	t.total++
	t.mu.Unlock()
	rc := &relayConn{t: t, user: grant.user, addr: grant.addr}
	s := t.host.Load()
	if s != nil && !s.takeRelaySocket() {
		t.release(rc)
		s.m.Limited(metrics.LimitSockets)
		return nil, nil, errTURNSockets
	}
	rc.host = s
	conn, addr, err := t.static.AllocatePacketConn(conf)
	if err != nil {
		t.release(rc)
		return nil, nil, fmt.Errorf("turn: relay socket: %w", err)
	}
	rc.PacketConn, rc.relay = conn, addr.String()
	t.mu.Lock()
	rc.timer = time.AfterFunc(t.cfg.AllocationLifetime, rc.expire)
	t.relays[rc.relay] = rc
	t.gaugeLocked()
	t.mu.Unlock()
	return rc, addr, nil
}

// AllocateListener implements turn.RelayAddressGenerator: no TCP relays.
func (g *relayGen) AllocateListener(turn.AllocateListenerConfig) (net.Listener, net.Addr, error) {
	return nil, nil, errTURNTCP
}

// AllocateConn implements turn.RelayAddressGenerator: no TCP relays.
func (g *relayGen) AllocateConn(turn.AllocateConnConfig) (net.Conn, error) { return nil, errTURNTCP }

var (
	errTURNQuota   = errors.New("turn: allocation quota reached")
	errTURNSockets = errors.New("turn: the server is at its socket limit")
	errTURNTCP     = errors.New("turn: TCP relays are not offered")
)

// created links a new allocation's relay socket to its client address,
// so that the client's refreshes find it.
func (t *TURN) created(src, _ net.Addr, _, _, _ string, relay net.Addr, _ int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rc := t.relays[relay.String()]; rc != nil {
		rc.src = src.String()
		t.bySrc[rc.src] = rc
	}
}

// authed sees every authenticated request: a refresh from an
// allocation's client gives it another AllocationLifetime.
func (t *TURN) authed(src, _ net.Addr, _, _, _, method string, ok bool) {
	if !ok || method != stun.MethodRefresh.String() {
		return
	}
	t.mu.Lock()
	if rc := t.bySrc[src.String()]; rc != nil {
		rc.timer.Reset(t.cfg.AllocationLifetime)
	}
	t.mu.Unlock()
}

// release gives back what rc held: its quotas and its socket.
func (t *TURN) release(rc *relayConn) {
	t.mu.Lock()
	if t.byUser[rc.user]--; t.byUser[rc.user] <= 0 {
		delete(t.byUser, rc.user)
	}
	if rc.addr != "" {
		if t.byAddr[rc.addr]--; t.byAddr[rc.addr] <= 0 {
			delete(t.byAddr, rc.addr)
		}
	}
	t.total--
	if rc.relay != "" && t.relays[rc.relay] == rc {
		delete(t.relays, rc.relay)
	}
	if rc.src != "" && t.bySrc[rc.src] == rc {
		delete(t.bySrc, rc.src)
	}
	t.gaugeLocked()
	t.mu.Unlock()
	if rc.host != nil {
		rc.host.giveRelaySocket()
	}
}

func (t *TURN) gaugeLocked() {
	if s := t.host.Load(); s != nil {
		s.m.TURNAllocations.Set(float64(t.total))
	}
}

// revoke closes every allocation of user (who left its last seat).
func (t *TURN) revoke(user string) {
	t.mu.Lock()
	var gone []*relayConn
	for _, rc := range t.relays {
		if rc.user == user {
			gone = append(gone, rc)
		}
	}
	t.mu.Unlock()
	for _, rc := range gone {
		_ = rc.Close() // the relay then deletes the allocation
	}
}

// attach makes the relay serve s: seated players only, sockets counted
// in s's MaxSockets.
func (t *TURN) attach(s *Server) {
	if t != nil && t.srv != nil {
		t.host.Store(s)
	}
}

// Allocations returns the embedded relay's open allocations.
func (t *TURN) Allocations() int {
	if t == nil || t.srv == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// relayConn is one allocation's relay socket.
type relayConn struct {
	net.PacketConn
	t          *TURN
	host       *Server     // whose MaxSockets counts it; nil for none
	user, addr string      // the quotas it counts in
	relay, src string      // its relay address and its client's
	timer      *time.Timer // closes it unless refreshed; set and read under t.mu
	once       sync.Once
}

// expire closes an allocation its client did not refresh in time.
func (rc *relayConn) expire() {
	rc.t.limited(metrics.LimitTURNExpired)
	_ = rc.Close()
}

// Close gives the socket's place back once, and closes it.
func (rc *relayConn) Close() error {
	rc.once.Do(func() {
		rc.t.mu.Lock()
		if rc.timer != nil {
			rc.timer.Stop()
		}
		rc.t.mu.Unlock()
		rc.t.release(rc)
	})
	return rc.PacketConn.Close()
}

// TURNCredentials returns the TURN REST username and credential for user,
// valid until expiry, under secret.
func TURNCredentials(secret []byte, user string, expiry time.Time) (username, credential string) {
	username = strconv.FormatInt(expiry.Unix(), 10) + ":" + user
	mac := hmac.New(sha1.New, secret)
	mac.Write([]byte(username))
	return username, base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Close stops the STUN responder and the embedded relay, if any.
func (t *TURN) Close() error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.stunConn != nil {
		errs = append(errs, t.stunConn.Close())
	}
	if t.srv != nil {
		if err := t.srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("turn: close: %w", err))
		}
	} else if t.conn != nil {
		errs = append(errs, t.conn.Close())
	}
	return errors.Join(errs...)
}

// seatICEServers returns the STUN and TURN servers for user's seat (its
// Joined): iceServers without counting a refusal, which its welcome
// counted.
func (s *Server) seatICEServers(user string, c ICEClient) []protocol.ICEServer {
	if s.iceFor != nil {
		out, _ := s.iceFor(user, c)
		return out
	}
	if s.ice == nil {
		return nil
	}
	return s.ice(user)
}

// stunOnly returns the STUN servers of servers, without credentials: what
// a welcome hands out (TURN credentials go only with a seat).
func stunOnly(servers []protocol.ICEServer) []protocol.ICEServer {
	var out []protocol.ICEServer
	for _, s := range servers {
		var urls []string
		for _, u := range s.URLs {
			if scheme, _, _ := strings.Cut(u, ":"); strings.EqualFold(scheme, "stun") || strings.EqualFold(scheme, "stuns") {
				urls = append(urls, u)
			}
		}
		if len(urls) > 0 {
			out = append(out, protocol.ICEServer{URLs: urls})
		}
	}
	return out
}

// iceServers returns the ICE servers for user (Deps.ICEFor, else
// Deps.ICE), counting a refusal: its welcome's, before stunOnly.
func (s *Server) iceServers(user string, c ICEClient) []protocol.ICEServer {
	if s.iceFor != nil {
		out, refused := s.iceFor(user, c)
		if refused {
			s.m.ICERefusedTotal.Inc()
		}
		return out
	}
	if s.ice == nil {
		return nil
	}
	return s.ice(user)
}
