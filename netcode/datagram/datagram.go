package datagram

import (
	"errors"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// ALPN is the TLS application protocol of the datagram path.
const ALPN = "nearzero-dgram/1"

// TokenSize is the size of a binding token in bytes.
const TokenSize = 16

// Token is a binding token: it binds one QUIC connection to the WebSocket
// session that was offered it, once.
type Token [TokenSize]byte

// Bind request and answer, on the first bidirectional stream the client
// opens: BindVersion then the token (BindSize bytes); the server answers
// BindOK then the next token (BindSize bytes) and closes the stream. A
// token it does not know closes the connection with CloseRefused.
const (
	BindVersion byte = 1
	BindOK      byte = 0
	BindSize         = 1 + TokenSize
)

// QUIC application error codes the ends close with.
const (
	CloseNormal   = 0x100 // the client left, or the server stopped
	CloseRefused  = 0x101 // unknown or used binding token
	CloseReplaced = 0x102 // a newer QUIC connection bound the same session
	CloseSession  = 0x103 // the WebSocket session ended
	CloseFlood    = 0x104 // more datagrams than the budget allows
	CloseNoBind   = 0x105 // no binding within BindTimeout
)

// Timing of the path. DeadAfter bounds how long states keep going into a
// path that died; KeepaliveEvery keeps an idle path's ends hearing each
// other several times within it.
const (
	// KeepaliveEvery is the longest an end stays silent on the path.
	KeepaliveEvery = 40 * time.Millisecond
	// DeadAfter is the silence after which an end takes the path for
	// down and sends its states over the WebSocket.
	DeadAfter = 150 * time.Millisecond
	// BindTimeout is how long a server waits for a new QUIC connection's
	// binding.
	BindTimeout = 5 * time.Second
)

// MaxPayload is the largest datagram an end sends: it fits QUIC's
// smallest packets (1200 bytes) with their headers.
const MaxPayload = 1100

// KeepaliveByte starts a keepalive datagram: two bytes, this one and the
// flags (FlagHearYou). No frame of the room protocol starts with it.
const KeepaliveByte byte = 0x01

// FlagHearYou in a keepalive says that its sender hears the other end
// over the path (Path.Hears).
const FlagHearYou byte = 0x01

// Keepalive returns a keepalive datagram.
func Keepalive(hearYou bool) [2]byte {
	k := [2]byte{KeepaliveByte, 0}
	if hearYou {
		k[1] = FlagHearYou
	}
	return k
}

// ParseKeepalive reads a keepalive datagram; ok is false for anything else.
func ParseKeepalive(b []byte) (hearYou, ok bool) {
	if len(b) != 2 || b[0] != KeepaliveByte {
		return false, false
	}
	return b[1]&FlagHearYou != 0, true
}

// ErrBind indicates a bind request or answer that does not read.
var ErrBind = errors.New("datagram: malformed bind message")

// AppendBind appends a bind request for tok.
func AppendBind(dst []byte, tok Token) []byte {
	return append(append(dst, BindVersion), tok[:]...)
}

// ParseBind reads a bind request.
func ParseBind(b []byte) (Token, error) {
	var t Token
	if len(b) != BindSize || b[0] != BindVersion {
		return t, ErrBind
	}
	copy(t[:], b[1:])
	return t, nil
}

// AppendBound appends the answer to a bind: BindOK and the next token.
func AppendBound(dst []byte, next Token) []byte {
	return append(append(dst, BindOK), next[:]...)
}

// ParseBound reads the answer to a bind and returns the next token.
func ParseBound(b []byte) (Token, error) {
	var t Token
	if len(b) != BindSize || b[0] != BindOK {
		return t, ErrBind
	}
	copy(t[:], b[1:])
	return t, nil
}

// Control reports whether a control frame may travel as a datagram: ping,
// pong and echo, the messages that map the clocks along the states' path.
// Every other control message goes on the WebSocket, reliable and ordered.
func Control(frame []byte) bool {
	if wire.KindOf(frame) != wire.KindControl || len(frame) < wire.ControlHeaderSize {
		return false
	}
	switch wire.ControlType(frame[3]) {
	case protocol.TypePing, protocol.TypePong, protocol.TypeEcho:
		return true
	}
	return false
}

// Split returns the longest head of batch, a run of whole state frames,
// that fits max bytes (at least one frame), and the rest. A batch that
// does not split into frames is returned whole as head: the receiver
// refuses it as it would over the WebSocket.
func Split(batch []byte, max int) (head, rest []byte) {
	n := 0
	for n < len(batch) {
		l := protocol.StateLen(batch[n:])
		if l == 0 || n+l > len(batch) {
			return batch, nil
		}
		if n > 0 && n+l > max {
			break
		}
		n += l
	}
	return batch[:n], batch[n:]
}

// Count returns the number of whole state frames in batch.
func Count(batch []byte) int {
	n := 0
	for len(batch) > 0 {
		_, rest, ok := protocol.NextState(batch)
		if !ok {
			break
		}
		batch = rest
		n++
	}
	return n
}
