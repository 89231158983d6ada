package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nearzero/nearzero/netcode/protocol"
)

func TestMain(m *testing.M) {
	if os.Getenv(envNetns) != "" { // -loss ran this binary again in its namespace
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

func TestLoopbackOnly(t *testing.T) {
	for u, ok := range map[string]bool{
		"ws://127.0.0.1:8787/ws": true, "ws://localhost:1/ws": true, "ws://[::1]:8787/ws": true,
		"ws://10.0.0.1:8787/ws": false, "ws://example.com/ws": false, "wss://8.8.8.8/ws": false,
	} {
		assert.Equal(t, ok, loopbackOnly(u) == nil, u)
	}
}

func TestBadFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"too many rooms": {"-rooms", "100000"},
		"too long":       {"-duration", "1h"},
		"not loopback":   {"-url", "ws://192.0.2.1:8787/ws"},
		"zero players":   {"-players", "0"},
		"transport":      {"-transport", "tcp"},
		"loss too high":  {"-loss", "51"},
		"loss negative":  {"-loss", "-1"},
		"loss and url":   {"-loss", "2", "-url", "ws://127.0.0.1:8787/ws"},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errOut), name)
	}
}

func TestSmallRun(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-rooms", "2", "-players", "3", "-duration", "1s", "-json"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	var rep Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	assert.Equal(t, 2, rep.Rooms)
	assert.Positive(t, rep.ReceivedPerSec)
	assert.Positive(t, rep.ServerRelayedPS)
	assert.Positive(t, rep.Samples)
	assert.Positive(t, rep.LatencyP50)
	assert.GreaterOrEqual(t, rep.LatencyP99, rep.LatencyP50)
	assert.LessOrEqual(t, rep.Duration, 30*time.Second)
	assert.Empty(t, rep.Errors)
	assert.Positive(t, rep.StatesPerWrite, "the room server counts its writes of states")
	// -relay both (the default): the bare relay ran after, with the same
	// bots, and the room server's figures are a share of it.
	require.NotNil(t, rep.Bare, "the bare relay's run")
	assert.Equal(t, "room", rep.Relay)
	assert.Equal(t, "bare", rep.Bare.Relay)
	assert.Positive(t, rep.Bare.ServerRelayedPS)
	assert.Positive(t, rep.Bare.StatesPerWrite, "the bare relay counts its writes too")
	assert.Empty(t, rep.Bare.Errors)
	require.NotNil(t, rep.Ratio)
	assert.InDelta(t, rep.ServerRelayedPS/rep.Bare.ServerRelayedPS, rep.Ratio.Throughput, 1e-9)
	assert.Positive(t, rep.Ratio.P99)
	assert.Positive(t, rep.Ratio.CPU)
}

// TestEveryRoomIsCreated runs enough rooms that the in-process server's
// lobby reserves would refuse one (all bots share loopback's network, which
// SmallNetReserve holds to most of the lobbies): the run must measure every
// room it was asked for.
func TestEveryRoomIsCreated(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-rooms", "8", "-players", "8", "-duration", "500ms", "-json", "-relay", "room"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	var rep Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	assert.Equal(t, 8, rep.Rooms)
	assert.Empty(t, rep.Errors)
}

func TestBothTransports(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"-rooms", "2", "-players", "3", "-duration", "1s", "-json", "-transport", "both"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	var reps []Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &reps), out.String())
	require.Len(t, reps, 2)
	assert.Equal(t, "ws", reps[0].Transport)
	assert.Zero(t, reps[0].DatagramShare, "ws: no datagrams")
	assert.Equal(t, "quic", reps[1].Transport)
	assert.Greater(t, reps[1].DatagramShare, 0.5, "quic: the states went as datagrams")
	for _, r := range reps {
		assert.Positive(t, r.ServerRelayedPS, r.Transport)
		assert.Positive(t, r.Samples, r.Transport)
		assert.Empty(t, r.Errors, r.Transport)
	}
}

// TestDialReason: a bot's failed dial is counted by why: the server's
// code, a timeout, a refused connection, or the innermost cause.
func TestDialReason(t *testing.T) {
	assert.Equal(t, protocol.CodeGoingAway.String(), dialReason(fmt.Errorf("dial: %w", &protocol.CloseError{Code: protocol.CodeGoingAway})))
	assert.Equal(t, "timeout", dialReason(fmt.Errorf("dial ws://127.0.0.1:1/ws: %w", context.DeadlineExceeded)))
	assert.Equal(t, "connection refused", dialReason(fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED})))
	assert.Equal(t, "handshake failed", dialReason(errors.New("dial ws://127.0.0.1:4242/ws: handshake failed")))
}

func TestLossRules(t *testing.T) {
	assert.Contains(t, lossRules(2), "numgen random mod 10000 < 200 drop")
	assert.Contains(t, lossRules(0.25), "numgen random mod 10000 < 25 drop")
	assert.Contains(t, lossRules(2), "hook input", "dropped on arrival: the sender's system call succeeds")
}

// TestLossyRun: -loss runs the server and bots in a namespace whose
// loopback loses packets; the datagram path loses states there (each
// crosses two lossy hops), and the namespace is gone afterwards. Over
// the WebSocket nothing is lost, but a stall of more than half a second
// can meet the room's rate limit (the closing note of this change), so
// the run here is over datagrams alone.
func TestLossyRun(t *testing.T) {
	if err := lossReady(); err != nil {
		t.Skipf("loadtest: -loss cannot run here: %v", err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"-loss", "5", "-rooms", "1", "-players", "3", "-duration", "3s", "-json", "-transport", "quic", "-relay", "room"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String()+out.String())
	assert.Contains(t, errOut.String(), "losing 5.00% of the packets each way")
	var r Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &r), out.String())
	assert.Equal(t, "quic", r.Transport)
	assert.InDelta(t, 5, r.Loss, 1e-9)
	assert.Empty(t, r.Errors)
	assert.Positive(t, r.Samples)
	assert.Greater(t, r.DatagramShare, 0.5, "the datagram path came up through the loss")
	// 5 % at each of two hops loses about 10 % of the relayed states
	// (without loss a run receives 99.5 %: the last ones are in flight).
	assert.Less(t, r.ReceivedPerSec/r.ExpectedPerSec, 0.97, "the namespace lost datagrams")
	ns, err := exec.Command("ip", "netns", "list").CombinedOutput()
	require.NoError(t, err)
	for _, l := range strings.Split(string(ns), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			assert.NotEqual(t, "nearzero-loadtest-"+strconv.Itoa(os.Getpid()), f[0], "the namespace was removed")
		}
	}
}

// TestLossNeedsItsNamespace: a run told it is in a lossy namespace that
// it is not in refuses to start, rather than report a loss that was not
// there.
func TestLossNeedsItsNamespace(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("loadtest: no ip command here")
	}
	t.Setenv(envNetns, "nearzero-loadtest-nonexistent")
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"-loss", "2", "-rooms", "1", "-players", "2", "-duration", "1s"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "but this process runs in namespace")
}
