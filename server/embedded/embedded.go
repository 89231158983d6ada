// Package embedded runs the room server (package server) inside another
// program, such as a game hosting a LAN room ("Host on this machine"):
// the same server, in goroutines, listening on every interface, with the
// per-address limits off (every player on a LAN may share one address
// behind a router, and the host trusts its own network) and nothing kept
// on disk.
//
// The datagram path (QUIC datagrams for states, docs/protocol.md) is
// served on the same port number over UDP, with a self-signed certificate
// made at start (clients pin its hash from the welcome); Config.NoDatagrams
// turns it off, and a UDP port that cannot be opened leaves it off.
//
// Stop returns at once with the port (TCP and UDP) already free, so a game
// can host again straight away; the rest of the shutdown (rooms stopped, every
// connection closed with 1001 going away, background work ended) finishes
// in a goroutine that Wait waits for.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nearzero/nearzero/server"
	"github.com/nearzero/nearzero/server/identity"
	"github.com/nearzero/nearzero/server/room"
)

// DefaultPort is the port Config.Port 0 means: the room server's usual one.
const DefaultPort = 8787

// AnyPort asks for a free port chosen by the system (tests).
const AnyPort = -1

// DefaultStopTimeout is how long a stop waits for connections to close
// before cutting them.
const DefaultStopTimeout = 2 * time.Second

// ErrListen indicates the port could not be opened.
var ErrListen = errors.New("embedded: cannot listen")

// ErrPortInUse indicates the port could not be opened because another
// program (a room server, another game hosting) uses it; it wraps
// ErrListen.
var ErrPortInUse = fmt.Errorf("%w: port in use", ErrListen)

// Config tunes an embedded server. The zero value hosts on every
// interface on DefaultPort.
type Config struct {
	// Port is the TCP port: 0 means DefaultPort, AnyPort a free one.
	Port int
	// Host is the address to listen on. Default "0.0.0.0": every IPv4
	// interface, so other machines on the LAN can join.
	Host string
	// Room tunes every room; zero fields are the room package's defaults.
	Room room.Config
	// MaxPlayers, when positive, is every room's seat count
	// (Room.MaxPlayers): the game's size (NetRoom.host_local's
	// max_players). A game that cannot import server/room sets it here.
	MaxPlayers int
	// Log receives the server's log; nil discards it.
	Log *slog.Logger
	// StopTimeout bounds the shutdown after Stop. Default DefaultStopTimeout.
	StopTimeout time.Duration
	// NoDatagrams serves no datagram path: states ride the WebSockets
	// alone. Default false (the UDP port of the same number serves it).
	NoDatagrams bool
}

// Server is a room server running in this process. Its methods are safe
// for concurrent use.
type Server struct {
	srv     *server.Server
	ln      *onceListener
	udp     net.PacketConn // the datagram path's socket; nil when off
	port    int
	log     *slog.Logger
	timeout time.Duration

	stopOnce sync.Once
	done     chan struct{} // closed when Serve and the shutdown have ended
	served   chan struct{} // closed when Serve has returned
}

// Start opens the port and serves on it in a goroutine. It fails with
// ErrListen when the port is taken.
func Start(cfg Config) (*Server, error) {
	host := cfg.Host
	if host == "" {
		host = "0.0.0.0"
	}
	port := cfg.Port
	switch {
	case port == 0:
		port = DefaultPort
	case port == AnyPort:
		port = 0
	case port < 0 || port > 65535:
		return nil, fmt.Errorf("%w: port %d is not between 1 and 65535", ErrListen, cfg.Port)
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	l, udp, err := listen(host, port, !cfg.NoDatagrams, log)
	if err != nil {
		if inUse(err) {
			return nil, fmt.Errorf("%w: %d", ErrPortInUse, port)
		}
		return nil, fmt.Errorf("%w on %s: %w", ErrListen, addr, err)
	}
	closeAll := func() {
		_ = l.Close()
		if udp != nil {
			_ = udp.Close()
		}
	}
	// A fresh secret per run: identities issued here are good for this
	// server's lifetime, which is all a hosted game needs (and no
	// "no storage" warning).
	secret, err := identity.NewSecret()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("embedded: %w", err)
	}
	rc := cfg.Room
	if cfg.MaxPlayers > 0 {
		rc.MaxPlayers = cfg.MaxPlayers
	}
	srv, err := server.New(&server.Config{
		Room: rc,
		// A LAN's players may all share one public address, and the host
		// invites whom it likes: no per-address limits.
		MaxConnsPerAddr: -1, MaxRoomsPerAddr: -1, NewIdentityRate: -1, JoinFailRate: -1,
		MaxRoomsPerPrefix: -1,
		// Stop does not drain: rounds end with the host.
		DrainGrace:  time.Second,
		NoDatagrams: udp == nil,
	}, server.Deps{Secret: secret, Log: log, DatagramConn: quiet(udp)})
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("embedded: %w", err)
	}
	s := &Server{srv: srv, ln: &onceListener{Listener: l}, udp: udp, port: l.Addr().(*net.TCPAddr).Port, log: log,
		timeout: cfg.StopTimeout, done: make(chan struct{}), served: make(chan struct{})}
	if s.timeout <= 0 {
		s.timeout = DefaultStopTimeout
	}
	go s.serve()
	<-srv.Ready()
	log.Info("embedded room server listening", "addr", l.Addr().String(), "lan", s.LANURL())
	return s, nil
}

// serve runs the server until Stop; a panic is logged, never a crash of
// the program hosting it.
func (s *Server) serve() {
	defer close(s.served)
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("embedded room server panicked", "panic", v)
			s.Stop()
		}
	}()
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, net.ErrClosed) {
		s.log.Error("embedded room server stopped", "err", err)
	}
	s.Stop() // ended by itself: finish the shutdown too
}

// Port returns the TCP port served.
func (s *Server) Port() int { return s.port }

// LocalURL returns the address this machine's clients use:
// ws://127.0.0.1:PORT/ws.
func (s *Server) LocalURL() string { return wsURL("127.0.0.1", s.port) }

// LANURL returns the address other machines use: ws://LAN-IP:PORT/ws
// (LANIP), which is LocalURL when the machine has no LAN address.
func (s *Server) LANURL() string { return wsURL(LANIP(), s.port) }

func wsURL(host string, port int) string {
	return "ws://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/ws"
}

// Running reports whether Stop has not been called yet (and the server
// did not stop by itself).
func (s *Server) Running() bool {
	select {
	case <-s.served:
		return false
	default:
		return !s.ln.closed()
	}
}

// Stop closes the port at once and shuts the server down in the
// background: rooms stop (a running round is recorded as interrupted),
// every connection is closed with 1001 going away, cut after
// Config.StopTimeout. Safe to repeat and to call concurrently.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.ln.Close() // the port is free when Stop returns
		if s.udp != nil {
			_ = s.udp.Close() // its UDP side too: the datagram path ends, clients fall back
		}
		go func() {
			defer close(s.done)
			defer func() {
				if v := recover(); v != nil {
					s.log.Error("embedded room server panicked while stopping", "panic", v)
				}
			}()
			shutdown(s.srv, s.timeout)
			<-s.served
		}()
	})
}

// shutdown stops srv within timeout.
func shutdown(srv *server.Server, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_ = srv.Shutdown(ctx) // errors: connections cut at the deadline, which is the point
}

// Wait waits up to d for a stopped server to finish shutting down and
// reports whether it did.
func (s *Server) Wait(d time.Duration) bool {
	select {
	case <-s.done:
		return true
	default:
	}
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-s.done:
		return true
	case <-t.C:
		return false
	}
}

// onceListener closes its listener once: Stop closes it first, to free the
// port without waiting, then the server's shutdown closes it again.
type onceListener struct {
	net.Listener
	once   sync.Once
	mu     sync.Mutex
	isShut bool
}

func (l *onceListener) Close() error {
	var err error
	l.once.Do(func() {
		l.mu.Lock()
		l.isShut = true
		l.mu.Unlock()
		err = l.Listener.Close()
	})
	return err
}

func (l *onceListener) closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.isShut
}

// quietUDP is the datagram path's socket as quic-go sees it inside a
// game: without its SyscallConn, quic-go does not try to grow the
// socket's buffers to 7 MB, which unprivileged it cannot, and then print
// a warning to the game's console; a LAN game's datagrams need neither
// big buffers nor batched reads.
type quietUDP struct{ net.PacketConn }

// SetReadBuffer and SetWriteBuffer take what the system allows.
func (quietUDP) SetReadBuffer(int) error  { return nil }
func (quietUDP) SetWriteBuffer(int) error { return nil }

// quiet wraps udp (nil stays nil).
func quiet(udp net.PacketConn) net.PacketConn {
	if udp == nil {
		return nil
	}
	return quietUDP{udp}
}

// listenTries is how many free ports AnyPort tries for one whose UDP
// side is free too.
const listenTries = 8

// listen opens the TCP port and, with datagrams, the UDP port of the same
// number (one port to open in a firewall, one number to type). A UDP port
// that cannot be opened leaves the datagram path off (logged): the TCP
// port alone serves every player. AnyPort (port 0) looks for a number
// free on both.
func listen(host string, port int, datagrams bool, log *slog.Logger) (net.Listener, net.PacketConn, error) {
	for try := 1; ; try++ {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil || !datagrams {
			return l, nil, err
		}
		udp, err := net.ListenPacket("udp", l.Addr().String())
		if err == nil {
			return l, udp, nil
		}
		if port == 0 && try < listenTries {
			_ = l.Close()
			continue
		}
		log.Warn("datagram path off: cannot open the UDP port", "addr", l.Addr().String(), "err", err)
		return l, nil, nil
	}
}

// inUse reports whether a listen error says the port is taken
// (WSAEADDRINUSE, 10048, on Windows).
func inUse(err error) bool {
	var errno syscall.Errno
	return errors.Is(err, syscall.EADDRINUSE) || (runtime.GOOS == "windows" && errors.As(err, &errno) && errno == 10048)
}

// LANIP returns this machine's address on its network, for other machines
// to join: the IPv4 address of the interface holding the default route
// when there is one, else the first up, non-loopback, non-link-local IPv4
// address, else 127.0.0.1.
func LANIP() string {
	// A UDP "connection" only picks a route and source address: nothing
	// is sent.
	if c, err := net.Dial("udp4", "192.0.2.1:9"); err == nil { // TEST-NET-1
		ip := c.LocalAddr().(*net.UDPAddr).IP
		_ = c.Close()
		if usable(ip) {
			return ip.String()
		}
	}
	addrs, _ := net.InterfaceAddrs()
	return pickIP(addrs)
}

// pickIP returns the first usable IPv4 address of addrs, else 127.0.0.1.
func pickIP(addrs []net.Addr) string {
	for _, a := range addrs {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if usable(ip) {
			return ip.To4().String()
		}
	}
	return "127.0.0.1"
}

// usable reports whether ip is an IPv4 address another machine could
// reach: not loopback, link-local or unspecified.
func usable(ip net.IP) bool {
	return ip.To4() != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() && !ip.IsUnspecified()
}
