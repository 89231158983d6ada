package main

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/client/udprelay"
	"github.com/nearzero/nearzero/server/embedded"
)

// lanHosting is what a NetRoom runs in this process besides its own
// connection: the room server (server/embedded) for a LAN game, and UDP
// relays (client/udprelay) that put another stack's traffic (Godot's
// ENet) through the same lag simulator. Their goroutines never call the
// engine; mu guards it because Cleanup may run on another thread than the
// methods.
type lanHosting struct {
	mu     sync.Mutex
	server *embedded.Server
	relays []*udprelay.Relay
	lag    serverlink.LagConfig // the NetRoom's lag simulator settings
}

// hosted lists the servers started in this process that may still be
// shutting down, so that unloading waits for them (bounded).
var (
	hostedMu sync.Mutex
	hosted   []*embedded.Server
)

func init() {
	c := netRoomClass
	godot.Method2R(c, "host_local", (*NetRoom).hostLocal, "port", "max_players").Defaults(int64(0), int64(0))
	godot.Method0(c, "stop_local_server", func(n *NetRoom) { n.lan.stopServer() })
	godot.Method2R(c, "start_udp_relay", (*NetRoom).startUDPRelay, "target_host", "target_port")
	godot.Method0(c, "stop_udp_relays", func(n *NetRoom) { n.lan.stopRelays() })
	godot.OnSceneDeinit(func() {
		hostedMu.Lock()
		all := hosted
		hosted = nil
		hostedMu.Unlock()
		deadline := time.Now().Add(2 * time.Second)
		for _, s := range all {
			s.Stop()
			s.Wait(time.Until(deadline))
		}
	})
}

// hostLocal starts the room server in this process on port (0: 8787),
// points server_address at it and returns the address other machines
// join with; "" and a room_error when the port is taken.
func (n *NetRoom) hostLocal(port, maxPlayers int64) string {
	n.lan.mu.Lock()
	if s := n.lan.server; s != nil && s.Running() && ((port == 0 && s.Port() == embedded.DefaultPort) || int64(s.Port()) == port) {
		n.lan.mu.Unlock()
		n.setServerAddress(s.LocalURL())
		return s.LANURL() // already hosting there
	}
	n.lan.mu.Unlock()
	n.lan.stopServer() // hosting elsewhere: one server per NetRoom
	if port < 0 || port > 65535 {
		n.hostFailed(port, fmt.Errorf("port %d is not between 0 and 65535", port))
		return ""
	}
	if maxPlayers < 0 || maxPlayers > 32 {
		n.hostFailed(port, fmt.Errorf("max_players %d is not between 0 (16) and 32", maxPlayers))
		return ""
	}
	s, err := embedded.Start(embedded.Config{Port: int(port), MaxPlayers: int(maxPlayers),
		Log: logger().With("part", "embedded server")})
	if err != nil {
		n.hostFailed(cmp.Or(port, embedded.DefaultPort), err)
		return ""
	}
	n.lan.mu.Lock()
	n.lan.server = s
	n.lan.mu.Unlock()
	hostedMu.Lock()
	hosted = slices.DeleteFunc(hosted, func(h *embedded.Server) bool { return !h.Running() && h.Wait(0) })
	hosted = append(hosted, s)
	hostedMu.Unlock()
	n.setServerAddress(s.LocalURL())
	return s.LANURL()
}

// hostFailed reports a failed host_local as room_error(ERROR_LOCAL).
func (n *NetRoom) hostFailed(port int64, err error) {
	msg := "could not host the room server: " + err.Error()
	if errors.Is(err, embedded.ErrPortInUse) {
		msg = fmt.Sprintf("could not host the room server: port %d is in use (another room server, "+
			"or a game hosting on it); choose another port or stop the other one", port)
	}
	n.localError(msg)
}

// localError emits room_error(ERROR_LOCAL, msg).
func (n *NetRoom) localError(msg string) {
	if err := sigRoomError.Emit(n, int64(netroom.CodeLocal), msg); err != nil && n.alive() {
		godot.PrintErrorf("NetRoom: signal room_error: %v", err)
	}
}

// startUDPRelay opens a relay on a loopback port to host:port through the
// lag simulator and returns the port; 0 and a room_error when it cannot.
func (n *NetRoom) startUDPRelay(host string, port int64) int64 {
	if host == "" {
		host = "127.0.0.1"
	}
	if port < 1 || port > 65535 {
		n.localError(fmt.Sprintf("could not start the UDP relay: target port %d is not between 1 and 65535", port))
		return 0
	}
	target := net.JoinHostPort(host, strconv.FormatInt(port, 10))
	n.lan.mu.Lock()
	lag := n.lan.lag
	n.lan.mu.Unlock()
	r, err := udprelay.New(target, lag, &udprelay.Options{Log: logger().With("part", "udp relay")})
	if err != nil {
		n.localError(fmt.Sprintf("could not start the UDP relay to %s: %v", target, err))
		return 0
	}
	n.lan.mu.Lock()
	n.lan.relays = append(n.lan.relays, r)
	n.lan.mu.Unlock()
	return int64(r.Port())
}

// setLag applies the lag simulator's settings to the relays, live, and to
// those started later. An invalid setting is ignored here: the Room
// reports it.
func (h *lanHosting) setLag(cfg serverlink.LagConfig) {
	if cfg.Validate() != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lag = cfg
	for _, r := range h.relays {
		_ = r.SetConfig(cfg) // valid: checked above
	}
}

// stopRelays closes every relay; datagrams on their way are dropped.
func (h *lanHosting) stopRelays() {
	h.mu.Lock()
	rs := h.relays
	h.relays = nil
	h.mu.Unlock()
	for _, r := range rs {
		_ = r.Close() // closing sockets: nothing to report
	}
}

// setServerAddress sets server_address as the property's setter does.
func (n *NetRoom) setServerAddress(addr string) {
	n.server = addr
	n.model.SetServer(addr)
	n.UpdateConfigurationWarnings()
}

// serverRunning reports whether the embedded server is serving.
func (h *lanHosting) serverRunning() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.server != nil && h.server.Running()
}

// serverAddress returns the address other machines join the embedded
// server with, "" when it is not serving.
func (h *lanHosting) serverAddress() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.server == nil || !h.server.Running() {
		return ""
	}
	return h.server.LANURL()
}

// stopServer stops the embedded server, if any: the port is free at once,
// connections close in the background (rounds do not finish).
func (h *lanHosting) stopServer() {
	h.mu.Lock()
	s := h.server
	h.server = nil
	h.mu.Unlock()
	if s != nil {
		s.Stop()
	}
}

// stop ends everything the NetRoom hosts (it leaves the tree or is freed).
func (h *lanHosting) stop() {
	h.stopServer()
	h.stopRelays()
}
