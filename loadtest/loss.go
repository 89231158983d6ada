package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// -loss runs the whole load test (the in-process server and its bots) in a
// network namespace of its own whose loopback loses that share of the
// packets, TCP and UDP alike: what a lossy network does to the WebSocket
// (a lost segment holds up every later state until it is sent again) and
// to the datagram path (a lost datagram loses its states, and nothing
// waits). The kernel drops them as they arrive (nftables' input hook), so
// the sender sees nothing, as on a real network; dropping on the way out
// would fail the sender's system call instead, which QUIC takes for a
// broken socket. The namespace needs root and the ip and nft commands
// (Debian's iproute2 and nftables); this kernel's loss needs no sch_netem.

// envNetns names the namespace a re-executed load test runs in: set, the
// loss is in place and the process runs the load test itself.
const envNetns = "NEARZERO_LOADTEST_NETNS"

// maxLoss bounds -loss (percent): beyond it nothing gets set up at all.
const maxLoss = 50

// lossRules returns the nftables ruleset that drops pct percent of the
// packets arriving on loopback, in steps of a hundredth of a percent.
func lossRules(pct float64) string {
	return fmt.Sprintf(`table inet nearzero_loss {
	chain input {
		type filter hook input priority 0; policy accept;
		iif "lo" numgen random mod 10000 < %d drop
	}
}
`, int(math.Round(pct*100)))
}

// lossReady reports why -loss cannot run here, or nil.
func lossReady() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("-loss needs Linux network namespaces (this is %s)", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		return errors.New("-loss needs root: it makes a network namespace (run it with sudo, or as root)")
	}
	for _, cmd := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return fmt.Errorf("-loss needs the %s command (Debian: apt install iproute2 nftables): %w", cmd, err)
		}
	}
	return nil
}

// runLossy makes a namespace with c.loss percent loss on its loopback,
// runs this program again inside it with args, and removes the namespace;
// it returns the inner run's exit code.
func runLossy(c *config, args []string, stdout, stderr io.Writer) int {
	if err := lossReady(); err != nil {
		fmt.Fprintln(stderr, "loadtest:", err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "loadtest: -loss: cannot find this program to run it in the namespace:", err)
		return 1
	}
	ns := fmt.Sprintf("nearzero-loadtest-%d", os.Getpid())
	if err := makeLossyNetns(ns, c.loss); err != nil {
		fmt.Fprintln(stderr, "loadtest: -loss:", err)
		return 1
	}
	defer func() {
		if err := command(nil, "ip", "netns", "del", ns); err != nil {
			fmt.Fprintf(stderr, "loadtest: -loss: remove the namespace yourself (ip netns del %s): %v\n", ns, err)
		}
	}()
	fmt.Fprintf(stderr, "loadtest: in network namespace %s, its loopback losing %.2f%% of the packets each way\n", ns, c.loss)
	// The inner run ends on ^C as the shell sends it to both; this one
	// waits for it, so that the namespace goes with it.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, self}, args...)...)
	cmd.Env = append(os.Environ(), envNetns+"="+ns)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		fmt.Fprintln(stderr, "loadtest: -loss:", err)
		return 1
	}
	return 0
}

// inLossyNetns checks that this process runs in the namespace envNetns
// names, so that a report never claims a loss that was not there.
func inLossyNetns() error {
	want := os.Getenv(envNetns)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", "netns", "identify", strconv.Itoa(os.Getpid())).Output()
	if err != nil {
		return fmt.Errorf("-loss: which network namespace is this: %w", err)
	}
	if got := strings.TrimSpace(string(out)); got != want {
		return fmt.Errorf("-loss: %s=%s, but this process runs in namespace %q", envNetns, want, got)
	}
	return nil
}

// makeLossyNetns adds namespace ns with its loopback up and losing pct
// percent of what arrives on it.
func makeLossyNetns(ns string, pct float64) error {
	if err := command(nil, "ip", "netns", "add", ns); err != nil {
		return err
	}
	err := command(nil, "ip", "-n", ns, "link", "set", "lo", "up")
	if err == nil {
		err = command(strings.NewReader(lossRules(pct)), "ip", "netns", "exec", ns, "nft", "-f", "-")
	}
	if err != nil {
		_ = command(nil, "ip", "netns", "del", ns)
	}
	return err
}

// command runs name with args and stdin (nil: none), its output in the
// error when it fails.
func command(stdin io.Reader, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = stdin
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
