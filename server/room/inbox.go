package room

import (
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Defaults of the budget of what one player receives from the others
// (Config.RecipientRate and the fields after it).
const (
	DefaultRecipientRate       = 960.0     // messages a second: 64 per sender in a room of 16
	DefaultRecipientBurst      = 1920.0    // messages at once
	DefaultRecipientBytes      = 96 << 10  // bytes a second: 0.75 Mbit/s
	DefaultRecipientBytesBurst = 384 << 10 // bytes at once
	DefaultBacklogBytes        = 512 << 10 // reliable bytes waiting for a recipient
)

// Backlogged is a Peer that can tell how many bytes of reliable frames
// wait to be written to it. The room refuses to relay events, chat and
// synced properties to a peer past Config.BacklogBytes, and charges their
// senders, so that a recipient on a slow link is not buried.
type Backlogged interface {
	ReliableBacklog() int
}

// shareBudget is one sender's share of a recipient's budget.
type shareBudget struct {
	msgs, bytes bucket
	set         bool // the buckets were filled
}

// take refills both buckets at 1/share of the recipient's rates, then
// takes one message of n bytes if both have them. The burst never drops
// below one message of the largest size, so that any message can pass.
func (b *shareBudget) take(now time.Duration, c *Config, share, n int) bool {
	f := 1 / float64(share)
	rate, burst := c.RecipientRate*f, max(1, c.RecipientBurst*f)
	brate, bburst := c.RecipientBytes*f, max(wire.ControlHeaderSize+wire.MaxControlBody, c.RecipientBytesBurst*f)
	if !b.set {
		*b = shareBudget{msgs: ratelimit.Full(now, burst), bytes: ratelimit.Full(now, bburst), set: true}
	}
	b.msgs.Refill(now, rate, burst)
	b.bytes.Refill(now, brate, bburst)
	if b.msgs.Tokens < 1 || b.bytes.Tokens < float64(n) {
		return false
	}
	b.msgs.Tokens--
	b.bytes.Tokens -= float64(n)
	return true
}

// relayTo encodes m, relayed for sender s, once and sends it to every seat
// in to that has budget left for s (RecipientRate, RecipientBytes: a
// recipient's budget is shared evenly by the players who may send to it)
// and is not backed up (BacklogBytes). A recipient passed over is the
// sender's doing: the sender gets an Error and abuse score
// (RejectRecipient) and is closed if it keeps on; the recipient never is.
func (r *Room) relayTo(now time.Duration, s *seat, to []*seat, m protocol.Message) {
	b, ok := r.encode(m)
	if !ok {
		return
	}
	share := max(1, len(r.byPeer)-1)
	refused, why := -1, ""
	for _, o := range to {
		if bl, ok := o.peer.(Backlogged); ok && bl.ReliableBacklog() > r.cfg.BacklogBytes {
			refused, why = o.slot, "it reads too slowly"
			continue
		}
		if !o.relayIn[s.slot].take(now, &r.cfg, share, len(b)) {
			refused, why = o.slot, "more than your share of what it may receive"
			continue
		}
		o.peer.Send(b, true)
	}
	if refused >= 0 {
		r.rejectControl(now, s, RejectRecipient, protocol.Errorf(protocol.CodeRateLimited,
			"%s not relayed to slot %d: %s; send less", protocol.TypeName(m.Type()), refused, why))
	}
}
