package direct

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/logging"
	"github.com/pion/webrtc/v4"

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
	gen     uint64 // attempt; callbacks of older attempts are ignored
	pc      *webrtc.PeerConnection
	dc      *webrtc.DataChannel
	open    bool
	dialing bool             // an attempt is under way
	started time.Duration    // when the attempt began
	retryAt time.Duration    // the initiator offers again from then
	dropped bool             // misbehaved: no more links until it leaves
	core    *core.Peer       // pings and re-stamping (client/core)
	flood   ratelimit.Bucket // messages, at MaxRate up to MaxBurst
	bad     int
}

// Mesh is one player's direct links to the other players of a room. Make
// it with New; see the package documentation for its threads.
type Mesh struct {
	cfg    Config
	api    *webrtc.API
	rtc    webrtc.Configuration
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
	var se webrtc.SettingEngine
	se.LoggerFactory = &logging.DefaultLoggerFactory{Writer: io.Discard, DefaultLogLevel: logging.LogLevelDisabled}
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled) // a LAN name lookup adds nothing for a game
	// Two game instances on one machine (the usual way to try a game out)
	// must link even without a network; elsewhere the pair just fails.
	se.SetIncludeLoopbackCandidate(true)
	if cfg.Tune != nil {
		cfg.Tune(&se)
	}
	m := &Mesh{cfg: cfg, api: webrtc.NewAPI(webrtc.WithSettingEngine(se)), self: -1, peers: map[int]*peer{}}
	m.rtc = webrtc.Configuration{ICEServers: rtcServers(cfg.ICEServers)}
	if cfg.RelayOnly {
		m.rtc.ICETransportPolicy = webrtc.ICETransportPolicyRelay
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
		case p.dialing || p.pc != nil:
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

// closePeer closes p's connection (in a goroutine: pion's Close waits)
// and forgets its attempt.
func (m *Mesh) closePeer(p *peer) {
	p.gen++
	pc := p.pc
	p.pc, p.dc, p.open, p.dialing = nil, nil, false, false
	if pc != nil {
		m.goSafe(p.slot, "close", func() { _ = pc.Close() })
	}
}

// dial starts an attempt to link with p as the initiator.
func (m *Mesh) dial(p *peer, now time.Duration) {
	p.gen++
	gen, slot := p.gen, p.slot
	p.dialing, p.started = true, now
	m.goSafe(slot, "offer", func() {
		pc, err := m.newPC(slot, gen)
		if err != nil {
			m.attemptFailed(slot, gen, "new peer connection", err)
			return
		}
		ordered, retransmits := false, uint16(0)
		dc, err := pc.CreateDataChannel("nearzero-states", &webrtc.DataChannelInit{Ordered: &ordered, MaxRetransmits: &retransmits})
		if err != nil {
			m.attemptFailed(slot, gen, "create data channel", err)
			return
		}
		m.attachDC(slot, gen, dc)
		offer, err := pc.CreateOffer(nil)
		if err != nil {
			m.attemptFailed(slot, gen, "create offer", err)
			return
		}
		m.describe(slot, gen, pc, offer, KindOffer)
	})
}

// describe sets desc as pc's local description, waits for the candidates
// and queues it as a signal of kind to slot.
func (m *Mesh) describe(slot int, gen uint64, pc *webrtc.PeerConnection, desc webrtc.SessionDescription, kind string) {
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(desc); err != nil {
		m.attemptFailed(slot, gen, "set local description", err)
		return
	}
	select {
	case <-gathered:
	case <-m.life.Done():
		return
	}
	sdp := pc.LocalDescription().SDP
	if len(sdp) > protocol.MaxSignalData {
		m.attemptFailed(slot, gen, kind, fmt.Errorf("%d bytes, over the signal limit %d", len(sdp), protocol.MaxSignalData))
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.peers[slot]; p != nil && p.gen == gen && !m.closed {
		m.queueSignal(protocol.Signal{To: slot, From: m.self, Kind: kind, Data: sdp})
	}
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

// newPC makes a peer connection for attempt gen with slot and attaches it.
func (m *Mesh) newPC(slot int, gen uint64) (*webrtc.PeerConnection, error) {
	pc, err := m.api.NewPeerConnection(m.rtc)
	if err != nil {
		return nil, fmt.Errorf("direct: new peer connection: %w", err)
	}
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		defer m.recoverIn(slot, "connection state")
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed {
			m.lost(slot, gen, "connection "+st.String())
		}
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	if p == nil || p.gen != gen || m.closed {
		go func() { _ = pc.Close() }()
		return nil, fmt.Errorf("direct: attempt with slot %d overtaken", slot)
	}
	p.pc = pc
	return pc, nil
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

// attachDC wires dc, the data channel of attempt gen with slot.
func (m *Mesh) attachDC(slot int, gen uint64, dc *webrtc.DataChannel) {
	dc.OnOpen(func() {
		defer m.recoverIn(slot, "open")
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
	})
	dc.OnClose(func() {
		defer m.recoverIn(slot, "close")
		m.lost(slot, gen, "data channel closed")
	})
	dc.OnMessage(func(msg webrtc.DataChannelMessage) {
		defer m.recoverIn(slot, "message")
		m.arrived(slot, gen, msg.Data, msg.IsString)
	})
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
	if p := m.peers[slot]; p != nil && (p.pc != nil || p.dialing) {
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
	if err := dc.Send(data); err != nil {
		return // the state callbacks report a link that went down
	}
	if state {
		m.mu.Lock()
		m.stats.Sent++
		m.mu.Unlock()
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
	switch {
	case s.Kind == KindOffer && s.From < m.self:
		m.closePeer(p)
		p.gen++
		gen := p.gen
		p.dialing, p.started = true, m.cfg.Now()
		m.goSafe(p.slot, "answer", func() { m.answer(s.From, gen, s.Data) })
	case s.Kind == KindAnswer && s.From > m.self && p.pc != nil:
		pc, gen := p.pc, p.gen
		m.goSafe(p.slot, "answer", func() {
			if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: s.Data}); err != nil {
				m.attemptFailed(s.From, gen, "set answer", err)
			}
		})
	case s.Kind == KindCandidate && p.pc != nil:
		pc := p.pc
		m.goSafe(p.slot, "candidate", func() {
			_ = pc.AddICECandidate(webrtc.ICECandidateInit{Candidate: s.Data}) // a bad one is just not used
		})
	default:
		m.cfg.Log.Info("direct: unexpected signal", "from", s.From, "kind", s.Kind)
	}
}

// answer answers slot's offer as attempt gen.
func (m *Mesh) answer(slot int, gen uint64, sdp string) {
	pc, err := m.newPC(slot, gen)
	if err != nil {
		m.attemptFailed(slot, gen, "new peer connection", err)
		return
	}
	pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		defer m.recoverIn(slot, "data channel")
		m.attachDC(slot, gen, dc)
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: sdp}); err != nil {
		m.attemptFailed(slot, gen, "set offer", err)
		return
	}
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		m.attemptFailed(slot, gen, "create answer", err)
		return
	}
	m.describe(slot, gen, pc, ans, KindAnswer)
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
