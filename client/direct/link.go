package direct

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/datachannel"
	"github.com/pion/dtls/v3"
	dtlsnet "github.com/pion/dtls/v3/pkg/net"
	"github.com/pion/ice/v4"
	"github.com/pion/sctp"
)

// The link's layers, as a WebRTC data channel has them without the SDP
// and media parts: ICE finds a path (host, server-reflexive and relay
// candidates), DTLS secures it and authenticates the peer by the
// fingerprint it signalled, SCTP carries one data channel over it.
const (
	// channelLabel names the one data channel of a link.
	channelLabel = "nearzero-states"
	// channelID is its SCTP stream: even, as the DTLS client's are (RFC
	// 8832); the controlling side (the offerer) is the client.
	channelID = 0
	// readBuffer is the largest message a read takes; a peer sending a
	// larger one (pion's limit is 64 KiB too) is dropped as garbage.
	readBuffer = 64 << 10
)

// errOvertaken indicates that the attempt ended while a step was under
// way: a newer one, a close or a failure took over.
var errOvertaken = errors.New("direct: attempt overtaken")

// attempt is one try at a link with a peer, and the link once up: the
// context its blocking steps give up on, and what to close when it ends.
type attempt struct {
	ctx    context.Context
	cancel context.CancelFunc
	start  time.Duration // when it began (Config.Now)
	// offered: the initiator's offer went out; answered: an answer was
	// taken (only one is). Both under the Mesh's mu.
	offered, answered bool
	// taken counts the peer's candidates taken, by kind (admit); under the
	// Mesh's mu.
	taken [kinds]int

	mu       sync.Mutex
	closed   bool
	agent    *ice.Agent
	pending  []ice.Candidate // trickled candidates that came before the agent (taken: at most MaxCandidates)
	closers  []func() error  // closed last first
	sctpInit []byte          // our SCTP INIT chunk, as our signal carried it
}

// hold registers f to close the attempt's part it closes. When the attempt
// has already ended it calls f at once and reports false: the caller
// stops there.
func (a *attempt) hold(f func() error) bool {
	a.mu.Lock()
	if !a.closed {
		a.closers = append(a.closers, f)
		a.mu.Unlock()
		return true
	}
	a.mu.Unlock()
	_ = f()
	return false
}

// close ends the attempt: its context, then its parts, the last made
// first. Call it in a goroutine of its own: pion's closes wait.
func (a *attempt) close() {
	a.cancel()
	a.mu.Lock()
	a.closed = true
	cs := a.closers
	a.closers = nil
	a.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		_ = cs[i]()
	}
}

// setAgent records the attempt's ICE agent and returns the candidates
// trickled before it, or reports false when the attempt has ended (the
// agent is then closed).
func (a *attempt) setAgent(agent *ice.Agent) ([]ice.Candidate, bool) {
	if !a.hold(agent.GracefulClose) {
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.agent = agent
	p := a.pending
	a.pending = nil
	return p, true
}

// addCandidate adds a trickled candidate, taken (Mesh.takeRemote), to the
// agent, or keeps it until the agent exists.
func (a *attempt) addCandidate(c ice.Candidate, log *slog.Logger) {
	a.mu.Lock()
	agent := a.agent
	if agent == nil {
		if !a.closed {
			a.pending = append(a.pending, c)
		}
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	addCandidates(agent, []ice.Candidate{c}, log)
}

// addCandidates adds remote candidates, taken (Mesh.takeRemote), to
// agent; one that the agent refuses is skipped (it is just not used).
func addCandidates(agent *ice.Agent, cs []ice.Candidate, log *slog.Logger) {
	for _, c := range cs {
		if err := agent.AddRemoteCandidate(c); err != nil {
			log.Debug("direct: remote candidate skipped", "candidate", c.String(), "err", err)
		}
	}
}

// Timers of a link's layers, set for a game: a link should be up within
// a few round trips of the offer, on a lossy path too.
const (
	// checkInterval is how often ICE checks the candidate pairs while
	// looking for a path (pion's default is 200 ms).
	checkInterval = 50 * time.Millisecond
	// maxChecks is how many checks a pair gets without an answer before
	// it fails: 2 s of them, so a pair whose first checks meet a NAT that
	// has not opened yet (the peer's checks open it) still succeeds.
	maxChecks = 40
	// relayWait is how long the controlling side waits before it takes a
	// pair through a TURN relay, so that a direct pair found soon after
	// wins; a direct pair (host, server- or peer-reflexive) is taken as
	// soon as it works (pion waits 0.5 to 2 s).
	relayWait = 300 * time.Millisecond
	// flightInterval is DTLS's first retransmission of a lost handshake
	// flight (pion's default is 1 s; it doubles on each retry).
	flightInterval = 250 * time.Millisecond
	// channelLifetime is how long SCTP may keep trying to deliver a
	// message on the data channel: timed partial reliability. A state
	// older than this is of no use, but a message must never be given up
	// while it may still be on its way: SCTP announces a given-up message
	// (FORWARD-TSN), and an announcement that overtakes the message on a
	// jittery path makes the receiver discard it when it comes.
	channelLifetime = 150 * time.Millisecond
)

// newAgent makes attempt gen's ICE agent with slot. Its candidates are
// trickled to the peer as they are gathered, after the offer or answer
// (queued first by the caller's order: gathering starts in gather).
func (m *Mesh) newAgent(slot int, gen uint64, att *attempt) (*ice.Agent, error) {
	m.mu.Lock()
	urls, shareHost := m.urls, m.shareHost
	m.mu.Unlock()
	// Host candidates go as mDNS names unless the player shares its
	// addresses; a peer's names are resolved either way (the LAN case:
	// two players on one network whose STUN and TURN are out of reach).
	mdns := ice.MulticastDNSModeQueryAndGather
	if shareHost {
		mdns = ice.MulticastDNSModeQueryOnly
	}
	opts := []ice.AgentOption{
		ice.WithUrls(urls),
		ice.WithLoggerFactory(m.logf),
		ice.WithNetworkTypes([]ice.NetworkType{ice.NetworkTypeUDP4, ice.NetworkTypeUDP6}),
		ice.WithMulticastDNSMode(mdns),
		ice.WithCheckInterval(checkInterval),
		ice.WithMaxBindingRequests(maxChecks),
		ice.WithHostAcceptanceMinWait(0),
		ice.WithSrflxAcceptanceMinWait(0),
		ice.WithPrflxAcceptanceMinWait(0),
		ice.WithRelayAcceptanceMinWait(relayWait),
	}
	if m.cfg.LoopbackCandidates && shareHost {
		opts = append(opts, ice.WithIncludeLoopback())
	}
	if m.cfg.RelayOnly {
		opts = append(opts, ice.WithCandidateTypes([]ice.CandidateType{ice.CandidateTypeRelay}))
	}
	opts = append(opts, m.cfg.ICEOptions...)
	agent, err := ice.NewAgentWithOptions(opts...)
	if err != nil {
		return nil, fmt.Errorf("direct: ice agent: %w", err)
	}
	if err := agent.OnConnectionStateChange(func(st ice.ConnectionState) {
		defer m.recoverIn(slot, "ice state")
		// Closed is not news: the agent closes when we end the attempt,
		// or when DTLS closes over it, whose step then reports why.
		if st == ice.ConnectionStateFailed {
			m.lost(slot, gen, "ice "+st.String())
		}
	}); err != nil {
		_ = agent.Close()
		return nil, fmt.Errorf("direct: ice agent: %w", err)
	}
	if err := agent.OnCandidate(func(c ice.Candidate) {
		defer m.recoverIn(slot, "ice candidate")
		if c != nil { // nil: gathering is complete (the peer needs no word of it)
			m.queueCandidate(slot, gen, c)
		}
	}); err != nil {
		_ = agent.Close()
		return nil, fmt.Errorf("direct: ice agent: %w", err)
	}
	pending, ok := att.setAgent(agent)
	if !ok {
		return nil, errOvertaken
	}
	addCandidates(agent, pending, m.cfg.Log)
	return agent, nil
}

// describe returns what our offer or answer carries: the agent's ICE
// credentials, our certificate's fingerprint and the SCTP association's
// opening (SNAP: the INIT chunk, so the association needs no handshake
// of its own). The candidates follow as "candidate" signals.
func (m *Mesh) describe(att *attempt, agent *ice.Agent) (*signalData, error) {
	ufrag, pwd, err := agent.GetLocalUserCredentials()
	if err != nil {
		return nil, fmt.Errorf("direct: credentials: %w", err)
	}
	init, err := sctp.GenerateOutOfBandToken()
	if err != nil {
		return nil, fmt.Errorf("direct: sctp init: %w", err)
	}
	att.mu.Lock()
	att.sctpInit = init
	att.mu.Unlock()
	return &signalData{V: SignalVersion, Ufrag: ufrag, Pwd: pwd, FP: m.fp, SCTP: init}, nil
}

// gather starts gathering agent's candidates; each goes to the peer as it
// comes (newAgent's handler). Gathering goes on while the ICE checks run:
// a pair of host candidates on a LAN links while an unreachable STUN or
// TURN server is still being tried.
func gather(agent *ice.Agent) error {
	if err := agent.GatherCandidates(); err != nil {
		return fmt.Errorf("direct: gather: %w", err)
	}
	return nil
}

// offer is the initiator's first step of attempt gen with slot: it sends
// the offer, then trickles its candidates; takeAnswer goes on.
func (m *Mesh) offer(slot int, gen uint64, att *attempt) {
	agent, err := m.newAgent(slot, gen, att)
	if err != nil {
		m.attemptFailed(slot, gen, "ice agent", err)
		return
	}
	d, err := m.describe(att, agent)
	if err != nil {
		m.attemptFailed(slot, gen, "offer", err)
		return
	}
	if !m.queueDescription(slot, gen, att, KindOffer, d) {
		return
	}
	if err := gather(agent); err != nil {
		m.attemptFailed(slot, gen, "gather", err)
	}
}

// takeAnswer goes on with the initiator's attempt gen once slot answered.
func (m *Mesh) takeAnswer(slot int, gen uint64, att *attempt, data string) {
	d, fp, err := decodeSignal(data)
	if err != nil {
		m.attemptFailed(slot, gen, "decode answer", err)
		return
	}
	att.mu.Lock()
	agent := att.agent
	att.mu.Unlock()
	if agent == nil { // not possible once offered; cheap to check
		m.attemptFailed(slot, gen, "decode answer", errOvertaken)
		return
	}
	m.connect(slot, gen, att, agent, &d, m.takeRemote(slot, gen, d.Cands), fp, true)
}

// answer answers slot's offer as attempt gen, then connects while its
// candidates trickle.
func (m *Mesh) answer(slot int, gen uint64, att *attempt, data string) {
	d, fp, err := decodeSignal(data)
	if err != nil {
		m.attemptFailed(slot, gen, "decode offer", err)
		return
	}
	agent, err := m.newAgent(slot, gen, att)
	if err != nil {
		m.attemptFailed(slot, gen, "ice agent", err)
		return
	}
	local, err := m.describe(att, agent)
	if err != nil {
		m.attemptFailed(slot, gen, "answer", err)
		return
	}
	if !m.queueDescription(slot, gen, att, KindAnswer, local) {
		return
	}
	if err := gather(agent); err != nil {
		m.attemptFailed(slot, gen, "gather", err)
		return
	}
	m.connect(slot, gen, att, agent, &d, m.takeRemote(slot, gen, d.Cands), fp, false)
}

// connect runs attempt gen with slot from the ICE checks (to cands, the
// candidates its offer or answer listed, and those trickled) to the open
// data channel, then reads it until it closes. The controlling side (the
// offerer) is the DTLS client. The SCTP association opens from the INIT
// chunks the signals carried (SNAP) and the data channel is negotiated
// (both sides make stream channelID with the same settings), so no
// handshake runs after DTLS's.
func (m *Mesh) connect(slot int, gen uint64, att *attempt, agent *ice.Agent, remote *signalData, cands []ice.Candidate,
	fp []byte, controlling bool) {
	addCandidates(agent, cands, m.cfg.Log)
	var conn *ice.Conn
	var err error
	if controlling {
		conn, err = agent.Dial(att.ctx, remote.Ufrag, remote.Pwd)
	} else {
		conn, err = agent.Accept(att.ctx, remote.Ufrag, remote.Pwd)
	}
	if err != nil {
		m.attemptFailed(slot, gen, "ice", err)
		return
	}
	pair := pairOf(agent)
	m.cfg.Log.Debug("direct: ice connected", "slot", slot, "pair", pair.local+"/"+pair.remote, "rtt", pair.rtt, "after", m.cfg.Now()-att.start)
	sec, err := m.secure(att, conn, fp, controlling)
	if err != nil {
		m.attemptFailed(slot, gen, "dtls", err)
		return
	}
	m.cfg.Log.Debug("direct: dtls up", "slot", slot, "after", m.cfg.Now()-att.start)
	att.mu.Lock()
	init := att.sctpInit
	att.mu.Unlock()
	assoc, err := sctp.ClientContext(att.ctx, sctp.WithNetConn(sec), sctp.WithLoggerFactory(m.logf),
		sctp.WithSNAP(init, remote.SCTP))
	if err != nil {
		m.attemptFailed(slot, gen, "sctp", err)
		return
	}
	if !att.hold(assoc.Close) {
		return
	}
	dc, err := m.channel(assoc)
	if err != nil {
		m.attemptFailed(slot, gen, "data channel", err)
		return
	}
	if !att.hold(dc.Close) {
		return
	}
	m.opened(slot, gen, dc, pair)
	m.readLoop(slot, gen, dc)
}

// channel makes the link's one data channel on assoc, negotiated (no open
// message: the peer makes the same one): unordered, with timed partial
// reliability (channelLifetime).
func (m *Mesh) channel(assoc *sctp.Association) (*datachannel.DataChannel, error) {
	stream, err := assoc.OpenStream(channelID, sctp.PayloadTypeWebRTCBinary)
	if err != nil {
		return nil, fmt.Errorf("direct: data channel: %w", err)
	}
	ms := uint32(channelLifetime / time.Millisecond)
	// pion's negotiated channels leave the stream's reliability to the
	// caller (it is set when the open message is acknowledged otherwise).
	stream.SetReliabilityParams(true, sctp.ReliabilityTypeTimed, ms)
	dc, err := datachannel.Client(stream, &datachannel.Config{
		ChannelType:          datachannel.ChannelTypePartialReliableTimedUnordered,
		ReliabilityParameter: ms,
		Negotiated:           true,
		Label:                channelLabel,
		LoggerFactory:        m.logf,
	})
	if err != nil {
		return nil, fmt.Errorf("direct: data channel: %w", err)
	}
	return dc, nil
}

// pairInfo is what the link knows of the ICE pair it was opened over.
type pairInfo struct {
	local, remote string        // candidate types: "host", "srflx", "prflx", "relay"
	rtt           time.Duration // ICE's latest round trip on it, 0 if none
}

// pairOf returns the types of agent's selected candidate pair, "?" where
// none is selected, and the round trip ICE's checks measured on it.
func pairOf(agent *ice.Agent) pairInfo {
	info := pairInfo{local: "?", remote: "?"}
	if p, err := agent.GetSelectedCandidatePair(); err == nil && p != nil {
		info.local, info.remote = p.Local.Type().String(), p.Remote.Type().String()
	}
	if st, ok := agent.GetSelectedCandidatePairStats(); ok && st.CurrentRoundTripTime > 0 {
		info.rtt = time.Duration(st.CurrentRoundTripTime * float64(time.Second))
	}
	return info
}

// secure runs the DTLS handshake over conn: the client's side when client.
// Each side presents its Mesh's certificate and accepts only a peer
// certificate whose hash is fp, the one the peer signalled.
func (m *Mesh) secure(att *attempt, conn *ice.Conn, fp []byte, client bool) (*dtls.Conn, error) {
	var mismatch atomic.Bool // the check refused the peer's certificate
	check := verifyFingerprint(fp)
	shared := []dtls.Option{
		dtls.WithCertificates(m.cert),
		// No certificate authority vouches for a peer's self-signed
		// certificate: the fingerprint check is the verification.
		dtls.WithInsecureSkipVerify(true),
		dtls.WithVerifyPeerCertificate(func(raw [][]byte, chains [][]*x509.Certificate) error {
			err := check(raw, chains)
			mismatch.Store(err != nil)
			return err
		}),
		dtls.WithExtendedMasterSecret(dtls.RequireExtendedMasterSecret),
		dtls.WithFlightInterval(flightInterval),
		dtls.WithLoggerFactory(m.logf),
	}
	pc := dtlsnet.PacketConnFromConn(conn)
	var sec *dtls.Conn
	var err error
	if client {
		opts := make([]dtls.ClientOption, 0, len(shared))
		for _, o := range shared {
			opts = append(opts, o)
		}
		sec, err = dtls.ClientWithOptions(pc, conn.RemoteAddr(), opts...)
	} else {
		opts := make([]dtls.ServerOption, 0, len(shared)+2)
		for _, o := range shared {
			opts = append(opts, o)
		}
		opts = append(opts, dtls.WithClientAuth(dtls.RequireAnyClientCert),
			// The cookie exchange proves that the client receives at its
			// address; ICE's checks, signed with the credentials the
			// peer signalled, proved it already. Skipping it saves a
			// round trip.
			dtls.WithInsecureSkipVerifyHello(true))
		sec, err = dtls.ServerWithOptions(pc, conn.RemoteAddr(), opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("direct: dtls: %w", err)
	}
	if !att.hold(sec.Close) {
		return nil, errOvertaken
	}
	if err := sec.HandshakeContext(att.ctx); err != nil {
		if mismatch.Load() { // pion reports the alert; say why
			return nil, fmt.Errorf("direct: dtls handshake: %w: %w", errFingerprint, err)
		}
		return nil, fmt.Errorf("direct: dtls handshake: %w", err)
	}
	// The handshake ran the check; checked again here because the link's
	// authentication rests on it alone.
	st, ok := sec.ConnectionState()
	if !ok {
		return nil, errors.New("direct: dtls: no connection state after the handshake")
	}
	if err := check(st.PeerCertificates, nil); err != nil {
		return nil, err
	}
	return sec, nil
}

// readLoop reads dc until it closes; each message goes to arrived.
func (m *Mesh) readLoop(slot int, gen uint64, dc *datachannel.DataChannel) {
	buf := make([]byte, readBuffer)
	for {
		n, isString, err := dc.ReadDataChannel(buf)
		switch {
		case errors.Is(err, io.ErrShortBuffer):
			m.mu.Lock()
			if p := m.peers[slot]; p != nil && p.gen == gen && !m.closed {
				m.dropLocked(p, fmt.Sprintf("garbage: a message over %d bytes", readBuffer))
			}
			m.mu.Unlock()
			return
		case err != nil:
			m.lost(slot, gen, fmt.Sprintf("data channel closed: %v", err))
			return
		}
		m.arrived(slot, gen, buf[:n], isString)
	}
}
