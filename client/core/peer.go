package core

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/wire"
)

// The direct-link ping, the one format: PingByte, then 'p' (ping) or 'P'
// (pong), then the pinger's clock in microseconds, int64 little-endian; a
// pong adds the ponger's lowest gap of the pinger's states
// (clock.Restamper.LowGap) in microseconds, int64 little-endian, or
// math.MinInt64 before it has one. Its first byte has the top two bits
// set like a control frame's, so it never parses as a state.
const (
	PingByte = 0xC1
	PingLen  = 10
	PongLen  = PingLen + 8
)

// noGap is a pong's gap field before the ponger has one.
const noGap = math.MinInt64

// DefaultPingInterval is how often a direct link measures its round trip
// once warmed up (the first WarmPings go four times as often).
const DefaultPingInterval = time.Second

// WarmPings is the number of pings sent at a quarter of the interval when
// a link comes up, so the round trip is known quickly.
const WarmPings = 8

// Settle is how long after a link comes up its re-stamping takes each
// better estimate at once instead of sliding to it
// (clock.Restamper.SettleUntil): the estimate tightens fast at first.
const Settle = 2 * time.Second

// ErrNoRoundTrip is State's error for a state that arrived before the
// link's first round trip: it decoded, but its sample time is not known
// yet. Not the peer's fault; the state is for dropping, not for counting
// as garbage (the server path still carries it then).
var ErrNoRoundTrip = errors.New("core: direct state before the link's first round trip")

// Kind is what a message on a direct link is.
type Kind uint8

// Message kinds on a direct link.
const (
	KindGarbage Kind = iota // none of the others
	KindState               // a state frame
	KindPing                // a ping, to answer
	KindPong                // the answer to one of our pings
)

// KindOf says what a message on a direct link is, from its bytes alone.
func KindOf(data []byte) Kind {
	switch wire.KindOf(data) {
	case wire.KindState3D, wire.KindState2D:
		return KindState
	}
	switch {
	case len(data) == PingLen && data[0] == PingByte && data[1] == 'p':
		return KindPing
	case len(data) == PongLen && data[0] == PingByte && data[1] == 'P':
		return KindPong
	}
	return KindGarbage
}

// Peer is one direct link's logic: when to ping, the answers, and the
// re-stamping of the peer's stamps onto the local clock (clock.Restamper,
// fed with the link's round trip). The socket is the caller's.
type Peer struct {
	rs     *clock.Restamper
	every  time.Duration
	pings  int
	pingAt time.Duration
	rtt    time.Duration // the latest round trip
	// interim: the round trips so far were measured beneath the link
	// (ObserveInterimRTT); the first pong replaces them.
	interim bool
}

// NewPeer returns a Peer re-stamping with cfg (zero fields: defaults) and
// pinging every every (zero: DefaultPingInterval).
func NewPeer(cfg *clock.RestampConfig, every time.Duration) (*Peer, error) {
	rs, err := clock.NewRestamper(cfg)
	if err != nil {
		return nil, fmt.Errorf("core.NewPeer: %w", err)
	}
	if every <= 0 {
		every = DefaultPingInterval
	}
	return &Peer{rs: rs, every: every}, nil
}

// Open starts a new link at now: the round trips and gaps start over and
// a ping is due at once.
func (p *Peer) Open(now time.Duration) {
	p.rs.Reset()
	p.rs.SettleUntil(now + Settle)
	p.pings, p.pingAt, p.rtt, p.interim = 0, now, 0, false
}

// ObserveInterimRTT feeds a round trip measured at now beneath the link
// (ICE's checks): states are placed in time with it until the first pong,
// which replaces it. It must not stay: a lag simulator on either side
// delays pings and states but not ICE's checks, and the smallest round
// trip would hold, taking the simulated latency for a clock offset.
func (p *Peer) ObserveInterimRTT(rtt, now time.Duration) {
	p.ObserveRTT(rtt, now)
	p.interim = true
}

// RTT returns the latest round trip measured, 0 before the first.
func (p *Peer) RTT() time.Duration { return p.rtt }

// PingDue reports whether a ping is due at now.
func (p *Peer) PingDue(now time.Duration) bool { return now >= p.pingAt }

// AppendPing appends a ping sent at now to dst and schedules the next.
func (p *Peer) AppendPing(dst []byte, now time.Duration) []byte {
	every := p.every
	if p.pings < WarmPings {
		every /= 4
	}
	p.pings++
	p.pingAt = now + every
	dst = append(dst, PingByte, 'p')
	return binary.LittleEndian.AppendUint64(dst, uint64(now/time.Microsecond))
}

// AppendPong appends the answer to ping (KindPing) to dst: the ping
// echoed, marked as a pong, with our lowest gap of the peer's states (the
// peer's re-stamping takes it with its own: clock.Restamper's
// ObservePeerGap). It answers at once, on arrival, so the round trip
// holds no wait on our side.
func (p *Peer) AppendPong(dst, ping []byte) []byte {
	n := len(dst)
	dst = append(dst, ping[:PingLen]...)
	dst[n+1] = 'P'
	gap := int64(noGap)
	if g, ok := p.rs.LowGap(); ok {
		gap = int64(g / time.Microsecond)
	}
	return binary.LittleEndian.AppendUint64(dst, uint64(gap))
}

// RTTOf returns the round trip a pong (KindPong) arrived at now measures,
// and false for an implausible one (not positive, or a minute or more).
func RTTOf(pong []byte, now time.Duration) (time.Duration, bool) {
	sent := time.Duration(binary.LittleEndian.Uint64(pong[2:])) * time.Microsecond
	rtt := now - sent
	return rtt, rtt > 0 && rtt < time.Minute
}

// ObserveRTT feeds a round trip measured at now to the re-stamper.
func (p *Peer) ObserveRTT(rtt, now time.Duration) {
	if rtt > 0 {
		p.rtt = rtt
	}
	p.rs.ObserveRTT(rtt, now)
}

// Pong takes a pong (KindPong) arrived at now: its round trip, and the
// peer's lowest gap of our states.
func (p *Peer) Pong(pong []byte, now time.Duration) {
	if rtt, ok := RTTOf(pong, now); ok {
		if p.interim {
			p.interim = false
			p.rs.ForgetRoundTrips()
		}
		p.ObserveRTT(rtt, now)
	}
	if len(pong) < PongLen {
		return
	}
	if gap := int64(binary.LittleEndian.Uint64(pong[PingLen:])); gap != noGap {
		p.rs.ObservePeerGap(time.Duration(gap)*time.Microsecond, now)
	}
}

// Offset returns the re-stamper's offset at now: the local clock minus the
// sender's, as applied to its stamps.
func (p *Peer) Offset(now time.Duration) time.Duration { return p.rs.Offset(now) }

// State decodes a state frame (KindState) arrived at now into rs, with the
// sample time re-stamped onto the local clock. The slot is the caller's
// to set: the link says who sent it, whatever the frame says.
//
// Until the link's first pong the re-stamp lacks half the round trip, and
// a state would be drawn as that much newer than it is (a one-way latency:
// at 5 m/s and 80 ms, 0.4 m off, then a correction when the pong comes).
// Such a state feeds the re-stamper's gaps and is refused with
// ErrNoRoundTrip; the first pong comes a round trip after Open.
func (p *Peer) State(frame []byte, now time.Duration, rs *RemoteState) error {
	if err := wire.DecodeState(frame, &rs.State); err != nil {
		return fmt.Errorf("core: direct state: %w", err)
	}
	rs.Local, rs.Arrival = p.rs.Restamp(rs.State.Stamp, now), now
	if !p.rs.HasRoundTrip() {
		return ErrNoRoundTrip
	}
	return nil
}
