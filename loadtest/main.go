// Command loadtest fills rooms with headless bots that join, ready up and
// play at 60 Hz against a room server on loopback, then reports relayed
// states per second, relay latency (p50, p99, max) and errors.
//
// By default (-relay both) the same bots then play against a bare fan-out
// relay in the same process (bare.go: the server's WebSocket library,
// framing and write batching, nothing else), and the report gives the
// room server's throughput, p99 and CPU per relayed state as ratios of
// the bare relay's: figures that hold across machines where the absolute
// ones do not (README, "Load test").
//
//	go run ./loadtest                         # in-process server, 50 rooms x 8 players, 60 s
//	go run ./loadtest -url ws://127.0.0.1:8787/ws -rooms 10 -duration 20s
//	go run ./loadtest -url ws://127.0.0.1:8801/ws,ws://127.0.0.1:8802/ws -rooms 10
//
// With several -url (a cluster's nodes, README "Scale-out"), room i is
// created through node i and its other bots join through the following
// nodes in turn, so that some joins are redirected; the report separates
// the join latency of direct and redirected joins, and sums the relayed
// states of every node.
//
// The bots reconnect as a game does (the client's back-off, then the
// rejoin; -no-reconnect turns it off): kill or stop a node during a run and
// the report says how many bots reconnected, how long they took (from
// reconnecting to reconnected, p50 and max) and how many lost their room.
//
// -transport chooses how the bots' states travel to and from the server:
// ws (every state on the WebSocket), quic (as datagrams over the server's
// datagram path, docs/protocol.md; the run waits until every bot took
// it), or both: the same run once each way, one after the other against
// a fresh in-process server each, and a comparison at the end.
//
//	go run ./loadtest -transport both -rooms 20 -players 8 -duration 20s
//
// -loss runs it all (in-process server and bots) in a network namespace of
// its own whose loopback loses that percent of the packets each way
// (loss.go; root, ip and nft):
//
//	go run ./loadtest -loss 2 -transport both -relay room -rooms 8   # as root
//
// It refuses any address that is not loopback, and bounds rooms, players
// and duration. Relay latency is measured from the sender's SendState to
// the receiver's arrival on one shared clock (all bots share a process).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server"
	"github.com/nearzero/nearzero/server/metrics/prom"
	"github.com/nearzero/nearzero/server/room"
)

// Limits on what one run may ask for.
const (
	maxRooms    = 500
	maxPlayers  = 64
	maxDuration = 10 * time.Minute
	setupFor    = 60 * time.Second // connecting, joining and starting every room
	seqWindow   = 1024             // send times remembered per sender
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type config struct {
	urls     []string
	rooms    int
	players  int
	duration time.Duration
	rate     float64
	jsonOut  bool
	cpuProf  string
	noRecon  bool
	// transports are the runs to make, in order: "ws", "quic".
	transports []string
	transport  string // of the run under way
	relay      string // "both", "room" or "bare"
	coalesce   time.Duration
	loss       float64 // percent of packets lost each way (loss.go)
}

func parse(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var urls string
	fs.StringVar(&urls, "url", "", "server WebSocket URL on loopback, e.g. ws://127.0.0.1:8787/ws, or several separated by commas (the nodes of a cluster) (default: start a server in this process); every bot is one address, so start servers with -max-conns-per-addr -1 -max-rooms-per-addr -1 -max-rooms-per-prefix -1 -playing-reserve -1 -small-net-reserve -1 -new-identity-rate -1")
	fs.IntVar(&c.rooms, "rooms", 50, fmt.Sprintf("rooms to fill (at most %d)", maxRooms))
	fs.IntVar(&c.players, "players", 8, fmt.Sprintf("bots per room (at most %d)", maxPlayers))
	fs.DurationVar(&c.duration, "duration", 60*time.Second, fmt.Sprintf("how long the bots play (at most %v)", maxDuration))
	fs.Float64Var(&c.rate, "rate", 60, "states per second per bot")
	fs.BoolVar(&c.jsonOut, "json", false, "print the report as JSON")
	fs.BoolVar(&c.noRecon, "no-reconnect", false, "bots give up when their connection drops, instead of reconnecting and rejoining")
	var transport string
	fs.StringVar(&transport, "transport", "ws", "how states travel: ws (the WebSocket), quic (datagrams over the server's datagram path), or both (one run each, compared)")
	fs.StringVar(&c.cpuProf, "cpuprofile", "", "write a CPU profile of the whole process (bots and, by default, the server) to this file")
	fs.DurationVar(&c.coalesce, "coalesce", 0, "how long each relay's writers wait for a tick's states before a write (server.Config.WriteCoalesce; 0 for none, the server's default), the in-process room server's and the bare relay's alike")
	fs.StringVar(&c.relay, "relay", "both", "what the bots play against: room (the room server), bare (the baseline: a bare fan-out relay in this process, with the server's WebSocket library, framing and batching and nothing else), or both, one after the other, with the room server's figures as a share of the bare relay's")
	fs.Float64Var(&c.loss, "loss", 0, fmt.Sprintf("percent of the packets lost each way, TCP and UDP alike (0 to %d): the server and bots run in a network namespace of their own whose loopback drops them (needs root, ip and nft; not with -url)", maxLoss))
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case math.IsNaN(c.loss) || c.loss < 0 || c.loss > maxLoss:
		return nil, fmt.Errorf("-loss %v outside 0..%d (percent)", c.loss, maxLoss)
	case c.loss > 0 && urls != "":
		return nil, errors.New("-loss runs the server in this process, inside a network namespace of its own: it cannot reach a server at -url")
	case c.rooms < 1 || c.rooms > maxRooms:
		return nil, fmt.Errorf("-rooms %d outside 1..%d", c.rooms, maxRooms)
	case c.players < 1 || c.players > maxPlayers:
		return nil, fmt.Errorf("-players %d outside 1..%d", c.players, maxPlayers)
	case c.duration <= 0 || c.duration > maxDuration:
		return nil, fmt.Errorf("-duration %v outside (0, %v]", c.duration, maxDuration)
	case c.rate <= 0 || c.rate > 240:
		return nil, fmt.Errorf("-rate %v outside (0, 240]", c.rate)
	case c.relay != "both" && c.relay != "room" && c.relay != "bare":
		return nil, fmt.Errorf("-relay %q: room, bare or both", c.relay)
	}
	switch transport {
	case "ws", "quic":
		c.transports = []string{transport}
	case "both":
		c.transports = []string{"ws", "quic"}
	default:
		return nil, fmt.Errorf("-transport %q: want ws, quic or both", transport)
	}
	for _, u := range strings.Split(urls, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		if err := loopbackOnly(u); err != nil {
			return nil, err
		}
		c.urls = append(c.urls, u)
	}
	return c, nil
}

// loopbackOnly refuses URLs whose host is not a loopback address.
func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-url %s: the load test only connects to loopback (127.0.0.1, ::1, localhost)", raw)
	}
	return nil
}

// Report is the outcome of a run.
type Report struct {
	// Transport is how the states travelled: "ws" or "quic".
	Transport string
	// Loss is the percent of packets lost each way (-loss; 0: none).
	Loss            float64 `json:",omitempty"`
	Rooms, Players  int
	Duration        time.Duration
	Rate            float64
	SentPerSec      float64 // states the bots handed to the network
	ReceivedPerSec  float64 // relayed states the bots received
	ServerRelayedPS float64 // from the server's metrics; see MetricsMissing
	// MetricsMissing are the /metrics pages that could not be read
	// before or after the run: the server figures are then unknown.
	MetricsMissing   []string `json:",omitempty"`
	ExpectedPerSec   float64  // rooms x players x (players-1) x rate
	LatencyP50       time.Duration
	LatencyP99       time.Duration
	LatencyMax       time.Duration
	Samples          int
	Errors           map[string]int // by kind
	ServerRejected   float64
	ServerDropped    float64
	ClientQueueDrops int64
	StatesBeforeSync int64
	// DatagramShare is the share of the states the bots sent that went
	// as datagrams (0 over the WebSocket).
	DatagramShare float64
	Nodes         int // servers the bots were spread over
	// Join latency (Join call to Joined) of joins answered by the node
	// asked, and of joins redirected to another node first; create
	// latency likewise (a create placed on another node is redirected).
	JoinDirect, JoinRedirected     Latency
	CreateDirect, CreateRedirected Latency
	// Recovery: bots that lost their connection and got it back (from
	// reconnecting to reconnected), and bots that lost their room.
	Reconnects Latency
	RoomsLost  int
	// Relay is what the bots played against: "room" (the room server)
	// or "bare" (the baseline fan-out relay).
	Relay string
	// RejectedBy is ServerRejected by reason, and Kicked the players the
	// server disconnected for abuse, by close code (from its metrics).
	RejectedBy map[string]float64 `json:",omitempty"`
	Kicked     map[string]float64 `json:",omitempty"`
	// StatesPerWrite is how many relayed states each message the relay
	// wrote carried (0: unknown).
	StatesPerWrite float64
	// CPUCores is the CPU this process (bots and in-process relay) used
	// while the bots played, in cores, and CPUPerState that CPU per state
	// the relay relayed: figures that a busy machine skews less than
	// throughput (0: unknown).
	CPUCores    float64
	CPUPerState time.Duration
	// LoadAvg is the machine's load average over a minute (Linux's
	// /proc/loadavg) as the bots stopped: how much else wanted the CPUs
	// besides this run (0: unknown).
	LoadAvg float64 `json:",omitempty"`
	// Bare is the same bots' run against the bare relay, after this one
	// (-relay both), and Ratio this run's figures as a share of it.
	Bare  *Report `json:",omitempty"`
	Ratio *Ratio  `json:",omitempty"`
}

// Ratio compares the room server with the bare relay in the same run.
type Ratio struct {
	// Throughput is the room server's relayed states per second over the
	// bare relay's (1: as fast; the goal is at least 0.7).
	Throughput float64
	// P99 is the room server's relay latency p99 over the bare relay's
	// (1: as fast; more is slower).
	P99 float64
	// CPU is the process's CPU per relayed state against the room server
	// over the same against the bare relay (1: as cheap; more costs
	// more). It counts CPU time, not wall time, so a machine that other
	// work shares skews it less than the other two (0: unknown).
	CPU float64
}

// Latency summarises a set of durations.
type Latency struct {
	N        int
	P50, P99 time.Duration
	Max      time.Duration
}

func latencyOf(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	slices.Sort(d)
	return Latency{N: len(d), P50: d[len(d)/2], P99: d[min(len(d)-1, int(math.Ceil(float64(len(d))*0.99))-1)],
		Max: d[len(d)-1]}
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "loadtest:", err)
		return 2
	}
	if c.loss > 0 {
		if os.Getenv(envNetns) == "" {
			return runLossy(c, args, stdout, stderr)
		}
		if err := inLossyNetns(); err != nil {
			fmt.Fprintln(stderr, "loadtest:", err)
			return 2
		}
	}
	if c.cpuProf != "" {
		f, err := os.Create(c.cpuProf)
		if err != nil {
			fmt.Fprintln(stderr, "loadtest:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "loadtest:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	var reps []*Report
	for _, tr := range c.transports {
		c.transport = tr
		rep, err := runAll(c, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "loadtest:", err)
			return 1
		}
		reps = append(reps, rep)
	}
	if c.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if len(reps) == 1 {
			_ = enc.Encode(reps[0])
		} else {
			_ = enc.Encode(reps)
		}
	} else {
		for i, rep := range reps {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			printReport(stdout, rep)
		}
		if len(reps) == 2 {
			printComparison(stdout, reps[0], reps[1])
		}
	}
	for _, rep := range reps {
		if len(rep.Errors) > 0 || (rep.Bare != nil && len(rep.Bare.Errors) > 0) {
			return 1
		}
	}
	return 0
}

// printComparison sets two runs side by side (ws, then quic).
func printComparison(w io.Writer, a, b *Report) {
	fmt.Fprintf(w, "\n%-22s %12s %12s\n", "comparison", a.Transport, b.Transport)
	fmt.Fprintf(w, "%-22s %12.0f %12.0f\n", "relayed/s (server)", a.ServerRelayedPS, b.ServerRelayedPS)
	fmt.Fprintf(w, "%-22s %12.0f %12.0f\n", "received/s (bots)", a.ReceivedPerSec, b.ReceivedPerSec)
	share := func(r *Report) float64 {
		if r.ExpectedPerSec <= 0 {
			return 0
		}
		return r.ReceivedPerSec / r.ExpectedPerSec
	}
	fmt.Fprintf(w, "%-22s %12.3f %12.3f\n", "received / ideal", share(a), share(b))
	for _, l := range []struct {
		what string
		a, b time.Duration
	}{{"latency p50", a.LatencyP50, b.LatencyP50}, {"latency p99", a.LatencyP99, b.LatencyP99}, {"latency max", a.LatencyMax, b.LatencyMax}} {
		fmt.Fprintf(w, "%-22s %12v %12v\n", l.what, l.a.Round(10*time.Microsecond), l.b.Round(10*time.Microsecond))
	}
	fmt.Fprintf(w, "%-22s %12.3f %12.3f\n", "sent as datagrams", a.DatagramShare, b.DatagramShare)
}

// runAll plays the bots against the room server, the bare relay, or both
// one after the other (c.relay), and returns the room server's report
// with the bare relay's beside it, or the one that ran.
func runAll(c *config, stderr io.Writer) (*Report, error) {
	var room, bare *Report
	var err error
	if c.relay != "bare" {
		urls := c.urls
		stop := func() {}
		if len(urls) == 0 {
			var u string
			if stop, u, err = startServer(c); err != nil {
				return nil, err
			}
			urls = []string{u}
		}
		room, err = loadtest(c, urls, "room", stderr)
		stop()
		if err != nil {
			return nil, err
		}
	}
	if c.relay != "room" {
		// The bare relay has no datagram path: its bots stay on the
		// WebSocket whatever -transport says.
		transport := c.transport
		c.transport = "ws"
		defer func() { c.transport = transport }()
		stop, u, err := startBare(max(0, c.coalesce))
		if err != nil {
			return nil, err
		}
		bare, err = loadtest(c, []string{u}, "bare", stderr)
		stop()
		if err != nil {
			return nil, err
		}
	}
	switch {
	case room == nil:
		return bare, nil
	case bare == nil:
		return room, nil
	}
	room.Bare = bare
	room.Ratio = &Ratio{}
	if bare.ServerRelayedPS > 0 {
		room.Ratio.Throughput = room.ServerRelayedPS / bare.ServerRelayedPS
	}
	if bare.LatencyP99 > 0 {
		room.Ratio.P99 = float64(room.LatencyP99) / float64(bare.LatencyP99)
	}
	if bare.CPUPerState > 0 {
		room.Ratio.CPU = float64(room.CPUPerState) / float64(bare.CPUPerState)
	}
	return room, nil
}

// sendTimes remembers when each sender handed each sequence number over.
type sendTimes struct{ at []atomic.Int64 } // [room][slot][seq%seqWindow]

func (t *sendTimes) slot(roomIdx, players, slot int, seq wire.Seq) *atomic.Int64 {
	return &t.at[(roomIdx*players+slot)*seqWindow+int(seq)%seqWindow]
}

// errs counts errors by kind.
type errs struct {
	mu sync.Mutex
	m  map[string]int
}

func (e *errs) add(kind string) {
	e.mu.Lock()
	e.m[kind]++
	e.mu.Unlock()
}

// loadtest plays the bots against the servers at urls; relay names them
// in the report.
func loadtest(c *config, urls []string, relay string, stderr io.Writer) (*Report, error) {
	metricsURLs := make([]string, len(urls))
	for i, u := range urls {
		metricsURLs[i] = strings.Replace(strings.Replace(u, "ws://", "http://", 1), "/ws", "/metrics", 1)
	}
	wsURL := strings.Join(urls, ",")
	clk := realtime.NewWall() // one clock for every bot: send and arrival times compare directly
	times := &sendTimes{at: make([]atomic.Int64, c.rooms*c.players*seqWindow)}
	e := &errs{m: map[string]int{}}

	ctx, cancel := context.WithTimeout(context.Background(), setupFor+c.duration+30*time.Second)
	defer cancel()
	fmt.Fprintf(stderr, "loadtest: %d rooms x %d players at %.0f Hz for %v against the %s relay at %s over %s\n", c.rooms, c.players, c.rate,
		c.duration, relay, wsURL, c.transport)

	rooms := make([]*botRoom, c.rooms)
	var wg sync.WaitGroup
	setupCtx, cancelSetup := context.WithTimeout(ctx, setupFor)
	defer cancelSetup()
	sem := make(chan struct{}, 8) // connect a few rooms at a time
	for i := range rooms {
		rooms[i] = &botRoom{idx: i, cfg: c, clk: clk, times: times, errs: e}
		wg.Add(1)
		go func(r *botRoom) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r.setup(setupCtx, urls)
		}(rooms[i])
	}
	wg.Wait()
	ready := 0
	for _, r := range rooms {
		if r.ok {
			ready++
		}
	}
	if ready == 0 {
		closeAll(rooms)
		return nil, fmt.Errorf("no room got ready: %v", e.m)
	}
	fmt.Fprintf(stderr, "loadtest: %d of %d rooms playing\n", ready, c.rooms)

	before, missBefore := scrapeAll(metricsURLs)
	cpu0 := processCPU()
	start := time.Now()
	end := start.Add(c.duration)
	for _, r := range rooms {
		if r.ok {
			wg.Add(1)
			go func(r *botRoom) { defer wg.Done(); r.play(ctx, end) }(r)
		}
	}
	progress := time.NewTicker(5 * time.Second)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-progress.C:
			var recv int64
			for _, r := range rooms {
				recv += r.received.Load()
			}
			el := time.Since(start).Seconds()
			busy := ""
			if m, _ := scrapeAll(metricsURLs); m["nearzero_sched_delay_seconds"] > 0 {
				busy = fmt.Sprintf("  server delay %.0f ms", 1000*m["nearzero_sched_delay_seconds"])
			}
			fmt.Fprintf(stderr, "loadtest: %4.0fs  %8.0f states/s received%s\n", el, float64(recv)/el, busy)
		}
	}
	progress.Stop()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	load := loadAvg()
	after, missAfter := scrapeAll(metricsURLs)
	closeAll(rooms)

	rep := &Report{Transport: c.transport, Loss: c.loss, Rooms: ready, Players: c.players, Duration: elapsed, Rate: c.rate,
		ExpectedPerSec: float64(ready*c.players*(c.players-1)) * c.rate, Errors: e.m, Nodes: len(urls), Relay: relay,
		LoadAvg: load}
	var jd, jr, cd, cr, rec []time.Duration
	var lat hist
	for _, r := range rooms {
		jd, jr = append(jd, r.joins[0]...), append(jr, r.joins[1]...)
		cd, cr = append(cd, r.creates[0]...), append(cr, r.creates[1]...)
		rec = append(rec, r.recovered...)
		for _, lost := range r.lost {
			if lost {
				rep.RoomsLost++
			}
		}
	}
	rep.Reconnects = latencyOf(rec)
	rep.JoinDirect, rep.JoinRedirected = latencyOf(jd), latencyOf(jr)
	rep.CreateDirect, rep.CreateRedirected = latencyOf(cd), latencyOf(cr)
	var sent, recv, botSent, botDG int64
	for _, r := range rooms {
		sent += r.sent.Load()
		recv += r.received.Load()
		lat.merge(&r.lat)
		for _, b := range r.bots {
			if b != nil {
				st := b.Stats()
				rep.ClientQueueDrops += st.StatesDropped
				rep.StatesBeforeSync += st.StatesUnsynced
				botSent += st.StatesSent
				botDG += st.StatesSentDatagram
			}
		}
	}
	if botSent > 0 {
		rep.DatagramShare = float64(botDG) / float64(botSent)
	}
	sec := elapsed.Seconds()
	rep.SentPerSec, rep.ReceivedPerSec = float64(sent)/sec, float64(recv)/sec
	rep.MetricsMissing = slices.Compact(slices.Sorted(slices.Values(append(missBefore, missAfter...))))
	if len(rep.MetricsMissing) == 0 {
		rep.ServerRelayedPS = (after["nearzero_states_relayed_total"] - before["nearzero_states_relayed_total"]) / sec
		rep.ServerDropped = after["nearzero_states_dropped_total"] - before["nearzero_states_dropped_total"]
		rep.ServerRejected = after["nearzero_rejected_total"] - before["nearzero_rejected_total"]
		rep.RejectedBy = labelled(before, after, "nearzero_rejected_total", "reason")
		rep.Kicked = labelled(before, after, "nearzero_kicked_total", "code")
		if w := after["nearzero_state_writes_total"] - before["nearzero_state_writes_total"]; w > 0 {
			rep.StatesPerWrite = rep.ServerRelayedPS * sec / w
		}
		if relayed := rep.ServerRelayedPS * sec; cpu > 0 && relayed > 0 {
			rep.CPUCores = cpu.Seconds() / sec
			rep.CPUPerState = time.Duration(float64(cpu) / relayed)
		}
	}
	rep.Samples = lat.n
	rep.LatencyP50, rep.LatencyP99, rep.LatencyMax = lat.quantile(0.5), lat.quantile(0.99), lat.max
	if rep.Errors == nil || len(rep.Errors) == 0 {
		rep.Errors = nil
	}
	return rep, nil
}

// botRoom is one room of bots, driven by one goroutine.
type botRoom struct {
	idx   int
	cfg   *config
	clk   *realtime.Wall
	times *sendTimes
	errs  *errs

	bots      []*serverlink.Conn
	ok        bool
	joins     [2][]time.Duration // join latency: [0] direct, [1] redirected
	creates   [2][]time.Duration // create latency likewise
	sent      atomic.Int64
	received  atomic.Int64
	lat       hist            // relay latencies; owned by the room's goroutine until it ends
	down      []time.Time     // when each bot began reconnecting (zero: connected); the room's goroutine
	recovered []time.Duration // reconnecting to reconnected; the room's goroutine
	lost      []bool          // bots whose room is gone; the room's goroutine
}

var botSync = clock.SyncConfig{WarmupInterval: 50 * time.Millisecond, SyncedAfter: 4}

// setup connects the room's bots, spread over urls from the room's own
// index on, creates the room and plays it to the start.
func (r *botRoom) setup(ctx context.Context, urls []string) {
	r.bots = make([]*serverlink.Conn, r.cfg.players)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i := range r.bots {
		b, err := serverlink.Dial(ctx, urls[(r.idx+i)%len(urls)], &serverlink.Options{Name: fmt.Sprintf("bot-%d-%d", r.idx, i), Clock: r.clk,
			Sync: botSync, Log: log, ClientName: "loadtest", NoReconnect: r.cfg.noRecon, StateQueue: 4096,
			NoDatagrams: r.cfg.transport != "quic"})
		if err != nil {
			r.errs.add("dial: " + dialReason(err))
			return
		}
		r.bots[i] = b
	}
	t0, hops := time.Now(), r.bots[0].Stats().Redirects
	j, err := r.bots[0].Create(ctx, &protocol.Settings{RoundUS: protocol.US(r.cfg.duration + 5*time.Minute)})
	if err != nil {
		r.errs.add("create: " + protocol.CodeOf(err).String())
		return
	}
	redirected := min(1, r.bots[0].Stats().Redirects-hops)
	r.creates[redirected] = append(r.creates[redirected], time.Since(t0))
	for _, b := range r.bots[1:] {
		t0, hops := time.Now(), b.Stats().Redirects
		if _, err := b.Join(ctx, j.Code); err != nil {
			r.errs.add("join: " + protocol.CodeOf(err).String())
			return
		}
		redirected := min(1, b.Stats().Redirects-hops)
		r.joins[redirected] = append(r.joins[redirected], time.Since(t0))
	}
	for _, b := range r.bots {
		_ = b.Send(&protocol.Loading{Progress: 1})
		_ = b.Send(&protocol.Ready{Ready: true})
	}
	if !r.waitRoom(ctx, func(s protocol.RoomState) bool {
		n := 0
		for _, p := range s.Players {
			if p.Ready && p.Loaded >= 1 {
				n++
			}
		}
		return n == r.cfg.players
	}) {
		r.errs.add("ready timeout")
		return
	}
	_ = r.bots[0].Send(&protocol.Start{})
	if !r.waitRoom(ctx, func(s protocol.RoomState) bool { return s.Phase == protocol.PhaseHandshake }) {
		r.errs.add("start timeout")
		return
	}
	for _, b := range r.bots {
		_ = b.Send(&protocol.InPosition{})
	}
	if !r.waitRoom(ctx, func(s protocol.RoomState) bool { return s.Phase == protocol.PhasePlaying }) {
		r.errs.add("play timeout")
		return
	}
	for _, b := range r.bots {
		for !b.Synced() {
			if ctx.Err() != nil {
				r.errs.add("sync timeout")
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		if r.cfg.transport != "quic" {
			continue
		}
		if b.Welcome().Datagram == nil {
			r.errs.add("the server offers no datagram path")
			return
		}
		for !b.DatagramUp() {
			if ctx.Err() != nil {
				r.errs.add("datagram path timeout")
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	r.ok = true
}

// waitRoom polls the host's view of the room.
func (r *botRoom) waitRoom(ctx context.Context, ok func(protocol.RoomState) bool) bool {
	for ctx.Err() == nil {
		if ok(r.bots[0].Room()) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// play sends every bot's state at the rate until end, and measures what
// arrives.
func (r *botRoom) play(ctx context.Context, end time.Time) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / r.cfg.rate))
	defer tick.Stop()
	var buf []serverlink.RemoteState
	var evs []serverlink.Event
	r.down, r.lost = make([]time.Time, len(r.bots)), make([]bool, len(r.bots))
	seq := 0
	t0 := r.clk.Now()
	for time.Now().Before(end) && ctx.Err() == nil {
		<-tick.C
		seq++
		for slot, b := range r.bots {
			if r.lost[slot] {
				continue
			}
			// Each bot drives a circle of radius 20 at 10 units/s, sampled
			// when it is stamped (a late tick moves it further).
			now := r.clk.Now()
			phase := float64(slot) + (now-t0).Seconds()*0.5
			st := &wire.State{Seq: wire.Seq(seq), Pos: geom.Vec3{X: 20 * math.Cos(phase), Z: 20 * math.Sin(phase)},
				Vel: geom.Vec3{X: -10 * math.Sin(phase), Z: 10 * math.Cos(phase)}, Rot: geom.Quat{W: 1}}
			st.Stamp = wire.StampOf(now)
			r.times.slot(r.idx, r.cfg.players, slot, st.Seq).Store(int64(now))
			if err := b.SendState(st); err != nil {
				r.errs.add("send: " + err.Error())
				continue
			}
			r.sent.Add(1)
		}
		for i, b := range r.bots {
			buf = b.PollStates(buf[:0])
			for _, rs := range buf {
				if int(rs.State.Slot) >= r.cfg.players {
					continue
				}
				if at := r.times.slot(r.idx, r.cfg.players, int(rs.State.Slot), rs.State.Seq).Load(); at != 0 {
					r.lat.add(rs.Arrival - time.Duration(at))
				}
			}
			r.received.Add(int64(len(buf)))
			evs = b.PollEvents(evs[:0])
			for _, ev := range evs {
				switch ev.Kind {
				case serverlink.EventReconnecting:
					if r.down[i].IsZero() {
						r.down[i] = time.Now()
					}
				case serverlink.EventReconnected:
					if !r.down[i].IsZero() {
						r.recovered = append(r.recovered, time.Since(r.down[i]))
						r.down[i] = time.Time{}
					}
				case serverlink.EventRoomLost:
					r.lost[i] = true
					r.errs.add("room lost: " + protocol.CodeOf(ev.Err).String())
				case serverlink.EventDisconnected:
					r.lost[i] = true
					r.errs.add("disconnected: " + protocol.CodeOf(ev.Err).String())
				case serverlink.EventMessage:
					if e, ok := ev.Msg.(*protocol.Error); ok {
						r.errs.add("server error: " + e.Code.String())
					}
				}
			}
		}
	}
}

func closeAll(rooms []*botRoom) {
	var wg sync.WaitGroup
	for _, r := range rooms {
		for _, b := range r.bots {
			if b != nil {
				wg.Add(1)
				go func(b *serverlink.Conn) {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_ = b.Close(ctx)
				}(b)
			}
		}
	}
	wg.Wait()
}

// startServer runs a server on a free loopback port in this process.
func startServer(c *config) (stop func(), wsURL string, err error) {
	// Its /metrics is where the report reads what the server relayed.
	m, h, err := prom.New(prometheus.NewRegistry())
	if err != nil {
		return nil, "", err
	}
	// Every bot comes from loopback: per-address limits off.
	s, err := server.New(&server.Config{MaxRooms: c.rooms + 1,
		MaxConnsPerAddr: -1, MaxRoomsPerAddr: -1, NewIdentityRate: -1, JoinFailRate: -1,
		MaxRoomsPerPrefix: -1, PlayingReserve: -1, // every room is created before any plays
		SmallNetReserve: -1, // every bot is on loopback's network
		// Rooms are created however busy the machine is: the run measures
		// the relay (the progress line shows the server's delay).
		OverloadAfter: -1, WriteCoalesce: c.coalesce,
		Room: room.Config{MaxPlayers: max(c.players, 2), SendRate: c.rate}}, server.Deps{Metrics: m, MetricsHandler: h})
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("listen: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	<-s.Ready()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-done
	}, "ws://" + ln.Addr().String() + "/ws", nil
}

// labelled returns the growth of each series of counter name, by the value
// of its label, leaving out those that did not grow.
func labelled(before, after map[string]float64, name, label string) map[string]float64 {
	prefix := name + "{" + label + "=\""
	var out map[string]float64
	for k, v := range after {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		val, _, ok := strings.Cut(rest, "\"")
		if d := v - before[k]; ok && d > 0 {
			if out == nil {
				out = map[string]float64{}
			}
			out[val] += d
		}
	}
	return out
}

// scrapeAll sums the counters of several servers' metrics pages, and
// names those that could not be read.
func scrapeAll(urls []string) (sum map[string]float64, missing []string) {
	out := map[string]float64{}
	for _, u := range urls {
		m, err := scrape(u)
		if err != nil {
			missing = append(missing, u)
			continue
		}
		for k, v := range m {
			out[k] += v
		}
	}
	return out, missing
}

// metricsClient reads /metrics; a node that is hung must not hang the
// report.
var metricsClient = &http.Client{Timeout: 5 * time.Second}

// scrape reads the counters of a Prometheus text page: each series by its
// name with its labels, and each name summed over its series.
func scrape(u string) (map[string]float64, error) {
	resp, err := metricsClient.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			continue
		}
		if i := strings.IndexByte(name, '{'); i >= 0 {
			out[name] += v
			name = name[:i]
		}
		out[name] += v
	}
	return out, sc.Err()
}

// printReport prints r, and with a baseline, the bare relay's figures
// and the ratios, then the run as a row of the README's table.
func printReport(w io.Writer, r *Report) {
	printOne(w, r)
	if r.Bare == nil {
		return
	}
	fmt.Fprintf(w, "\n")
	printOne(w, r.Bare)
	b := r.Bare
	fmt.Fprintf(w, "\nroom server / bare relay: throughput %.2f, p99 %.2fx, CPU per relayed state %.2fx\n", r.Ratio.Throughput,
		r.Ratio.P99, r.Ratio.CPU)
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	}
	k := func(v float64) string { return strconv.FormatFloat(v/1000, 'f', 1, 64) + "k" }
	// One row of the README's table (README "Load test").
	fmt.Fprintf(w, "| %d x %d | %s (%s) | %s / %s / %s ms | %.0f | %s | %s / %s / %s ms | %.2f | %.2f | %.2f | %.1f / %.1f |\n",
		r.Rooms, r.Players, k(r.ServerRelayedPS), k(r.ExpectedPerSec), ms(r.LatencyP50), ms(r.LatencyP99), ms(r.LatencyMax),
		r.ServerRejected, k(b.ServerRelayedPS), ms(b.LatencyP50), ms(b.LatencyP99), ms(b.LatencyMax), r.Ratio.Throughput, r.Ratio.P99,
		r.Ratio.CPU, r.LoadAvg, b.LoadAvg)
}

// printOne prints one run's figures.
func printOne(w io.Writer, r *Report) {
	relay := "room server"
	if r.Relay == "bare" {
		relay = "bare relay (the baseline)"
	}
	fmt.Fprintf(w, "relay                  %s\n", relay)
	fmt.Fprintf(w, "transport              %s (%.1f%% of states sent as datagrams)\n", r.Transport, 100*r.DatagramShare)
	fmt.Fprintf(w, "rooms x players        %d x %d at %.0f Hz for %.1f s\n", r.Rooms, r.Players, r.Rate, r.Duration.Seconds())
	if r.Loss > 0 {
		fmt.Fprintf(w, "network loss           %.2f%% of the packets each way (loopback in a namespace of its own)\n", r.Loss)
	}
	fmt.Fprintf(w, "states sent/s          %.0f\n", r.SentPerSec)
	if len(r.MetricsMissing) == 0 {
		fmt.Fprintf(w, "relayed/s (server)     %.0f   (ideal %.0f)\n", r.ServerRelayedPS, r.ExpectedPerSec)
	} else {
		fmt.Fprintf(w, "relayed/s (server)     unknown: no metrics from %s   (ideal %.0f)\n",
			strings.Join(r.MetricsMissing, ", "), r.ExpectedPerSec)
	}
	fmt.Fprintf(w, "received/s (bots)      %.0f\n", r.ReceivedPerSec)
	if r.StatesPerWrite > 0 {
		fmt.Fprintf(w, "states per write       %.2f\n", r.StatesPerWrite)
	}
	if r.CPUCores > 0 {
		fmt.Fprintf(w, "process CPU            %.2f cores, %v per relayed state (bots and in-process relay)\n", r.CPUCores,
			r.CPUPerState.Round(10*time.Nanosecond))
	}
	if r.LoadAvg > 0 {
		fmt.Fprintf(w, "machine load           %.2f (1-minute load average as the bots stopped)\n", r.LoadAvg)
	}
	fmt.Fprintf(w, "relay latency          p50 %v  p99 %v  max %v  (%d samples)\n",
		r.LatencyP50.Round(10*time.Microsecond), r.LatencyP99.Round(10*time.Microsecond), r.LatencyMax.Round(10*time.Microsecond), r.Samples)
	if len(r.MetricsMissing) == 0 && r.Relay != "bare" {
		fmt.Fprintf(w, "server rejected        %.0f%s\n", r.ServerRejected, byLabel(r.RejectedBy))
		if len(r.Kicked) > 0 {
			fmt.Fprintf(w, "server kicked          %s\n", byLabel(r.Kicked))
		}
		fmt.Fprintf(w, "server dropped (slow)  %.0f\n", r.ServerDropped)
	}
	fmt.Fprintf(w, "client queue drops     %d\n", r.ClientQueueDrops)
	lat := func(what string, l Latency) {
		if l.N > 0 {
			fmt.Fprintf(w, "%-22s p50 %v  p99 %v  max %v  (%d)\n", what, l.P50.Round(10*time.Microsecond),
				l.P99.Round(10*time.Microsecond), l.Max.Round(10*time.Microsecond), l.N)
		}
	}
	if r.Nodes > 1 {
		fmt.Fprintf(w, "nodes                  %d\n", r.Nodes)
	}
	lat("create", r.CreateDirect)
	lat("create (redirected)", r.CreateRedirected)
	lat("join", r.JoinDirect)
	lat("join (redirected)", r.JoinRedirected)
	if r.Reconnects.N > 0 || r.RoomsLost > 0 {
		fmt.Fprintf(w, "reconnects             %d, back in p50 %v  max %v; bots whose room was lost %d\n", r.Reconnects.N,
			r.Reconnects.P50.Round(time.Millisecond), r.Reconnects.Max.Round(time.Millisecond), r.RoomsLost)
	}
	if len(r.Errors) == 0 {
		fmt.Fprintf(w, "errors                 none\n")
		return
	}
	keys := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "error                  %s: %d\n", k, r.Errors[k])
	}
}

// byLabel formats counts by label, sorted: "  (speed 3, rate 1)".
func byLabel(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, m[k]))
	}
	return "  (" + strings.Join(parts, ", ") + ")"
}

// dialReason names why a bot could not connect, in few enough words to
// count: the server's code when it refused, a timeout, or the error.
func dialReason(err error) string {
	switch code := protocol.CodeOf(err); {
	case code >= 0:
		return code.String()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:] // the innermost cause: addresses and ports stay out
	}
	return msg
}
