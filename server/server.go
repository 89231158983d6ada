package server

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/funnel"
	"github.com/nearzero/nearzero/server/identity"
	"github.com/nearzero/nearzero/server/metrics"
)

// Storage is what the server keeps on disk; *store.Store implements it.
// Calls come from connection goroutines and one background writer, never
// with a room's lock held.
type Storage interface {
	// Secret returns the identity secret, creating it with newSecret once.
	Secret(ctx context.Context, newSecret func() ([]byte, error)) ([]byte, error)
	// UserName returns a user's stored display name.
	UserName(ctx context.Context, user string) (name string, ok bool, err error)
	// RenameUser changes the display name of a user already stored; an
	// unknown user is no error and stores nothing (rows are made with
	// results, not for every identity a Hello mints).
	RenameUser(ctx context.Context, user, name string, now time.Time) error
	// SaveResults records one round's results and a row for each of its
	// players.
	SaveResults(ctx context.Context, res *protocol.Results, now time.Time) error
	// SaveInterrupted records a round the server stopped while it ran,
	// with the players who were in it.
	SaveInterrupted(ctx context.Context, res *protocol.Results, now time.Time) error
}

// Cluster is the room directory a server shares with the other nodes of
// a cluster; *cluster.Node (server/cluster, over NATS JetStream)
// implements it. Without one (the default) the server is a single node
// and no directory code runs. Calls never happen with a lock held.
type Cluster interface {
	// Bind gives the cluster this node's live load.
	Bind(load func() (players int, draining bool))
	// Place picks the node for a new room in region ("" for this node's):
	// here, or another node's public URL.
	Place(region string) (url string, here bool, err error)
	// Claim reserves a room code for this node, cluster-wide; taken
	// reports that another node holds it.
	Claim(ctx context.Context, code string) (taken bool, err error)
	// Release gives up a code of a room that closed here; never blocks.
	Release(code string)
	// Locate finds the node running code: here, another live node's public
	// URL, or found false when none runs it.
	Locate(ctx context.Context, code string) (url string, here, found bool, err error)
	// Changed asks for this node's entry to be published soon (rooms or
	// draining changed); never blocks.
	Changed()
	// Health returns the cluster figures for /healthz (JSON-encodable).
	Health() any
	// Peers returns the public URLs of the other live nodes, for the
	// welcome: where a client reconnects when this node is gone.
	Peers() []string
}

// Deps are the server's collaborators. Nil fields mean: no storage (a
// random secret per process, nothing saved), metrics of its own and no
// /metrics route, logs discarded, no analytics, a single node (no
// cluster).
type Deps struct {
	Store Storage
	// Secret, when set, overrides the stored identity secret (at least
	// identity.MinSecret bytes).
	Secret []byte
	// Metrics receives the server's metrics (metrics/prom exposes them to
	// Prometheus).
	Metrics *metrics.Metrics
	// MetricsHandler, when set, serves /metrics (prom.Handler).
	MetricsHandler http.Handler
	Log            *slog.Logger
	// Analytics receives the funnel events (analytics.NewSink writes them
	// as JSON lines); the server closes it at shutdown.
	Analytics EventSink
	// ICE, when set, returns the STUN and TURN servers for user's direct
	// links (TURN.ICEServers): the STUN ones go in its welcome, all of
	// them in the joined that seats it (TURN credentials only with a
	// seat); nil hands out none, or TURN's when that is set.
	ICE func(user string) []protocol.ICEServer
	// TURN, when set, is the embedded TURN relay (StartTURN) the server
	// hands out to seated players and guards: its credentials are good only
	// while their player holds a seat, a player's allocations close when
	// it leaves its last seat, and its sockets count in MaxSockets.
	TURN *TURN
	// ICEFor, when set, takes ICE's place: the STUN and TURN servers for
	// user, who came from c (TURN.ICEServersFor), and whether some were
	// withheld because the player could not reach them (counted in
	// nearzero_ice_refused_total).
	ICEFor func(user string, c ICEClient) ([]protocol.ICEServer, bool)
	// Cluster, when set, makes the server one node of a cluster: rooms
	// are placed on the least-loaded node and joins of rooms elsewhere
	// are redirected there (README, "Scale-out").
	Cluster Cluster
	// DatagramCert is the datagram path's TLS certificate; nil generates
	// a self-signed one at start (clients pin its hash from the welcome).
	DatagramCert *tls.Certificate
	// DatagramConn is the UDP socket of the datagram path, owned by the
	// server from New on; nil: Serve opens one on its listener's address
	// and port. Config.NoDatagrams closes it unused.
	DatagramConn net.PacketConn
	// Delay, when set, replaces the server's measure of how far behind
	// its own work it runs (the Go scheduler's delay, Config.BusyAfter):
	// a host that knows better (a container's CPU throttling), or a test.
	// It is called often and must be cheap.
	Delay func() time.Duration
}

// EventSink receives funnel events (analytics.Sink is one). Emit must
// not block.
type EventSink interface {
	Emit(funnel.Event)
	Close() error
}

// ErrClosed indicates a call on a server that has shut down.
var ErrClosed = errors.New("server: closed")

// Server is the room server: rooms by code on WebSocket connections,
// health and metrics over HTTP. See the package documentation.
type Server struct {
	cfg     Config // read-only after New
	log     *slog.Logger
	m       *metrics.Metrics
	metrics http.Handler // may be nil
	store   Storage      // may be nil
	issuer  *identity.Issuer
	events  EventSink // may be nil
	cluster Cluster   // nil for a single node
	start   time.Time // wall and monotonic origin of the server clock

	ice    func(user string) []protocol.ICEServer                      // Deps.ICE; may be nil
	iceFor func(user string, c ICEClient) ([]protocol.ICEServer, bool) // Deps.ICEFor; may be nil

	dgCert *tls.Certificate // Deps.DatagramCert
	dgConn net.PacketConn   // Deps.DatagramConn
	dg     *datagrams       // the datagram path; nil when off; set by Serve before ready

	mu         sync.Mutex // guards the fields below
	rooms      map[string]*host
	sessions   map[string]*conn // user id -> live connection
	conns      map[*conn]struct{}
	rng        *rand.Rand // room codes
	draining   bool
	closingAll bool // drain reached its end: new connections are refused
	drainAt    time.Duration
	shut       bool
	httpSrv    *http.Server
	ready      chan struct{}
	addr       net.Addr

	connsBy map[string]int // open connections by address
	connsIn map[string]int // the same by its network (prefixKeyOf)
	wsConns int            // open connections in all (MaxConns)
	roomsBy map[string]int // open rooms by the address that created them
	roomsIn map[string]int // the same by its network (prefixKeyOf)

	socks sockets // accepted connections (MaxSockets; listener.go)

	turn   *TURN          // Deps.TURN; may be nil
	seatMu sync.Mutex     // guards seated
	seated map[string]int // seats with a connection, by user (the TURN relay's guard)

	players  atomic.Int64         // seated players with a connection
	busy     *busyMeter           // how far behind its own work the server runs (busy.go)
	delayFn  func() time.Duration // Deps.Delay; nil: busy's
	wasOver  atomic.Bool          // overloaded at the last sample (busy.go)
	nextConn atomic.Uint64

	proxies   []netip.Prefix // read-only: Config.TrustedProxies
	newIDs    *keyLimiter    // tokenless hellos by address
	joinFails *keyLimiter    // failed joins by address

	persist chan func(context.Context) // background storage writes (names): droppable
	dropMu  sync.Mutex                 // guards the two below
	dropped int                        // writes dropped since the last log line
	dropLog time.Duration              // server time of the last "write dropped" line; -1 for never

	resMu   sync.Mutex // guards resQ and resBusy
	resQ    []pendingResult
	resBusy bool          // the results writer holds resQ[0]
	resWake chan struct{} // cap 1
	stop    chan struct{}
	bg      sync.WaitGroup // persist worker and janitor
	connWG  sync.WaitGroup // connection handlers
}

// New returns a server. A nil cfg means defaults.
func New(cfg *Config, deps Deps) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	c := cfg.withDefaults()
	s := &Server{
		cfg: c, log: deps.Log, m: deps.Metrics, metrics: deps.MetricsHandler, store: deps.Store, cluster: deps.Cluster, ice: deps.ICE, iceFor: deps.ICEFor, start: time.Now(),
		turn: deps.TURN, seated: map[string]int{},
		dgCert: deps.DatagramCert, dgConn: deps.DatagramConn,
		rooms: map[string]*host{}, sessions: map[string]*conn{}, conns: map[*conn]struct{}{},
		ready: make(chan struct{}), persist: make(chan func(context.Context), 4096), stop: make(chan struct{}),
		connsBy: map[string]int{}, connsIn: map[string]int{}, socks: sockets{by: map[string]int{}, in: map[string]int{}}, roomsBy: map[string]int{}, roomsIn: map[string]int{}, dropLog: -1, resWake: make(chan struct{}, 1),
		newIDs:    newKeyLimiter(c.NewIdentityRate, float64(c.NewIdentityBurst)),
		joinFails: newKeyLimiter(c.JoinFailRate, float64(c.JoinFailBurst)),
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.m == nil {
		s.m = metrics.New()
	}
	var err error
	s.proxies, _ = parseProxies(c.TrustedProxies) // checked by Validate
	var seed [16]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("new server: seed room codes: %w", err)
	}
	s.rng = rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))

	secret := deps.Secret
	if secret == nil && s.store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		secret, err = s.store.Secret(ctx, identity.NewSecret)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("new server: %w", err)
		}
	}
	if secret == nil {
		if secret, err = identity.NewSecret(); err != nil {
			return nil, fmt.Errorf("new server: %w", err)
		}
		s.log.Warn("no storage and no secret: identities last only as long as this process")
	}
	if s.issuer, err = identity.NewIssuer(secret); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	s.events = deps.Analytics
	if s.turn != nil {
		if s.ice == nil {
			s.ice = s.turn.ICEServers
		}
		s.turn.attach(s)
	}
	s.busy, s.delayFn = newBusyMeter(), deps.Delay
	if s.cluster != nil {
		s.cluster.Bind(func() (int, bool) {
			s.mu.Lock()
			draining := s.draining || s.shut
			s.mu.Unlock()
			// An overloaded node takes no new rooms, as a draining one.
			return int(s.players.Load()), draining || s.overloaded()
		})
	}
	s.bg.Add(4)
	go s.supervise("storage writer", s.persistLoop)
	go s.supervise("results writer", s.resultsLoop)
	go s.supervise("janitor", s.janitor)
	go s.supervise("busy meter", s.watchBusy)
	return s, nil
}

// now is the server clock: time since New, monotonic.
func (s *Server) now() time.Duration { return time.Since(s.start) }

// wall converts a server-clock time to wall-clock time.
func (s *Server) wall(at time.Duration) time.Time { return s.start.Add(at) }

// Metrics returns the server's metrics (for tests and embedders).
func (s *Server) Metrics() *metrics.Metrics { return s.m }

// ListenAndServe listens on Config.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(ln)
}

// Serve serves on ln until Shutdown, then returns nil (or the listener's error).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.shut || s.httpSrv != nil {
		s.mu.Unlock()
		_ = ln.Close()
		return fmt.Errorf("serve: %w", ErrClosed)
	}
	// Without ReadTimeout or IdleTimeout, HeaderTimeout bounds a kept-alive
	// connection's wait for its next request too.
	s.httpSrv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: s.cfg.HeaderTimeout,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	s.addr = ln.Addr()
	ln = &capListener{Listener: ln, s: s}
	srv := s.httpSrv
	s.dg = s.startDatagrams(ln.Addr()) // datagram.go; before ready: every welcome may offer it
	close(s.ready)
	s.mu.Unlock()
	s.log.Info("serving", "addr", ln.Addr().String())
	err := srv.Serve(ln)
	// The listener is closed: free the UDP port with it (a game that
	// stops hosting may host again at once). Connections still open fall
	// back to their WebSockets until they close.
	s.dg.close()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// DatagramAddr returns the local address of the datagram path's UDP
// socket, or nil when the path is off or Serve has not started.
func (s *Server) DatagramAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dg == nil {
		return nil
	}
	return s.dg.pc.LocalAddr()
}

// Ready returns a channel closed once Serve has started; Addr is then set.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addr returns the address being served, or nil before Serve.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Drain shuts down gracefully: no new rooms or rounds; rooms are told the
// server is updating; running rounds get until DrainGrace to finish; then
// every connection is closed with 1001 going away, spread over
// CloseSpread. It returns once every connection is gone, or with ctx's
// error. Call Shutdown afterwards to stop the listener and background work.
func (s *Server) Drain(ctx context.Context) error {
	s.mu.Lock()
	if s.shut {
		s.mu.Unlock()
		return fmt.Errorf("drain: %w", ErrClosed)
	}
	first := !s.draining
	if first {
		s.draining = true
		s.drainAt = s.now()
	}
	deadline := s.drainAt + s.cfg.DrainGrace
	hosts := s.hostsLocked()
	s.mu.Unlock()
	if first {
		if s.cluster != nil {
			s.cluster.Changed() // no more rooms placed here
		}
		s.log.Info("draining", "grace", s.cfg.DrainGrace, "rooms", len(hosts))
		for _, h := range hosts {
			h.do(func(now time.Duration) { h.r.Drain(now, max(0, deadline-now)) })
		}
	}

	// Wait for the running rounds, at most until the grace ends.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for s.busyRooms() > 0 && s.now() < deadline {
		select {
		case <-ctx.Done():
			return fmt.Errorf("drain: %w", ctx.Err())
		case <-tick.C:
		}
	}
	s.closeAll(protocol.CodeGoingAway, "server updating", s.cfg.CloseSpread)
	for {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drain: %d connections left: %w", n, ctx.Err())
		case <-tick.C:
		}
	}
}

// busyRooms counts rooms with a round running.
func (s *Server) busyRooms() int {
	s.mu.Lock()
	hosts := s.hostsLocked()
	s.mu.Unlock()
	n := 0
	for _, h := range hosts {
		h.mu.Lock()
		if h.r.Busy() {
			n++
		}
		h.mu.Unlock()
	}
	return n
}

func (s *Server) hostsLocked() []*host {
	out := make([]*host, 0, len(s.rooms))
	for _, h := range s.rooms {
		out = append(out, h)
	}
	return out
}

func (s *Server) connsLocked() []*conn {
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// closeAll closes every connection with code, spread evenly over spread,
// and refuses new ones.
func (s *Server) closeAll(code protocol.Code, reason string, spread time.Duration) {
	s.mu.Lock()
	s.closingAll = true
	conns := s.connsLocked()
	s.mu.Unlock()
	if len(conns) == 0 {
		return
	}
	s.log.Info("closing connections", "n", len(conns), "code", code, "spread", spread)
	gap := spread / time.Duration(len(conns))
	for i, c := range conns {
		if i > 0 && gap > 0 {
			select {
			case <-time.After(gap):
			case <-s.stop:
			}
		}
		c.closeWith(code, reason)
	}
}

// Shutdown stops the server: the listener closes, remaining connections
// are closed with 1001 going away at once, background work ends. It
// returns when all of that is done or ctx ends. Drain first for a graceful
// stop. The Storage is not closed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.shut {
		s.mu.Unlock()
		return nil
	}
	s.shut = true
	srv := s.httpSrv
	s.mu.Unlock()
	var errs []error
	if srv != nil {
		// Close the listener; hijacked WebSockets are ours to close.
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shutdown http: %w", err))
		}
	}
	if s.dg != nil {
		s.dg.close() // Serve closes it too, as it returns: whichever is first
	} else if s.dgConn != nil && srv == nil {
		_ = s.dgConn.Close() // never served
	}
	// Rooms stop first, so that a round still running is recorded as
	// interrupted with the players in it (closing the connections first
	// would let seats expire and the room forget them).
	s.mu.Lock()
	hosts := s.hostsLocked()
	clear(s.rooms)
	clear(s.roomsBy)
	clear(s.roomsIn)
	s.mu.Unlock()
	if s.cluster != nil {
		for _, h := range hosts {
			s.cluster.Release(h.code)
		}
	}
	for _, h := range hosts { // outside s.mu: never with a host's lock
		if res := h.stop(s.now()); res != nil {
			s.log.Warn("round interrupted", "room", res.Code, "round", res.Round, "players", len(res.Players))
			s.saveResults(res, true)
		}
	}
	s.closeAll(protocol.CodeGoingAway, "server stopping", 0)
	done := make(chan struct{})
	go func() { s.connWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// CloseNow may wait for a close handshake under way: never under
		// s.mu (cleanups need it), and not one connection after another.
		s.mu.Lock()
		conns := s.connsLocked()
		s.mu.Unlock()
		var cut sync.WaitGroup
		for _, c := range conns {
			cut.Go(func() { _ = c.ws.CloseNow() })
		}
		cut.Wait()
		<-done
		errs = append(errs, fmt.Errorf("shutdown: connections forced closed: %w", ctx.Err()))
	}
	if err := s.flushResults(ctx); err != nil {
		errs = append(errs, err)
	}
	close(s.stop)
	s.bg.Wait()
	s.logUnsaved()
	if s.events != nil {
		if err := s.events.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// save queues a storage write for the background writer; it never blocks.
func (s *Server) save(what string, f func(ctx context.Context, st Storage) error) {
	if s.store == nil {
		return
	}
	job := func(ctx context.Context) {
		if err := f(ctx, s.store); err != nil {
			s.log.Error("storage write failed", "what", what, "err", err)
		}
	}
	select {
	case s.persist <- job:
	default:
		s.m.StorageDropped.Inc()
		s.dropMu.Lock()
		s.dropped++
		now := s.now()
		if s.dropLog >= 0 && now-s.dropLog < dropLogEvery {
			s.dropMu.Unlock()
			return
		}
		n := s.dropped
		s.dropped, s.dropLog = 0, now
		s.dropMu.Unlock()
		// At most one line per dropLogEvery: a flood must not become a log flood.
		s.log.Error("storage queue full; write dropped", "what", what, "dropped", n, "per", dropLogEvery)
	}
}

// dropLogEvery is the least time between two "write dropped" log lines.
const dropLogEvery = 10 * time.Second

// pendingResult is a round's results waiting to be stored.
type pendingResult struct {
	res         *protocol.Results
	interrupted bool
	at          time.Time
}

// Results retry back-off: doubling from resultsRetryMin to resultsRetryMax.
const (
	resultsRetryMin = 20 * time.Millisecond
	resultsRetryMax = 5 * time.Second
)

// saveResults queues a round's results on their own path: never dropped,
// written by resultsLoop and retried until stored. Never blocks.
func (s *Server) saveResults(res *protocol.Results, interrupted bool) {
	if s.store == nil {
		return
	}
	s.resMu.Lock()
	s.resQ = append(s.resQ, pendingResult{res: res, interrupted: interrupted, at: s.wall(s.now())})
	s.resMu.Unlock()
	select {
	case s.resWake <- struct{}{}:
	default:
	}
}

// resultsLoop stores queued results in order, retrying each with back-off
// until it is stored or the server stops.
func (s *Server) resultsLoop() {
	delay := resultsRetryMin
	for {
		s.resMu.Lock()
		if len(s.resQ) == 0 {
			s.resMu.Unlock()
			select {
			case <-s.resWake:
				continue
			case <-s.stop:
				return
			}
		}
		p := s.resQ[0]
		s.resBusy = true
		s.resMu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		if p.interrupted {
			err = s.store.SaveInterrupted(ctx, p.res, p.at)
		} else {
			err = s.store.SaveResults(ctx, p.res, p.at)
		}
		cancel()

		s.resMu.Lock()
		s.resBusy = false
		if err == nil {
			s.resQ = s.resQ[1:]
		}
		s.resMu.Unlock()
		if err == nil {
			delay = resultsRetryMin
			continue
		}
		s.m.ResultsRetries.Inc()
		s.log.Error("storing results failed; retrying", "room", p.res.Code, "round", p.res.Round, "in", delay, "err", err)
		select {
		case <-time.After(delay):
		case <-s.stop:
			return
		}
		delay = min(2*delay, resultsRetryMax)
	}
}

// flushResults waits until every queued result is stored, or ctx ends.
func (s *Server) flushResults(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		s.resMu.Lock()
		n := len(s.resQ)
		s.resMu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shutdown: %d round results not stored: %w", n, ctx.Err())
		case <-t.C:
		}
	}
}

// logUnsaved writes results that could not be stored into the log, whole,
// so that an operator can still recover them.
func (s *Server) logUnsaved() {
	s.resMu.Lock()
	q := s.resQ
	s.resQ = nil
	s.resMu.Unlock()
	for _, p := range q {
		b, _ := json.Marshal(p.res)
		s.log.Error("round results not stored", "interrupted", p.interrupted, "at", p.at, "results", string(b))
	}
}

func (s *Server) persistLoop() {
	run := func(job func(context.Context)) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		job(ctx)
		cancel()
	}
	for {
		select {
		case job := <-s.persist:
			run(job)
		case <-s.stop:
			for {
				select {
				case job := <-s.persist:
					run(job)
				default:
					return
				}
			}
		}
	}
}

// janitor enforces hello, idle and write time-outs and forgets idle
// per-address limiter keys.
func (s *Server) janitor() {
	every := min(s.cfg.WriteTimeout, s.cfg.HelloTimeout, s.cfg.IdleTimeout) / 4
	t := time.NewTicker(max(every, 10*time.Millisecond))
	defer t.Stop()
	var swept, lobbies time.Duration
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		now := s.now()
		s.mu.Lock()
		for c := range s.conns {
			c.check(now)
		}
		s.mu.Unlock()
		if lt := s.cfg.LobbyTimeout; lt > 0 && now-lobbies >= lt/8 {
			lobbies = now
			s.expireLobbies()
		}
		if now-swept >= sweepEvery {
			swept = now
			s.newIDs.sweep(now)
			s.joinFails.sweep(now)
		}
	}
}

// sweepEvery is how often the janitor forgets idle limiter keys.
const sweepEvery = 10 * time.Second

// emit sends an analytics event, with wall time.
func (s *Server) emit(e funnel.Event) {
	if s.events == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = s.wall(e.At)
	}
	s.events.Emit(e)
}
