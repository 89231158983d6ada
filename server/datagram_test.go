package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit/udpproxy"
	"github.com/nearzero/nearzero/netcode/datagram"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// dialQUIC dials the datagram path at addr, pinning the certificate hash
// of the offer.
func dialQUIC(t *testing.T, addr string, o *protocol.DatagramOffer) *quic.Conn {
	t.Helper()
	hash, err := hex.DecodeString(o.CertSHA256)
	require.NoError(t, err)
	conf := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{datagram.ALPN}, MinVersion: tls.VersionTLS13, //nolint:gosec // pinned below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if sum := sha256.Sum256(raw[0]); !bytes.Equal(sum[:], hash) {
				return errors.New("certificate hash differs")
			}
			return nil
		}}
	qc, err := quic.DialAddr(ctxT(t), addr, conf, &quic.Config{EnableDatagrams: true, MaxIncomingStreams: -1, MaxIncomingUniStreams: -1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = qc.CloseWithError(0, "") })
	return qc
}

// bindQUIC sends a binding with tok (hex) and returns the next token, or
// the error that ended it.
func bindQUIC(t *testing.T, qc *quic.Conn, tok string) (string, error) {
	t.Helper()
	raw, err := hex.DecodeString(tok)
	require.NoError(t, err)
	var tk datagram.Token
	copy(tk[:], raw)
	st, err := qc.OpenStreamSync(ctxT(t))
	require.NoError(t, err)
	_ = st.SetDeadline(time.Now().Add(waitFor))
	if _, err := st.Write(datagram.AppendBind(nil, tk)); err != nil {
		return "", err
	}
	var ans [datagram.BindSize]byte
	if _, err := io.ReadFull(st, ans[:]); err != nil {
		return "", err
	}
	next, err := datagram.ParseBound(ans[:])
	require.NoError(t, err)
	return hex.EncodeToString(next[:]), nil
}

// closedWith waits for qc to end and returns its application error code.
func closedWith(t *testing.T, qc *quic.Conn) quic.ApplicationErrorCode {
	t.Helper()
	select {
	case <-qc.Context().Done():
	case <-time.After(waitFor):
		t.Fatal("the QUIC connection stays open")
	}
	var ae *quic.ApplicationError
	require.True(t, errors.As(context.Cause(qc.Context()), &ae), "%v", context.Cause(qc.Context()))
	return ae.ErrorCode
}

func TestDatagramOffer(t *testing.T) {
	e := newEnv(t, nil)
	w := e.raw().hello()
	require.NotNil(t, w.Datagram)
	assert.Equal(t, e.s.Addr().(*net.TCPAddr).Port, w.Datagram.Port, "the WebSocket's port, on UDP")
	assert.Len(t, w.Datagram.CertSHA256, 64)
	assert.Len(t, w.Datagram.Token, 32)
	assert.Empty(t, w.Datagram.Host)
	w2 := e.raw().hello()
	assert.NotEqual(t, w.Datagram.Token, w2.Datagram.Token, "a token per session")
	assert.Equal(t, w.Datagram.CertSHA256, w2.Datagram.CertSHA256)

	off := newEnv(t, func(c *Config) { c.NoDatagrams = true })
	assert.Nil(t, off.raw().hello().Datagram, "-no-datagrams: none offered")
	assert.Nil(t, off.s.DatagramAddr())

	pub := newEnv(t, func(c *Config) { c.DatagramPublic = "play.example.com:9000" })
	o := pub.raw().hello().Datagram
	require.NotNil(t, o)
	assert.Equal(t, "play.example.com", o.Host)
	assert.Equal(t, 9000, o.Port)
	assert.Error(t, (&Config{DatagramPublic: "nope"}).Validate())
}

// Attack: bind a QUIC connection with a guessed token, or with one
// already used.
func TestDatagramBindingTokens(t *testing.T) {
	e := newEnv(t, nil)
	addr := e.s.DatagramAddr().String()
	r := e.raw()
	w := r.hello()
	o := w.Datagram
	require.NotNil(t, o)

	forged := dialQUIC(t, addr, o)
	_, err := bindQUIC(t, forged, "00112233445566778899aabbccddeeff")
	require.Error(t, err)
	assert.Equal(t, quic.ApplicationErrorCode(datagram.CloseRefused), closedWith(t, forged), "a forged token is refused")
	assert.Contains(t, metricsBody(e), `nearzero_rejected_total{reason="bad_token"} 1`)

	first := dialQUIC(t, addr, o)
	next, err := bindQUIC(t, first, o.Token)
	require.NoError(t, err, "the offered token binds")
	assert.NotEqual(t, o.Token, next)
	eventually(t, "one link", func() (string, bool) {
		b := metricsBody(e)
		return b, bytes.Contains([]byte(b), []byte("nearzero_datagram_links 1"))
	})

	again := dialQUIC(t, addr, o)
	_, err = bindQUIC(t, again, o.Token)
	require.Error(t, err)
	assert.Equal(t, quic.ApplicationErrorCode(datagram.CloseRefused), closedWith(t, again), "a token binds once")

	second := dialQUIC(t, addr, o)
	_, err = bindQUIC(t, second, next)
	require.NoError(t, err, "the next token binds the session again")
	assert.Equal(t, quic.ApplicationErrorCode(datagram.CloseReplaced), closedWith(t, first), "and replaces the first")

	require.NoError(t, r.ws.CloseNow())
	assert.Equal(t, quic.ApplicationErrorCode(datagram.CloseSession), closedWith(t, second), "the link ends with its session")

	r2 := e.raw()
	o2 := r2.hello().Datagram
	require.NoError(t, r2.ws.CloseNow())
	eventually(t, "the session gone", func() (int, bool) {
		e.s.mu.Lock()
		n := len(e.s.conns)
		e.s.mu.Unlock()
		return n, n == 0
	})
	late := dialQUIC(t, addr, o2)
	_, err = bindQUIC(t, late, o2.Token)
	require.Error(t, err)
	assert.Equal(t, quic.ApplicationErrorCode(datagram.CloseRefused), closedWith(t, late), "a closed session's token binds nothing")
}

// seatedRaw is a bare WebSocket in a room of its own with a bound QUIC
// connection: for sending datagrams no client would.
func seatedRaw(t *testing.T, e *env) (*raw, *quic.Conn) {
	t.Helper()
	r := e.raw()
	o := r.hello().Datagram
	require.NotNil(t, o)
	_, ok := r.request(&protocol.Create{}).(*protocol.Joined)
	require.True(t, ok)
	qc := dialQUIC(t, e.s.DatagramAddr().String(), o)
	_, err := bindQUIC(t, qc, o.Token)
	require.NoError(t, err)
	return r, qc
}

// The checks of the room apply to datagrams: a teleport is refused and
// told on the WebSocket, and a flood of states is cut as over it.
func TestDatagramStatesAreChecked(t *testing.T) {
	e := newEnv(t, nil)
	r, qc := seatedRaw(t, e)
	send := func(seq int, x float64) {
		b, err := wire.AppendState(nil, state(seq, x))
		require.NoError(t, err)
		require.NoError(t, qc.SendDatagram(b))
	}
	send(1, 0)
	send(2, 5000) // a teleport
	for {
		if m, ok := r.next().(*protocol.Error); ok {
			assert.Equal(t, protocol.CodeImplausible, m.Code, m.Message)
			break
		}
	}
	eventually(t, "the teleport counted", func() (string, bool) {
		b := metricsBody(e)
		return b, bytes.Contains([]byte(b), []byte(`nearzero_rejected_total{reason="teleport"} 1`))
	})

	// A flood: valid states as fast as QUIC takes them.
	go func() {
		for i := 3; i < 20000; i++ {
			b, _ := wire.AppendState(nil, state(i, 0))
			if qc.SendDatagram(b) != nil {
				return
			}
		}
	}()
	code, _ := r.closed()
	assert.Equal(t, protocol.CodeRateLimited, code, "the room's state budget cuts the flood, as over the WebSocket")
	body := metricsBody(e)
	assert.Contains(t, body, `nearzero_kicked_total{code="rate_limited"} 1`)
	assert.NotContains(t, body, `nearzero_datagram_states_in_total 0`)
}

// Attack: datagrams the room never sees (keepalives) in a flood.
func TestDatagramBudget(t *testing.T) {
	e := newEnv(t, nil)
	r, qc := seatedRaw(t, e)
	go func() {
		k := datagram.Keepalive(true)
		for range 50000 {
			if qc.SendDatagram(k[:]) != nil {
				return
			}
		}
	}()
	code, _ := r.closed()
	assert.Equal(t, protocol.CodeRateLimited, code)
	assert.Contains(t, metricsBody(e), `nearzero_limited_total{limit="datagrams"} 1`)
}

// Amplification: before a client's address is validated the server
// answers nothing larger than what it sent: its first answer is a Retry.
func TestDatagramRetryFirst(t *testing.T) {
	e := newEnv(t, nil)
	p := udpproxy.Start(t, e.s.DatagramAddr().String())
	opts := &serverlink.Options{Sync: fastSync, DatagramAddr: p.Addr()}
	ann := e.dial("Ann", opts)
	_, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	eventually(t, "the datagram path", func() (bool, bool) { return ann.DatagramUp(), ann.DatagramUp() })
	pk := p.Packets()
	require.GreaterOrEqual(t, len(pk), 2)
	require.True(t, pk[0].ToServer)
	var answer udpproxy.Packet
	for _, x := range pk {
		if !x.ToServer {
			answer = x
			break
		}
	}
	assert.GreaterOrEqual(t, pk[0].Size, 1200, "a client's first packet is padded")
	assert.Equal(t, byte(0xF0), answer.Head[0]&0xF0, "the first answer is a Retry (QUIC v1 long header, type 3)")
	assert.Equal(t, []byte{0, 0, 0, 1}, answer.Head[1:5], "QUIC v1")
	assert.Less(t, answer.Size, pk[0].Size, "and smaller than the packet it answers")
}

// A state overtaken by a newer one on the other path (a switch) is
// dropped quietly, not refused as stale with an error to the player.
func TestDatagramPathsKeepOrder(t *testing.T) {
	e := newEnv(t, nil)
	r, qc := seatedRaw(t, e)
	b, err := wire.AppendState(nil, state(5, 0))
	require.NoError(t, err)
	require.NoError(t, qc.SendDatagram(b))
	eventually(t, "the datagram state in", func() (string, bool) {
		body := metricsBody(e)
		return body, bytes.Contains([]byte(body), []byte("nearzero_datagram_states_in_total 1"))
	})
	late, err := wire.AppendState(nil, state(4, 0))
	require.NoError(t, err)
	r.send(late)                              // on the WebSocket, behind seq 5
	require.NoError(t, qc.SendDatagram(late)) // and a datagram reordered
	eventually(t, "both dropped", func() (string, bool) {
		body := metricsBody(e)
		return body, bytes.Contains([]byte(body), []byte("nearzero_datagram_reordered_total 2"))
	})
	assert.Contains(t, metricsBody(e), `nearzero_rejected_total{reason="stale"} 0`, "nothing refused: no error to the player")
}
