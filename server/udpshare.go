package server

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// shareQueue is how many packets may wait for one side of a shared UDP
// socket; more are dropped, as a full socket buffer drops them. The
// reader empties the socket's own buffer at once, so this is the buffer:
// a burst of a few hundred players' states.
const shareQueue = 2048

// quicBit is the bit every QUIC version 1 packet sets in its first byte
// (RFC 9000 §17, "fixed bit") and no STUN message does (a STUN message
// starts with two zero bits, RFC 5389 §6): RFC 9443 tells them apart by
// it.
const quicBit = 0x40

// ShareUDP splits one UDP socket in two: packets with the QUIC bit set go
// to quic (Deps.DatagramConn), the rest (STUN) to other
// (TURNConfig.STUNConn), so the datagram path and the STUN responder serve
// the same port number. Both write through pc. pc closes once both sides
// are closed; a packet for a side that does not read it in time is
// dropped.
func ShareUDP(pc net.PacketConn) (quic, other net.PacketConn) {
	s := &udpShare{pc: pc}
	s.sides[0] = newShareSide(s)
	s.sides[1] = newShareSide(s)
	go s.read()
	return s.sides[0], s.sides[1]
}

type udpShare struct {
	pc    net.PacketConn
	sides [2]*shareSide

	mu     sync.Mutex
	closed int // sides closed
}

type sharedPacket struct {
	b    []byte
	addr net.Addr
}

// read dispatches the socket's packets until it closes.
func (s *udpShare) read() {
	buf := make([]byte, 65536)
	for {
		n, addr, err := s.pc.ReadFrom(buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				for _, sd := range s.sides {
					sd.fail(net.ErrClosed)
				}
				return
			}
			continue // an ICMP error surfacing on the socket, and the like
		}
		if n == 0 {
			continue
		}
		side := s.sides[1]
		if buf[0]&quicBit != 0 {
			side = s.sides[0]
		}
		side.offer(sharedPacket{b: append([]byte(nil), buf[:n]...), addr: addr})
	}
}

// closeSide counts a side closed and closes the socket after the second.
func (s *udpShare) closeSide() error {
	s.mu.Lock()
	s.closed++
	last := s.closed == 2
	s.mu.Unlock()
	if last {
		return s.pc.Close()
	}
	return nil
}

// shareSide is one side of a shared socket, a net.PacketConn.
type shareSide struct {
	s  *udpShare
	in chan sharedPacket

	mu       sync.Mutex
	deadline time.Time
	changed  chan struct{} // closed and replaced when the deadline changes
	err      error         // set once the side or the socket closed
	done     chan struct{} // closed with err
}

func newShareSide(s *udpShare) *shareSide {
	return &shareSide{s: s, in: make(chan sharedPacket, shareQueue), changed: make(chan struct{}), done: make(chan struct{})}
}

func (d *shareSide) offer(p sharedPacket) {
	select {
	case d.in <- p:
	default:
	}
}

func (d *shareSide) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = err
		close(d.done)
	}
}

// ReadFrom implements net.PacketConn, with read deadlines.
func (d *shareSide) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		d.mu.Lock()
		dl, changed, err := d.deadline, d.changed, d.err
		d.mu.Unlock()
		if err != nil {
			return 0, nil, err
		}
		var timer *time.Timer
		var timeout <-chan time.Time
		if !dl.IsZero() {
			wait := time.Until(dl)
			if wait <= 0 {
				return 0, nil, os.ErrDeadlineExceeded
			}
			timer = time.NewTimer(wait)
			timeout = timer.C
		}
		select {
		case p := <-d.in:
			stopTimer(timer)
			return copy(b, p.b), p.addr, nil
		case <-d.done:
		case <-changed:
		case <-timeout:
			return 0, nil, os.ErrDeadlineExceeded
		}
		stopTimer(timer) // the loop looks again: closed, or a new deadline
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// WriteTo implements net.PacketConn: through the shared socket.
func (d *shareSide) WriteTo(b []byte, addr net.Addr) (int, error) {
	d.mu.Lock()
	err := d.err
	d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return d.s.pc.WriteTo(b, addr)
}

// Close closes this side; the socket closes with the second side.
func (d *shareSide) Close() error {
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		return nil
	}
	d.err = net.ErrClosed
	close(d.done)
	d.mu.Unlock()
	return d.s.closeSide()
}

// LocalAddr implements net.PacketConn.
func (d *shareSide) LocalAddr() net.Addr { return d.s.pc.LocalAddr() }

// SetDeadline sets the read deadline (writes do not wait).
func (d *shareSide) SetDeadline(t time.Time) error { return d.SetReadDeadline(t) }

// SetReadDeadline implements net.PacketConn.
func (d *shareSide) SetReadDeadline(t time.Time) error {
	d.mu.Lock()
	d.deadline = t
	close(d.changed)
	d.changed = make(chan struct{})
	d.mu.Unlock()
	return nil
}

// SetWriteDeadline implements net.PacketConn (writes do not wait).
func (d *shareSide) SetWriteDeadline(time.Time) error { return nil }

// SetReadBuffer sets the shared socket's receive buffer, where it has one
// (quic-go raises it, and warns on a socket that cannot).
func (d *shareSide) SetReadBuffer(n int) error {
	if b, ok := d.s.pc.(interface{ SetReadBuffer(int) error }); ok {
		return b.SetReadBuffer(n)
	}
	return nil
}

// SetWriteBuffer sets the shared socket's send buffer, where it has one.
func (d *shareSide) SetWriteBuffer(n int) error {
	if b, ok := d.s.pc.(interface{ SetWriteBuffer(int) error }); ok {
		return b.SetWriteBuffer(n)
	}
	return nil
}
