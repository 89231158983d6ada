package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pion/stun/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuf is a goroutine-safe buffer.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestHelpListsEveryFlagWithDefault(t *testing.T) {
	var out syncBuf
	code := run([]string{"-h"}, nil, &out, &out, nil)
	assert.Equal(t, 0, code)
	help := out.String()
	for _, want := range []string{"-addr", `(default "127.0.0.1:8787")`, "-db", `(default "./nearzero.db")`,
		"-room-size", "(default 16)", "-max-rooms", "(default 1000)", "-drain-grace", "(default 4m0s)",
		"-log-format", `(default "text")`, "-secret", "-analytics", "-seat-hold", "(default 20s)", "/healthz",
		"-max-entities", "(default 32)", "-claim-radius", "(default 4)", "-claim-radius-2d", "(default 128)",
		"-teleports-per-minute", "(default 12)", "-hit-range", "-hit-range-2d", "-input-delay", "default off: the host chooses",
		"-no-datagrams", "-datagram-cert", "-datagram-key", "-datagram-public"} {
		assert.Contains(t, help, want)
	}
}

func TestBadFlags(t *testing.T) {
	cases := map[string][]string{
		"unknown flag":    {"-nope"},
		"bad log format":  {"-log-format", "xml", "-db", ":memory:"},
		"room too big":    {"-room-size", "999", "-db", ":memory:"},
		"short secret":    {"-secret", "short", "-db", ":memory:", "-addr", "127.0.0.1:0"},
		"stray argument":  {"serve"},
		"bad log level":   {"-log-level", "loud"},
		"drain vs spread": {"-drain-grace", "-1s", "-db", ":memory:"},
		"entities":        {"-max-entities", "128", "-db", ":memory:"},
		"claim radius":    {"-claim-radius", "-1", "-db", ":memory:"},
		"teleports":       {"-teleports-per-minute", "0.5", "-db", ":memory:"},
		"hit range":       {"-hit-range", "NaN", "-db", ":memory:"},
		"cert alone":      {"-datagram-cert", "c.pem", "-db", ":memory:", "-addr", "127.0.0.1:0"},
		"no such cert":    {"-datagram-cert", "nope.pem", "-datagram-key", "nope.key", "-db", ":memory:", "-addr", "127.0.0.1:0"},
		"bad public":      {"-datagram-public", "nope", "-db", ":memory:"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out syncBuf
			code := run(args, nil, &out, &out, nil)
			assert.NotZero(t, code, out.String())
		})
	}
	var out syncBuf
	assert.Zero(t, run([]string{"-version"}, nil, &out, &out, nil))
	assert.Contains(t, out.String(), fmt.Sprintf("protocol %d", wire.ProtocolVersion))
}

func TestServeAndDrainOnSignal(t *testing.T) {
	sig := make(chan os.Signal, 2)
	var out, logs syncBuf
	addrCh := make(chan string, 1)
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-addr", "127.0.0.1:0", "-db", ":memory:", "-drain-grace", "2s",
			"-log-format", "json", "-analytics", "-"}, sig, &out, &logs, func(a string) { addrCh <- a })
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case code := <-done:
		t.Fatalf("exited early with %d: %s", code, logs.String())
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	var h map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	resp.Body.Close()
	assert.Equal(t, "ready", h["state"])

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := serverlink.Dial(ctx, "ws://"+addr+"/ws", &serverlink.Options{NoReconnect: true})
	require.NoError(t, err)
	_, err = c.Create(ctx, nil)
	require.NoError(t, err)

	sig <- syscall.SIGTERM
	select {
	case code := <-done:
		assert.Equal(t, 0, code, logs.String())
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop")
	}
	require.NoError(t, c.Close(ctx))
	assert.Contains(t, logs.String(), `"msg":"stopped cleanly"`)
	assert.Contains(t, out.String(), `"event":"room_joined"`, "analytics went to stdout")
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	for _, l := range lines {
		assert.True(t, json.Valid([]byte(l)), "JSON logs: %s", l)
	}
}

// TestDatagramCertFlags serves the datagram path with a certificate from
// files: the welcome carries its hash, and a client takes the path.
func TestDatagramCertFlags(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "game.example.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))

	sig := make(chan os.Signal, 2)
	var out, logs syncBuf
	addrCh := make(chan string, 1)
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-addr", "127.0.0.1:0", "-db", ":memory:", "-datagram-cert", certFile, "-datagram-key", keyFile},
			sig, &out, &logs, func(a string) { addrCh <- a })
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case code := <-done:
		t.Fatalf("exited early with %d: %s", code, logs.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := serverlink.Dial(ctx, "ws://"+addr+"/ws", &serverlink.Options{NoReconnect: true})
	require.NoError(t, err)
	sum := sha256.Sum256(der)
	require.NotNil(t, c.Welcome().Datagram)
	assert.Equal(t, hex.EncodeToString(sum[:]), c.Welcome().Datagram.CertSHA256)
	_, err = c.Create(ctx, nil)
	require.NoError(t, err)
	assert.Eventually(t, c.DatagramUp, 5*time.Second, 5*time.Millisecond, "the client takes the path in a room")

	// The STUN responder answers on the same UDP port, beside QUIC.
	udp, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", c.Welcome().Datagram.Port))
	require.NoError(t, err)
	defer udp.Close()
	req := stun.MustBuild(stun.TransactionID, stun.BindingRequest)
	resp := &stun.Message{Raw: make([]byte, 1500)}
	for try := 0; ; try++ { // UDP: a lost request is sent again
		_, err = udp.Write(req.Raw)
		require.NoError(t, err)
		require.NoError(t, udp.SetReadDeadline(time.Now().Add(time.Second)))
		n, err := udp.Read(resp.Raw)
		if err != nil && try < 5 {
			continue
		}
		require.NoError(t, err, "a STUN answer on the datagram path's port")
		resp.Raw = resp.Raw[:n]
		break
	}
	require.NoError(t, resp.Decode())
	assert.Equal(t, stun.BindingSuccess, resp.Type)
	var mapped stun.XORMappedAddress
	require.NoError(t, mapped.GetFrom(resp))
	assert.Equal(t, udp.LocalAddr().(*net.UDPAddr).Port, mapped.Port)
	assert.True(t, c.DatagramUp(), "the path stays up beside STUN")
	require.NoError(t, c.Close(ctx))
	sig <- syscall.SIGTERM
	sig <- syscall.SIGTERM
	assert.Equal(t, 0, <-done, logs.String())
}
