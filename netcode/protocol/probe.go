package protocol

import "github.com/nearzero/nearzero/netcode/wire"

// TypeEcho is the answer to a Pong's probe (Pong.Probe). It came after
// protocol 1 shipped, without a version change: a server sets Probe only
// when it reads Echo, and a client that ignores Probe is not measured.
const TypeEcho wire.ControlType = 25

// Echo answers the Pong whose Probe it carries, at once and through the
// client's normal send queue: the server times the answer itself, so it
// knows the player's round trip as the player's states see it, whatever
// round trip the player claims in its pings (Ping.RTTUS).
type Echo struct {
	Probe uint32 `json:"probe"`
}

// Type implements Message.
func (*Echo) Type() wire.ControlType { return TypeEcho }

func init() {
	registry[TypeEcho] = entry{"echo", func() Message { return new(Echo) }}
}
