package protocol

import "github.com/nearzero/nearzero/netcode/wire"

// StateLen returns the length of the state frame starting at b[0], read
// from its first two bytes, or 0 when b is empty or does not start with a
// state. It does not check that b is that long.
func StateLen(b []byte) int { return wire.FrameSize(b) }

// NextState splits the first state frame off a batch of states back to back.
// ok is false when b does not start with a state frame, or is shorter than
// the frame its header announces; then frame is all of b (for error
// reports) and rest is nil. It never allocates.
func NextState(b []byte) (frame, rest []byte, ok bool) {
	n := StateLen(b)
	if n == 0 || n > len(b) {
		return b, nil, false
	}
	return b[:n], b[n:], true
}
