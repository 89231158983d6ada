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
	"github.com/pion/ice/v4"
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
	// Ignored counts peers' candidates not taken: unusable (loopback,
	// link-local, multicast...) or over Config.MaxCandidates.
	Ignored uint64
	// OffersIgnored counts offers not answered: over Config.OfferRate.
	OffersIgnored uint64
}

// LinkStats are one link's figures, for a player debugging a bad link.
type LinkStats struct {
	// Open reports whether the link is up.
	Open bool
	// Local and Remote are the types of the selected ICE candidate pair
	// while the link is up: "host" (a local address), "srflx" (the
	// address a NAT maps it to, learnt from STUN), "prflx" (such an
	// address learnt from the peer's checks) or "relay" (a TURN relay).
	// A pair with a relay goes through the TURN server; host and srflx
	// pairs go straight between the two players.
	Local, Remote string
	// RTT is the latest round trip measured by a ping on the link; 0
	// before the first. Offset is the local clock minus the peer's, as
	// its stamps are mapped onto ours.
	RTT, Offset time.Duration
	// Since is when the link came up (on Config.Now's clock), and Took
	// how long it took: from its attempt's start (the offer, or the
	// offer's arrival) to the open channel.
	Since, Took time.Duration
	// Sent is the states sent on the link since it came up; Received the
	// states received and queued, Early those received before its first
	// round trip (dropped: the server path carried them).
	Sent, Received, Early uint64
	// Attempts is how many attempts at the link were made, Failed how
	// many failed or were lost.
	Attempts, Failed uint64
	// Ignored is how many of the peer's candidates were not taken, and
	// OffersIgnored how many of its offers were not answered (Stats).
	Ignored, OffersIgnored uint64
	// BytesIn and BytesOut count the link's messages (states and pings)
	// each way since it came up.
	BytesIn, BytesOut int64
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
	offers  ratelimit.Bucket // offers answered, at OfferRate up to OfferBurst
	warned  bool             // an ignored offer was logged as a warning
	bad     int
	stats   LinkStats // Open, Local, Remote, RTT and Offset are filled in by LinkStats
}

// Mesh is one player's direct links to the other players of a room. Make
// it with New; see the package documentation for its threads.
type Mesh struct {
	cfg    Config
	cert   tls.Certificate       // ours for DTLS, one per Mesh
	fp     string                // its fingerprint, as signals carry it
	logf   logging.LoggerFactory // pion's logs: discarded
	life   context.Context
	cancel context.CancelFunc
	group  realtime.Group // the goroutines Wait waits for

	mu        sync.Mutex
	urls      []*stun.URI // the STUN and TURN servers (SetICEServers)
	shareHost bool        // Config.ShareHostCandidates (SetShareHostCandidates)
	self      int
	peers     map[int]*peer
	states    []State
	signals   []protocol.Signal
	stats     Stats
	closed    bool
	lag       *lagRunner
	lagCfg    lagsim.Config // the lag simulator's settings (SetLag)
	outq      []outMsg      // to send once mu is released (the lag line may send at once)
	flushq    []outMsg      // flushOut's buffer
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
		cfg: cfg, urls: urls, shareHost: cfg.ShareHostCandidates, cert: cert, fp: fingerprint(cert.Certificate[0]),
		logf: &logging.DefaultLoggerFactory{Writer: io.Discard, DefaultLogLevel: logging.LogLevelDisabled},
		self: -1, peers: map[int]*peer{}, lagCfg: cfg.Lag,
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

// LinkStats returns the figures of the link to slot; ok is false when
// slot is not a peer.
func (m *Mesh) LinkStats(slot int) (LinkStats, bool) {
	now := m.cfg.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	if p == nil {
		return LinkStats{}, false
	}
	st := p.stats
	st.Open = p.open
	if !p.open {
		st.Local, st.Remote = "", ""
	}
	st.RTT, st.Offset = p.core.RTT(), p.core.Offset(now)
	return st, true
}

// SetLag implements Links. A change restarts the open links' clock
// mapping (as a new link's): the round trips measured before it are the
// old setting's, and the smallest would hold for a minute.
func (m *Mesh) SetLag(cfg lagsim.Config) error {
	if err := m.lag.setConfig(cfg); err != nil {
		return fmt.Errorf("direct: set lag: %w", err)
	}
	defer m.flushOut()
	m.mu.Lock()
	defer m.mu.Unlock()
	if cfg == m.lagCfg {
		return nil
	}
	m.lagCfg = cfg
	now := m.cfg.Now()
	for _, p := range m.peers {
		if p.open {
			p.core.Open(now)
			m.ping(p, now)
		}
	}
	return nil
}

// SetICEServers replaces the STUN and TURN servers (a new seat's fresh
// TURN credentials); attempts from now on use them.
func (m *Mesh) SetICEServers(servers []protocol.ICEServer) error {
	urls, err := iceURLs(servers)
	if err != nil {
		return fmt.Errorf("direct: ICE servers: %w", err)
	}
	m.mu.Lock()
	m.urls = urls
	m.mu.Unlock()
	return nil
}

// SetShareHostCandidates turns Config.ShareHostCandidates on or off for
// attempts from now on.
func (m *Mesh) SetShareHostCandidates(on bool) {
	m.mu.Lock()
	m.shareHost = on
	m.mu.Unlock()
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
			m.peers[s] = &peer{slot: s, core: cp, offers: ratelimit.Full(m.cfg.Now(), m.cfg.OfferBurst)}
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
	p.stats.Failed++
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
	att := &attempt{ctx: ctx, cancel: cancel, start: now}
	p.att, p.dialing, p.started = att, true, now
	p.stats.Attempts++
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
	p := m.peers[slot]
	if p == nil || p.gen != gen || m.closed {
		return false
	}
	m.queueSignal(protocol.Signal{To: slot, From: m.self, Kind: kind, Data: data})
	m.cfg.Log.Debug("direct: description out", "slot", slot, "kind", kind, "after", m.cfg.Now()-p.started)
	if kind == KindOffer {
		att.offered = true
	}
	return true
}

// queueCandidate queues one of our candidates for slot as a "candidate"
// signal, if attempt gen is still current and localCandidate lets it go
// (its offer or answer went out: candidates come only after it).
func (m *Mesh) queueCandidate(slot int, gen uint64, c ice.Candidate) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	if p == nil || p.gen != gen || m.closed {
		return
	}
	raw, err := localCandidate(c, m.shareHost, m.cfg.LoopbackCandidates && m.shareHost)
	if err != nil {
		m.cfg.Log.Debug("direct: candidate not sent", "slot", slot, "cand", c.String(), "err", err)
		return
	}
	m.queueSignal(protocol.Signal{To: slot, From: m.self, Kind: KindCandidate, Data: raw})
	m.cfg.Log.Debug("direct: candidate out", "slot", slot, "cand", raw, "after", m.cfg.Now()-p.started)
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

// opened marks attempt gen with slot up on dc, over the ICE pair pair.
func (m *Mesh) opened(slot int, gen uint64, dc *datachannel.DataChannel, pair pairInfo) {
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
	// ICE's checks measured a round trip on this very path: states are
	// placed in time from the first one on, until the first pong replaces
	// it. ICE measures beneath the lag simulator, ours or the peer's: kept,
	// the smallest round trip would take the simulated latency for a clock
	// offset and draw every state that much too new (a character one
	// latency behind, TestGodotCharacter). Under our own simulator the
	// states wait for the pong.
	if !m.lagCfg.On() {
		p.core.ObserveInterimRTT(pair.rtt, now)
	}
	m.stats.Opened++
	p.stats.Local, p.stats.Remote, p.stats.Since, p.stats.Took = pair.local, pair.remote, now, now-p.started
	p.stats.Sent, p.stats.Received, p.stats.Early, p.stats.BytesIn, p.stats.BytesOut = 0, 0, 0, 0, 0
	m.cfg.Log.Info("direct: link up", "slot", slot, "pair", pair.local+"/"+pair.remote, "after", now-p.started)
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
	p.stats.BytesIn += int64(len(data))
	switch core.KindOf(data) {
	case core.KindPing:
		m.outq = append(m.outq, outMsg{slot, p.core.AppendPong(make([]byte, 0, core.PongLen), data)})
		return
	case core.KindPong:
		p.core.Pong(data, now)
		return
	}
	var st State
	if err := p.core.State(data, now, &st); err != nil {
		if errors.Is(err, core.ErrNoRoundTrip) {
			m.stats.Early++ // the server path still carries it
			p.stats.Early++
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
	p.stats.Received++
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
	defer m.mu.Unlock()
	if state {
		m.stats.Sent++
	}
	if p := m.peers[slot]; p != nil && p.dc == dc {
		p.stats.BytesOut += int64(len(data))
		if state {
			p.stats.Sent++
		}
	}
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
		if !p.offers.Take(m.cfg.Now(), m.cfg.OfferRate, m.cfg.OfferBurst) {
			m.stats.OffersIgnored++
			p.stats.OffersIgnored++
			log := m.cfg.Log.Debug
			if !p.warned {
				p.warned, log = true, m.cfg.Log.Warn
			}
			log("direct: offer ignored: the peer offers too often", "slot", s.From, "rate", m.cfg.OfferRate, "burst", m.cfg.OfferBurst)
			return
		}
		m.cfg.Log.Debug("direct: offer in", "slot", s.From)
		m.closePeer(p)
		p.gen++
		att, gen := m.newAttempt(p, m.cfg.Now())
		m.goSafe(p.slot, "answer", func() { m.answer(from, gen, att, data) })
	case s.Kind == KindAnswer && s.From > m.self && p.att != nil && p.att.offered && !p.att.answered:
		m.cfg.Log.Debug("direct: answer in", "slot", s.From, "after", m.cfg.Now()-p.started)
		att, gen := p.att, p.gen
		att.answered = true
		m.goSafe(p.slot, "answer", func() { m.takeAnswer(from, gen, att, data) })
	case s.Kind == KindCandidate && p.att != nil:
		m.cfg.Log.Debug("direct: candidate in", "slot", s.From, "cand", s.Data, "after", m.cfg.Now()-p.started)
		c, ok := m.takeRemoteLocked(p, s.Data)
		if !ok {
			return
		}
		att := p.att
		m.goSafe(p.slot, "candidate", func() { att.addCandidate(c, m.cfg.Log) })
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
