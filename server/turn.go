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

// TURNConfig configures the ICE servers handed to players in the welcome
// for direct links: an embedded TURN relay (Addr), or an external one (URL
// and Secret), plus STUN servers. The zero value hands out none (players
// link over host candidates only, or stay on the server path).
type TURNConfig struct {
	// Addr is the embedded relay's UDP listen address, e.g. ":3478";
	// empty runs none. The relay also answers STUN.
	Addr string
	// Realm is the embedded relay's realm. Default "nearzero".
	Realm string
	// PublicIP is the address players reach the embedded relay at (and the
	// relayed addresses it hands out). Default: Addr's IP, and 127.0.0.1
	// when that is unspecified (fine on one machine only: set it behind
	// NAT or on a public host).
	PublicIP string
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

// TURN hands out ICE servers with short-lived credentials and runs the
// embedded relay when configured. Close it when the server stops.
//
// Given to a Server (Deps.TURN), the embedded relay serves seated players
// only: credentials of a player holding no seat are refused, and a
// player's allocations close when it leaves its last seat. Its sockets
// count in the server's MaxSockets.
type TURN struct {
	cfg    TURNConfig
	secret []byte
	url    string
	stun   []string
	srv    *turn.Server
	conn   net.PacketConn
	static turn.RelayAddressGenerator // makes the relay sockets
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

// StartTURN validates cfg and starts the embedded relay if cfg.Addr is set.
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
	t := &TURN{cfg: cfg, secret: []byte(cfg.Secret), stun: cfg.STUN}
	switch {
	case cfg.TTL < 0:
		return nil, fmt.Errorf("%w: TTL %v is negative", ErrTURNConfig, cfg.TTL)
	case cfg.AllocationLifetime < time.Second:
		return nil, fmt.Errorf("%w: AllocationLifetime %v below 1 s", ErrTURNConfig, cfg.AllocationLifetime)
	case cfg.Addr != "" && cfg.URL != "":
		return nil, fmt.Errorf("%w: an embedded relay (-turn-addr) or an external one (-turn-url), not both", ErrTURNConfig)
	case cfg.URL != "":
		if cfg.Secret == "" {
			return nil, fmt.Errorf("%w: an external TURN server needs its shared secret (-turn-secret)", ErrTURNConfig)
		}
		if !strings.HasPrefix(cfg.URL, "turn:") && !strings.HasPrefix(cfg.URL, "turns:") {
			return nil, fmt.Errorf("%w: TURN URL %q: want turn:host:port or turns:host:port", ErrTURNConfig, cfg.URL)
		}
		t.url = cfg.URL
		return t, nil
	case cfg.Addr == "":
		return t, nil
	}
	if len(t.secret) == 0 {
		b := make([]byte, 32)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		t.secret = []byte(hex.EncodeToString(b))
	}
	conn, err := net.ListenPacket("udp4", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("turn: listen on %s: %w", cfg.Addr, err)
	}
	ua := conn.LocalAddr().(*net.UDPAddr)
	public := net.ParseIP(cfg.PublicIP)
	switch {
	case cfg.PublicIP != "" && public == nil:
		_ = conn.Close()
		return nil, fmt.Errorf("%w: public IP %q is not an IP address", ErrTURNConfig, cfg.PublicIP)
	case public == nil && ua.IP.IsUnspecified():
		public = net.IPv4(127, 0, 0, 1)
	case public == nil:
		public = ua.IP
	}
	relayHost := ua.IP.String()
	if ua.IP.IsUnspecified() {
		relayHost = "0.0.0.0"
	}
	lf := &logging.DefaultLoggerFactory{DefaultLogLevel: logging.LogLevelDisabled}
	t.static = &turn.RelayAddressGeneratorStatic{RelayAddress: public, Address: relayHost}
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
			PermissionHandler:     peerAllowed(public)}},
	})
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("turn: start relay: %w", err)
	}
	hostPort := net.JoinHostPort(public.String(), strconv.Itoa(ua.Port))
	t.srv, t.conn = srv, conn
	t.url = "turn:" + hostPort + "?transport=udp"
	t.stun = append([]string{"stun:" + hostPort}, t.stun...)
	log.Info("embedded TURN relay", "listen", conn.LocalAddr().String(), "public", hostPort, "realm", cfg.Realm)
	return t, nil
}

// peerAllowed keeps the relay from reaching into the server's own
// networks: with a public relay address, peers must be public too (no
// loopback, private, link-local, multicast or unspecified address); a relay
// on a private or loopback address (a LAN, a test) may reach its like.
func peerAllowed(public net.IP) turn.PermissionHandler {
	local := public.IsLoopback() || public.IsPrivate()
	return func(_ net.Addr, peer net.IP) bool {
		switch {
		case peer.IsUnspecified() || peer.IsMulticast() || peer.IsLinkLocalUnicast():
			return false
		case peer.IsLoopback() || peer.IsPrivate():
			return local
		}
		return true
	}
}

// Addr returns the embedded relay's listen address, nil when none runs.
func (t *TURN) Addr() net.Addr {
	if t == nil || t.conn == nil {
		return nil
	}
	return t.conn.LocalAddr()
}

// ICEServers returns the STUN and TURN servers for user, the TURN one with
// credentials valid for the configured TTL (TURN REST scheme: username
// "expiry:user", credential base64(HMAC-SHA1(secret, username))). Nil when
// none is configured. Safe for concurrent use.
func (t *TURN) ICEServers(user string) []protocol.ICEServer {
	if t == nil {
		return nil
	}
	var out []protocol.ICEServer
	if len(t.stun) > 0 {
		out = append(out, protocol.ICEServer{URLs: t.stun})
	}
	if t.url != "" {
		name, cred := TURNCredentials(t.secret, user, time.Now().Add(t.cfg.TTL))
		out = append(out, protocol.ICEServer{URLs: []string{t.url}, Username: name, Credential: cred})
	}
	return out
}

// TURNCredentials returns the TURN REST username and credential for user,
// valid until expiry, under secret.
func TURNCredentials(secret []byte, user string, expiry time.Time) (username, credential string) {
	username = strconv.FormatInt(expiry.Unix(), 10) + ":" + user
	mac := hmac.New(sha1.New, secret)
	mac.Write([]byte(username))
	return username, base64.StdEncoding.EncodeToString(mac.Sum(nil))
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

// Close stops the embedded relay, if any.
func (t *TURN) Close() error {
	if t == nil || t.srv == nil {
		return nil
	}
	if err := t.srv.Close(); err != nil {
		return fmt.Errorf("turn: close: %w", err)
	}
	return nil
}

// iceServers returns the ICE servers for user's welcome (Deps.ICE).
func (s *Server) iceServers(user string) []protocol.ICEServer {
	if s.ice == nil {
		return nil
	}
	return s.ice(user)
}
