package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/funnel"
	"github.com/nearzero/nearzero/server/internal/analytics"
	"github.com/nearzero/nearzero/server/internal/store"
	"github.com/nearzero/nearzero/server/metrics"
	"github.com/nearzero/nearzero/server/metrics/prom"
	"github.com/nearzero/nearzero/server/room"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor bounds every wait in these tests; generous for busy machines.
const waitFor = 10 * time.Second

// syncBuffer is a goroutine-safe bytes.Buffer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// events decodes the analytics lines written so far.
func (b *syncBuffer) events(t *testing.T) []funnel.Event {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []funnel.Event
	for _, line := range strings.Split(strings.TrimSpace(b.b.String()), "\n") {
		if line == "" {
			continue
		}
		var e funnel.Event
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		out = append(out, e)
	}
	return out
}

// env is one server on loopback with an in-memory database.
type env struct {
	t      *testing.T
	s      *Server
	url    string // ws://.../ws
	base   string // http://...
	store  *store.Store
	events *syncBuffer
	reg    *prometheus.Registry
}

// testServerConfig has short room durations so flows finish in well under
// a second. The hello time-out keeps its default: a connection that a
// loaded machine takes a while to get to its hello is not a test's point
// (TestBadInputEndsConnection sets its own for the one that is).
func testServerConfig() *Config {
	return &Config{
		Room: room.Config{
			SeatHold:         600 * time.Millisecond,
			HandshakeTimeout: 400 * time.Millisecond,
			Countdown:        100 * time.Millisecond,
			RoundLimit:       20 * time.Second,
			MinRoundLimit:    time.Second,
			TimeWarning:      200 * time.Millisecond,
			ResultsFor:       300 * time.Millisecond,
		},
		DrainGrace:  5 * time.Second,
		CloseSpread: 50 * time.Millisecond,
		// New rooms whatever the machine's load (TestOverloadRefusesNewRoomsOnly
		// tests the policy).
		OverloadAfter: -1,
	}
}

func newEnv(t *testing.T, mutate func(*Config)) *env {
	t.Helper()
	return newEnvOpts(t, mutate, envOpts{})
}

// envOpts change what newEnvOpts wires in.
type envOpts struct {
	wrap func(Storage) Storage // wraps the in-memory store (faults, counts)
	log  *slog.Logger
	turn *TURN // Deps.TURN
	// delay is Deps.Delay; listen wraps the listener (a reader the test
	// slows down).
	delay  func() time.Duration
	listen func(net.Listener) net.Listener
}

func newEnvOpts(t *testing.T, mutate func(*Config), o envOpts) *env {
	t.Helper()
	cfg := testServerConfig()
	if mutate != nil {
		mutate(cfg)
	}
	st, err := store.Open(context.Background(), store.Memory)
	require.NoError(t, err)
	e := &env{t: t, store: st, events: &syncBuffer{}, reg: prometheus.NewRegistry()}
	var storage Storage = st
	if o.wrap != nil {
		storage = o.wrap(st)
	}
	m, h, err := prom.New(e.reg)
	require.NoError(t, err)
	e.s, err = New(cfg, Deps{Store: storage, Metrics: m, MetricsHandler: h, Analytics: analytics.NewSink(e.events, nil), Log: o.log,
		TURN: o.turn, Delay: o.delay})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if o.listen != nil {
		ln = o.listen(ln)
	}
	served := make(chan error, 1)
	go func() { served <- e.s.Serve(ln) }()
	<-e.s.Ready()
	e.base = "http://" + e.s.Addr().String()
	e.url = "ws://" + e.s.Addr().String() + "/ws"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, e.s.Shutdown(ctx))
		require.NoError(t, <-served)
		require.NoError(t, st.Close())
	})
	return e
}

// fastSync syncs the clock in a few tens of milliseconds.
var fastSync = clock.SyncConfig{WarmupInterval: 10 * time.Millisecond, SyncedAfter: 2, WarmupSamples: 4}

// bot is a client with a log of every event it received.
type bot struct {
	*serverlink.Conn
	t      *testing.T
	name   string
	seen   []serverlink.Event
	cursor int
}

func (e *env) dial(name string, opts *serverlink.Options) *bot {
	e.t.Helper()
	return dialURL(e.t, e.url, name, opts)
}

func dialURL(t *testing.T, url, name string, opts *serverlink.Options) *bot {
	t.Helper()
	o := serverlink.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = name
	}
	if o.Sync == (clock.SyncConfig{}) {
		o.Sync = fastSync
	}
	if o.BackoffMin == 0 {
		o.BackoffMin, o.BackoffMax = 20*time.Millisecond, 100*time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := serverlink.Dial(ctx, url, &o)
	require.NoError(t, err, "dial %s", name)
	b := &bot{Conn: c, t: t, name: name}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		_ = c.Close(ctx)
	})
	return b
}

// wait returns the first event after the previous wait that matches.
func (b *bot) wait(desc string, match func(serverlink.Event) bool) serverlink.Event {
	b.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		b.seen = b.Conn.PollEvents(b.seen)
		for ; b.cursor < len(b.seen); b.cursor++ {
			if ev := b.seen[b.cursor]; match(ev) {
				b.cursor++
				return ev
			}
		}
		if time.Now().After(deadline) {
			var kinds []string
			for _, ev := range b.seen {
				k := ev.Kind.String()
				if ev.Msg != nil {
					k += ":" + protocol.TypeName(ev.Msg.Type())
				}
				kinds = append(kinds, k)
			}
			b.t.Fatalf("%s: no event %q within %v; got %v", b.name, desc, waitFor, kinds)
		}
		select {
		case <-b.Conn.Notify():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitMsg waits for a message of type T matching ok (nil: any).
func waitMsg[T protocol.Message](b *bot, desc string, ok func(T) bool) T {
	b.t.Helper()
	ev := b.wait(desc, func(ev serverlink.Event) bool {
		m, is := ev.Msg.(T)
		return ev.Kind == serverlink.EventMessage && is && (ok == nil || ok(m))
	})
	return ev.Msg.(T)
}

// waitRoom waits until the bot's room state satisfies ok.
func (b *bot) waitRoom(desc string, ok func(protocol.RoomState) bool) protocol.RoomState {
	b.t.Helper()
	return eventually(b.t, desc, func() (protocol.RoomState, bool) {
		st := b.Room()
		return st, ok(st)
	})
}

// eventually polls f until it reports true.
func eventually[T any](t *testing.T, desc string, f func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		v, ok := f()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true within %v: %s (last %+v)", waitFor, desc, v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (b *bot) waitSynced() {
	b.t.Helper()
	eventually(b.t, b.name+" synced", func() (bool, bool) { return b.Synced(), b.Synced() })
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

// get fetches an HTTP path.
func (e *env) get(path string) (int, string) {
	e.t.Helper()
	resp, err := http.Get(e.base + path)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp.StatusCode, string(b)
}

// proxy forwards TCP connections to target and can cut them, to simulate
// a network loss between a client and the server.
type proxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	conns   []net.Conn
	refuse  bool
	wg      sync.WaitGroup
	stopped bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) url() string { return "ws://" + p.ln.Addr().String() + "/ws" }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.refuse || p.stopped {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

// cut drops every connection; refuse makes new ones fail until allowed.
func (p *proxy) cut(refuse bool) {
	p.mu.Lock()
	p.refuse = refuse
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

func (p *proxy) allow() {
	p.mu.Lock()
	p.refuse = false
	p.mu.Unlock()
}

func (p *proxy) close() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.cut(true)
	p.wg.Wait()
}

func newTestMetrics() (*metrics.Metrics, error) { return metrics.New(), nil }

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type roomConfig = room.Config

func roomCfg(f func(*roomConfig)) roomConfig {
	var c roomConfig
	f(&c)
	return c
}
