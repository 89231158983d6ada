package serverlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/quic-go/quic-go"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// maxMessage is the largest message the client reads.
const maxMessage = wire.ControlHeaderSize + wire.MaxControlBody

var (
	// ErrClosed indicates a call on a closed client.
	ErrClosed = errors.New("serverlink: closed")
	// ErrNotConnected indicates a request while the connection is down
	// (reconnecting).
	ErrNotConnected = errors.New("serverlink: not connected")
	// ErrNotInRoom indicates a call that needs a room.
	ErrNotInRoom = errors.New("serverlink: not in a room")
	// ErrConnectionLost indicates the connection dropped while a request waited.
	ErrConnectionLost = errors.New("serverlink: connection lost")
	// ErrBusy indicates a Create or Join while another is still waiting.
	ErrBusy = errors.New("serverlink: another request is in flight")
	// ErrServerSilent indicates a connection taken for dead: the server
	// sent nothing, not even the answer to a ping, for
	// Options.SilenceTimeout and the round trip (EventReconnecting's Err).
	ErrServerSilent = errors.New("serverlink: the server stopped answering")
)

// Conn is a connection to a room server: the sockets and goroutines
// around client/core's ServerPath, which holds the logic (clock sync, stamp
// mapping, the outgoing queue and its batching). All methods are safe for
// concurrent use and none blocks except Dial, Create, Join, Leave and Close,
// which take a context and time out. The engine's main thread calls
// PollEvents and PollStates once per frame; nothing is ever called back.
//
// Goroutines: one supervisor for the client's life (reconnects), and per
// connection a reader and a writer (which also sends the clock-sync pings),
// and a watchdog timer (no goroutine while it waits) that pings a silent
// server and gives it up after Options.SilenceTimeout; two more with the
// lag simulator on. All end at Close.
type Conn struct {
	home  string  // read-only: the URL given to Dial (a load balancer, or any node)
	opts  Options // read-only after Dial
	clock realtime.Clock
	log   *slog.Logger

	bytesIn, bytesOut atomic.Int64 // Stats.BytesIn, BytesOut: the reader and writer add

	closedCh  chan struct{}   // closed by Close
	life      context.Context // cancelled by Close
	endLife   context.CancelFunc
	closeOnce sync.Once
	wg        sync.WaitGroup
	reqMu     sync.Mutex // one Create/Join/Leave at a time
	lagOut    *delayLine // the lag simulator, both ways; pass-through while off
	lagIn     *delayLine

	mu      sync.Mutex                 // guards everything below
	url     string                     // the node connected to: home, or where a redirect led
	moves   map[*session]chan *session // redirects: old session -> its successor, for the supervisor
	core    *core.ServerPath           // the server path's logic: sync, mapping, send queue
	lead    core.Lead                  // the send lead on the lag simulator's way in
	decoded []RemoteState
	token   string
	welcome protocol.Welcome
	name    string
	code    string // the room, "" when in none
	// rejoining is set while a reconnect's rejoin waits for its answer:
	// nothing but the rejoin goes out (the server refuses a state or a
	// room message from a connection not yet in the room).
	rejoining bool
	nodes     []string // the other nodes of a cluster, from the last welcome
	slot      int
	room      protocol.RoomState
	sess      *session // current connection; nil while reconnecting
	pending   chan result
	events    ring[Event]
	states    ring[RemoteState]
	outCtl    [][]byte
	stats     Stats
	rng       *rand.Rand
	notify    chan struct{}
	lastErr   error
	// quicTokens keeps the servers' address-validation tokens for the
	// datagram path (datagram.go).
	quicTokens quic.TokenStore
	// dgOff is set while the datagram path is off (Options.NoDatagrams,
	// SetDatagrams).
	dgOff atomic.Bool
}

// Stats are counters for debugging and tests.
type Stats struct {
	StatesSent       int64 // states handed to the network
	StatesReceived   int64 // remote states queued for PollStates
	StatesUnsynced   int64 // remote states dropped before the clock synced
	StatesDropped    int64 // states dropped from a full queue (either way)
	EventsDropped    int64
	LagDropped       int64 // datagrams the lag simulator lost on purpose (the WebSocket is a stream: none there)
	LagRetransmitted int64 // transmissions the lag simulator lost and made again (a state late, not lost)
	Reconnects       int64
	PingsSent        int64
	MalformedFromSrv int64 // undecodable messages from the server
	Redirects        int64 // redirects followed to another node of a cluster
	// BytesIn and BytesOut count the payloads read and written, the
	// WebSocket's messages and the datagram path's datagrams (keepalives
	// included), every connection of the Conn together (the editor's
	// debugger shows them per second).
	BytesIn, BytesOut int64
	// The datagram path (Options.NoDatagrams): states sent and received
	// over it (also counted in StatesSent and StatesReceived), bindings
	// made, and the times it went down (states back on the WebSocket)
	// and up again while bound.
	StatesSentDatagram, StatesReceivedDatagram int64
	DatagramBinds, DatagramFallbacks           int64
	DatagramResumes                            int64
}

// session is one WebSocket connection.
type session struct {
	ws    *websocket.Conn
	wake  chan struct{} // writer wake-up
	done  chan struct{} // closed when reader and writer have ended
	err   error         // why it ended; valid after done
	heard atomic.Int64  // local clock when the last message arrived
	// fault is a panic that ended it (ErrPanic); guarded by Conn.mu.
	fault error
	// live, dog and silent are the watchdog: the liveness of the link, its
	// timer, and the silence that ended it; guarded by Conn.mu.
	live   core.Liveness
	dog    *time.Timer
	silent error
	// dg is the datagram path while bound (datagram.go); dgStop and
	// dgDone end it and tell it ended (nil when none was offered), and
	// dgEnded forbids a start once the session ended; the three guarded
	// by Conn.mu.
	dg      atomic.Pointer[dgLink]
	dgStop  context.CancelFunc
	dgDone  chan struct{}
	dgEnded bool
}

type result struct {
	msg protocol.Message
	err error
}

// Dial connects to the server at url (ws:// or wss://, path /ws), says
// hello and waits for the welcome, all within ctx and DialTimeout. A nil
// opts means defaults. Once connected, the client keeps the connection up
// on its own: see Options.NoReconnect.
func Dial(ctx context.Context, url string, opts *Options) (*Conn, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	o := opts.WithDefaults()
	c := &Conn{home: url, url: url, opts: o, clock: o.Clock, log: o.Log, closedCh: make(chan struct{}),
		token: o.Token, name: o.Name, slot: -1,
		events: newRing[Event](o.EventQueue), states: newRing[RemoteState](o.StateQueue),
		rng:    rand.New(rand.NewPCG(o.backoffSeed(), 1)),
		notify: make(chan struct{}, 1)}
	c.life, c.endLife = context.WithCancel(context.Background())
	c.dgOff.Store(o.NoDatagrams)
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var err error
	if c.core, err = core.NewServerPath(&o.Sync, o.SendQueue, o.SendLead); err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	c.lead.Max = o.SendLead
	// Options were validated above, so the lines cannot refuse the config.
	c.lagOut, _ = newDelayLine(o.Lag, o.lagSeed()+1, c.enqueueDelayed)
	c.lagIn, _ = newDelayLine(o.Lag, o.lagSeed()+2, func(b []byte, _ bool) { c.process(b, c.clock.Now()) })
	c.lagOut.onPanic(c.fault)
	c.lagIn.onPanic(c.fault)
	ws, err := c.connect(ctx, url)
	if err != nil {
		c.endLife()
		c.stopLag()
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	sess := c.start(ws)
	c.wg.Add(1)
	go c.run(sess)
	return c, nil
}

// connect dials url, says hello and reads until the welcome; url is then
// the node connected to. A token the server refuses is dropped and the
// hello repeated once without it.
func (c *Conn) connect(ctx context.Context, url string) (*websocket.Conn, error) {
	ws, err := c.hello(ctx, url)
	if protocol.CodeOf(err) == protocol.CodeBadToken {
		c.mu.Lock()
		c.token = ""
		c.mu.Unlock()
		c.log.Warn("server refused our token; asking for a new identity")
		ws, err = c.hello(ctx, url)
	}
	if err == nil {
		c.mu.Lock()
		c.url = url
		c.mu.Unlock()
	}
	return ws, err
}

func (c *Conn) hello(ctx context.Context, url string) (_ *websocket.Conn, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: c.opts.HTTPClient})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = ws.CloseNow()
		}
	}()
	ws.SetReadLimit(maxMessage)
	c.mu.Lock()
	h := &protocol.Hello{Rules: wire.RulesVersion, Token: c.token, Name: c.name, Client: c.opts.ClientName}
	c.mu.Unlock()
	b, err := protocol.Marshal(h)
	if err != nil {
		return nil, err
	}
	if err := ws.Write(ctx, websocket.MessageBinary, b); err != nil {
		return nil, closeErr(err)
	}
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			return nil, closeErr(err)
		}
		m, err := protocol.Decode(msg)
		if err != nil {
			return nil, fmt.Errorf("hello: %w", err)
		}
		switch m := m.(type) {
		case *protocol.Welcome:
			c.mu.Lock()
			c.welcome, c.token, c.name = *m, m.Token, m.Name
			if len(m.Nodes) > 0 {
				c.nodes = m.Nodes
			}
			c.mu.Unlock()
			return ws, nil
		case *protocol.Error:
			if m.Code == protocol.CodeBadName { // not fatal: the stored name is kept
				c.push(Event{Kind: EventMessage, Msg: m, At: c.clock.Now()})
				continue
			}
			return nil, m
		}
	}
}

// closeErr turns a WebSocket close into a *protocol.CloseError.
func closeErr(err error) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return &protocol.CloseError{Code: protocol.Code(ce.Code), Reason: ce.Reason}
	}
	return err
}

// start runs a reader, a writer and a watchdog on ws.
func (c *Conn) start(ws *websocket.Conn) *session {
	s := &session{ws: ws, wake: make(chan struct{}, 1), done: make(chan struct{})}
	now := c.clock.Now()
	s.heard.Store(int64(now))
	s.live = core.Liveness{Timeout: max(c.opts.SilenceTimeout, 0)}
	s.live.Reset(now)
	c.mu.Lock()
	c.sess = s
	c.core.Out().Clear()
	if s.live.Timeout > 0 {
		s.dog = time.AfterFunc(s.live.Next(now, 0)-now, func() { c.watch(s) })
	}
	c.startDatagramsLocked(s)
	c.mu.Unlock()
	writerDone := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		defer c.recoverSession(s, "writer")
		c.writeLoop(s, readerDone)
	}()
	go func() {
		err := c.readSafely(s)
		close(readerDone)
		<-writerDone
		_ = ws.CloseNow()
		c.stopDatagrams(s)
		c.mu.Lock()
		if s.dog != nil {
			s.dog.Stop()
		}
		if s.silent != nil {
			err = s.silent
		}
		s.err = err
		if c.sess == s {
			c.sess = nil
		}
		if c.pending != nil {
			c.pending <- result{err: ErrConnectionLost}
			c.pending = nil
		}
		c.mu.Unlock()
		close(s.done)
	}()
	return s
}

// watch is s's watchdog, run by its timer: it pings after a silence and
// cuts the connection once the server is taken for dead (core.Liveness),
// which the supervisor then reconnects.
func (c *Conn) watch(s *session) {
	defer func() {
		if err := c.recovered("watchdog", recover()); err != nil {
			c.endSession(s, err)
		}
	}()
	now := c.clock.Now() // outside mu: a panic here must not leave it locked
	c.mu.Lock()
	if c.sess != s || s.silent != nil {
		c.mu.Unlock()
		return // ended, or moved to another node
	}
	s.live.Heard(time.Duration(s.heard.Load()))
	rtt := c.core.RTT()
	if s.live.Dead(now, rtt) {
		silence := s.live.Silence(now)
		s.silent = fmt.Errorf("%w: nothing for %v", ErrServerSilent, silence.Round(time.Millisecond))
		c.mu.Unlock()
		c.log.Info("the server stopped answering; reconnecting", "silence", silence)
		_ = s.ws.CloseNow()
		return
	}
	probe := s.live.Probe(now)
	next := s.live.Next(now, rtt)
	s.dog.Reset(next - now)
	c.mu.Unlock()
	if probe {
		c.sendPing(false) // on the WebSocket: its own liveness, and its NAT mapping
	}
}

// run supervises the connection: when it drops, reconnect and rejoin.
func (c *Conn) run(s *session) {
	defer c.wg.Done()
	defer c.recoverRun()
	for {
		select {
		case <-s.done:
		case <-c.closedCh:
			<-s.done
			c.push(Event{Kind: EventDisconnected, At: c.clock.Now()})
			return
		}
		if ns := c.takeHandoff(s); ns != nil { // a redirect moved us: no reconnect
			s = ns
			continue
		}
		err := s.err
		code := protocol.CloseCodeOf(err)
		select {
		case <-c.closedCh:
			c.push(Event{Kind: EventDisconnected, At: c.clock.Now()})
			return
		default:
		}
		if c.opts.NoReconnect || code.Fatal() {
			c.disconnected(err)
			return
		}
		c.log.Info("connection lost; reconnecting", "err", err)
		c.push(Event{Kind: EventReconnecting, Err: err, At: c.clock.Now()})
		ns, err := c.reconnect()
		if c.isClosed() {
			if ns != nil {
				<-ns.done
			}
			c.push(Event{Kind: EventDisconnected, At: c.clock.Now()})
			return
		}
		if err != nil {
			c.disconnected(err)
			return
		}
		s = ns
	}
}

func (c *Conn) disconnected(err error) {
	c.mu.Lock()
	c.lastErr = err
	c.code, c.slot, c.rejoining = "", -1, false
	c.mu.Unlock()
	c.push(Event{Kind: EventDisconnected, Err: err, At: c.clock.Now()})
}

// reconnect retries with back-off for ReconnectFor, then rejoins the room.
// Attempts go in turn to the node last connected to, the URL given to Dial
// and the other nodes of the cluster the last welcome named (the node may
// be gone, and any node can say where the room is, or that it is gone).
// Until the rejoin is answered nothing else is sent (rejoining).
func (c *Conn) reconnect() (*session, error) {
	deadline := time.Now().Add(c.opts.ReconnectFor)
	wait := c.opts.BackoffMin
	var last error
	for attempt := 1; ; attempt++ {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("reconnect: gave up after %d attempts over %v: %w", attempt-1, c.opts.ReconnectFor, last)
		}
		ctx, cancel := context.WithTimeout(c.life, left)
		ws, err := c.connect(ctx, c.target(attempt))
		if err == nil {
			c.mu.Lock()
			c.rejoining = c.code != "" // before the connection is the client's
			c.mu.Unlock()
			s := c.start(ws)
			c.mu.Lock()
			c.stats.Reconnects++
			code := c.code
			c.mu.Unlock()
			if code != "" {
				_, err = c.ask(ctx, &protocol.Join{Code: code, Via: protocol.ViaReconnect})
				switch {
				case errors.Is(err, ErrConnectionLost):
					cancel()
					last = err
					continue
				case errors.Is(err, errRedirect):
					// The room's node did not answer: maybe gone, maybe
					// not yet. Try again after the back-off.
					c.closeSession(s)
				case err != nil:
					c.mu.Lock()
					c.code, c.slot, c.rejoining = "", -1, false
					c.mu.Unlock()
					c.push(Event{Kind: EventRoomLost, Err: err, At: c.clock.Now()})
					err = nil
				}
			}
			if err == nil {
				cancel()
				c.mu.Lock()
				c.rejoining = false // back in the room: states and messages flow again
				c.mu.Unlock()
				c.push(Event{Kind: EventReconnected, At: c.clock.Now()})
				return s, nil // after a redirect, s ends and run adopts its successor
			}
		}
		cancel()
		last = err
		if code := protocol.CodeOf(err); code.Fatal() {
			return nil, err
		}
		select {
		case <-c.closedCh:
			return nil, ErrClosed
		default:
		}
		jitter := 0.8 + 0.4*c.randFloat()
		d := min(time.Duration(float64(wait)*jitter), time.Until(deadline))
		c.log.Debug("reconnect attempt failed", "attempt", attempt, "err", err, "retry_in", d)
		t := time.NewTimer(max(d, 0))
		select {
		case <-c.closedCh:
			t.Stop()
			return nil, ErrClosed
		case <-t.C:
		}
		wait = min(wait*2, c.opts.BackoffMax)
	}
}

// target returns the URL of reconnect attempt n (from 1): in turn, the
// node last connected to, the URL given to Dial, and the other nodes of
// the cluster the last welcome named.
func (c *Conn) target(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	urls := make([]string, 0, 2+len(c.nodes))
	for _, u := range append([]string{c.url, c.home}, c.nodes...) {
		if !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	return urls[(n-1)%len(urls)]
}

// maxRedirects bounds the redirects one request follows.
const maxRedirects = 3

// errRedirect indicates a redirect the client could not follow: the node
// it names did not answer.
var errRedirect = errors.New("serverlink: could not follow a redirect")

// ask is request, following redirects (CodeRedirect, from a node of a
// cluster): it moves to the node named and sends m again there, a create
// with Placed set. The caller sees the final answer only.
func (c *Conn) ask(ctx context.Context, m protocol.Message) (protocol.Message, error) {
	for hop := 0; ; hop++ {
		ans, err := c.request(ctx, m)
		var e *protocol.Error
		if !errors.As(err, &e) || e.Code != protocol.CodeRedirect || e.URL == "" || hop == maxRedirects {
			return ans, err
		}
		c.log.Debug("redirected", "to", e.URL, "request", protocol.TypeName(m.Type()))
		if err := c.move(ctx, e.URL); err != nil {
			if cr, ok := m.(*protocol.Create); ok && !cr.Placed && !errors.Is(err, ErrConnectionLost) && ctx.Err() == nil {
				// The node chosen did not answer (it may have died since
				// its last directory entry): open the room here instead.
				c.log.Info("the node a room was placed on did not answer; creating it here", "url", e.URL, "err", err)
				here := *cr
				here.Placed = true
				m = &here
				continue
			}
			return nil, fmt.Errorf("%w to %s: %w", errRedirect, e.URL, err)
		}
		if cr, ok := m.(*protocol.Create); ok {
			placed := *cr
			placed.Placed = true
			m = &placed
		}
	}
}

// move makes a connection to the node at url (a redirect) the client's
// connection: the new one says hello first, then the old one is closed,
// and the supervisor adopts the new one without a reconnect. The clock
// sync starts over: every node has its own clock.
func (c *Conn) move(ctx context.Context, url string) error {
	c.mu.Lock()
	from := c.url
	c.mu.Unlock()
	ws, err := c.connect(ctx, url)
	if err != nil {
		c.mu.Lock()
		c.url = from
		c.mu.Unlock()
		return err
	}
	next := make(chan *session, 1)
	c.mu.Lock()
	old := c.sess
	if old == nil { // the connection dropped meanwhile: the supervisor reconnects
		c.url = from
		c.mu.Unlock()
		_ = ws.CloseNow()
		return ErrConnectionLost
	}
	if c.moves == nil {
		c.moves = map[*session]chan *session{}
	}
	c.moves[old] = next
	c.mu.Unlock()
	c.closeSession(old) // before the new session: no pong of the old node may reach the new sync
	c.mu.Lock()
	c.core.ResetSync()
	c.stats.Redirects++
	c.mu.Unlock()
	next <- c.start(ws)
	return nil
}

// closeSession closes s and waits until its reader and writer ended.
func (c *Conn) closeSession(s *session) {
	go func() { _ = s.ws.Close(websocket.StatusNormalClosure, "moving to another node") }()
	t := time.NewTimer(c.opts.CloseTimeout)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
		_ = s.ws.CloseNow()
		<-s.done
	}
}

// takeHandoff returns the session a redirect moved s's client to, or nil
// when s simply ended.
func (c *Conn) takeHandoff(s *session) *session {
	c.mu.Lock()
	next, ok := c.moves[s]
	delete(c.moves, s)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case ns := <-next:
		return ns
	case <-c.closedCh:
		return nil
	}
}

func (c *Conn) randFloat() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rng.Float64()
}

// readLoop reads messages until the connection ends.
func (c *Conn) readLoop(s *session) error {
	// One byte over the read limit: a message of exactly maxMessage bytes
	// fills buf[:maxMessage] and ends with EOF; the library refuses more.
	buf := make([]byte, maxMessage+1)
	for {
		typ, rd, err := s.ws.Reader(context.Background())
		if err != nil {
			return closeErr(err)
		}
		n := 0
		for {
			m, err := rd.Read(buf[n:])
			n += m
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return closeErr(err)
			}
			if n == len(buf) {
				return fmt.Errorf("serverlink: message over %d bytes", maxMessage)
			}
		}
		c.bytesIn.Add(int64(n))
		s.heard.Store(int64(c.clock.Now()))
		if typ != websocket.MessageBinary {
			continue
		}
		if c.lagIn.active() {
			c.lagIn.push(append([]byte(nil), buf[:n]...), wire.KindOf(buf[:n]) == wire.KindControl)
			continue
		}
		c.process(buf[:n], c.clock.Now())
	}
}

// process handles one message from the server that arrived at time arrival.
func (c *Conn) process(msg []byte, arrival time.Duration) {
	switch wire.KindOf(msg) {
	case wire.KindState3D, wire.KindState2D:
		c.queueStates(msg, arrival)
		c.signal()
	case wire.KindControl:
		m, err := protocol.Decode(msg)
		if err != nil {
			c.mu.Lock()
			c.stats.MalformedFromSrv++
			c.mu.Unlock()
			c.log.Warn("undecodable message from the server", "err", err)
			return
		}
		c.control(m, arrival)
	}
}

// queueStates queues the states of one message for PollStates. mu is
// released by defer: a panic here (recovered by the reader) must not leave
// it locked, or the engine's next PollEvents would block for good.
func (c *Conn) queueStates(msg []byte, arrival time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n core.Counts
	c.decoded, n = c.core.DecodeStates(c.decoded[:0], msg, arrival)
	c.stats.MalformedFromSrv += int64(n.Malformed)
	c.stats.StatesUnsynced += int64(n.Unsynced)
	for i := range c.decoded {
		if c.states.push(c.decoded[i]) {
			c.stats.StatesDropped++
		}
		c.stats.StatesReceived++
	}
}

// control handles one control message.
func (c *Conn) control(m protocol.Message, at time.Duration) {
	c.answerProbe(m) // probe.go; first, so the server measures no more than the network
	deliver, synced, waiter := c.takeControl(m, at)
	if synced {
		c.push(Event{Kind: EventSynced, At: at})
		return
	}
	if deliver {
		c.push(Event{Kind: EventMessage, Msg: m, At: at})
	}
	if waiter != nil {
		// After the push: a waiting Join's caller (reconnect) queues
		// EventReconnected, which must come after this message's event.
		waiter <- result{msg: m} // cap 1, one send: never blocks
	}
}

// takeControl applies m to the client's state under mu (released by defer,
// as in queueStates) and says what to do next: deliver it as an event,
// report the clock synced, answer a waiting request.
func (c *Conn) takeControl(m protocol.Message, at time.Duration) (deliver, synced bool, waiter chan result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	deliver = true
	answer := false
	switch m := m.(type) {
	case *protocol.Pong:
		deliver = false
		if c.core.Pong(m, at) {
			return false, true, nil
		}
	case *protocol.Joined:
		c.code, c.slot, c.room = m.Code, m.Slot, m.Room
		answer = true
	case *protocol.RoomState:
		if m.Rev >= c.room.Rev || m.Code != c.room.Code {
			c.room = *m
		}
	case *protocol.Left:
		c.code, c.slot, c.room = "", -1, protocol.RoomState{}
		answer = true
	case *protocol.Error:
		switch m.Request {
		case protocol.TypeCreate, protocol.TypeJoin, protocol.TypeLeave:
			answer = true
		}
		// A redirect is followed by the request (ask), not shown.
		deliver = m.Code != protocol.CodeRedirect
	}
	if answer {
		waiter, c.pending = c.pending, nil
	}
	return deliver, false, waiter
}

// push queues an event for PollEvents.
func (c *Conn) push(e Event) {
	c.mu.Lock()
	if c.events.push(e) {
		c.stats.EventsDropped++
	}
	c.mu.Unlock()
	c.signal()
}

func (c *Conn) signal() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// writeLoop sends queued frames and the clock-sync pings.
func (c *Conn) writeLoop(s *session, readerDone <-chan struct{}) {
	ctx := context.Background()
	ping := time.NewTimer(0)
	defer ping.Stop()
	var w writeBufs
	for {
		now := c.clock.Now() // outside mu: a panic here must not leave it locked
		c.mu.Lock()
		next := c.core.NextPing()
		c.mu.Unlock()
		ping.Reset(max(0, next-now))
		select {
		case <-readerDone:
			return
		case <-c.closedCh:
			_ = s.ws.Close(websocket.StatusNormalClosure, "bye")
			return
		case <-ping.C:
			c.sendPing(true)
			continue
		case <-s.wake:
		}
		for {
			if !c.nextWrites(s, &w) {
				return
			}
			if len(w.ctl) == 0 && len(w.batch) == 0 {
				break
			}
			for i, f := range w.ctl {
				if err := s.ws.Write(ctx, websocket.MessageBinary, f); err != nil {
					return
				}
				c.bytesOut.Add(int64(len(f)))
				w.ctl[i] = nil
			}
			if len(w.batch) > 0 {
				if l := s.dg.Load(); l != nil && l.send(w.batch) {
					c.mu.Lock()
					c.stats.StatesSentDatagram += int64(len(w.states))
					c.mu.Unlock()
					continue
				}
				if err := s.ws.Write(ctx, websocket.MessageBinary, w.batch); err != nil {
					return
				}
				c.bytesOut.Add(int64(len(w.batch)))
			}
		}
	}
}

// writeBufs are a writer's reused buffers.
type writeBufs struct {
	ctl    [][]byte
	states []core.Queued
	batch  []byte // the states, encoded once, as one message
}

// nextWrites fills w with what s's writer sends next: the control frames,
// and the queued states (taken under mu) encoded once into w.batch outside
// mu, as written now (the send lead: client/core's AppendBatch). It
// reports false when s is no longer the client's connection. It does not
// allocate once the buffers have grown.
func (c *Conn) nextWrites(s *session, w *writeBufs) bool {
	c.mu.Lock()
	if c.sess != s {
		c.mu.Unlock()
		return false
	}
	w.ctl, c.outCtl = c.outCtl, w.ctl[:0]
	w.states = c.core.Out().Drain(w.states[:0])
	c.mu.Unlock()
	w.batch = core.AppendBatch(w.batch[:0], w.states, c.clock.Now(), c.opts.SendLead)
	return true
}

// sendPing queues a clock-sync ping carrying our best round trip: the
// way states go when datagram is set (the datagram path while it is up),
// else on the WebSocket.
func (c *Conn) sendPing(datagram bool) {
	now := c.clock.Now() // outside mu: a panic here must not leave it locked
	c.mu.Lock()
	ping := c.core.Ping(now)
	c.stats.PingsSent++
	c.mu.Unlock()
	if datagram {
		_ = c.sendDatagramMsg(&ping)
		return
	}
	_ = c.sendMsg(&ping)
}

// sendMsg queues a reliable message.
func (c *Conn) sendMsg(m protocol.Message) error {
	b, err := protocol.Marshal(m)
	if err != nil {
		return fmt.Errorf("serverlink: %w", err)
	}
	if c.lagOut.active() {
		c.lagOut.push(b, true)
		return nil
	}
	return c.enqueue(b)
}

// enqueueDelayed is the lag simulator's exit on the way out. A state
// leaves it encoded (the line holds bytes) and is queued again as a
// wire.State whose wait starts at the exit: the simulated delay is the
// network's, not the sender's.
func (c *Conn) enqueueDelayed(b []byte, reliable bool) {
	if reliable {
		_ = c.enqueue(b)
		return
	}
	if wire.KindOf(b) == wire.KindControl { // a ping or an echo for the datagram path
		_ = c.sendControlDatagram(b)
		return
	}
	var st wire.State
	if wire.DecodeState(b, &st) != nil {
		return // encoded by SendState: cannot happen
	}
	now := c.clock.Now() // outside mu: a panic here must not leave it locked
	c.mu.Lock()
	s := c.queueState(&st, now)
	c.mu.Unlock()
	wake(s)
}

// enqueue hands a control frame to the current connection's writer.
func (c *Conn) enqueue(b []byte) error {
	c.mu.Lock()
	s := c.sess
	if s == nil {
		c.mu.Unlock()
		return ErrNotConnected
	}
	c.outCtl = append(c.outCtl, b)
	c.mu.Unlock()
	wake(s)
	return nil
}

// queueState queues st, whose wait started at from, for the current
// connection's writer, under mu, and returns the session to wake (nil:
// none, the state is dropped).
func (c *Conn) queueState(st *wire.State, from time.Duration) *session {
	s := c.sess
	if s == nil || c.rejoining {
		return nil // reconnecting: states are droppable
	}
	if c.core.Out().Push(st, from) {
		c.stats.StatesDropped++
	}
	c.stats.StatesSent++
	return s
}

// wake wakes s's writer, if any.
func wake(s *session) {
	if s == nil {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// request sends m and waits for its answer: Joined or Left, or an Error
// about it.
func (c *Conn) request(ctx context.Context, m protocol.Message) (protocol.Message, error) {
	if !c.reqMu.TryLock() {
		return nil, ErrBusy
	}
	defer c.reqMu.Unlock()
	ch := make(chan result, 1)
	c.mu.Lock()
	if c.sess == nil {
		c.mu.Unlock()
		return nil, ErrNotConnected
	}
	c.pending = ch
	c.mu.Unlock()
	if err := c.sendMsg(m); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		if e, ok := r.msg.(*protocol.Error); ok {
			return nil, e
		}
		return r.msg, nil
	case <-ctx.Done():
		c.mu.Lock()
		if c.pending == ch {
			c.pending = nil
		}
		c.mu.Unlock()
		return nil, ctx.Err()
	case <-c.closedCh:
		return nil, ErrClosed
	}
}

// Create opens a new room (nil settings: the server's defaults) and takes
// its first seat, as host.
func (c *Conn) Create(ctx context.Context, settings *protocol.Settings) (*protocol.Joined, error) {
	m, err := c.ask(ctx, &protocol.Create{Settings: settings})
	if err != nil {
		return nil, fmt.Errorf("create room: %w", err)
	}
	j, ok := m.(*protocol.Joined)
	if !ok {
		return nil, fmt.Errorf("create room: unexpected %s", protocol.TypeName(m.Type()))
	}
	return j, nil
}

// Join takes a seat in the room with codeOrLink: a code ("ABC-DEF", any
// case) or an invite link.
func (c *Conn) Join(ctx context.Context, codeOrLink string) (*protocol.Joined, error) {
	code, err := protocol.ParseRoomCode(codeOrLink)
	if err != nil {
		return nil, fmt.Errorf("join %q: %w", codeOrLink, err)
	}
	via := protocol.ViaCode
	if strings.Contains(codeOrLink, "://") {
		via = protocol.ViaLink
	}
	m, err := c.ask(ctx, &protocol.Join{Code: code, Via: via})
	if err != nil {
		return nil, fmt.Errorf("join %s: %w", code, err)
	}
	j, ok := m.(*protocol.Joined)
	if !ok {
		return nil, fmt.Errorf("join %s: unexpected %s", code, protocol.TypeName(m.Type()))
	}
	return j, nil
}

// Leave gives up the seat and waits for the server to confirm.
func (c *Conn) Leave(ctx context.Context) error {
	c.mu.Lock()
	in := c.code != ""
	c.mu.Unlock()
	if !in {
		return ErrNotInRoom
	}
	if _, err := c.request(ctx, &protocol.Leave{}); err != nil {
		return fmt.Errorf("leave: %w", err)
	}
	return nil
}

// Kick asks the server to remove the player in slot from the room (host
// only, outside a round; docs/protocol.md, kick). Like Send it never
// blocks: the removal shows in the next room state, a refusal comes back as
// an EventMessage carrying a *protocol.Error whose Request is
// protocol.TypeKick. It returns ErrNotInRoom outside a room,
// ErrNotConnected while reconnecting and ErrClosed after Close.
func (c *Conn) Kick(slot int) error {
	c.mu.Lock()
	in := c.code != ""
	c.mu.Unlock()
	if !in {
		return ErrNotInRoom
	}
	if err := c.Send(&protocol.Kick{Slot: slot}); err != nil {
		return fmt.Errorf("kick slot %d: %w", slot, err)
	}
	return nil
}

// Send queues a control message (Ready, Loading, Settings, Start,
// InPosition, Finish, Vote, SetName, DirectLink, Signal, Invite). It never
// blocks; answers and refusals come back as events. It returns
// ErrNotConnected while reconnecting and ErrClosed after Close.
func (c *Conn) Send(m protocol.Message) error {
	select {
	case <-c.closedCh:
		return ErrClosed
	default:
	}
	c.mu.Lock()
	if sn, ok := m.(*protocol.SetName); ok {
		c.name = sn.Name // kept for the next hello
	}
	rejoining := c.rejoining
	c.mu.Unlock()
	if rejoining {
		return ErrNotConnected // the room would refuse it: we are not back in it yet
	}
	return c.sendMsg(m)
}

// SendState queues the local player's state. It never blocks and does
// not allocate (the lag simulator aside): the state is queued as a value
// and encoded once, by the writer, into its reused buffer. When the
// network falls behind, the oldest queued state is dropped. The slot is
// filled in. States sent while reconnecting are dropped. A state's stamp
// is its sample's time on Clock: the writer carries a fresh one forward to
// the write within Options.SendLead (client/core, Queue).
func (c *Conn) SendState(s *wire.State) error {
	now := c.clock.Now() // outside mu: a panic here must not leave it locked
	lagged := c.lagOut.active()
	dg := lagged && c.DatagramUp() // the simulator delays a datagram as UDP would
	c.mu.Lock()
	switch {
	case c.isClosed():
		c.mu.Unlock()
		return ErrClosed
	case c.code == "":
		c.mu.Unlock()
		return ErrNotInRoom
	}
	st := *s
	st.Slot = uint8(c.slot)
	if lagged {
		// The lag simulator delays bytes; the wait up to it is the
		// sender's, so the carry to now happens here.
		c.lead.Apply(&st, core.SampledAt(&st, now), now)
		c.mu.Unlock()
		b, err := wire.AppendState(make([]byte, 0, wire.MaxStateSize), &st)
		if err != nil {
			return fmt.Errorf("send state: %w", err)
		}
		if dg {
			c.lagOut.pushDatagram(b)
		} else {
			c.lagOut.push(b, false)
		}
		return nil
	}
	sess := c.queueState(&st, core.SampledAt(&st, now))
	c.mu.Unlock()
	wake(sess)
	return nil
}

func (c *Conn) isClosed() bool {
	select {
	case <-c.closedCh:
		return true
	default:
		return false
	}
}

// PollEvents appends the events received since the last call to dst and
// returns it. It never blocks.
func (c *Conn) PollEvents(dst []Event) []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events.drain(dst)
}

// PollStates appends the remote states received since the last call to dst
// and returns it. It never blocks. States arrive only once the clock is
// synced (EventSynced); earlier ones are dropped.
func (c *Conn) PollStates(dst []RemoteState) []RemoteState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.states.drain(dst)
}

// Notify returns a channel that receives (without blocking the client)
// whenever an event or state is queued: goroutine users can wait on it
// instead of polling.
func (c *Conn) Notify() <-chan struct{} { return c.notify }

// Now returns the local clock.
func (c *Conn) Now() time.Duration { return c.clock.Now() }

// Synced reports whether the clock is synchronised to the server.
func (c *Conn) Synced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.Synced()
}

// ServerTime maps a local time onto the server clock (the countdown's GoUS
// and every *_us in the protocol are server times).
func (c *Conn) ServerTime(local time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.ServerTime(local)
}

// LocalTime maps a server time onto the local clock.
func (c *Conn) LocalTime(server time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.LocalTime(server)
}

// RTT returns the best round trip to the server seen recently.
func (c *Conn) RTT() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.RTT()
}

// Token returns the identity token to keep for the next session.
func (c *Conn) Token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// User returns the user id.
func (c *Conn) User() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.welcome.User
}

// Welcome returns the server's last welcome (limits, versions, draining).
func (c *Conn) Welcome() protocol.Welcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.welcome
}

// Slot returns the client's slot in its room, or -1.
func (c *Conn) Slot() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slot
}

// Room returns the latest state of the client's room (zero when in none).
func (c *Conn) Room() protocol.RoomState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.room
}

// Connected reports whether the connection is up (false while reconnecting).
func (c *Conn) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess != nil && !c.rejoining
}

// Stats returns the client's counters.
func (c *Conn) Stats() Stats {
	c.mu.Lock()
	s := c.stats
	c.mu.Unlock()
	s.LagDropped = c.lagOut.dropped() + c.lagIn.dropped()
	s.LagRetransmitted = c.lagOut.retransmitted() + c.lagIn.retransmitted()
	s.BytesIn, s.BytesOut = c.bytesIn.Load(), c.bytesOut.Load()
	return s
}

// Err returns why the client disconnected for good, or nil.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// Close ends the connection with a normal close (the seat is held by the
// server for a reconnect; Leave first to give it up) and stops every
// goroutine. It waits at most CloseTimeout and ctx, then cuts the connection.
func (c *Conn) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		close(c.closedCh)
		c.endLife()
	})
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	t := time.NewTimer(c.opts.CloseTimeout)
	defer t.Stop()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = context.DeadlineExceeded
	}
	if err != nil {
		c.mu.Lock()
		if c.sess != nil {
			_ = c.sess.ws.CloseNow()
		}
		c.mu.Unlock()
		<-done
	}
	c.stopLag()
	if err != nil {
		return fmt.Errorf("close: goodbye cut short: %w", err)
	}
	return nil
}

func (c *Conn) stopLag() {
	c.lagOut.close()
	c.lagIn.close()
}

// SetLag changes the lag simulator live, both directions; the zero value
// turns it off. Messages already delayed keep their due times, and reliable
// messages keep their order across the change.
func (c *Conn) SetLag(l LagConfig) error {
	if err := l.Validate(); err != nil {
		return fmt.Errorf("set lag: %w", err)
	}
	_ = c.lagOut.setConfig(l) // validated above: cannot fail
	_ = c.lagIn.setConfig(l)
	return nil
}
