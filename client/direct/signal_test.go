package direct

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

func testSignal(t *testing.T) (signalData, []byte) {
	t.Helper()
	cert, err := newCertificate()
	require.NoError(t, err)
	der := cert.Certificate[0]
	sum := sha256.Sum256(der)
	return signalData{
		V: SignalVersion, Ufrag: "aBcD", Pwd: "0123456789abcdefghijkl", FP: fingerprint(der), SCTP: []byte{1, 0, 0, 20},
		Cands: []string{"4207164462 1 udp 2130706431 127.0.0.1 56384 typ host", "candidate:1 1 udp 16777215 198.51.100.7 3478 typ relay raddr 0.0.0.0 rport 0"},
	}, sum[:]
}

func TestSignalRoundTrip(t *testing.T) {
	d, sum := testSignal(t)
	s, err := encodeSignal(&d)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(s, `{"v":2,`), s)
	got, fp, err := decodeSignal(s)
	require.NoError(t, err)
	assert.Equal(t, d, got)
	assert.Equal(t, sum, fp)
	assert.Regexp(t, `^sha-256 [0-9A-F]{2}(:[0-9A-F]{2}){31}$`, d.FP)

	// Lower-case hex and algorithm name are the same fingerprint.
	d.FP = strings.ToLower(d.FP)
	s, err = encodeSignal(&d)
	require.NoError(t, err)
	_, fp, err = decodeSignal(s)
	require.NoError(t, err)
	assert.Equal(t, sum, fp)
}

func TestSignalMalformed(t *testing.T) {
	good, _ := testSignal(t)
	for name, mod := range map[string]func(*signalData){
		"no ufrag":          func(d *signalData) { d.Ufrag = "" },
		"no pwd":            func(d *signalData) { d.Pwd = "" },
		"long pwd":          func(d *signalData) { d.Pwd = strings.Repeat("p", maxCredential+1) },
		"no fingerprint":    func(d *signalData) { d.FP = "" },
		"other hash":        func(d *signalData) { d.FP = "sha-1 " + d.FP[len("sha-256 "):] },
		"short fingerprint": func(d *signalData) { d.FP = d.FP[:len(d.FP)-3] },
		"bad hex":           func(d *signalData) { d.FP = d.FP[:len(d.FP)-2] + "ZZ" },
		"wide byte":         func(d *signalData) { d.FP = d.FP[:len(d.FP)-2] + "ABC" },
		"version 0":         func(d *signalData) { d.V = 0 },
		"version 1":         func(d *signalData) { d.V = 1 },
		"no sctp init":      func(d *signalData) { d.SCTP = nil },
		"long sctp init":    func(d *signalData) { d.SCTP = make([]byte, maxSCTPInit+1) },
	} {
		t.Run(name, func(t *testing.T) {
			d := good
			mod(&d)
			s, err := encodeSignal(&d)
			require.NoError(t, err)
			_, _, err = decodeSignal(s)
			assert.ErrorIs(t, err, errSignal)
		})
	}
	for _, s := range []string{"", "not json", "[1,2]", `{"v":"1"}`, `{"v":1}`, "v=0\r\no=- 1 1 IN IP4 0.0.0.0"} {
		_, _, err := decodeSignal(s)
		assert.ErrorIs(t, err, errSignal, "%q", s)
	}
	_, _, err := decodeSignal(`{"v":1}`)
	assert.ErrorContains(t, err, "version 1")
}

func TestSignalOverLimit(t *testing.T) {
	d, _ := testSignal(t)
	for len(d.Cands)*len(d.Cands[0]) <= protocol.MaxSignalData {
		d.Cands = append(d.Cands, d.Cands[0])
	}
	_, err := encodeSignal(&d)
	assert.ErrorIs(t, err, errSignal)
	assert.ErrorContains(t, err, "over the signal limit")

	// Decoding checks the limit too (the server does; a test fake may not).
	d.Cands = d.Cands[:1]
	s, err := encodeSignal(&d)
	require.NoError(t, err)
	s += strings.Repeat(" ", protocol.MaxSignalData-len(s)+1)
	_, _, err = decodeSignal(s)
	assert.ErrorIs(t, err, errSignal)
	_, _, err = decodeSignal(s[:protocol.MaxSignalData])
	assert.NoError(t, err, "at the limit is fine")
}

func TestVerifyFingerprint(t *testing.T) {
	d, sum := testSignal(t)
	_ = d
	other, err := newCertificate()
	require.NoError(t, err)
	mine, err := newCertificate()
	require.NoError(t, err)
	msum := sha256.Sum256(mine.Certificate[0])
	check := verifyFingerprint(msum[:])
	assert.NoError(t, check([][]byte{mine.Certificate[0]}, nil))
	assert.ErrorIs(t, check([][]byte{other.Certificate[0]}, nil), errFingerprint)
	assert.Error(t, check(nil, nil), "no certificate")
	assert.NotEqual(t, sum, msum[:], "each certificate is new")
}
