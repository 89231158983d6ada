package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
)

// The child process roles of this test binary.
const (
	natsDirEnv  = "NEARZERO_FAULTS_NATS_DIR"
	natsPortEnv = "NEARZERO_FAULTS_NATS_PORT"
)

// Cluster settings of every scenario.
const (
	ttl     = 6 * time.Second
	refresh = ttl / 3
	// dirTimeout bounds each directory call: scaled with the TTL, as the
	// default 2 s is to the default 15 s.
	dirTimeout = 800 * time.Millisecond
	seatHold   = 20 * time.Second
	drainGrace = 2 * time.Second
	nodes      = 3
	// waitFor bounds every wait on a condition: generous, for a busy
	// two-core machine. Never an assertion on the time itself.
	waitFor = 90 * time.Second
)

var secret = "0123456789abcdef0123456789abcdef-faults"

func TestMain(m *testing.M) {
	if dir := os.Getenv(natsDirEnv); dir != "" {
		os.Exit(runNATS(dir, os.Getenv(natsPortEnv)))
	}
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// runNATS is the NATS child: a NATS server with JetStream on a file store
// in dir, on port, until SIGTERM (or SIGKILL).
func runNATS(dir, port string) int {
	p, err := strconv.Atoi(port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats child: port:", err)
		return 2
	}
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: p, JetStream: true,
		StoreDir: dir, NoSigs: true, NoLog: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats child:", err)
		return 1
	}
	go ns.Start()
	if !ns.ReadyForConnections(time.Minute) {
		fmt.Fprintln(os.Stderr, "nats child: not ready")
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ns.Shutdown()
	ns.WaitForShutdown()
	return 0
}

var (
	buildOnce sync.Once
	serverBin string
	buildErr  error
	buildDir  string
)

// buildServer builds nearzero-server once per test run.
func buildServer(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if _, err := exec.LookPath("go"); err != nil {
			buildErr = fmt.Errorf("the fault suite builds nearzero-server with the go command: %w", err)
			return
		}
		dir, err := os.MkdirTemp("", "nearzero-faults-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		bin := filepath.Join(dir, "nearzero-server")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./server/cmd/nearzero-server")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build nearzero-server: %w\n%s", err, out)
			return
		}
		serverBin = bin
	})
	require.NoError(t, buildErr)
	return serverBin
}

// proc is a child process.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // valid after done
}

func startProc(t *testing.T, name, logPath string, env []string, bin string, args ...string) *proc {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	require.NoError(t, cmd.Start(), name)
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	return p
}

func (p *proc) signal(sig syscall.Signal) { _ = p.cmd.Process.Signal(sig) }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill ends the process at once (a stopped one too) and waits for it.
func (p *proc) kill() {
	if p.exited() {
		return
	}
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGKILL)
	<-p.done
}

// wait waits for the process to exit, at most d.
func (p *proc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// tail returns the last lines of the process's log.
func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// handedOut holds every port freePort has returned: the kernel may offer a
// closed port again before the process it was meant for binds it (two nodes
// once got the same one, and the second failed to bind its UDP socket).
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePort returns a loopback port, free for TCP and UDP a moment ago and not
// returned before in this test process.
func freePort(t *testing.T) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		udp, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		ln.Close()
		if err != nil {
			continue // the node serves datagrams and STUN on the same port
		}
		udp.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatal("no free loopback port in 100 tries")
	return 0
}

// node is one nearzero-server process.
type node struct {
	id   string
	port int
	url  string // ws://127.0.0.1:port/ws
	base string // http://127.0.0.1:port
	db   string
	p    *proc
	nats *proxy // its link to NATS
	down bool   // killed, stopped or hung: not probed
}

// cluster is NATS and three nodes.
type cluster struct {
	t        *testing.T
	dir      string
	natsPort int
	natsDir  string
	nats     *proc
	nodes    []*node
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	bin := buildServer(t)
	c := &cluster{t: t, dir: t.TempDir()}
	c.natsPort = freePort(t)
	c.natsDir = filepath.Join(c.dir, "nats")
	c.startNATS()
	for i := range nodes {
		n := &node{id: fmt.Sprintf("n%d", i+1), port: freePort(t)}
		n.url = fmt.Sprintf("ws://127.0.0.1:%d/ws", n.port)
		n.base = fmt.Sprintf("http://127.0.0.1:%d", n.port)
		n.db = filepath.Join(c.dir, n.id+".db")
		n.nats = newProxy(t, fmt.Sprintf("127.0.0.1:%d", c.natsPort))
		args := []string{"-addr", fmt.Sprintf("127.0.0.1:%d", n.port), "-db", n.db,
			"-nats", "nats://" + n.nats.addr(), "-node-id", n.id, "-node-url", n.url,
			"-cluster-ttl", ttl.String(), "-cluster-timeout", dirTimeout.String(), "-seat-hold", seatHold.String(), "-drain-grace", drainGrace.String(),
			"-round-limit", "10m", "-log-level", "debug",
			"-max-conns-per-addr", "-1", "-max-rooms-per-addr", "-1", "-max-rooms-per-prefix", "-1",
			"-playing-reserve", "-1", "-new-identity-rate", "-1", "-join-fail-rate", "-1",
			// The nodes share a busy machine with the test: their own delay
			// must not take them out of placement (README "Overload").
			"-overload-after", "-1s"}
		n.p = startProc(t, n.id, filepath.Join(c.dir, n.id+".log"), []string{"NEARZERO_SECRET=" + secret}, bin, args...)
		c.nodes = append(c.nodes, n)
	}
	t.Cleanup(c.dumpLogs)
	for _, n := range c.nodes {
		c.waitHealth(n, func(h health) bool { return h.Cluster.Nodes == nodes })
	}
	return c
}

// startNATS starts (or restarts, on the same port and store) the NATS child.
func (c *cluster) startNATS() {
	self, err := os.Executable()
	require.NoError(c.t, err)
	c.nats = startProc(c.t, "nats", filepath.Join(c.dir, "nats.log"),
		[]string{natsDirEnv + "=" + c.natsDir, natsPortEnv + "=" + strconv.Itoa(c.natsPort)}, self, "-test.run=^$")
	require.Eventually(c.t, func() bool {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", c.natsPort), time.Second)
		if err != nil {
			return false
		}
		conn.Close()
		return true
	}, waitFor, 20*time.Millisecond, "nats listens")
}

// dumpLogs shows the tails of the logs of a failed scenario (of every
// scenario with $NEARZERO_FAULTS_LOGS set to a number of lines).
func (c *cluster) dumpLogs() {
	lines, _ := strconv.Atoi(os.Getenv("NEARZERO_FAULTS_LOGS"))
	if lines == 0 && !c.t.Failed() {
		return
	}
	for _, n := range c.nodes {
		c.t.Logf("--- %s log (tail)\n%s", n.id, n.p.tail(max(lines, 40)))
	}
}

// health is the part of /healthz the suite reads.
type health struct {
	State   string `json:"state"`
	Rooms   int    `json:"rooms"`
	Cluster struct {
		NATS  string `json:"nats"`
		Nodes int    `json:"nodes"`
		Rooms int    `json:"rooms"`
	} `json:"cluster"`
}

var httpc = &http.Client{Timeout: 2 * time.Second}

func (n *node) health() (health, error) {
	var h health
	resp, err := httpc.Get(n.base + "/healthz")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return h, err
	}
	return h, json.Unmarshal(b, &h)
}

func (c *cluster) waitHealth(n *node, ok func(health) bool) {
	c.t.Helper()
	require.Eventually(c.t, func() bool {
		h, err := n.health()
		return err == nil && ok(h)
	}, waitFor, 50*time.Millisecond, "%s healthy\n%s", n.id, n.p.tail(20))
}

// busiest returns the index of the node running the most rooms.
func (c *cluster) busiest() int {
	best, most := 0, -1
	for i, n := range c.nodes {
		if h, err := n.health(); err == nil && h.Rooms > most {
			best, most = i, h.Rooms
		}
	}
	return best
}

// live returns the nodes still up.
func (c *cluster) live() []*node {
	var out []*node
	for _, n := range c.nodes {
		if !n.down && !n.p.exited() {
			out = append(out, n)
		}
	}
	return out
}

// stopAll drains every live node (SIGTERM) and waits for it to exit, so
// that its database holds everything it stores.
func (c *cluster) stopAll() {
	for _, n := range c.live() {
		n.p.signal(syscall.SIGTERM)
	}
	for _, n := range c.nodes {
		if !n.p.wait(waitFor) {
			c.t.Errorf("%s did not stop after SIGTERM", n.id)
			n.p.kill()
		}
	}
}

// proxy forwards TCP to a target until cut.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex // guards conns and refuse
	conns  []net.Conn
	refuse bool
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { _ = ln.Close(); p.cut(); p.wg.Wait() })
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		if refuse {
			_ = down.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			_ = down.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, down, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, down)
		go p.pipe(down, up)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

// cut drops every connection and refuses new ones until allow.
func (p *proxy) cut() {
	p.mu.Lock()
	p.refuse = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
}

func (p *proxy) allow() {
	p.mu.Lock()
	p.refuse = false
	p.mu.Unlock()
}
