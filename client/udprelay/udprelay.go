// Package udprelay puts another program's UDP traffic through nearzero's
// lag simulator (netcode/lagsim), so that a comparison with another
// network stack (Godot's ENet multiplayer) runs through the same simulated
// link as nearzero's own.
//
// A Relay listens on a loopback port; a local client (an ENet client)
// sends there instead of to the server. Each datagram goes to the target
// through one lagsim.Line (client to server), and each reply comes back
// through another (server to client). Every datagram is treated as
// unreliable: loss applies to all of them (ENet does its own
// reliability), and jitter may reorder them, as on a real link.
//
// One client per Relay: replies go to the address that sent the latest
// datagram (a client that reconnects from a new port takes over). Make one
// Relay per client.
//
// # Goroutines
//
// Three per Relay: one reads the client side, one the server side, and
// the lag runner (client/realtime.Lag, the one the game client's links
// use) sends what falls due; while the simulated link is off and nothing
// waits, the readers send at once. Close stops them and returns when they
// have ended. A panic in one is recovered and logged; the datagram at hand
// is lost, the relay goes on.
package udprelay

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/netcode/lagsim"
)

// Config is the simulated link, the same in both directions (the zero
// value: no delay, no loss).
type Config = lagsim.Config

// maxDatagram is the largest datagram relayed (UDP's largest payload).
const maxDatagram = 65535

// ErrClosed indicates a call on a closed Relay.
var ErrClosed = errors.New("udprelay: closed")

// Stats counts what a Relay did.
type Stats struct {
	// ToServer and ToClient count the datagrams delivered each way.
	ToServer, ToClient uint64
	// LostToServer and LostToClient count the datagrams the simulator
	// dropped on purpose each way.
	LostToServer, LostToClient uint64
}

// Relay relays one local client's datagrams to a target through the lag
// simulator. Its methods are safe for concurrent use.
type Relay struct {
	local  *net.UDPConn // the client side, on loopback
	remote *net.UDPConn // the server side, connected to the target
	target *net.UDPAddr
	log    *slog.Logger

	lag      *realtime.Lag
	toServer *realtime.LagLine
	toClient *realtime.LagLine

	mu     sync.Mutex   // guards client
	client *net.UDPAddr // where replies go; nil before the first datagram

	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup

	sentServer, sentClient atomic.Uint64
}

// Options are a Relay's optional settings.
type Options struct {
	// Listen is the client-side address. Default "127.0.0.1:0": loopback,
	// a free port (Port returns it).
	Listen string
	// Log receives warnings (recovered panics, socket errors); nil
	// discards them.
	Log *slog.Logger
	// Seed seeds the simulator's draws; 0 picks one from the clock.
	Seed uint64
}

// New opens a relay to target ("host:port"; a name is looked up now)
// with the simulated link cfg.
func New(target string, cfg Config, opts *Options) (*Relay, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("udprelay: %w", err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	taddr, err := net.ResolveUDPAddr("udp", target)
	if err != nil {
		return nil, fmt.Errorf("udprelay: target %s: %w", target, err)
	}
	laddr, err := net.ResolveUDPAddr("udp", o.Listen)
	if err != nil {
		return nil, fmt.Errorf("udprelay: listen %s: %w", o.Listen, err)
	}
	local, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, fmt.Errorf("udprelay: listen %s: %w", o.Listen, err)
	}
	remote, err := net.DialUDP("udp", nil, taddr)
	if err != nil {
		_ = local.Close()
		return nil, fmt.Errorf("udprelay: target %s: %w", target, err)
	}
	r := &Relay{local: local, remote: remote, target: taddr, log: o.Log, stop: make(chan struct{})}
	r.lag = realtime.NewLag(func(v any) {
		r.log.Error("udp relay: panic recovered", "where", "simulator", "panic", v, "stack", string(debug.Stack()))
	})
	r.toServer, _ = r.lag.NewLine(cfg, o.Seed, r.sendServer) // cfg checked above
	r.toClient, _ = r.lag.NewLine(cfg, o.Seed^0x5bd1e995, r.sendClient)
	r.wg.Add(2)
	go r.readClient()
	go r.readServer()
	return r, nil
}

// Port returns the client-side UDP port: point the client at
// 127.0.0.1:Port.
func (r *Relay) Port() int { return r.local.LocalAddr().(*net.UDPAddr).Port }

// Addr returns the client-side address.
func (r *Relay) Addr() *net.UDPAddr { return r.local.LocalAddr().(*net.UDPAddr) }

// Target returns the address datagrams are relayed to.
func (r *Relay) Target() *net.UDPAddr { return r.target }

// Config returns the simulated link in force.
func (r *Relay) Config() Config { return r.toServer.Config() }

// SetConfig changes the simulated link live, both ways. Datagrams already
// on their way keep their delivery times.
func (r *Relay) SetConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("udprelay: %w", err)
	}
	return r.lag.SetConfig(cfg) // validated above: cannot fail
}

// Stats returns the counts so far.
func (r *Relay) Stats() Stats {
	return Stats{ToServer: r.sentServer.Load(), ToClient: r.sentClient.Load(),
		LostToServer: uint64(r.toServer.Lost()), LostToClient: uint64(r.toClient.Lost())}
}

// String describes the relay for logs.
func (r *Relay) String() string {
	return "udp relay 127.0.0.1:" + strconv.Itoa(r.Port()) + " -> " + r.target.String()
}

// Close stops the relay: the sockets close, datagrams on their way are
// dropped, and it returns once its goroutines have ended. Safe to repeat.
func (r *Relay) Close() error {
	var err error
	r.closeOnce.Do(func() {
		close(r.stop)
		err = errors.Join(r.local.Close(), r.remote.Close())
	})
	r.wg.Wait()
	r.lag.Close()
	if err != nil {
		return fmt.Errorf("udprelay: close: %w", err)
	}
	return nil
}

func (r *Relay) closed() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// readClient takes the client's datagrams into the line to the server.
func (r *Relay) readClient() {
	defer r.wg.Done()
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := r.local.ReadFromUDP(buf)
		if err != nil {
			if r.readFailed("client side", err) {
				return
			}
			continue
		}
		r.safely("client side", func() {
			r.mu.Lock()
			if r.client == nil || !r.client.IP.Equal(from.IP) || r.client.Port != from.Port {
				r.client = from // the latest sender gets the replies
			}
			r.mu.Unlock()
			r.toServer.Send(buf[:n], false) // copied if it must wait
		})
	}
}

// readServer takes the target's replies into the line to the client.
func (r *Relay) readServer() {
	defer r.wg.Done()
	buf := make([]byte, maxDatagram)
	for {
		n, err := r.remote.Read(buf)
		if err != nil {
			if r.readFailed("server side", err) {
				return
			}
			continue
		}
		r.safely("server side", func() { r.toClient.Send(buf[:n], false) })
	}
}

// readFailed reports whether a read error ends the reader: the relay
// closed. Others (an ICMP "port unreachable" while the server is not up
// yet) are passing: the reader goes on after a pause.
func (r *Relay) readFailed(side string, err error) bool {
	if r.closed() || errors.Is(err, net.ErrClosed) {
		return true
	}
	r.log.Debug("udp relay: read", "side", side, "err", err)
	select {
	case <-r.stop:
		return true
	case <-time.After(time.Millisecond): // no spin on a repeating error
		return false
	}
}

// sendServer sends a datagram that fell due to the server.
func (r *Relay) sendServer(b []byte, _ bool) {
	if _, err := r.remote.Write(b); err == nil {
		r.sentServer.Add(1)
	}
}

// sendClient sends a reply that fell due to the client; replies before
// any client datagram have nowhere to go.
func (r *Relay) sendClient(b []byte, _ bool) {
	r.mu.Lock()
	client := r.client
	r.mu.Unlock()
	if client == nil {
		return
	}
	if _, err := r.local.WriteToUDP(b, client); err == nil {
		r.sentClient.Add(1)
	}
}

// safely runs f, recovering a panic into a log line: the datagram at hand
// is lost, the relay goes on.
func (r *Relay) safely(where string, f func()) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Error("udp relay: panic recovered", "where", where, "panic", v, "stack", string(debug.Stack()))
		}
	}()
	f()
}
