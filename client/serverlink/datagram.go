package serverlink

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/nearzero/nearzero/netcode/datagram"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// The datagram path (netcode/datagram; docs/protocol.md, "Datagram path"):
// when the welcome offers it, each session dials a QUIC connection beside
// its WebSocket, binds it with the offer's token and, while the path is
// up, sends its states, clock-sync pings and probe echoes over it as
// datagrams, and takes what the server sends over it. Everything else
// stays on the WebSocket, which carries the states again within
// datagram.DeadAfter once the path stops answering. A path that cannot be
// dialled (UDP blocked) is tried again with back-off for the session's
// life; meanwhile nothing changes for the game.

// Back-off between attempts to dial the datagram path.
const (
	datagramRetryMin = time.Second
	datagramRetryMax = 30 * time.Second
)

// datagramTick is how often a link checks whether a keepalive is due.
const datagramTick = datagram.KeepaliveEvery / 2

// datagramHold is how often QUIC pings an idle datagram path (outside a
// room, where no keepalives go): the connection and the routers' mappings
// stay, a packet every few seconds.
const datagramHold = 5 * time.Second

// datagramQueue is how many datagrams may wait for a link's sender.
const datagramQueue = 32

// errRefused indicates a binding the server refused (the token is used
// or unknown): the session stays on the WebSocket.
var errRefused = errors.New("serverlink: datagram binding refused")

// dgLink is one session's bound QUIC connection.
type dgLink struct {
	c     *Conn
	qc    *quic.Conn
	tr    *quic.Transport // its own, on its own socket
	udp   net.PacketConn
	start time.Time // the origin of the path's times: the path runs on real time, whatever Options.Clock is
	out   chan *[]byte

	mu    sync.Mutex // guards path and wasUp
	path  datagram.Path
	wasUp bool
}

// datagramBufs recycles outgoing datagram buffers.
var datagramBufs = sync.Pool{New: func() any { b := make([]byte, 0, datagram.MaxPayload); return &b }}

func (l *dgLink) now() time.Duration { return time.Since(l.start) }

// up reports whether states go over the path now (never while the game
// turned the path off: SetDatagrams).
func (l *dgLink) up() bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.path.Up(now) && !l.c.dgOff.Load()
}

// push hands b to the sender without blocking; false when its queue is full.
func (l *dgLink) push(b []byte) bool {
	p := datagramBufs.Get().(*[]byte)
	*p = append((*p)[:0], b...)
	select {
	case l.out <- p:
		return true
	default:
		datagramBufs.Put(p)
		return false
	}
}

// send sends msg (a batch of states, or a ping or echo) split into
// datagrams and reports whether it went (false: the path is down).
func (l *dgLink) send(msg []byte) bool {
	now := l.now()
	l.mu.Lock()
	if !l.path.Up(now) || l.c.dgOff.Load() {
		l.mu.Unlock()
		return false
	}
	l.path.Sent(now)
	l.mu.Unlock()
	if wire.KindOf(msg) == wire.KindControl {
		l.push(msg)
		return true
	}
	for rest := msg; len(rest) > 0; {
		var head []byte
		head, rest = datagram.Split(rest, datagram.MaxPayload)
		l.push(head)
	}
	return true
}

// sender writes queued datagrams: QUIC's SendDatagram may block while its
// own queue is full, which must not hold up the session's writer.
func (l *dgLink) sender() {
	done := l.qc.Context().Done()
	for {
		select {
		case <-done:
			return
		case p := <-l.out:
			if l.qc.SendDatagram(*p) == nil { // lost like any datagram when it fails
				l.c.bytesOut.Add(int64(len(*p)))
			}
			datagramBufs.Put(p)
		}
	}
}

// DatagramUp reports whether the datagram path is up: the states go over
// it (false while on the WebSocket, and when the server offers none or
// Options.NoDatagrams is set).
func (c *Conn) DatagramUp() bool {
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s == nil {
		return false
	}
	l := s.dg.Load()
	return l != nil && l.up()
}

// SetDatagrams turns the datagram path on or off, at once: off sends
// every state by the WebSocket (the server is told, and does the same
// within a keepalive), on takes the path again when it answers (dialling
// it if it never was). Options.NoDatagrams is its setting at Dial.
func (c *Conn) SetDatagrams(on bool) {
	c.dgOff.Store(!on)
	if on {
		c.mu.Lock()
		if s := c.sess; s != nil && s.dgStop == nil {
			c.startDatagramsLocked(s)
		}
		c.mu.Unlock()
	}
}

// startDatagramsLocked starts s's datagram path when the welcome offered
// one (with c.mu held); stopDatagrams, run as s ends, waits for it.
func (c *Conn) startDatagramsLocked(s *session) {
	o := c.welcome.Datagram
	if c.dgOff.Load() || o == nil || c.isClosed() || s.dgEnded {
		return
	}
	host := o.Host
	if host == "" {
		host = urlHost(c.url)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(o.Port))
	if c.opts.DatagramAddr != "" {
		addr = c.opts.DatagramAddr
	}
	ctx, cancel := context.WithCancel(c.life)
	s.dgStop, s.dgDone = cancel, make(chan struct{})
	go c.runDatagrams(ctx, s, *o, addr)
}

// stopDatagrams ends s's datagram path, and any start after it (s
// ended), and waits until it is gone.
func (c *Conn) stopDatagrams(s *session) {
	c.mu.Lock()
	s.dgEnded = true
	stop, done := s.dgStop, s.dgDone
	c.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// urlHost returns the host of a WebSocket URL (no port, no brackets).
func urlHost(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return raw
}

// runDatagrams dials and binds the datagram path, keeps it while it
// lives, and dials again with back-off when it ends, until ctx ends (the
// session did) or the server refuses the binding.
func (c *Conn) runDatagrams(ctx context.Context, s *session, o protocol.DatagramOffer, addr string) {
	defer close(s.dgDone)
	defer func() {
		if err := c.recovered("datagram path", recover()); err != nil {
			c.log.Error("datagram path stopped", "err", err)
		}
	}()
	var tok datagram.Token
	hash, err1 := hex.DecodeString(o.CertSHA256)
	raw, err2 := hex.DecodeString(o.Token)
	if err1 != nil || err2 != nil || len(hash) != sha256.Size || len(raw) != datagram.TokenSize {
		c.log.Warn("the server's datagram offer does not read; states stay on the WebSocket")
		return
	}
	copy(tok[:], raw)
	wait := datagramRetryMin
	for ctx.Err() == nil {
		l, next, err := c.bindDatagram(ctx, addr, hash, tok)
		switch {
		case err == nil:
			tok = next
			wait = datagramRetryMin
			c.mu.Lock()
			c.stats.DatagramBinds++
			c.mu.Unlock()
			c.log.Debug("datagram path bound", "addr", addr)
			s.dg.Store(l)
			c.runLink(ctx, l)
			s.dg.CompareAndSwap(l, nil)
		case errors.Is(err, errRefused):
			c.log.Info("the server refused the datagram binding; states stay on the WebSocket", "err", err)
			return
		default:
			c.log.Debug("datagram path not reached; states stay on the WebSocket", "addr", addr, "err", err, "retry_in", wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, datagramRetryMax)
	}
}

// bindDatagram dials addr, accepts the certificate of SHA-256 hash and no
// other, and binds the connection with tok; it returns the link and the
// token of the next binding.
func (c *Conn) bindDatagram(ctx context.Context, addr string, hash []byte, tok datagram.Token) (*dgLink, datagram.Token, error) {
	var next datagram.Token
	ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	tlsConf := &tls.Config{
		// The certificate is checked against the hash the server gave over
		// the WebSocket (as WebTransport's serverCertificateHashes), not
		// against a CA: a LAN or hosted game's self-signed one needs none.
		InsecureSkipVerify: true, //nolint:gosec // VerifyPeerCertificate checks the pinned hash
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("no certificate")
			}
			if sum := sha256.Sum256(raw[0]); !bytes.Equal(sum[:], hash) {
				return errors.New("certificate does not match the hash the server offered")
			}
			return nil
		},
		NextProtos: []string{datagram.ALPN},
		MinVersion: tls.VersionTLS13,
	}
	raddr, err := resolveUDP(ctx, addr)
	if err != nil {
		return nil, next, err
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, next, fmt.Errorf("datagram path: %w", err)
	}
	tr := &quic.Transport{Conn: quietUDP{udp}}
	qc, err := tr.Dial(ctx, raddr, tlsConf, c.quicConfig())
	if err != nil {
		_ = tr.Close()
		_ = udp.Close()
		return nil, next, fmt.Errorf("dial %s: %w", addr, err)
	}
	fail := func(err error) (*dgLink, datagram.Token, error) {
		_ = qc.CloseWithError(datagram.CloseNormal, "")
		_ = tr.Close()
		_ = udp.Close()
		var ae *quic.ApplicationError
		if errors.As(err, &ae) && ae.ErrorCode == datagram.CloseRefused {
			return nil, next, fmt.Errorf("%w: %s", errRefused, ae.ErrorMessage)
		}
		return nil, next, fmt.Errorf("bind: %w", err)
	}
	st, err := qc.OpenStreamSync(ctx)
	if err != nil {
		return fail(err)
	}
	if d, ok := ctx.Deadline(); ok {
		_ = st.SetDeadline(d)
	}
	if _, err := st.Write(datagram.AppendBind(nil, tok)); err != nil {
		return fail(err)
	}
	var ans [datagram.BindSize]byte
	if _, err := io.ReadFull(st, ans[:]); err != nil {
		return fail(err)
	}
	if next, err = datagram.ParseBound(ans[:]); err != nil {
		return fail(err)
	}
	_ = st.Close()
	l := &dgLink{c: c, qc: qc, tr: tr, udp: udp, start: time.Now(), out: make(chan *[]byte, datagramQueue)}
	l.path.Bound(l.now())
	l.wasUp = true
	return l, next, nil
}

// quicConfig is the client's QUIC configuration. The token store keeps
// the server's address-validation tokens, so that dialling again skips
// the Retry.
func (c *Conn) quicConfig() *quic.Config {
	c.mu.Lock()
	if c.quicTokens == nil {
		c.quicTokens = quic.NewLRUTokenStore(4, 4)
	}
	ts := c.quicTokens
	c.mu.Unlock()
	return &quic.Config{
		EnableDatagrams:         true,
		DisablePathMTUDiscovery: true, // datagrams fit the smallest packets: no probes needed
		HandshakeIdleTimeout:    c.opts.DialTimeout,
		MaxIdleTimeout:          10 * time.Second,
		KeepAlivePeriod:         datagramHold,
		MaxIncomingStreams:      -1,
		MaxIncomingUniStreams:   -1,
		TokenStore:              ts,
	}
}

// runLink serves a bound link until its connection or ctx ends: the
// reader here, the sender and the keepalive beside it.
func (c *Conn) runLink(ctx context.Context, l *dgLink) {
	stop := context.AfterFunc(ctx, func() { _ = l.qc.CloseWithError(datagram.CloseNormal, "bye") })
	defer stop()
	var wg sync.WaitGroup
	wg.Go(l.sender)
	wg.Go(func() { c.keepalive(l) })
	c.readDatagrams(l)
	_ = l.qc.CloseWithError(datagram.CloseNormal, "")
	wg.Wait()
	_ = l.tr.Close()
	_ = l.udp.Close()
}

// resolveUDP resolves host:port within ctx.
func resolveUDP(ctx context.Context, addr string) (*net.UDPAddr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("datagram path: %w", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("datagram path: port %q: %w", port, err)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("datagram path: resolve %s: %w", host, err)
	}
	ip := ips[0]
	for _, a := range ips { // IPv4 first: the WebSocket most likely went that way
		if a.Is4() || a.Is4In6() {
			ip = a
			break
		}
	}
	return net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip.Unmap(), uint16(p))), nil
}

// quietUDP is the datagram path's socket as quic-go sees it: without its
// SyscallConn, quic-go neither batches reads and writes (a game's few
// hundred datagrams a second need none) nor tries to grow the socket's
// buffers to 7 MB, which unprivileged it cannot, and then prints a
// warning to the game's console.
type quietUDP struct{ net.PacketConn }

// SetReadBuffer and SetWriteBuffer take what the system allows.
func (q quietUDP) SetReadBuffer(int) error  { return nil }
func (q quietUDP) SetWriteBuffer(int) error { return nil }

// keepalive sends a keepalive whenever the link was silent for
// datagram.KeepaliveEvery, and counts the link's switches.
func (c *Conn) keepalive(l *dgLink) {
	t := time.NewTicker(datagramTick)
	defer t.Stop()
	done := l.qc.Context().Done()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		c.mu.Lock()
		inRoom := c.code != ""
		c.mu.Unlock()
		now := l.now()
		l.mu.Lock()
		up := l.path.Up(now)
		changed := up != l.wasUp && inRoom // outside a room the path rests: no switch to count
		l.wasUp = up
		// Outside a room nothing needs the path: QUIC's own keepalive
		// (quicConfig) holds it and the router's mapping, at no cost.
		due := inRoom && l.path.KeepaliveDue(now)
		// Turned off, this end says it hears nothing: the server then
		// sends by the WebSocket too.
		hear := l.path.Hears(now) && !c.dgOff.Load()
		if due {
			l.path.Sent(now)
		}
		l.mu.Unlock()
		if changed {
			c.mu.Lock()
			if up {
				c.stats.DatagramResumes++
			} else {
				c.stats.DatagramFallbacks++
			}
			c.mu.Unlock()
			c.log.Debug("datagram path", "up", up)
		}
		if due {
			k := datagram.Keepalive(hear)
			l.push(k[:])
		}
	}
}

// readDatagrams takes the link's datagrams until its connection ends:
// states and pongs go where the WebSocket's go (the lag simulator, then
// process).
func (c *Conn) readDatagrams(l *dgLink) {
	ctx := l.qc.Context()
	for {
		b, err := l.qc.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		c.bytesIn.Add(int64(len(b)))
		now := l.now()
		if hear, ok := datagram.ParseKeepalive(b); ok {
			l.mu.Lock()
			l.path.Heard(now, hear)
			l.mu.Unlock()
			continue
		}
		switch wire.KindOf(b) {
		case wire.KindState3D, wire.KindState2D:
			c.mu.Lock()
			c.stats.StatesReceivedDatagram += int64(datagram.Count(b))
			c.mu.Unlock()
		case wire.KindControl:
			if !datagram.Control(b) {
				continue // the server sends nothing else this way
			}
		default:
			continue
		}
		l.mu.Lock()
		l.path.Heard(now, true)
		l.mu.Unlock()
		if c.lagIn.active() {
			c.lagIn.pushDatagram(b) // b is ours: ReceiveDatagram hands a new slice each time
			continue
		}
		c.process(b, c.clock.Now())
	}
}

// sendDatagramMsg queues a ping or an echo for the path states take: the
// datagram path while it is up, else the WebSocket.
func (c *Conn) sendDatagramMsg(m protocol.Message) error {
	b, err := protocol.Marshal(m)
	if err != nil {
		return fmt.Errorf("serverlink: %w", err)
	}
	if c.lagOut.active() {
		if c.DatagramUp() {
			c.lagOut.pushDatagram(b) // may be lost, as a datagram may (enqueueDelayed)
		} else {
			c.lagOut.push(b, false)
		}
		return nil
	}
	return c.sendControlDatagram(b)
}

// sendControlDatagram sends a ping or echo frame over the datagram path
// when it is up, else queues it on the WebSocket.
func (c *Conn) sendControlDatagram(b []byte) error {
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s != nil {
		if l := s.dg.Load(); l != nil && l.send(b) {
			return nil
		}
	}
	return c.enqueue(b)
}
