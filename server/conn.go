package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/nearzero/nearzero/netcode/datagram"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/version"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/metrics"
	"github.com/nearzero/nearzero/server/room"
)

// maxBatch is the largest batch of states written as one message.
const maxBatch = 4096

// Hello states of a connection.
const (
	helloWaiting int32 = iota
	helloTaken
	helloLate
)

// conn is one client's WebSocket connection. It implements room.Peer.
//
// The handler goroutine reads and owns the fields marked "reader"; one
// writer goroutine writes; the queues are guarded by qmu.
type conn struct {
	s          *Server
	ws         *websocket.Conn
	id         uint64
	addr       string        // read-only: the client address per-address limits count by
	ice        ICEClient     // read-only: where the client came from, for its ICE servers
	log        *slog.Logger  // read-only after accept
	helloBy    time.Duration // read-only: server time by which Hello must arrive
	helloState atomic.Int32  // helloWaiting, helloTaken (by the reader) or helloLate (by the janitor)

	user, name string           // reader; set by Hello
	minted     time.Duration    // reader: when Hello made the identity (server time); 0 for a token's
	host       *host            // reader: the room this connection sits in
	bucket     ratelimit.Bucket // reader: control rate limit outside rooms
	strikes    int              // reader: refused messages outside rooms
	counted    bool             // reader: counted in the players gauge

	pingMu     sync.Mutex
	pingBucket ratelimit.Bucket // guarded by pingMu: ping and pong frames take from a control budget
	pingOver   bool             // guarded by pingMu: closed for a frame flood
	lastRead   atomic.Int64     // server time the last message arrived (idle time-out)

	qmu     sync.Mutex
	ctl     [][]byte // reliable frames waiting
	ctlSize int      // their bytes
	ring    []byte   // state slots: StateQueue x (1 length byte + MaxStateSize)
	head, n int      // ring start and count
	dropped int      // states dropped since last flushed to metrics
	closing bool
	woken   bool // a Send signalled the writer since it last took the queues
	code    protocol.Code
	reason  string
	wake    chan struct{} // cap 1
	done    chan struct{} // closed when the writer ends
	writeAt atomic.Int64  // server time a write started; 0 when idle
	forced  atomic.Bool   // the janitor cut the connection
	idle    atomic.Bool   // the janitor closed the connection as idle

	// inflight is the bytes of reliable frames the writer has taken and
	// not yet written (ReliableBacklog); written by the writer only.
	inflight atomic.Int64

	// The datagram path (datagram.go): the bound link, the room the
	// reader sits in (host's mirror, for the link's reader), and whether
	// the room is answering a ping that came by datagram.
	dg     atomic.Pointer[dgLink]
	room   atomic.Pointer[host]
	pongDG atomic.Bool
	dgTok  datagram.Token // guarded by Server.dg.mu: the token that binds next
	dgGone bool           // guarded by Server.dg.mu: the connection ended
	order  dgOrder        // both paths' states, in order (datagram.go)
	wsBuf  []byte         // reader: the WebSocket's states, filtered
}

const slotSize = 1 + wire.MaxStateSize

// serveWS is the /ws handler: one connection from accept to cleanup.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	addr := s.clientAddr(r)
	net := prefixKeyOf(addr)
	// Claim a place for the address before the upgrade, so that a flood
	// of idle connections costs the server an HTTP answer each, no more.
	s.mu.Lock()
	if status, limit, why := s.refuseConnLocked(addr, net); status != 0 {
		s.mu.Unlock()
		s.m.Limited(limit)
		s.log.Debug("connection refused", "addr", addr, "limit", limit)
		w.Header().Set("Retry-After", "10")
		w.Header().Set("Connection", "close") // the refused socket goes at once
		http.Error(w, why, status)
		return
	}
	s.connsBy[addr]++
	s.connsIn[net]++
	s.wsConns++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.wsConns--
		if s.connsBy[addr]--; s.connsBy[addr] <= 0 {
			delete(s.connsBy, addr)
		}
		if s.connsIn[net]--; s.connsIn[net] <= 0 {
			delete(s.connsIn, net)
		}
		s.mu.Unlock()
	}()

	var c *conn
	// The library answers pings itself; these hooks run on the reading
	// goroutine before it does, so ping and pong frames can be counted
	// against the same budget as control messages.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.OriginPatterns,
		OnPingReceived: func(context.Context, []byte) bool { return c.controlFrame() },
		OnPongReceived: func(context.Context, []byte) { c.controlFrame() }})
	if err != nil {
		s.log.Debug("websocket accept failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	ws.SetReadLimit(int64(s.cfg.MaxMessage))
	now := s.now()
	remote, _ := s.clientIP(r)
	c = &conn{s: s, ws: ws, id: s.nextConn.Add(1), addr: addr, ice: ICEClient{Host: r.Host, Remote: remote},
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		ring: make([]byte, s.cfg.StateQueue*slotSize), helloBy: now + s.cfg.HelloTimeout}
	c.log = s.log.With("conn", c.id, "remote", r.RemoteAddr)
	c.bucket = ratelimit.Full(now, or(s.cfg.Room.ControlBurst, room.DefaultControlBurst))
	c.pingBucket = ratelimit.Full(now, or(s.cfg.Room.ControlBurst, room.DefaultControlBurst))
	c.lastRead.Store(int64(now))

	s.mu.Lock()
	if s.shut { // Shutdown may be waiting on connWG: do not add to it
		s.mu.Unlock()
		_ = ws.CloseNow()
		return
	}
	s.connWG.Add(1)
	defer s.connWG.Done()
	if s.closingAll {
		s.mu.Unlock()
		s.m.Closed(protocol.CodeGoingAway)
		_ = ws.Close(websocket.StatusCode(protocol.CodeGoingAway), "server updating")
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.m.Connections.Inc()
	defer s.m.Connections.Dec()

	go c.writeLoop()
	err = c.readLoop()
	c.log.Debug("connection ended", "user", c.user, "err", err)
	c.closeWith(protocol.CodeNormal, "")
	select {
	case <-c.done:
	case <-time.After(s.cfg.WriteTimeout):
		_ = ws.CloseNow()
		<-c.done
	}
	_ = ws.CloseNow()
	c.cleanup()
	s.dg.drop(c)
}

// refuseConnLocked says why a WebSocket from addr, on network net, is
// refused before the upgrade (an HTTP status, a metrics.Limit* and a
// message), or status 0 (s.mu held).
func (s *Server) refuseConnLocked(addr, net string) (status int, limit, why string) {
	c := &s.cfg
	reserve := 0
	if c.MaxConns > 0 && c.ConnReserve > 0 {
		reserve = int(float64(c.MaxConns) * c.ConnReserve)
	}
	switch {
	case c.MaxConnsPerAddr > 0 && s.connsBy[addr] >= c.MaxConnsPerAddr:
		return http.StatusTooManyRequests, metrics.LimitConnsPerAddr,
			fmt.Sprintf("more than %d connections from your address", c.MaxConnsPerAddr)
	case c.MaxConnsPerPrefix > 0 && s.connsIn[net] >= c.MaxConnsPerPrefix:
		return http.StatusTooManyRequests, metrics.LimitConnsPerNet,
			fmt.Sprintf("more than %d connections from your network", c.MaxConnsPerPrefix)
	case c.MaxConns > 0 && s.wsConns >= c.MaxConns:
		return http.StatusServiceUnavailable, metrics.LimitConns, "the server is at its connection limit; try again soon"
	case reserve > 0 && s.wsConns >= c.MaxConns-reserve && s.connsBy[addr] >= fewConns:
		// The rest is kept for addresses that hold few: honest players.
		return http.StatusServiceUnavailable, metrics.LimitConnsReserve, "the server is near its connection limit; try again soon"
	}
	return 0, "", ""
}

// cleanup forgets the connection everywhere; the seat is held.
func (c *conn) cleanup() {
	if h := c.host; h != nil {
		h.do(func(now time.Duration) {
			h.r.Disconnect(now, c)
			c.uncount()
		})
		c.uncount()
		c.host = nil
		c.room.Store(nil)
	}
	c.s.mu.Lock()
	delete(c.s.conns, c)
	if c.user != "" && c.s.sessions[c.user] == c {
		delete(c.s.sessions, c.user)
	}
	c.s.mu.Unlock()
	c.qmu.Lock()
	if c.dropped > 0 {
		c.s.m.DroppedTotal.Add(float64(c.dropped))
		c.dropped = 0
	}
	c.qmu.Unlock()
}

// readLoop reads messages until the connection ends.
func (c *conn) readLoop() error {
	buf := make([]byte, c.s.cfg.MaxMessage)
	ctx := context.Background() // no deadline: no timer per read; closes unblock it
	for {
		typ, rd, err := c.ws.Reader(ctx)
		if err != nil {
			return c.readErr(err)
		}
		n, err := readAll(rd, buf)
		if err != nil {
			return c.readErr(err)
		}
		c.lastRead.Store(int64(c.s.now()))
		if typ != websocket.MessageBinary {
			c.s.m.RejectedConn(metrics.ReasonTextFrame)
			c.fail(protocol.Errorf(protocol.CodeBadFrame, "text messages are not part of the protocol; send binary frames"))
			continue
		}
		c.handle(buf[:n])
	}
}

// readAll reads a whole message into buf (the read limit keeps it in).
func readAll(rd io.Reader, buf []byte) (int, error) {
	n := 0
	for {
		if n == len(buf) {
			// At the limit: the library reports a larger message on the next read.
			var one [1]byte
			m, err := rd.Read(one[:])
			if m > 0 {
				return n, websocket.ErrMessageTooBig
			}
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		m, err := rd.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func (c *conn) readErr(err error) error {
	if errors.Is(err, websocket.ErrMessageTooBig) {
		c.s.m.RejectedConn(metrics.ReasonOversized)
		c.closeWith(protocol.CodeTooBig, fmt.Sprintf("message over %d bytes", c.s.cfg.MaxMessage))
	}
	return err
}

// controlFrame takes a token from the connection's frame budget for a
// WebSocket ping or pong and reports whether to answer. Frames are the
// same cost to the server as control messages (a pong written for each
// ping), so they get the control rate; a client that keeps exceeding it
// is closed.
func (c *conn) controlFrame() bool {
	if c == nil {
		return false
	}
	rc := &c.s.cfg.Room
	rate, burst := or(rc.ControlRate, room.DefaultControlRate), or(rc.ControlBurst, room.DefaultControlBurst)
	c.pingMu.Lock()
	ok := c.pingBucket.Take(c.s.now(), rate, burst)
	if !ok {
		c.pingBucket.Tokens-- // a debt: the flood has to stop to be forgiven
	}
	over := !ok && c.pingBucket.Tokens < -burst && !c.pingOver
	c.pingOver = c.pingOver || over
	c.pingMu.Unlock()
	if over {
		c.s.m.Limited(metrics.LimitPingFrames)
		c.closeWith(protocol.CodeRateLimited, fmt.Sprintf("more than %.0f ping frames per second", rate))
	}
	return ok
}

// handle dispatches one message.
func (c *conn) handle(msg []byte) {
	now := c.s.now()
	if c.helloState.Load() == helloWaiting {
		if c.helloState.CompareAndSwap(helloWaiting, helloTaken) {
			c.hello(now, msg)
		}
		return
	}
	if c.user == "" { // no valid hello: the connection is closing
		return
	}
	if h := c.host; h != nil {
		if wire.KindOf(msg) == wire.KindControl && len(msg) >= wire.ControlHeaderSize {
			switch wire.ControlType(msg[3]) {
			case protocol.TypeLeave:
				h.do(func(now time.Duration) {
					c.uncount() // before Left, which Leave queues, can reach the client
					h.r.Leave(now, c)
				})
				c.uncount()
				c.host = nil
				c.room.Store(nil)
				return
			case protocol.TypeSetName:
				// The room may refuse the name (another player's, or one like
				// it): it is kept and stored only once the room took it.
				name, ok := c.checkName(msg)
				if !ok {
					return
				}
				took := false
				h.do(func(now time.Duration) {
					h.r.HandleFrame(now, c, msg)
					got, seated := h.r.NameOf(c)
					took = seated && got == name
				})
				if took && name != c.name {
					c.name = name
					c.saveName()
				}
				return
			}
		} else if msg = c.orderWS(now, msg); len(msg) == 0 {
			return // behind states that came by datagram (datagram.go)
		}
		h.do(func(now time.Duration) { h.r.HandleFrame(now, c, msg) })
		return
	}
	c.outside(now, msg)
}

// count and uncount keep the players gauge, and the seats the TURN relay
// serves: a connection counts while it holds a seat. Reader goroutine
// only.
func (c *conn) count() {
	if !c.counted {
		c.counted = true
		c.s.players.Add(1)
		c.s.m.Players.Inc()
		c.s.noteSeat(c.user, 1)
	}
}

func (c *conn) uncount() {
	if c.counted {
		c.counted = false
		c.s.players.Add(-1)
		c.s.m.Players.Dec()
		c.s.noteSeat(c.user, -1)
	}
}

// noteSeat counts a seat user took (+1) or left (-1); when it leaves its
// last, its TURN allocations close.
func (s *Server) noteSeat(user string, d int) {
	s.seatMu.Lock()
	n := s.seated[user] + d
	if n <= 0 {
		delete(s.seated, user)
	} else {
		s.seated[user] = n
	}
	s.seatMu.Unlock()
	if n <= 0 && s.turn != nil {
		s.turn.revoke(user)
	}
}

// isSeated reports whether user holds a seat with a connection.
func (s *Server) isSeated(user string) bool {
	s.seatMu.Lock()
	defer s.seatMu.Unlock()
	return s.seated[user] > 0
}

// outside handles a message from a connection in no room.
func (c *conn) outside(now time.Duration, msg []byte) {
	// Each field takes its own default, as in the room: a configured rate
	// with no burst must not mean a burst of zero.
	rc := &c.s.cfg.Room
	rate, burst := or(rc.ControlRate, room.DefaultControlRate), or(rc.ControlBurst, room.DefaultControlBurst)
	if !c.bucket.Take(now, rate, burst) {
		c.strike(protocol.Errorf(protocol.CodeRateLimited, "more than %.0f messages per second", rate), protocol.CodeRateLimited)
		return
	}
	if wire.KindOf(msg) != wire.KindControl {
		c.s.m.RejectedConn(metrics.ReasonNotInRoom)
		c.strike(protocol.Errorf(protocol.CodeNotInRoom, "states need a room: create or join one first"), protocol.CodeBadFrame)
		return
	}
	m, err := protocol.Decode(msg)
	if err != nil {
		c.decodeError(err)
		return
	}
	switch m := m.(type) {
	case *protocol.Ping:
		c.sendMsg(&protocol.Pong{TUS: m.TUS, ServerUS: protocol.US(now)})
	case *protocol.SetName:
		c.setName(msg)
	case *protocol.Create:
		c.create(m)
	case *protocol.Join:
		c.join(m)
	case *protocol.Hello:
		c.sendMsg(protocol.Errorf(protocol.CodeBadRequest, "hello was already received"))
	default:
		c.s.m.RejectedConn(metrics.ReasonNotInRoom)
		e := protocol.Errorf(protocol.CodeNotInRoom, "%s needs a room: create or join one first", protocol.TypeName(m.Type()))
		e.Request = m.Type()
		c.sendMsg(e)
	}
}

// strike answers a refused message and closes the connection after many.
func (c *conn) strike(e *protocol.Error, closeCode protocol.Code) {
	c.strikes++
	if c.strikes > 100 {
		c.fatal(protocol.Errorf(closeCode, "too many refused messages"))
		return
	}
	if c.strikes <= 10 || c.strikes%10 == 0 {
		c.sendMsg(e)
	}
}

// decodeError answers a control frame that did not decode.
func (c *conn) decodeError(err error) {
	switch {
	case errors.Is(err, wire.ErrUpdateRequired):
		c.s.m.RejectedConn(metrics.ReasonVersion)
		c.fatal(updateRequired(err))
	case errors.Is(err, protocol.ErrUnknownType):
		c.strike(protocol.Errorf(protocol.CodeUnknownType, "%v", err), protocol.CodeBadFrame)
	default:
		c.strike(protocol.Errorf(protocol.CodeBadRequest, "%v", err), protocol.CodeBadFrame)
	}
}

// updateRequired is the refusal of a client of another protocol or rules
// version: what differs, and this server's release, so a player can tell
// the two builds apart.
func updateRequired(err error) *protocol.Error {
	return protocol.Errorf(protocol.CodeUpdateRequired, "%v; the server is nearzero %s (protocol %d, rules %d)",
		err, version.Version, wire.ProtocolVersion, wire.RulesVersion)
}

// hello handles the first message.
func (c *conn) hello(now time.Duration, msg []byte) {
	m, err := protocol.Decode(msg)
	if err != nil {
		if errors.Is(err, wire.ErrUpdateRequired) {
			c.s.m.RejectedConn(metrics.ReasonVersion)
			c.s.connectionFailed("", "", protocol.CodeUpdateRequired)
			c.fatal(updateRequired(err))
			return
		}
		c.s.m.RejectedConn(metrics.ReasonBadHello)
		c.fatal(protocol.Errorf(protocol.CodeBadFrame, "the first message must be hello: %v", err))
		return
	}
	hello, ok := m.(*protocol.Hello)
	if !ok {
		c.s.m.RejectedConn(metrics.ReasonBadHello)
		c.fatal(protocol.Errorf(protocol.CodeBadFrame, "the first message must be hello, not %s", protocol.TypeName(m.Type())))
		return
	}
	if err := wire.CheckVersions(wire.ProtocolVersion, hello.Rules); err != nil {
		c.s.m.RejectedConn(metrics.ReasonVersion)
		c.s.connectionFailed("", "", protocol.CodeUpdateRequired)
		c.fatal(updateRequired(err))
		return
	}
	user, token := "", hello.Token
	if token == "" && !c.s.newIDs.allow(c.addr, now) {
		// Each tokenless hello mints an identity: limit them per address.
		c.s.m.Limited(metrics.LimitNewIdentities)
		c.s.connectionFailed("", "", protocol.CodeRateLimited)
		c.fatal(protocol.Errorf(protocol.CodeRateLimited,
			"too many new identities from your address; connect with your token, or try again later"))
		return
	}
	if token != "" {
		if user, err = c.s.issuer.Verify(token); err != nil {
			c.s.m.RejectedConn(metrics.ReasonBadToken)
			c.s.connectionFailed("", "", protocol.CodeBadToken)
			c.fatal(protocol.Errorf(protocol.CodeBadToken, "this token was not issued by this server; connect without one for a new identity"))
			return
		}
	} else if user, token, err = c.s.issuer.New(); err != nil {
		c.log.Error("new identity", "err", err)
		c.fatal(protocol.Errorf(protocol.CodeInternal, "could not create an identity"))
		return
	} else {
		c.minted = max(1, now)
	}
	name := ""
	if hello.Name != "" {
		if name, err = protocol.NormalizeName(hello.Name); err != nil {
			c.sendMsg(protocol.Errorf(protocol.CodeBadName, "%v; keeping the stored name", err))
			name = ""
		}
	}
	if name == "" && c.s.store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		stored, ok, err := c.s.store.UserName(ctx, user)
		cancel()
		if err != nil {
			c.log.Error("read user", "err", err)
		} else if ok {
			name = stored
		}
	}
	if name == "" {
		name = "Player-" + user[len(user)-4:]
	}
	c.user, c.name = user, name

	// A second session of the same user replaces the first.
	c.s.mu.Lock()
	old := c.s.sessions[user]
	c.s.sessions[user] = c
	draining := c.s.draining
	c.s.mu.Unlock()
	if old != nil && old != c {
		c.log.Info("session replaced", "user", user, "old", old.id)
		old.closeWith(protocol.CodeSessionReplaced, "the same user connected again")
	}
	// No user row is written here: a Hello is free to send, so rows are
	// made when a result is first stored for the user.
	rc := c.s.cfg.Room
	c.sendMsg(&protocol.Welcome{User: user, Token: token, Name: name, ServerUS: protocol.US(now),
		Protocol: wire.ProtocolVersion, Rules: wire.RulesVersion, Draining: draining,
		Limits: protocol.Limits{MaxPlayers: or(rc.MaxPlayers, room.DefaultMaxPlayers),
			SendRate:   or(rc.SendRate, room.DefaultSendRate),
			MaxStates:  or(rc.SendRate, room.DefaultSendRate) * or(rc.RateFactor, room.DefaultRateFactor),
			NameMax:    protocol.MaxNameLen,
			SeatHoldUS: protocol.US(or(rc.SeatHold, room.DefaultSeatHold)),
			Motion:     rc.MotionLimits().Protocol(rc.NoMotionChecks)},
		ICEServers: stunOnly(c.s.iceServers(user, c.ice)), Nodes: c.s.peers(), Datagram: c.s.dg.offerTo(c)})
}

// peers returns the other nodes of the cluster for a welcome (nil for a
// single server).
func (s *Server) peers() []string {
	if s.cluster == nil {
		return nil
	}
	return s.cluster.Peers()
}

// or returns v, or d when v is the zero value (a Config default).
func or[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// saveName stores a renamed user's new name, if the user is stored.
func (c *conn) saveName() {
	user, name, at := c.user, c.name, c.s.wall(c.s.now())
	c.s.save("rename", func(ctx context.Context, st Storage) error { return st.RenameUser(ctx, user, name, at) })
}

// checkName decodes a SetName and returns its name normalised; a name
// that is not one is answered with CodeBadName.
func (c *conn) checkName(msg []byte) (string, bool) {
	m, err := protocol.Decode(msg)
	if err != nil {
		c.decodeError(err)
		return "", false
	}
	sn, ok := m.(*protocol.SetName)
	if !ok {
		return "", false
	}
	name, err := protocol.NormalizeName(sn.Name)
	if err != nil {
		e := protocol.Errorf(protocol.CodeBadName, "%v", err)
		e.Request = protocol.TypeSetName
		c.sendMsg(e)
		return "", false
	}
	return name, true
}

// setName validates and stores a new display name, outside a room.
func (c *conn) setName(msg []byte) {
	if name, ok := c.checkName(msg); ok {
		c.name = name
		c.saveName()
	}
}

func (c *conn) create(m *protocol.Create) {
	if cl := c.s.cluster; cl != nil && !m.Placed {
		url, here, err := cl.Place(m.Region)
		if err != nil {
			e := protocol.Errorf(protocol.CodeServerFull, "no server can take a new room now: %v", err)
			e.Request = protocol.TypeCreate
			c.sendMsg(e)
			return
		}
		if !here {
			c.log.Debug("create placed on another node", "url", url)
			c.redirect(protocol.TypeCreate, url, "create the room there")
			return
		}
	}
	h, e := c.s.createRoom(c.addr)
	if e != nil {
		e.Request = protocol.TypeCreate
		c.sendMsg(e)
		return
	}
	c.log.Info("room created", "room", h.code)
	if c.seat(h, protocol.ViaCreate) && m.Settings != nil {
		frame, err := protocol.Marshal(m.Settings)
		if err == nil {
			h.do(func(now time.Duration) { h.r.HandleFrame(now, c, frame) })
		}
	}
}

func (c *conn) join(m *protocol.Join) {
	now := c.s.now()
	// An address that used up its failed joins is refused whatever the
	// code, so that the answer tells a guesser nothing.
	if !c.s.joinFails.ok(c.addr, now) {
		c.s.m.Limited(metrics.LimitJoinFailures)
		c.joinFailed("", protocol.Errorf(protocol.CodeRateLimited,
			"too many failed joins from your address; check the code and try again in a few seconds"))
		return
	}
	code, err := protocol.ParseRoomCode(m.Code)
	if err != nil {
		c.s.joinFails.spend(c.addr, now)
		c.joinFailed("", protocol.Errorf(protocol.CodeRoomNotFound, "%q is not a room code or invite link", m.Code))
		return
	}
	h := c.s.lookupRoom(code)
	if h == nil && c.s.cluster != nil {
		url, here, found, err := c.s.cluster.Locate(context.Background(), code)
		switch {
		case err != nil: // not the client's fault: no failure spent
			c.log.Error("locate room", "room", code, "err", err)
			c.joinFailed(code, protocol.Errorf(protocol.CodeInternal, "the room directory is unreachable; try again in a moment"))
			return
		case found && !here:
			c.redirect(protocol.TypeJoin, url, "room "+code+" runs there")
			return
		}
		// Not found, or an entry naming this node for a room it no longer
		// runs (closed a moment ago, or lost in a restart).
		c.s.joinFails.spend(c.addr, now)
		c.joinFailed(code, protocol.Errorf(protocol.CodeRoomNotFound,
			"room %s is gone: it ended, or the server running it stopped", code))
		return
	}
	if h == nil {
		c.s.joinFails.spend(c.addr, now)
		c.joinFailed(code, protocol.Errorf(protocol.CodeRoomNotFound, "no room %s on this server (it may have closed)", code))
		return
	}
	via := m.Via
	if via == "" {
		via = protocol.ViaCode
	}
	c.seat(h, via)
}

// redirect answers req with CodeRedirect: send it again at url, the
// public URL of another node of the cluster.
func (c *conn) redirect(req wire.ControlType, url, why string) {
	e := protocol.Errorf(protocol.CodeRedirect, "%s: %s", why, url)
	e.Request, e.URL = req, url
	c.sendMsg(e)
}

func (c *conn) joinFailed(code string, e *protocol.Error) {
	e.Request = protocol.TypeJoin
	c.s.m.RejectedConn(metrics.ReasonJoinFailed)
	c.s.connectionFailed(c.user, code, e.Code)
	c.sendMsg(e)
}

// seat takes a seat in h's room.
func (c *conn) seat(h *host, via protocol.Via) bool {
	// A room that closed since the lookup never runs f: that is a not-found.
	err := error(protocol.Errorf(protocol.CodeRoomNotFound, "room %s has closed", h.code))
	// TURN credentials go only with a seat (the relay takes them only
	// while the player holds one); made here, off the room's goroutine.
	ice := c.s.seatICEServers(c.user, c.ice)
	h.do(func(now time.Duration) {
		c.count() // before Joined, which Join queues, can reach the client
		m := room.Member{User: c.user, Name: c.name, Via: via, Addr: c.addr, Net: kickNetOf(c.addr), NewAt: c.minted,
			ICEServers: ice}
		if _, err = h.r.Join(now, c, m); err != nil {
			c.uncount()
			return
		}
		c.host = h
		c.room.Store(h)
	})
	if err != nil {
		var e *protocol.Error
		if !errors.As(err, &e) {
			e = protocol.Errorf(protocol.CodeInternal, "join failed")
		}
		c.joinFailed(h.code, e)
		return false
	}
	return true
}

// sendMsg queues a control message to this connection.
func (c *conn) sendMsg(m protocol.Message) {
	b, err := protocol.Marshal(m)
	if err != nil {
		c.log.Error("encode", "type", protocol.TypeName(m.Type()), "err", err)
		return
	}
	c.Send(b, true)
}

// fatal sends e and closes the connection with its code.
func (c *conn) fatal(e *protocol.Error) {
	c.sendMsg(e)
	c.closeWith(e.Code, e.Message)
}

// Send implements room.Peer: it queues a frame without blocking. The
// answer to a ping that came by datagram goes back by datagram.
func (c *conn) Send(frame []byte, reliable bool) {
	if reliable && c.pongDG.Load() && len(frame) > 3 && wire.ControlType(frame[3]) == protocol.TypePong {
		if l := c.dg.Load(); l != nil && l.sendControl(frame) {
			return
		}
	}
	c.qmu.Lock()
	if c.closing {
		c.qmu.Unlock()
		return
	}
	if reliable {
		if len(c.ctl) >= c.s.cfg.ControlQueue || c.ctlSize+len(frame) > c.s.cfg.ControlQueueBytes {
			c.closing, c.code, c.reason = true, protocol.CodeTooSlow, "reading too slowly"
			c.ctl, c.ctlSize = nil, 0
			c.qmu.Unlock()
			c.log.Info("reliable queue overflow: closing", "queue", c.s.cfg.ControlQueue)
			c.signal()
			return
		}
		c.ctl = append(c.ctl, append([]byte(nil), frame...))
		c.ctlSize += len(frame)
	} else if len(frame) <= wire.MaxStateSize {
		slots := len(c.ring) / slotSize
		if c.n == slots { // full: drop the oldest
			c.head = (c.head + 1) % slots
			c.n--
			c.dropped++
		}
		i := (c.head + c.n) % slots * slotSize
		c.ring[i] = byte(len(frame))
		copy(c.ring[i+1:], frame)
		c.n++
	}
	// One wake-up per batch: the states of a tick after the first find
	// the writer signalled already.
	woken := c.woken
	c.woken = true
	c.qmu.Unlock()
	if !woken {
		c.signal()
	}
}

// Close implements room.Peer.
func (c *conn) Close(code protocol.Code, reason string) { c.closeWith(code, reason) }

// closeWith asks the writer to flush the reliable queue and close with
// code; the first call wins.
func (c *conn) closeWith(code protocol.Code, reason string) {
	c.qmu.Lock()
	if !c.closing {
		c.closing, c.code, c.reason = true, code, reason
	}
	c.qmu.Unlock()
	c.signal()
}

func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// check enforces the hello, idle and write time-outs (janitor, s.mu held).
func (c *conn) check(now time.Duration) {
	if now > c.helloBy && c.helloState.CompareAndSwap(helloWaiting, helloLate) {
		c.s.m.RejectedConn(metrics.ReasonHelloSlow)
		c.fatal(protocol.Errorf(protocol.CodeTimeout, "no hello within %v", c.s.cfg.HelloTimeout))
	}
	if now-time.Duration(c.lastRead.Load()) > c.s.cfg.IdleTimeout && !c.idle.Swap(true) {
		c.s.m.Limited(metrics.LimitIdle)
		c.fatal(protocol.Errorf(protocol.CodeTimeout, "no message for %v", c.s.cfg.IdleTimeout))
	}
	if at := c.writeAt.Load(); at != 0 && now-time.Duration(at) > c.s.cfg.WriteTimeout && !c.forced.Swap(true) {
		c.log.Info("write stalled: closing", "after", c.s.cfg.WriteTimeout)
		c.s.m.Closed(protocol.CodeTooSlow)
		go func() { _ = c.ws.CloseNow() }() // CloseNow waits for goroutines; not under s.mu
	}
}

// writeLoop writes queued frames: reliable ones in order, and after each
// one every queued state in one batch message. It closes the connection
// when asked.
func (c *conn) writeLoop() {
	defer close(c.done)
	defer c.recoverConn()
	ctx := context.Background()
	batch := make([]byte, 0, maxBatch)
	var ctl [][]byte
	for {
		<-c.wake
		c.coalesce()
		for {
			c.qmu.Lock()
			ctl, c.ctl = c.ctl, ctl[:0]
			c.ctlSize = 0
			c.woken = false
			batch = c.takeStatesLocked(batch[:0])
			closing, code, reason := c.closing, c.code, c.reason
			if c.dropped > 0 {
				c.s.m.DroppedTotal.Add(float64(c.dropped))
				c.dropped = 0
			}
			c.qmu.Unlock()

			if len(ctl) == 0 && len(batch) == 0 {
				if closing {
					c.finish(code, reason)
					return
				}
				break
			}
			for _, f := range ctl {
				c.inflight.Add(int64(len(f)))
			}
			for i, f := range ctl {
				if !c.write(ctx, f) {
					c.drainQueues()
					return
				}
				c.inflight.Add(-int64(len(f)))
				ctl[i] = nil
				// States go out between reliable frames, so that a reliable
				// backlog (events for a slow reader) never holds them back;
				// a reliable frame still leads (Joined before the states).
				if !closing && i < len(ctl)-1 {
					if batch = c.takeStates(batch); len(batch) > 0 {
						if !c.writeStates(ctx, batch) {
							c.drainQueues()
							return
						}
						batch = batch[:0]
					}
				}
			}
			if len(batch) > 0 && !closing {
				if !c.writeStates(ctx, batch) {
					c.drainQueues()
					return
				}
			}
		}
	}
}

// coalesce lets the other players' states of the same tick reach the
// queue before the writer takes it, so that one write carries them all:
// it waits Config.WriteCoalesce when only states wait, and yields to the
// goroutines relaying to us this instant in any case.
func (c *conn) coalesce() {
	if w := c.s.cfg.WriteCoalesce; w > 0 {
		c.qmu.Lock()
		states := c.n > 0 && len(c.ctl) == 0 && !c.closing
		c.qmu.Unlock()
		if states {
			time.Sleep(w)
			return
		}
	}
	runtime.Gosched()
}

// takeStates moves queued states into batch, up to maxBatch bytes.
func (c *conn) takeStates(batch []byte) []byte {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	return c.takeStatesLocked(batch)
}

// takeStatesLocked is takeStates with c.qmu held.
func (c *conn) takeStatesLocked(batch []byte) []byte {
	slots := len(c.ring) / slotSize
	for c.n > 0 {
		i := c.head * slotSize
		l := int(c.ring[i])
		if len(batch)+l > maxBatch {
			break
		}
		batch = append(batch, c.ring[i+1:i+1+l]...)
		c.head = (c.head + 1) % slots
		c.n--
	}
	return batch
}

// ReliableBacklog implements room.Backlogged: the bytes of reliable frames
// queued or being written.
func (c *conn) ReliableBacklog() int {
	c.qmu.Lock()
	n := c.ctlSize
	c.qmu.Unlock()
	return n + int(c.inflight.Load())
}

// write writes one message, timing it for the janitor.
func (c *conn) write(ctx context.Context, b []byte) bool {
	c.writeAt.Store(int64(max(1, c.s.now())))
	err := c.ws.Write(ctx, websocket.MessageBinary, b)
	c.writeAt.Store(0)
	if err != nil {
		c.log.Debug("write failed", "err", err)
		return false
	}
	return true
}

// writeStates writes one batch of states, counting it: over the datagram
// path while it is up, else as one WebSocket message.
func (c *conn) writeStates(ctx context.Context, b []byte) bool {
	c.s.m.StateWritesTotal.Inc()
	if l := c.dg.Load(); l != nil && l.sendStates(b) {
		return true
	}
	return c.write(ctx, b)
}

// finish ends the connection with a close frame.
func (c *conn) finish(code protocol.Code, reason string) {
	if code != protocol.CodeNormal {
		c.s.m.Closed(code)
	}
	if len(reason) > 120 { // a close reason is at most 123 bytes
		reason = reason[:120]
	}
	c.writeAt.Store(int64(max(1, c.s.now())))
	_ = c.ws.Close(websocket.StatusCode(code), reason)
	c.writeAt.Store(0)
}

// drainQueues marks the connection closed after a failed write.
func (c *conn) drainQueues() {
	c.qmu.Lock()
	c.closing = true
	c.ctl, c.ctlSize, c.n = nil, 0, 0
	c.qmu.Unlock()
	c.inflight.Store(0)
	_ = c.ws.CloseNow()
}

// fail answers a bad message from a connection (counted by the caller).
func (c *conn) fail(e *protocol.Error) { c.strike(e, e.Code) }

var (
	_ room.Peer       = (*conn)(nil)
	_ room.Backlogged = (*conn)(nil)
)
