package simnet

import "fmt"

// Dir is a direction across a Bridge.
type Dir int

// The two directions of a Bridge.
const (
	AtoB Dir = iota // payloads sent by A, delivered to B
	BtoA            // payloads sent by B, delivered to A
)

// String returns "AtoB" or "BtoA".
func (d Dir) String() string {
	switch d {
	case AtoB:
		return "AtoB"
	case BtoA:
		return "BtoA"
	}
	return fmt.Sprintf("Dir(%d)", int(d))
}

// Bridge connects two endpoints with no clock and no randomness: what is
// sent waits in a queue per direction until the test delivers, drops or
// reorders it. It suits unit tests that script faults by hand. Callbacks
// run synchronously inside Deliver and may send more; those payloads join
// the end of their queue.
type Bridge struct {
	q       [2][][]byte
	deliver [2]func([]byte)
}

// NewBridge returns an empty bridge delivering A's payloads to toB and B's
// to toA. A nil func discards.
func NewBridge(toB, toA func([]byte)) *Bridge {
	discard := func([]byte) {}
	if toB == nil {
		toB = discard
	}
	if toA == nil {
		toA = discard
	}
	return &Bridge{deliver: [2]func([]byte){toB, toA}}
}

// Send queues payload in direction d; the bridge owns it from then on.
func (b *Bridge) Send(d Dir, payload []byte) { b.q[d] = append(b.q[d], payload) }

// Sender returns a send func for direction d, to hand to the code under test.
func (b *Bridge) Sender(d Dir) func([]byte) { return func(p []byte) { b.Send(d, p) } }

// Len returns the number of payloads queued in direction d.
func (b *Bridge) Len(d Dir) int { return len(b.q[d]) }

// Peek returns the i-th oldest payload queued in direction d, or nil when
// there are not that many.
func (b *Bridge) Peek(d Dir, i int) []byte {
	if i < 0 || i >= len(b.q[d]) {
		return nil
	}
	return b.q[d][i]
}

// Deliver hands the n oldest payloads queued in direction d to their
// receiver, oldest first, and returns how many it delivered (fewer when
// fewer were queued at the call). Payloads sent during delivery wait.
func (b *Bridge) Deliver(d Dir, n int) int {
	n = min(max(n, 0), len(b.q[d]))
	batch := b.q[d][:n:n]
	b.q[d] = b.q[d][n:]
	for _, p := range batch {
		b.deliver[d](p)
	}
	return n
}

// DeliverAll delivers, in both directions, everything queued at the call
// (A to B first), and returns the count. Replies sent meanwhile wait, so a
// ping-pong advances one exchange per call; see Flush.
func (b *Bridge) DeliverAll() int {
	na, nb := len(b.q[AtoB]), len(b.q[BtoA])
	return b.Deliver(AtoB, na) + b.Deliver(BtoA, nb)
}

// Flush calls DeliverAll until both queues are empty, and returns the total.
// It panics after maxRounds rounds, which means the endpoints never go quiet.
func (b *Bridge) Flush(maxRounds int) int {
	total := 0
	for round := 0; b.Len(AtoB)+b.Len(BtoA) > 0; round++ {
		if round == maxRounds {
			panic(fmt.Sprintf("simnet: Bridge.Flush: still %d+%d payloads queued after %d rounds",
				b.Len(AtoB), b.Len(BtoA), maxRounds))
		}
		total += b.DeliverAll()
	}
	return total
}

// Drop discards the n oldest payloads queued in direction d and returns how
// many it discarded.
func (b *Bridge) Drop(d Dir, n int) int {
	n = min(max(n, 0), len(b.q[d]))
	clear(b.q[d][:n])
	b.q[d] = b.q[d][n:]
	return n
}

// Reorder reverses the queue in direction d: the newest payload is then
// delivered first and the oldest last.
func (b *Bridge) Reorder(d Dir) {
	q := b.q[d]
	for i, j := 0, len(q)-1; i < j; i, j = i+1, j-1 {
		q[i], q[j] = q[j], q[i]
	}
}

// Swap exchanges the i-th and j-th oldest payloads in direction d, for a
// precise reordering; it panics when either is out of range.
func (b *Bridge) Swap(d Dir, i, j int) { b.q[d][i], b.q[d][j] = b.q[d][j], b.q[d][i] }
