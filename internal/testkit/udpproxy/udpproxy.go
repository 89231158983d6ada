// Package udpproxy is a UDP forwarder for tests, between one client and a
// server on loopback, that the test cuts and rebinds as a router would.
// Apart from internal/testkit so that the server's own tests can use it.
package udpproxy

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards UDP datagrams between one client and a server on
// loopback, as a router would: the tests cut it (Block), rebind its
// outer port (Rebind, a NAT that forgot the mapping) and read what went
// through (Packets). The first address that sends to it is the client.
type Proxy struct {
	ln     *net.UDPConn // what the client sends to
	target *net.UDPAddr

	mu      sync.Mutex
	client  *net.UDPAddr
	up      *net.UDPConn // toward the server; replaced by Rebind
	packets []Packet
	keep    int // packets recorded at most

	blocked atomic.Bool
	closed  atomic.Bool
	wg      sync.WaitGroup
}

// Packet is one datagram that went through the proxy.
type Packet struct {
	ToServer bool
	Size     int
	Head     [5]byte // its first bytes (a QUIC long header's form, type and version)
}

// StartProxy forwards to target until the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	ta, err := net.ResolveUDPAddr("udp", target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: ta, keep: 64}
	if err := p.rebind(); err != nil {
		_ = ln.Close()
		t.Fatal(err)
	}
	p.wg.Add(1)
	go p.fromClient()
	t.Cleanup(p.Close)
	return p
}

// Addr is the address the client dials.
func (p *Proxy) Addr() string { return p.ln.LocalAddr().String() }

// Block drops every datagram both ways while on, as a router that stopped
// passing UDP.
func (p *Proxy) Block(on bool) { p.blocked.Store(on) }

// Rebind moves the proxy's outer side to a new port: the server sees the
// client's datagrams come from a new address, as after a NAT rebinding.
func (p *Proxy) Rebind() error { return p.rebind() }

// Packets returns the first datagrams that went through, in order.
func (p *Proxy) Packets() []Packet {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Packet(nil), p.packets...)
}

// Close stops the proxy.
func (p *Proxy) Close() {
	if p.closed.Swap(true) {
		return
	}
	_ = p.ln.Close()
	p.mu.Lock()
	up := p.up
	p.mu.Unlock()
	_ = up.Close()
	p.wg.Wait()
}

func (p *Proxy) rebind() error {
	up, err := net.DialUDP("udp", nil, p.target)
	if err != nil {
		return err
	}
	p.mu.Lock()
	old := p.up
	p.up = up
	p.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	p.wg.Add(1)
	go p.fromServer(up)
	return nil
}

func (p *Proxy) note(toServer bool, b []byte) {
	p.mu.Lock()
	if len(p.packets) < p.keep {
		pk := Packet{ToServer: toServer, Size: len(b)}
		copy(pk.Head[:], b)
		p.packets = append(p.packets, pk)
	}
	p.mu.Unlock()
}

func (p *Proxy) fromClient() {
	defer p.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := p.ln.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if p.blocked.Load() || n == 0 {
			continue
		}
		p.mu.Lock()
		if p.client == nil {
			p.client = from
		}
		up := p.up
		p.mu.Unlock()
		p.note(true, buf[:n])
		if _, err := up.Write(buf[:n]); err != nil && !errors.Is(err, net.ErrClosed) {
			continue
		}
	}
}

func (p *Proxy) fromServer(up *net.UDPConn) {
	defer p.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, err := up.Read(buf)
		if err != nil {
			return
		}
		p.mu.Lock()
		client := p.client
		p.mu.Unlock()
		if p.blocked.Load() || client == nil || n == 0 {
			continue
		}
		p.note(false, buf[:n])
		_, _ = p.ln.WriteToUDP(buf[:n], client)
	}
}
