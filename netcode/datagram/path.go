package datagram

import (
	"encoding/binary"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Path is one end's view of the datagram path: what it heard and sent, on
// its own clock. The zero value is a path never heard from (down). It is
// not safe for concurrent use.
type Path struct {
	heard     time.Duration // the last arrival
	peerHears bool          // what the last arrival said of us
	live      bool          // heard at least once
	sent      time.Duration // the last departure
}

// Bound records the binding at now: both ends just heard each other.
func (p *Path) Bound(now time.Duration) {
	p.heard, p.peerHears, p.live, p.sent = now, true, true, now
}

// Heard records a datagram that arrived at at; peerHears is what it says
// of this end (a keepalive's flag; true for a state or a control frame,
// which the other end sends only while it hears this one).
func (p *Path) Heard(at time.Duration, peerHears bool) {
	if !p.live || at >= p.heard {
		p.heard = at
	}
	p.peerHears, p.live = peerHears, true
}

// Hears reports whether the other end was heard within DeadAfter of now.
func (p *Path) Hears(now time.Duration) bool { return p.live && now-p.heard <= DeadAfter }

// Up reports whether states go over the path at now: the other end is
// heard, and hears this one.
func (p *Path) Up(now time.Duration) bool { return p.Hears(now) && p.peerHears }

// Sent records a datagram sent at at.
func (p *Path) Sent(at time.Duration) { p.sent = max(p.sent, at) }

// KeepaliveDue reports whether this end has been silent on the path for
// KeepaliveEvery at now.
func (p *Path) KeepaliveDue(now time.Duration) bool { return now-p.sent >= KeepaliveEvery }

// Silence returns the time since the other end was last heard.
func (p *Path) Silence(now time.Duration) time.Duration { return now - p.heard }

// Reorder drops states that arrive after a newer state of the same entity
// (UDP reorders; TCP did not), so that the receiver sees each entity's
// states in sequence order, as over the WebSocket. The zero value is
// ready; it is not safe for concurrent use.
type Reorder struct {
	last [256]wire.Seq
	has  [256]bool
}

// Keep reports whether frame, one state frame, is newer than every
// earlier state of its entity, and then records it.
func (r *Reorder) Keep(frame []byte) bool {
	if len(frame) < 4 {
		return true // the receiver refuses it as malformed
	}
	e := wire.FrameEntity(frame)
	seq := wire.Seq(binary.LittleEndian.Uint16(frame[2:4]))
	if r.has[e] && !seq.Newer(r.last[e]) {
		return false
	}
	r.last[e], r.has[e] = seq, true
	return true
}

// Filter appends to dst the frames of batch that Keep and returns it with
// the number of frames dropped. A batch that does not split into whole
// frames is appended whole (the receiver refuses it as malformed, as it
// would over the WebSocket).
func (r *Reorder) Filter(dst, batch []byte) ([]byte, int) {
	for rest := batch; len(rest) > 0; {
		var ok bool
		if _, rest, ok = protocol.NextState(rest); !ok {
			return append(dst, batch...), 0
		}
	}
	dropped := 0
	for len(batch) > 0 {
		frame, rest, _ := protocol.NextState(batch)
		if r.Keep(frame) {
			dst = append(dst, frame...)
		} else {
			dropped++
		}
		batch = rest
	}
	return dst, dropped
}

// Reset forgets every entity (a new session).
func (r *Reorder) Reset() { *r = Reorder{} }
