package room

import (
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Peer is a seated player's connection as the room sees it. The server's
// WebSocket connection implements it; MemPeer is an in-memory one for tests
// and the bench.
//
// Both methods are called with the room's lock held (on the room's own
// goroutine in the bench): they must not block and must not call back into
// the Room.
type Peer interface {
	// Send queues one binary message. reliable marks control frames, which
	// must arrive in order; unreliable ones are state frames, which may be
	// dropped (oldest first) when the peer falls behind. The room reuses
	// frame after Send returns: copy it to keep it.
	Send(frame []byte, reliable bool)
	// Close ends the connection with code and reason after the reliable
	// frames already queued. The room has already taken the seat away.
	Close(code protocol.Code, reason string)
}

// Frame is one binary message a MemPeer received.
type Frame struct {
	Data     []byte
	Reliable bool
}

// MemPeer is an in-memory Peer that records what it receives. It is not
// safe for concurrent use; the bench and tests drive a room from one
// goroutine.
type MemPeer struct {
	// Frames holds every frame sent, oldest first, until Take.
	Frames []Frame
	// Closed is set by Close, with its code and reason.
	Closed      bool
	CloseCode   protocol.Code
	CloseReason string
}

// Send implements Peer; it copies frame.
func (p *MemPeer) Send(frame []byte, reliable bool) {
	p.Frames = append(p.Frames, Frame{Data: append([]byte(nil), frame...), Reliable: reliable})
}

// Close implements Peer.
func (p *MemPeer) Close(code protocol.Code, reason string) {
	p.Closed, p.CloseCode, p.CloseReason = true, code, reason
}

// Take returns the frames received since the last Take and forgets them.
func (p *MemPeer) Take() []Frame {
	f := p.Frames
	p.Frames = nil
	return f
}

// Messages decodes the control frames among fs, in order; undecodable ones
// are skipped.
func Messages(fs []Frame) []protocol.Message {
	var out []protocol.Message
	for _, f := range fs {
		if m, err := protocol.Decode(f.Data); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// States decodes the state frames among fs (each message may hold several).
func States(fs []Frame) []wire.State {
	var out []wire.State
	for _, f := range fs {
		rest := f.Data
		for len(rest) > 0 {
			frame, r, ok := protocol.NextState(rest)
			if !ok {
				break
			}
			var s wire.State
			if wire.DecodeState(frame, &s) == nil {
				out = append(out, s)
			}
			rest = r
		}
	}
	return out
}

// CountPeer is a Peer that only counts what it receives (for benchmarks).
type CountPeer struct {
	States, Controls int
	Bytes            int
	Closed           bool
}

// Send implements Peer.
func (p *CountPeer) Send(frame []byte, reliable bool) {
	if reliable {
		p.Controls++
	} else {
		p.States++
	}
	p.Bytes += len(frame)
}

// Close implements Peer.
func (p *CountPeer) Close(protocol.Code, string) { p.Closed = true }
