package direct

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// SignalVersion is the version of the offer and answer format (the
// package documentation describes it); a signal of another version fails
// that attempt.
const SignalVersion = 2

// fingerprintAlgo names the one certificate hash a signal may carry.
const fingerprintAlgo = "sha-256"

// maxCredential bounds an ICE username fragment or password in a signal
// (RFC 8445 asks for at most 256 characters).
const maxCredential = 256

var (
	// errSignal indicates an offer or answer that cannot be used.
	errSignal = errors.New("direct: bad signal")
	// errFingerprint indicates a peer whose DTLS certificate is not the
	// one its signal names.
	errFingerprint = errors.New("direct: the peer's certificate does not match its signalled fingerprint")
)

// signalData is an offer's or answer's Data: what the other side needs to
// reach us (ICE credentials and candidates) and to know it is us (the
// fingerprint of our DTLS certificate).
type signalData struct {
	V     int      `json:"v"`
	Ufrag string   `json:"ufrag"`
	Pwd   string   `json:"pwd"`
	FP    string   `json:"fp"`              // "sha-256 AB:CD:…", 32 bytes
	SCTP  []byte   `json:"sctp"`            // the SCTP INIT chunk (SNAP), base64
	Cands []string `json:"cands,omitempty"` // ICE candidates, "candidate:" optional
}

// maxSCTPInit bounds the SCTP INIT chunk a signal may carry (pion's is a
// few dozen bytes).
const maxSCTPInit = 1024

// encodeSignal returns d's text, or an error when it is over the server's
// limit (protocol.MaxSignalData).
func encodeSignal(d *signalData) (string, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("direct: encode signal: %w", err)
	}
	if len(b) > protocol.MaxSignalData {
		return "", fmt.Errorf("%w: %d bytes, over the signal limit %d", errSignal, len(b), protocol.MaxSignalData)
	}
	return string(b), nil
}

// decodeSignal parses an offer's or answer's Data and checks its fields;
// the candidates are checked when they are used (a bad one is skipped).
func decodeSignal(s string) (signalData, []byte, error) {
	var d signalData
	if len(s) > protocol.MaxSignalData {
		return d, nil, fmt.Errorf("%w: %d bytes, over the signal limit %d", errSignal, len(s), protocol.MaxSignalData)
	}
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return d, nil, fmt.Errorf("%w: %w", errSignal, err)
	}
	if d.V != SignalVersion {
		return d, nil, fmt.Errorf("%w: version %d, want %d", errSignal, d.V, SignalVersion)
	}
	if d.Ufrag == "" || d.Pwd == "" || len(d.Ufrag) > maxCredential || len(d.Pwd) > maxCredential {
		return d, nil, fmt.Errorf("%w: ICE credentials missing or over %d bytes", errSignal, maxCredential)
	}
	if len(d.SCTP) == 0 || len(d.SCTP) > maxSCTPInit {
		return d, nil, fmt.Errorf("%w: SCTP INIT chunk of %d bytes, want 1 to %d", errSignal, len(d.SCTP), maxSCTPInit)
	}
	fp, err := parseFingerprint(d.FP)
	if err != nil {
		return d, nil, err
	}
	return d, fp, nil
}

// fingerprint formats the SHA-256 hash of a DER certificate as a signal
// carries it: "sha-256 AB:CD:…".
func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	var b strings.Builder
	b.WriteString(fingerprintAlgo)
	b.WriteByte(' ')
	for i, c := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String()
}

// parseFingerprint returns the hash in a signal's fingerprint.
func parseFingerprint(s string) ([]byte, error) {
	algo, hexes, ok := strings.Cut(s, " ")
	if !ok || !strings.EqualFold(algo, fingerprintAlgo) {
		return nil, fmt.Errorf("%w: fingerprint %.20q: want %s", errSignal, s, fingerprintAlgo)
	}
	parts := strings.Split(hexes, ":")
	if len(parts) != sha256.Size {
		return nil, fmt.Errorf("%w: fingerprint of %d bytes, want %d", errSignal, len(parts), sha256.Size)
	}
	out := make([]byte, 0, sha256.Size)
	for _, p := range parts {
		b, err := hex.DecodeString(p)
		if err != nil || len(b) != 1 {
			return nil, fmt.Errorf("%w: fingerprint byte %.8q", errSignal, p)
		}
		out = append(out, b[0])
	}
	return out, nil
}

// verifyFingerprint returns a DTLS peer-certificate check that accepts
// only a certificate whose SHA-256 hash is want: the one the peer
// signalled. This is what authenticates a link (no certificate authority
// is involved; the signal comes through the server).
func verifyFingerprint(want []byte) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("direct: the peer sent no certificate")
		}
		if sum := sha256.Sum256(raw[0]); !bytes.Equal(sum[:], want) {
			return errFingerprint
		}
		return nil
	}
}

// newCertificate makes a Mesh's self-signed ECDSA P-256 certificate for
// DTLS. Peers check it only against the fingerprint in its signals, so its
// names and dates carry nothing (the dates are wide for strict stacks).
func newCertificate() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("direct: certificate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("direct: certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "nearzero"},
		NotBefore:    now.Add(-24 * time.Hour),
		NotAfter:     now.Add(30 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("direct: certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
