package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nearzero/nearzero/netcode/datagram"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/metrics"
	"github.com/nearzero/nearzero/server/room"
)

// The datagram path (netcode/datagram; docs/protocol.md, "Datagram path"):
// a QUIC endpoint on the UDP port of the WebSocket listener. A welcome
// offers it with a one-time token; a QUIC connection that binds with the
// token becomes that WebSocket connection's datagram link (dgLink), and
// from then on the connection's states go out over it while it is up,
// and what arrives on it goes into the same room function the WebSocket
// reader feeds (room.HandleFrame), with the same checks and budgets.

// dgTick is how often the keepalive sweep runs over the bound links.
const dgTick = datagram.KeepaliveEvery / 2

// dgQueue is how many datagrams may wait for one link's sender; past it
// datagrams are dropped (the path is congested or dead: states go by the
// WebSocket once it counts as down).
const dgQueue = 32

// dgBindFailRate and dgBindFailBurst limit failed bindings (unknown
// tokens) per address: past them the address's new QUIC connections are
// refused for a while, so that tokens cannot be guessed quickly (128 bits
// would not be found anyway).
const (
	dgBindFailRate  = 0.5
	dgBindFailBurst = 10
)

// datagrams is the server's datagram endpoint.
type datagrams struct {
	s     *Server
	pc    net.PacketConn
	tr    *quic.Transport
	ln    *quic.Listener
	offer protocol.DatagramOffer // Port, Host and CertSHA256; Token is per connection
	fails *keyLimiter            // failed bindings by address

	mu     sync.Mutex
	tokens map[datagram.Token]*conn
	by     map[string]int // QUIC connections by address key
	n      int            // QUIC connections in all
	links  map[*dgLink]struct{}
	closed bool

	stop chan struct{}
	wg   sync.WaitGroup
}

// startDatagrams opens the datagram endpoint on the UDP port of addr (the
// WebSocket listener's), or on Deps.DatagramConn. A failure is logged and
// leaves the server on the WebSocket alone: clients keep working.
func (s *Server) startDatagrams(addr net.Addr) *datagrams {
	if s.cfg.NoDatagrams {
		if s.dgConn != nil {
			_ = s.dgConn.Close()
		}
		return nil
	}
	pc := s.dgConn
	if pc == nil {
		ta, ok := addr.(*net.TCPAddr)
		if !ok {
			s.log.Warn("datagram path off: the listener is not TCP", "addr", addr.String())
			return nil
		}
		var err error
		if pc, err = net.ListenPacket("udp", ta.String()); err != nil {
			s.log.Warn("datagram path off: cannot open the UDP port", "addr", ta.String(), "err", err)
			return nil
		}
	}
	d, err := newDatagrams(s, pc)
	if err != nil {
		_ = pc.Close()
		s.log.Warn("datagram path off", "err", err)
		return nil
	}
	s.log.Info("datagram path open", "udp", pc.LocalAddr().String(), "cert_sha256", d.offer.CertSHA256)
	return d
}

func newDatagrams(s *Server, pc net.PacketConn) (*datagrams, error) {
	cert := s.dgCert
	if cert == nil {
		c, err := selfSignedCert(s.wall(s.now()))
		if err != nil {
			return nil, err
		}
		cert = &c
	}
	if len(cert.Certificate) == 0 {
		return nil, errors.New("datagram path: the certificate is empty")
	}
	sum := sha256.Sum256(cert.Certificate[0])
	d := &datagrams{s: s, pc: pc, tokens: map[datagram.Token]*conn{}, by: map[string]int{}, links: map[*dgLink]struct{}{},
		fails: newKeyLimiter(dgBindFailRate, dgBindFailBurst), stop: make(chan struct{})}
	d.offer.CertSHA256 = hex.EncodeToString(sum[:])
	if ua, ok := pc.LocalAddr().(*net.UDPAddr); ok {
		d.offer.Port = ua.Port
	}
	if pub := s.cfg.DatagramPublic; pub != "" {
		host, port, _ := net.SplitHostPort(pub) // checked by Validate
		d.offer.Host = host
		if p, err := strconv.Atoi(port); err == nil && p > 0 {
			d.offer.Port = p
		}
	}
	d.tr = &quic.Transport{Conn: pc,
		// Every new address answers a Retry first (RFC 9000 §8.1.2): until
		// its address is validated nobody gets a reply larger than what it
		// sent. A client holding a token from an earlier connection
		// (NEW_TOKEN) skips it.
		VerifySourceAddress: func(net.Addr) bool { return true },
		ConnContext:         d.admit,
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: []string{datagram.ALPN}, MinVersion: tls.VersionTLS13}
	ln, err := d.tr.Listen(tlsConf, serverQUICConfig())
	if err != nil {
		return nil, fmt.Errorf("datagram path: listen: %w", err)
	}
	d.ln = ln
	d.wg.Add(2)
	go d.loop("datagram accept", d.acceptLoop)
	go d.loop("datagram keepalive", d.keepaliveLoop)
	return d, nil
}

// loop runs f until it returns, restarting it after a panic (as
// Server.supervise does for the server's own loops), until the endpoint
// closes.
func (d *datagrams) loop(name string, f func()) {
	defer d.wg.Done()
	for !d.s.runRecovered(name, f) {
		select {
		case <-d.stop:
			return
		case <-time.After(restartPause):
		}
	}
}

// serverQUICConfig is the server's QUIC configuration: datagrams on, one
// stream (the binding), small windows (nothing else travels on streams).
func serverQUICConfig() *quic.Config {
	return &quic.Config{
		EnableDatagrams:                true,
		DisablePathMTUDiscovery:        true, // datagrams fit the smallest packets: no probes needed
		HandshakeIdleTimeout:           datagram.BindTimeout,
		MaxIdleTimeout:                 10 * time.Second,
		MaxIncomingStreams:             1,
		MaxIncomingUniStreams:          -1,
		InitialStreamReceiveWindow:     1 << 10,
		MaxStreamReceiveWindow:         1 << 10,
		InitialConnectionReceiveWindow: 4 << 10,
		MaxConnectionReceiveWindow:     4 << 10,
	}
}

// admit counts a new QUIC connection by its (validated) address, or
// refuses it over the caps: the WebSocket's per-address and total caps,
// counted apart, and the failed bindings of the address.
func (d *datagrams) admit(ctx context.Context, info *quic.ClientInfo) (context.Context, error) {
	s := d.s
	key := ""
	if ap, err := netip.ParseAddrPort(info.RemoteAddr.String()); err == nil {
		key = addrKeyOf(ap.Addr().Unmap())
	}
	if !d.fails.ok(key, s.now()) {
		s.m.Limited(metrics.LimitDatagramBinds)
		return nil, errors.New("too many failed bindings from this address")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closed:
		return nil, ErrClosed
	case s.cfg.MaxConns > 0 && d.n >= s.cfg.MaxConns:
		s.m.Limited(metrics.LimitConns)
		return nil, errors.New("datagram connection cap reached")
	case s.cfg.MaxConnsPerAddr > 0 && d.by[key] >= s.cfg.MaxConnsPerAddr:
		s.m.Limited(metrics.LimitConnsPerAddr)
		return nil, errors.New("too many datagram connections from this address")
	}
	d.n++
	d.by[key]++
	context.AfterFunc(ctx, func() {
		d.mu.Lock()
		d.n--
		if d.by[key]--; d.by[key] <= 0 {
			delete(d.by, key)
		}
		d.mu.Unlock()
	})
	return context.WithValue(ctx, dgKey{}, key), nil
}

// dgKey keys a QUIC connection's address key in its context.
type dgKey struct{}

func (d *datagrams) acceptLoop() {
	for {
		qc, err := d.ln.Accept(context.Background())
		if err != nil {
			return // closed
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			if !d.s.runRecovered("datagram connection", func() { d.serve(qc) }) {
				_ = qc.CloseWithError(datagram.CloseNormal, "internal error")
			}
		}()
	}
}

// serve binds qc to a WebSocket session and reads its datagrams until it
// ends.
func (d *datagrams) serve(qc *quic.Conn) {
	s := d.s
	key, _ := qc.Context().Value(dgKey{}).(string)
	ctx, cancel := context.WithTimeout(qc.Context(), datagram.BindTimeout)
	st, err := qc.AcceptStream(ctx)
	cancel()
	if err != nil {
		_ = qc.CloseWithError(datagram.CloseNoBind, "no binding")
		return
	}
	_ = st.SetDeadline(time.Now().Add(datagram.BindTimeout))
	var req [datagram.BindSize]byte
	_, err = io.ReadFull(st, req[:])
	tok, perr := datagram.ParseBind(req[:])
	if err != nil || perr != nil {
		d.fails.spend(key, s.now())
		_ = qc.CloseWithError(datagram.CloseNoBind, "no binding")
		return
	}
	// The link is whole before bind publishes it: the WebSocket reader
	// takes from its budget from then on (orderWS).
	now := s.now()
	rc := &s.cfg.Room
	rate := or(rc.SendRate, room.DefaultSendRate)*or(rc.RateFactor, room.DefaultRateFactor)*(1+or(rc.Entities.StateShare, room.DefaultStateShare)) +
		dgExtraRate
	cr, cb := or(rc.ControlRate, room.DefaultControlRate), or(rc.ControlBurst, room.DefaultControlBurst)
	l := &dgLink{d: d, qc: qc, out: make(chan *[]byte, dgQueue), rate: rate, burst: rate, ctlRate: cr, ctlBurst: cb,
		bucket: ratelimit.Full(now, rate), ctl: ratelimit.Full(now, cb)}
	l.path.Bound(now)
	c, next, old := d.bind(tok, l)
	if c == nil {
		d.fails.spend(key, s.now())
		s.m.RejectedConn(metrics.ReasonBadToken)
		_ = qc.CloseWithError(datagram.CloseRefused, "unknown binding token")
		return
	}
	if old != nil {
		old.close(datagram.CloseReplaced, "a newer connection bound the session")
	}
	_, err = st.Write(datagram.AppendBound(nil, next))
	_ = st.Close()
	if err != nil {
		d.unbind(l)
		_ = qc.CloseWithError(datagram.CloseNoBind, "binding not answered")
		return
	}
	s.m.DatagramLinks.Inc()
	c.log.Debug("datagram path bound", "udp", qc.RemoteAddr().String())
	d.wg.Add(1)
	go func() { defer d.wg.Done(); l.sender() }()
	l.read()
	s.m.DatagramLinks.Dec()
	d.unbind(l)
	_ = qc.CloseWithError(datagram.CloseNormal, "")
}

// dgExtraRate is what a link may send per second beyond states: the
// keepalives, pings and echoes.
const dgExtraRate = 100

// bind takes tok: the connection it was offered to, which l now serves,
// the token for the session's next binding, and the link l replaces. A
// token unknown or used, or of a connection that ended, returns nil.
func (d *datagrams) bind(tok datagram.Token, l *dgLink) (c *conn, next datagram.Token, old *dgLink) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c = d.tokens[tok]
	if c == nil || d.closed {
		return nil, next, nil
	}
	delete(d.tokens, tok)
	l.c = c
	next = d.newTokenLocked(c)
	old = c.dg.Swap(l)
	d.links[l] = struct{}{}
	return c, next, old
}

// unbind forgets l, and detaches it from its connection unless a newer
// link replaced it.
func (d *datagrams) unbind(l *dgLink) {
	d.mu.Lock()
	delete(d.links, l)
	d.mu.Unlock()
	if l.c != nil {
		l.c.dg.CompareAndSwap(l, nil)
	}
}

// newTokenLocked makes c's next token (d.mu held), forgetting its last.
func (d *datagrams) newTokenLocked(c *conn) datagram.Token {
	var t datagram.Token
	_, _ = rand.Read(t[:]) // never fails (crypto/rand)
	if c.dgTok != (datagram.Token{}) {
		delete(d.tokens, c.dgTok)
	}
	c.dgTok = t
	d.tokens[t] = c
	return t
}

// offerTo returns the offer for c's welcome, with a fresh token; nil when
// the endpoint is closed.
func (d *datagrams) offerTo(c *conn) *protocol.DatagramOffer {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || c.dgGone {
		return nil
	}
	o := d.offer
	t := d.newTokenLocked(c)
	o.Token = hex.EncodeToString(t[:])
	return &o
}

// drop forgets c's token and closes its link: c ended.
func (d *datagrams) drop(c *conn) {
	if d == nil {
		return
	}
	d.mu.Lock()
	if c.dgTok != (datagram.Token{}) {
		delete(d.tokens, c.dgTok)
	}
	c.dgGone = true
	l := c.dg.Swap(nil)
	d.mu.Unlock()
	if l != nil {
		l.close(datagram.CloseSession, "session ended")
	}
}

// keepaliveLoop sends a keepalive on every bound link silent for
// datagram.KeepaliveEvery, and counts the links that went down.
func (d *datagrams) keepaliveLoop() {
	t := time.NewTicker(dgTick)
	defer t.Stop()
	var links []*dgLink
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
		d.mu.Lock()
		links = links[:0]
		for l := range d.links {
			links = append(links, l)
		}
		d.mu.Unlock()
		now := d.s.now()
		for _, l := range links {
			l.tick(now)
		}
	}
}

// close shuts the endpoint: every link ends, the UDP port is freed.
func (d *datagrams) close() {
	if d == nil {
		return
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	clear(d.tokens)
	d.mu.Unlock()
	close(d.stop)
	_ = d.ln.Close()
	_ = d.tr.Close() // closes every QUIC connection and the socket
	_ = d.pc.Close()
	d.wg.Wait()
}

// dgLink is one bound QUIC connection: a WebSocket connection's datagram
// path. The reader (serve) owns reorder and buf; out feeds the sender.
type dgLink struct {
	d  *datagrams
	c  *conn // set once bound
	qc *quic.Conn

	mu     sync.Mutex // guards the fields up to ctl
	path   datagram.Path
	wasUp  bool
	bucket ratelimit.Bucket // every datagram
	over   bool
	ctl    ratelimit.Bucket // pings answered outside a room
	// rate, burst, ctlRate and ctlBurst are read-only.
	rate, burst, ctlRate, ctlBurst float64

	buf     []byte
	out     chan *[]byte
	closing atomic.Bool
}

// dgBufs recycles outgoing datagram buffers.
var dgBufs = sync.Pool{New: func() any { b := make([]byte, 0, datagram.MaxPayload); return &b }}

// push hands b to the sender without blocking; false when its queue is
// full (b dropped).
func (l *dgLink) push(b []byte) bool {
	p := dgBufs.Get().(*[]byte)
	*p = append((*p)[:0], b...)
	select {
	case l.out <- p:
		return true
	default:
		dgBufs.Put(p)
		return false
	}
}

// sender writes queued datagrams; SendDatagram may block while QUIC's own
// queue is full, which must hold up neither the room nor the WebSocket.
func (l *dgLink) sender() {
	done := l.qc.Context().Done()
	for {
		select {
		case <-done:
			return
		case p := <-l.out:
			_ = l.qc.SendDatagram(*p) // lost like any datagram when it fails
			dgBufs.Put(p)
		}
	}
}

// up reports whether states go over the link at now.
func (l *dgLink) up(now time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.path.Up(now)
}

// sendStates sends a batch of states over the link, split into
// datagrams, and reports whether it did (false: the path is down; send
// them over the WebSocket).
func (l *dgLink) sendStates(batch []byte) bool {
	now := l.d.s.now()
	l.mu.Lock()
	if !l.path.Up(now) || l.closing.Load() {
		l.mu.Unlock()
		return false
	}
	l.path.Sent(now)
	l.mu.Unlock()
	m := l.d.s.m
	for rest := batch; len(rest) > 0; {
		var head []byte
		head, rest = datagram.Split(rest, datagram.MaxPayload)
		n := datagram.Count(head)
		if l.push(head) {
			m.DatagramStatesOut.Add(float64(n))
		} else {
			m.DroppedTotal.Add(float64(n))
		}
	}
	return true
}

// sendControl sends a ping's answer over the link; false when it is down.
func (l *dgLink) sendControl(frame []byte) bool {
	now := l.d.s.now()
	l.mu.Lock()
	if !l.path.Up(now) || l.closing.Load() {
		l.mu.Unlock()
		return false
	}
	l.path.Sent(now)
	l.mu.Unlock()
	l.push(frame)
	return true
}

// tick sends a keepalive if one is due and counts a fall back. Outside a
// room none is due: nothing needs the path there, and a server's idle
// sessions cost it no packets (the client's QUIC keepalive holds the
// connection).
func (l *dgLink) tick(now time.Duration) {
	inRoom := l.c.room.Load() != nil
	l.mu.Lock()
	up := l.path.Up(now)
	down := l.wasUp && !up && inRoom
	l.wasUp = up
	due := inRoom && l.path.KeepaliveDue(now)
	hear := l.path.Hears(now)
	if due {
		l.path.Sent(now)
	}
	l.mu.Unlock()
	if down {
		l.d.s.m.DatagramFallbacks.Inc()
		l.c.log.Debug("datagram path down: states by the WebSocket")
	}
	if due {
		k := datagram.Keepalive(hear)
		l.push(k[:])
	}
}

// heard records an arrival.
func (l *dgLink) heard(now time.Duration, peerHears bool) {
	l.mu.Lock()
	l.path.Heard(now, peerHears)
	l.mu.Unlock()
}

// take takes a datagram from the link's budget; a link that keeps over
// it ends its session (4008), as a WebSocket flood of ping frames does.
func (l *dgLink) take(now time.Duration) bool {
	l.mu.Lock()
	ok := l.bucket.Take(now, l.rate, l.burst)
	if !ok {
		l.bucket.Tokens-- // a debt: the flood has to stop to be forgiven
	}
	over := !ok && l.bucket.Tokens < -l.burst && !l.over
	l.over = l.over || over
	l.mu.Unlock()
	if over {
		l.d.s.m.Limited(metrics.LimitDatagrams)
		l.c.closeWith(protocol.CodeRateLimited, fmt.Sprintf("more than %.0f datagrams per second", l.rate))
	}
	return ok
}

// read handles the link's datagrams until the QUIC connection ends.
func (l *dgLink) read() {
	ctx := l.qc.Context()
	for {
		b, err := l.qc.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		l.handle(b)
	}
}

// handle takes one datagram: a keepalive, a batch of states or a ping or
// echo. States and control frames go to the room exactly as they would
// from the WebSocket reader.
func (l *dgLink) handle(b []byte) {
	s, c := l.d.s, l.c
	now := s.now()
	if !l.take(now) {
		return
	}
	c.lastRead.Store(int64(now)) // the session is alive: no idle time-out
	if hear, ok := datagram.ParseKeepalive(b); ok {
		l.heard(now, hear)
		return
	}
	switch wire.KindOf(b) {
	case wire.KindState3D, wire.KindState2D:
		l.heard(now, true)
		if l.buf = c.order.filter(s, l.buf[:0], b); len(l.buf) == 0 {
			return
		}
		h := c.room.Load()
		if h == nil {
			s.m.RejectedConn(metrics.ReasonNotInRoom)
			return
		}
		s.m.DatagramStatesIn.Add(float64(datagram.Count(l.buf)))
		msg := l.buf
		h.do(func(now time.Duration) { h.r.HandleFrame(now, c, msg) })
	case wire.KindControl:
		if len(b) < wire.ControlHeaderSize || (wire.ControlType(b[3]) != protocol.TypePing && wire.ControlType(b[3]) != protocol.TypeEcho) {
			s.m.RejectedConn(metrics.ReasonDatagram)
			return
		}
		l.heard(now, true)
		h := c.room.Load()
		if h == nil {
			l.pongOutside(now, b)
			return
		}
		h.do(func(now time.Duration) {
			// The room's Pong is this ping's: it goes back the way the ping
			// came (conn.Send). A seated connection's Pongs are all sent
			// under the room's lock, so no other one sees the flag (but
			// one the WebSocket reader sends as the connection leaves the
			// room, which would then take this path: harmless).
			c.pongDG.Store(true)
			defer c.pongDG.Store(false)
			h.r.HandleFrame(now, c, b)
		})
	default:
		s.m.RejectedConn(metrics.ReasonDatagram)
	}
}

// dgOrder keeps a session's states in sequence order per entity across
// its two paths: a state that arrives behind a newer one of its entity
// (UDP reorders; a state on the WebSocket may be overtaken by a datagram
// at a switch, or the reverse) is dropped and counted, where the room
// would refuse it as stale and tell the player. Only the sessions with a
// datagram path pass through it: the others are as they always were.
type dgOrder struct {
	mu sync.Mutex
	r  datagram.Reorder
}

// filter appends the frames of batch still in order to dst.
func (o *dgOrder) filter(s *Server, dst, batch []byte) []byte {
	o.mu.Lock()
	dst, dropped := o.r.Filter(dst, batch)
	o.mu.Unlock()
	if dropped > 0 {
		s.m.DatagramReordered.Add(float64(dropped))
	}
	return dst
}

// orderWS passes a message from the WebSocket reader through the
// session's order while a datagram path is bound, and takes it from that
// path's budget (a flood of stale states is cut all the same); other
// messages, and every message of a session without one, go on as they
// are. Reader goroutine only.
func (c *conn) orderWS(now time.Duration, msg []byte) []byte {
	l := c.dg.Load()
	if l == nil || (wire.KindOf(msg) != wire.KindState3D && wire.KindOf(msg) != wire.KindState2D) {
		return msg
	}
	if !l.take(now) {
		return nil
	}
	c.wsBuf = c.order.filter(c.s, c.wsBuf[:0], msg)
	return c.wsBuf
}

// pongOutside answers a ping from a connection in no room, as the
// WebSocket reader does (outside), over the link.
func (l *dgLink) pongOutside(now time.Duration, b []byte) {
	l.mu.Lock()
	ok := l.ctl.Take(now, l.ctlRate, l.ctlBurst)
	l.mu.Unlock()
	if !ok {
		return // the WebSocket reader would refuse it too
	}
	m, err := protocol.Decode(b)
	if err != nil {
		return
	}
	if p, ok := m.(*protocol.Ping); ok {
		if f, err := protocol.Marshal(&protocol.Pong{TUS: p.TUS, ServerUS: protocol.US(now)}); err == nil {
			l.sendControl(f)
		}
	}
}

// close ends the link with code.
func (l *dgLink) close(code quic.ApplicationErrorCode, reason string) {
	l.closing.Store(true)
	_ = l.qc.CloseWithError(code, reason)
}
