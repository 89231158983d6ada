package wire

import "encoding/binary"

// ControlType names a control message; the room protocol defines the values.
type ControlType uint8

// MaxControlBody is the largest control body in bytes. Room messages are a
// few hundred bytes; the limit keeps a peer from making us buffer megabytes.
const MaxControlBody = 16 << 10

// controlHeader is the first byte of every control frame.
const controlHeader = byte(KindControl) << 6

// ControlHeaderSize is the size of a control frame without its body.
const ControlHeaderSize = 4

// Control is a decoded control frame. Body aliases the decoded buffer.
type Control struct {
	Version uint16
	Type    ControlType
	Body    []byte
}

// AppendControl appends a control frame of this build's ProtocolVersion to
// dst. It returns ErrTooLarge for a body over MaxControlBody.
func AppendControl(dst []byte, t ControlType, body []byte) ([]byte, error) {
	if len(body) > MaxControlBody {
		return dst, ErrTooLarge
	}
	n := len(dst)
	dst = grow(dst, ControlHeaderSize+len(body))
	b := dst[n:]
	b[0] = controlHeader
	binary.LittleEndian.PutUint16(b[1:], ProtocolVersion)
	b[3] = byte(t)
	copy(b[ControlHeaderSize:], body)
	return dst, nil
}

// DecodeControl decodes a control frame. It returns ErrKind for a frame that
// is not a control frame, ErrTruncated for one shorter than its header,
// ErrTooLarge for a body over MaxControlBody, and an *UpdateRequiredError
// (matching ErrUpdateRequired) for another protocol version; in that last
// case the returned Control still carries the version and type it read.
func DecodeControl(b []byte) (Control, error) {
	if len(b) == 0 || b[0]>>6 != byte(KindControl) {
		return Control{}, ErrKind
	}
	if b[0] != controlHeader {
		return Control{}, ErrKind
	}
	if len(b) < ControlHeaderSize {
		return Control{}, ErrTruncated
	}
	c := Control{Version: binary.LittleEndian.Uint16(b[1:]), Type: ControlType(b[3])}
	if c.Version != ProtocolVersion {
		return c, &UpdateRequiredError{What: "protocol", Peer: c.Version, Local: ProtocolVersion}
	}
	if len(b)-ControlHeaderSize > MaxControlBody {
		return c, ErrTooLarge
	}
	c.Body = b[ControlHeaderSize:]
	return c, nil
}
