package direct

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/pion/datachannel"
	"github.com/pion/logging"
	"github.com/pion/stun/v4"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
)

// Signal kinds.
const (
	KindOffer     = "offer"
	KindAnswer    = "answer"
	KindCandidate = "candidate"
)

// State is a state received over a direct link (client/core's
// RemoteState): Slot is the sender's (from the link, whatever the frame
// said), Stamp the sender's own stamp, Local the sample time on the local
// clock (the link's re-stamp), Arrival when it arrived (after the lag
// simulator, if on).
type State = core.RemoteState

// Stats are a Mesh's counters.
type Stats struct {
	Sent     uint64 // states sent, one per link
	Received uint64 // states received and queued
	Early    uint64 // states dropped: they came before the link's first round trip (core.ErrNoRoundTrip)
	Skipped  uint64 // states not sent: the link's buffer was full
	Bad      uint64 // undecodable messages received
	Dropped  uint64 // peers dropped from direct play (garbage, flood, panic)
	Failed   uint64 // attempts that failed or links lost
	Opened   uint64 // links that came up
}

// Links is what a room needs of its direct links; *Mesh is the real one,
// tests fake it. Every method is for the room's one goroutine and never
// blocks.
type Links interface {
	// SetPeers sets our slot and the slots to link with (ours is ignored
	// in peers); links to slots no longer listed are closed.
	SetPeers(self int, peers []int)
	// Signal hands over a signal the server relayed.
	Signal(s *protocol.Signal)
	// Tick runs timers: pings, connect timeouts, retries.
	Tick()
	// Send sends a state frame on every open link.
	Send(frame []byte)
	// Poll appends the states received since the last call to dst.
	Poll(dst []State) []State
	// PollSignals appends the signals to send since the last call to dst.
	PollSignals(dst []protocol.Signal) []protocol.Signal
	// Open reports whether the link to slot is up.
	Open(slot int) bool
	// SetLag changes the lag simulator under the links.
	SetLag(cfg lagsim.Config) error
	// Close closes every link; its goroutines end soon after.
	Close()
}

var _ Links = (*Mesh)(nil)

// peer is the link to one other player.
type peer struct {
	slot    int
	gen     uint64                   // attempt; callbacks of older attempts are ignored
	att     *attempt                 // the attempt under way or the link up; nil when none
	dc      *datachannel.DataChannel // the open channel
	open    bool
	dialing bool             // an attempt is under way
	started time.Duration    // when the attempt began
	retryAt time.Duration    // the initiator offers again from then
	dropped bool             // misbehaved: no more links until it leaves
	core    *core.Peer       // pings and re-stamping (client/core)
	flood   ratelimit.Bucket // messages, at MaxRate up to MaxBurst
	bad     int
	// bytesIn and bytesOut count the link's messages each way (PeerFigures).
	bytesIn, bytesOut int64
}

// Mesh is one player's direct links to the other players of a room. Make
// it with New; see the package documentation for its threads.
type Mesh struct {
	cfg    Config
	urls   []*stun.URI           // the STUN and TURN servers
	cert   tls.Certificate       // ours for DTLS, one per Mesh
	fp     string                // its fingerprint, as signals carry it
	logf   logging.LoggerFactory // pion's logs: discarded
	life   context.Context
	cancel context.CancelFunc
	group  realtime.Group // the goroutines Wait waits for

	mu      sync.Mutex
	self    int
	peers   map[int]*peer
	states  []State
	signals []protocol.Signal
	stats   Stats
	closed  bool
	lag     *lagRunner
	outq    []outMsg // to send once mu is released (the lag line may send at once)
	flushq  []outMsg // flushOut's buffer
}

// outMsg is a message for one link.
type outMsg struct {
	slot int
	data []byte
}

// New returns a Mesh with no peers.
func New(cfg Config) (*Mesh, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("direct.New: %w", err)
	}
	cfg = cfg.withDefaults()
	urls, err := iceURLs(cfg.ICEServers)
	if err != nil {
		return nil, fmt.Errorf("direct.New: %w", err) // Validate checked it
	}
	cert, err := newCertificate()
	if err != nil {
		return nil, fmt.Errorf("direct.New: %w", err)
	}
	m := &Mesh{
		cfg: cfg, urls: urls, cert: cert, fp: fingerprint(cert.Certificate[0]),
		logf: &logging.DefaultLoggerFactory{Writer: io.Discard, DefaultLogLevel: logging.LogLevelDisabled},
		self: -1, peers: map[int]*peer{},
	}
	m.life, m.cancel = context.WithCancel(context.Background())
	lag, err := newLagRunner(cfg.Lag, cfg.Seed, m.sendNow, m.receive, cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("direct.New: %w", err)
	}
	m.lag = lag
	return m, nil
}

// Stats returns the counters.
func (m *Mesh) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// SetLag implements Links.
func (m *Mesh) SetLag(cfg lagsim.Config) error {
	if err := m.lag.setConfig(cfg); err != nil {
		return fmt.Errorf("direct: set lag: %w", err)
	}
	return nil
}

// Open implements Links.
func (m *Mesh) Open(slot int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	return p != nil && p.open
}

// SetPeers implements Links.
func (m *Mesh) SetPeers(self int, peers []int) {
	defer m.flushOut()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	if self != m.self {
		for _, p := range m.peers {
			m.closePeer(p)
		}
		clear(m.peers)
		m.self = self
	}
	keep := make(map[int]bool, len(peers))
	for _, s := range peers {
		if s == self || s < 0 {
			continue
		}
		keep[s] = true
		if m.peers[s] == nil {
			cp, err := core.NewPeer(&m.cfg.Restamp, m.cfg.PingInterval)
			if err != nil {
				continue // Validate checked it
			}
			m.peers[s] = &peer{slot: s, core: cp}
		}
	}
	for s, p := range m.peers {
		if !keep[s] {
			m.closePeer(p)
			delete(m.peers, s)
		}
	}
	m.tickLocked(m.cfg.Now())
}

// Tick implements Links.
func (m *Mesh) Tick() {
	m.mu.Lock()
	if !m.closed {
		m.tickLocked(m.cfg.Now())
	}
	m.mu.Unlock()
	m.flushOut()
}

// flushOut sends what was queued under mu. Call it without mu held. Two
// goroutines may flush at once (a Tick and a data channel's callback):
// each takes the spare buffer for itself (the other then makes its own),
// so neither writes into the slice the other is sending from.
func (m *Mesh) flushOut() {
	m.mu.Lock()
	q := append(m.flushq[:0], m.outq...)
	m.flushq = nil
	clear(m.outq)
	m.outq = m.outq[:0]
	m.mu.Unlock()
	for i := range q {
		m.lag.out(q[i].slot, q[i].data)
		q[i] = outMsg{}
	}
	m.mu.Lock()
	if m.flushq == nil {
		m.flushq = q[:0]
	}
	m.mu.Unlock()
}

func (m *Mesh) tickLocked(now time.Duration) {
	for _, p := range m.peers {
		switch {
		case p.dropped:
		case p.open:
			if p.core.PingDue(now) {
				m.ping(p, now)
			}
		case p.dialing || p.att != nil:
			if now-p.started > m.cfg.ConnectTimeout {
				m.cfg.Log.Info("direct: link attempt timed out", "slot", p.slot, "after", now-p.started)
				m.fail(p, now)
			}
		case m.self >= 0 && m.self < p.slot && now >= p.retryAt:
			m.dial(p, now)
		}
	}
}

// ping sends a ping on p's open channel.
func (m *Mesh) ping(p *peer, now time.Duration) {
	m.outq = append(m.outq, outMsg{p.slot, p.core.AppendPing(make([]byte, 0, core.PingLen), now)})
}

// fail ends p's attempt or link; the initiator offers again later.
func (m *Mesh) fail(p *peer, now time.Duration) {
	m.stats.Failed++
	m.closePeer(p)
	p.retryAt = now + m.cfg.RetryAfter
}

// closePeer ends p's attempt or link (closing runs in a goroutine: pion's
// closes wait) and forgets it.
func (m *Mesh) closePeer(p *peer) {
	p.gen++
	att := p.att
	p.att, p.dc, p.open, p.dialing = nil, nil, false, false
	if att != nil {
		att.cancel() // at once: a step under way gives up
		m.goSafe(p.slot, "close", att.close)
	}
}

// newAttempt starts p's attempt gen (p.gen already counts it) at now.
func (m *Mesh) newAttempt(p *peer, now time.Duration) (*attempt, uint64) {
	ctx, cancel := context.WithCancel(m.life)
	att := &attempt{ctx: ctx, cancel: cancel}
	p.att, p.dialing, p.started = att, true, now
	return att, p.gen
}

// dial starts an attempt to link with p as the initiator: it offers.
func (m *Mesh) dial(p *peer, now time.Duration) {
	p.gen++
	att, gen := m.newAttempt(p, now)
	slot := p.slot
	m.goSafe(slot, "offer", func() { m.offer(slot, gen, att) })
}

// queueDescription queues d as a signal of kind to slot, if attempt gen
// is still current.
func (m *Mesh) queueDescription(slot int, gen uint64, att *attempt, kind string, d *signalData) bool {
	data, err := encodeSignal(d)
	if err != nil {
		m.attemptFailed(slot, gen, kind, err)
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.peers[slot]; p == nil || p.gen != gen || m.closed {
		return false
	}
	m.queueSignal(protocol.Signal{To: slot, From: m.self, Kind: kind, Data: data})
	if kind == KindOffer {
		att.offered = true
	}
	return true
}

func (m *Mesh) queueSignal(s protocol.Signal) {
	if len(m.signals) >= queueLen {
		return // the room is not polling; a later attempt signals again
	}
	m.signals = append(m.signals, s)
}

// attemptFailed logs why attempt gen with slot failed and ends it.
func (m *Mesh) attemptFailed(slot int, gen uint64, what string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	if p == nil || p.gen != gen || m.closed {
		return
	}
	m.cfg.Log.Info("direct: link attempt failed", "slot", slot, "step", what, "err", err)
	m.fail(p, m.cfg.Now())
}

// lost ends attempt gen with slot, if still current.
func (m *Mesh) lost(slot int, gen uint64, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	if p == nil || p.gen != gen || m.closed {
		return
	}
	m.cfg.Log.Info("direct: link lost", "slot", slot, "why", why)
	m.fail(p, m.cfg.Now())
}

// opened marks attempt gen with slot up on dc.
func (m *Mesh) opened(slot int, gen uint64, dc *datachannel.DataChannel) {
	defer m.flushOut()
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	if p == nil || p.gen != gen || m.closed {
		return
	}
	p.dc, p.open, p.dialing = dc, true, false
	now := m.cfg.Now()
	p.flood, p.bad = ratelimit.Full(now, m.cfg.MaxBurst), 0
	p.core.Open(now) // a new link: its gaps and round trips start over
	m.stats.Opened++
	m.cfg.Log.Info("direct: link up", "slot", slot)
	m.ping(p, now)
}

// arrived takes a message from slot off the data channel: the flood and
// garbage checks, then the lag simulator.
func (m *Mesh) arrived(slot int, gen uint64, data []byte, isString bool) {
	now := m.cfg.Now()
	m.mu.Lock()
	p := m.peers[slot]
	if p == nil || p.gen != gen || !p.open || m.closed {
		m.mu.Unlock()
		return
	}
	if !p.flood.Take(now, m.cfg.MaxRate, m.cfg.MaxBurst) {
		m.dropLocked(p, fmt.Sprintf("flood: over %.0f messages per second", m.cfg.MaxRate))
		m.mu.Unlock()
		return
	}
	if isString || len(data) == 0 || len(data) > MaxMessage || core.KindOf(data) == core.KindGarbage {
		m.badLocked(p, fmt.Sprintf("undecodable message of %d bytes", len(data)))
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	m.lag.in(slot, data)
}

// badLocked counts one bad message from p; too many drop it.
func (m *Mesh) badLocked(p *peer, why string) {
	m.stats.Bad++
	p.bad++
	if p.bad > m.cfg.MaxBad {
		m.dropLocked(p, fmt.Sprintf("garbage: %d bad messages, the last %s", p.bad, why))
	}
}

// Drop drops slot from direct play (no more links until it leaves the
// room); its states come by the server again.
func (m *Mesh) Drop(slot int, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.peers[slot]; p != nil {
		m.dropLocked(p, why)
	}
}

func (m *Mesh) dropLocked(p *peer, why string) {
	if p.dropped {
		return
	}
	m.cfg.Log.Warn("direct: peer dropped from direct play", "slot", p.slot, "why", why)
	m.stats.Dropped++
	p.dropped = true
	m.closePeer(p)
}

// Kill closes the link to slot as if the network had failed: the initiator
// offers again after RetryAfter. For tests and the outage demo.
func (m *Mesh) Kill(slot int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.peers[slot]; p != nil && (p.att != nil || p.dialing) {
		m.fail(p, m.cfg.Now())
	}
}

// receive handles a message from slot after the lag simulator.
func (m *Mesh) receive(slot int, data []byte) {
	now := m.cfg.Now()
	defer m.flushOut()
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	if p == nil || !p.open || m.closed {
		return
	}
	p.bytesIn += int64(len(data))
	switch core.KindOf(data) {
	case core.KindPing:
		m.outq = append(m.outq, outMsg{slot, core.AppendPong(make([]byte, 0, core.PingLen), data)})
		return
	case core.KindPong:
		p.core.Pong(data, now)
		return
	}
	var st State
	if err := p.core.State(data, now, &st); err != nil {
		if errors.Is(err, core.ErrNoRoundTrip) {
			m.stats.Early++ // the server path still carries it
			return
		}
		m.badLocked(p, err.Error())
		return
	}
	st.State.Slot = uint8(slot)
	if len(m.states) >= queueLen {
		copy(m.states, m.states[1:]) // the room is not polling: keep the newest
		m.states = m.states[:len(m.states)-1]
	}
	m.states = append(m.states, st)
	m.stats.Received++
}

// Send implements Links.
func (m *Mesh) Send(frame []byte) {
	m.mu.Lock()
	if !m.closed {
		for _, p := range m.peers {
			if p.open {
				m.outq = append(m.outq, outMsg{p.slot, frame})
			}
		}
	}
	m.mu.Unlock()
	m.flushOut()
}

// sendNow writes data to slot's channel (after the lag simulator).
func (m *Mesh) sendNow(slot int, data []byte) {
	m.mu.Lock()
	p := m.peers[slot]
	if p == nil || !p.open || p.dc == nil || m.closed {
		m.mu.Unlock()
		return
	}
	dc := p.dc
	state := data[0] != core.PingByte
	m.mu.Unlock()
	if dc.BufferedAmount() > maxBuffered {
		m.mu.Lock()
		m.stats.Skipped++
		m.mu.Unlock()
		return
	}
	if _, err := dc.WriteDataChannel(data, false); err != nil {
		return // the read loop and the ICE agent report a link that went down
	}
	m.mu.Lock()
	if state {
		m.stats.Sent++
	}
	if p := m.peers[slot]; p != nil {
		p.bytesOut += int64(len(data))
	}
	m.mu.Unlock()
}

// PeerFigures are one direct link's figures, for the editor's debugger.
type PeerFigures struct {
	Open bool
	// RTT is the last round trip its pings measured (0 before the first);
	// Offset the local clock minus the peer's, as its stamps are mapped.
	RTT, Offset time.Duration
	// BytesIn and BytesOut count its messages' bytes each way.
	BytesIn, BytesOut int64
}

// PeerFigures returns the link to slot's figures; false when there is no
// link to it.
func (m *Mesh) PeerFigures(slot int) (PeerFigures, bool) {
	now := m.cfg.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	if p == nil || p.core == nil {
		return PeerFigures{}, false
	}
	return PeerFigures{Open: p.open, RTT: p.core.RTT(), Offset: p.core.Offset(now), BytesIn: p.bytesIn,
		BytesOut: p.bytesOut}, true
}

// Signal implements Links.
func (m *Mesh) Signal(s *protocol.Signal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[s.From]
	if m.closed || p == nil || p.dropped {
		return
	}
	from, data := s.From, s.Data // s is the caller's once we return
	switch {
	case s.Kind == KindOffer && s.From < m.self:
		m.closePeer(p)
		p.gen++
		att, gen := m.newAttempt(p, m.cfg.Now())
		m.goSafe(p.slot, "answer", func() { m.answer(from, gen, att, data) })
	case s.Kind == KindAnswer && s.From > m.self && p.att != nil && p.att.offered && !p.att.answered:
		att, gen := p.att, p.gen
		att.answered = true
		m.goSafe(p.slot, "answer", func() { m.takeAnswer(from, gen, att, data) })
	case s.Kind == KindCandidate && p.att != nil:
		att := p.att
		m.goSafe(p.slot, "candidate", func() { att.addCandidate(data, m.cfg.Log) })
	default:
		m.cfg.Log.Info("direct: unexpected signal", "from", s.From, "kind", s.Kind)
	}
}

// Poll implements Links.
func (m *Mesh) Poll(dst []State) []State {
	m.mu.Lock()
	defer m.mu.Unlock()
	dst = append(dst, m.states...)
	m.states = m.states[:0]
	return dst
}

// PollSignals implements Links.
func (m *Mesh) PollSignals(dst []protocol.Signal) []protocol.Signal {
	m.mu.Lock()
	defer m.mu.Unlock()
	dst = append(dst, m.signals...)
	clear(m.signals)
	m.signals = m.signals[:0]
	return dst
}

// Close implements Links.
func (m *Mesh) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	for _, p := range m.peers {
		m.closePeer(p)
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.lag.close()
}

// Wait waits up to d for the Mesh's goroutines to end after Close, and
// reports whether they did.
func (m *Mesh) Wait(d time.Duration) bool { return m.group.Wait(d) }

// goSafe runs f in a goroutine counted by Wait; a panic in it is
// recovered, logged, and drops slot.
func (m *Mesh) goSafe(slot int, what string, f func()) {
	m.group.Go(func() {
		defer m.recoverIn(slot, what)
		f()
	})
}

// recoverIn recovers a panic in our code called from pion (or our
// goroutines) for slot: logged, and the peer dropped, never a crash.
func (m *Mesh) recoverIn(slot int, what string) {
	v := recover()
	if v == nil {
		return
	}
	m.cfg.Log.Error("direct: recovered a panic", "slot", slot, "in", what, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.peers[slot]; p != nil {
		m.dropLocked(p, "internal error")
	}
}
