package netlab

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Addresses of the lab. The "public" side uses documentation ranges that
// Go counts as public (TEST-NET-2 and -3), so the server treats the
// routers as players from elsewhere; each player's LAN is 192.168.1.0/24,
// the same on both sides, as two homes are.
const (
	ServerIP  = "203.0.113.1"
	lanPrefix = "192.168.1."
	// ServerPort is the room server's TCP port and, over UDP, that of its
	// datagram path and STUN responder (one socket).
	ServerPort = 8787
	// TURNPort is the embedded TURN relay's UDP port, when it runs.
	TURNPort = 3478
)

// NAT is how a router maps its players' addresses.
type NAT int

// NAT modes.
const (
	// PortKept is nftables' plain masquerade: a flow keeps its source port
	// when it is free, so one socket maps to one outside port whatever it
	// talks to (endpoint-independent mapping); replies are let in per flow.
	PortKept NAT = iota
	// Symmetric is masquerade fully-random: every flow (socket and
	// destination) gets a random outside port, so the port a STUN server
	// saw is useless to a peer.
	Symmetric
	// UDPBlocked drops every UDP packet across the router: TCP (the
	// server link) only.
	UDPBlocked
)

func (n NAT) String() string {
	switch n {
	case Symmetric:
		return "symmetric"
	case UDPBlocked:
		return "udp-blocked"
	}
	return "port-kept"
}

// Side is one player's network: its router's NAT and the impairment at
// the router's outside edge.
type Side struct {
	NAT    NAT
	Impair Impairment
}

// labSeq numbers the labs of one process, for unique names.
var labSeq atomic.Int64

// Lab is one topology of namespaces: "pub" with the room server, and the
// players' namespaces behind their routers. Close (registered with the
// test's cleanup by the caller) removes everything.
type Lab struct {
	id      string // name prefix, unique per run
	dir     string // logs
	mu      sync.Mutex
	nss     []string
	bridges []*bridge
	procs   []*Proc
	tuns    int
	// Players are the namespaces of the players, in order.
	Players []string
	// Pub is the public namespace (the server's).
	Pub string
}

// namePrefix is the prefix of every namespace the lab makes; the pid
// after it lets a later run sweep what a killed one left.
const namePrefix = "nzl"

// New makes the public namespace; add players with AddNATed or AddLAN.
// dir receives the processes' logs.
func New(dir string) (*Lab, error) {
	sweep()
	l := &Lab{id: fmt.Sprintf("%s%d-%d", namePrefix, os.Getpid(), labSeq.Add(1)), dir: dir}
	l.Pub = l.id + "-pub"
	if err := l.addNS(l.Pub); err != nil {
		return nil, err
	}
	err := l.ip(l.Pub, "addr add "+ServerIP+"/32 dev lo")
	if err == nil {
		err = sysctl(l.Pub, "net/ipv4/ip_forward", "1")
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// sweep removes the namespaces of lab runs whose process is gone (a run
// killed before its cleanup).
func sweep() {
	ents, err := os.ReadDir("/var/run/netns")
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, namePrefix)
		if !ok {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == nil || errors.Is(syscall.Kill(pid, 0), syscall.EPERM) {
			continue // alive
		}
		_ = exec.Command("ip", "netns", "del", name).Run()
	}
}

// run runs a command, returning its output in the error when it fails.
func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// ip runs "ip -n ns ARGS".
func (l *Lab) ip(ns, args string) error {
	return run("ip", append([]string{"-n", ns}, strings.Fields(args)...)...)
}

// sysctl sets /proc/sys/KEY in ns.
func sysctl(ns, key, value string) error {
	return run("ip", "netns", "exec", ns, "sh", "-c", fmt.Sprintf("echo %s > /proc/sys/%s", value, key))
}

// nft loads an nftables script into ns.
func nft(ns, script string) error {
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("nft in %s: %w: %s\n%s", ns, err, bytes.TrimSpace(out), script)
	}
	return nil
}

// addNS makes namespace name with its loopback up and IPv6 off (the lab
// is IPv4).
func (l *Lab) addNS(name string) error {
	if err := run("ip", "netns", "add", name); err != nil {
		return err
	}
	l.mu.Lock()
	l.nss = append(l.nss, name)
	l.mu.Unlock()
	_ = sysctl(name, "net/ipv6/conf/all/disable_ipv6", "1")
	_ = sysctl(name, "net/ipv6/conf/default/disable_ipv6", "1")
	return l.ip(name, "link set lo up")
}

// edge joins router namespace r, whose outside address is addr, to the
// public namespace through a TUN pair and an impairment stage, and returns
// the router's outside device.
func (l *Lab) edge(r, addr string, imp Impairment, seed uint64) (string, error) {
	l.mu.Lock()
	l.tuns++
	k := l.tuns
	l.mu.Unlock()
	// Made in the test's namespace under unique names, then moved: the
	// open files stay attached wherever the devices go.
	pid := os.Getpid() % 100000
	outName := fmt.Sprintf("nzo%d-%d", pid, k)
	pubName := fmt.Sprintf("nzp%d-%d", pid, k)
	out, err := openTUN(outName)
	if err != nil {
		return "", err
	}
	pub, err := openTUN(pubName)
	if err != nil {
		_ = out.Close()
		return "", err
	}
	br := newBridge(out, pub, imp, seed)
	l.mu.Lock()
	l.bridges = append(l.bridges, br)
	l.mu.Unlock()
	for _, c := range [][]string{
		{"link", "set", outName, "netns", r},
		{"link", "set", pubName, "netns", l.Pub},
	} {
		if err := run("ip", c...); err != nil {
			return "", err
		}
	}
	for _, c := range []struct{ ns, args string }{
		{r, "addr add " + addr + "/32 dev " + outName},
		{r, "link set " + outName + " up"},
		{r, "route add default dev " + outName},
		{l.Pub, "link set " + pubName + " up"},
		{l.Pub, "route add " + addr + "/32 dev " + pubName},
	} {
		if err := l.ip(c.ns, c.args); err != nil {
			return "", err
		}
	}
	return outName, nil
}

// natRules is the router's nftables script: masquerade out of dev as nat
// says, the UDP block, and a home router's firewall: nothing unasked for
// from outside reaches the router itself. That last rule matters to hole
// punching: a peer's first packet, let in to the router's own stack,
// would leave a connection-tracking entry whose ports the player's own
// outgoing flow to that peer then cannot keep.
func natRules(dev string, nat NAT, extra string) string {
	masq := "masquerade"
	if nat == Symmetric {
		masq = "masquerade fully-random"
	}
	block := ""
	if nat == UDPBlocked {
		block = "meta l4proto udp drop"
	}
	return fmt.Sprintf(`table ip lab {
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		oifname %q %s
	}
	chain pass {
		type filter hook forward priority filter; policy accept;
		%s
		%s
	}
	chain in {
		type filter hook input priority filter; policy accept;
		iifname %q ct state new drop
	}
}
`, dev, masq, block, extra, dev)
}

// AddNATed adds a player behind a router of its own: its namespace is
// returned (and appended to Players). The router's outside address is
// 198.51.100.(10+index).
func (l *Lab) AddNATed(side Side, seed uint64) (string, error) {
	i := len(l.Players)
	r := fmt.Sprintf("%s-r%d", l.id, i)
	p := fmt.Sprintf("%s-p%d", l.id, i)
	for _, ns := range []string{r, p} {
		if err := l.addNS(ns); err != nil {
			return "", err
		}
	}
	if err := sysctl(r, "net/ipv4/ip_forward", "1"); err != nil {
		return "", err
	}
	host := lanPrefix + strconv.Itoa(20+10*i)
	steps := []struct{ ns, args string }{
		{r, "link add in0 type veth peer name eth0 netns " + p},
		{r, "addr add " + lanPrefix + "1/24 dev in0"},
		{r, "link set in0 up"},
		{p, "addr add " + host + "/24 dev eth0"},
		{p, "link set eth0 up"},
		{p, "route add default via " + lanPrefix + "1"},
	}
	for _, s := range steps {
		if err := l.ip(s.ns, s.args); err != nil {
			return "", err
		}
	}
	outside := fmt.Sprintf("198.51.100.%d", 10+i)
	dev, err := l.edge(r, outside, side.Impair, seed+uint64(i))
	if err != nil {
		return "", err
	}
	if err := nft(r, natRules(dev, side.NAT, "")); err != nil {
		return "", err
	}
	l.Players = append(l.Players, p)
	return p, nil
}

// BlockUDP drops every UDP packet across player i's router from now on
// (a NATed player's, AddNATed): a firewall rule, or a router that lost
// its mappings, mid-game. TCP passes as before.
func (l *Lab) BlockUDP(i int) error {
	r := fmt.Sprintf("%s-r%d", l.id, i)
	cmd := exec.Command("ip", "netns", "exec", r, "nft", "add", "rule", "ip", "lab", "pass", "meta", "l4proto", "udp", "drop")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("block udp in %s: %w: %s", r, err, bytes.TrimSpace(out))
	}
	return nil
}

// AddLAN adds n players on one LAN segment (a bridge in their router)
// behind one port-kept NAT, with every UDP packet to the server dropped:
// the server's STUN and TURN are unreachable, its TCP port is not.
func (l *Lab) AddLAN(n int, seed uint64) error {
	r := l.id + "-lan"
	if err := l.addNS(r); err != nil {
		return err
	}
	if err := sysctl(r, "net/ipv4/ip_forward", "1"); err != nil {
		return err
	}
	for _, a := range []string{"link add br0 type bridge", "addr add " + lanPrefix + "1/24 dev br0", "link set br0 up"} {
		if err := l.ip(r, a); err != nil {
			return err
		}
	}
	for i := range n {
		p := fmt.Sprintf("%s-p%d", l.id, len(l.Players))
		if err := l.addNS(p); err != nil {
			return err
		}
		host := lanPrefix + strconv.Itoa(20+10*len(l.Players))
		port := fmt.Sprintf("l%d", i)
		for _, s := range []struct{ ns, args string }{
			{r, "link add " + port + " type veth peer name eth0 netns " + p},
			{r, "link set " + port + " master br0"},
			{r, "link set " + port + " up"},
			{p, "addr add " + host + "/24 dev eth0"},
			{p, "link set eth0 up"},
			{p, "route add default via " + lanPrefix + "1"},
		} {
			if err := l.ip(s.ns, s.args); err != nil {
				return err
			}
		}
		l.Players = append(l.Players, p)
	}
	dev, err := l.edge(r, "198.51.100.50", Impairment{}, seed)
	if err != nil {
		return err
	}
	return nft(r, natRules(dev, PortKept, "ip daddr "+ServerIP+" meta l4proto udp drop"))
}

// Proc is a process running in a namespace.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	// Stdout receives the process's output lines.
	Stdout chan string
	log    string // stderr's file
	done   chan struct{}
	err    error
}

// Start runs bin with args in namespace ns; its stderr goes to a log
// file in the lab's directory, its stdout lines to Stdout.
func (l *Lab) Start(ctx context.Context, name, ns, bin string, args ...string) (*Proc, error) {
	logPath := filepath.Join(l.dir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, bin}, args...)...)
	cmd.Stderr = lf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = lf.Close()
		return nil, err
	}
	cmd.WaitDelay = 2 * time.Second
	// Killed with the test process, should it die before its cleanup ("ip
	// netns exec" execs the program, which keeps this).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, Stdout: make(chan string, 64), log: logPath, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.Stdout <- sc.Text():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.err = cmd.Wait()
		_ = lf.Close()
		close(p.done)
	}()
	l.mu.Lock()
	l.procs = append(l.procs, p)
	l.mu.Unlock()
	return p, nil
}

// Wait waits for the process to end and returns its error.
func (p *Proc) Wait() error {
	<-p.done
	return p.err
}

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Log returns the process's stderr so far.
func (p *Proc) Log() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// stop ends the process: SIGINT, then SIGKILL after a while.
func (p *Proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(3 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Close stops the processes and bridges and deletes every namespace
// (their devices go with them). Safe to repeat.
func (l *Lab) Close() {
	l.mu.Lock()
	procs, bridges, nss := l.procs, l.bridges, l.nss
	l.procs, l.bridges, l.nss = nil, nil, nil
	l.mu.Unlock()
	for _, p := range procs {
		p.stop()
	}
	for _, ns := range nss {
		_ = run("ip", "netns", "del", ns)
	}
	for _, b := range bridges {
		b.Close()
	}
}

// Lost returns the packets each edge's stage read and dropped on
// purpose, both ways together.
func (l *Lab) Lost() (in, lost int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.bridges {
		in += b.abIn.Load() + b.baIn.Load()
		lost += b.abLost.Load() + b.baLost.Load()
	}
	return in, lost
}
