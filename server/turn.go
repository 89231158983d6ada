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
	"time"

	"github.com/pion/logging"
	"github.com/pion/turn/v5"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// Defaults of TURNConfig.
const (
	// DefaultTURNRealm is the embedded relay's realm.
	DefaultTURNRealm = "nearzero"
	// DefaultTURNTTL is how long handed-out credentials stay valid. A
	// relay checks them on every allocation refresh, so they must outlive
	// a session on one connection; a reconnect gets fresh ones.
	DefaultTURNTTL = 4 * time.Hour
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
}

// TURN hands out ICE servers with short-lived credentials and runs the
// embedded relay when configured. Close it when the server stops.
type TURN struct {
	cfg    TURNConfig
	secret []byte
	url    string
	stun   []string
	srv    *turn.Server
	conn   net.PacketConn
}

// StartTURN validates cfg and starts the embedded relay if cfg.Addr is set.
func StartTURN(cfg TURNConfig, log *slog.Logger) (*TURN, error) {
	if cfg.Realm == "" {
		cfg.Realm = DefaultTURNRealm
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTURNTTL
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &TURN{cfg: cfg, secret: []byte(cfg.Secret), stun: cfg.STUN}
	switch {
	case cfg.TTL < 0:
		return nil, fmt.Errorf("%w: TTL %v is negative", ErrTURNConfig, cfg.TTL)
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
	srv, err := turn.NewServer(turn.ServerConfig{
		Realm:         cfg.Realm,
		AuthHandler:   turn.LongTermTURNRESTAuthHandler(string(t.secret), lf.NewLogger("turn")),
		LoggerFactory: lf,
		PacketConnConfigs: []turn.PacketConnConfig{{PacketConn: conn,
			RelayAddressGenerator: &turn.RelayAddressGeneratorStatic{RelayAddress: public, Address: relayHost},
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
