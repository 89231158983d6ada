package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// DefaultSendLead is the send lead of serverlink.Options and the bench: three
// frames at 60 Hz, more than an engine's wait between its physics frame
// and the network write (a StepClock trails the wall clock by at most
// entity.DefaultMaxStepLag, 50 ms).
const DefaultSendLead = 50 * time.Millisecond

// ErrQueueLen indicates a queue length under 1.
var ErrQueueLen = errors.New("core: queue length must be at least 1")

// Queued is one outgoing state waiting for the write.
type Queued struct {
	// State is the state as handed over (slot filled in).
	State wire.State
	// From is when its wait started on the local clock: its sample's time
	// for a state straight from the sender, the lag simulator's exit for
	// one that went through it.
	From time.Duration
	// Fresh is false for a heartbeat (a resend of a state whose stamp was
	// queued already): it goes as it is, since a carried copy would reach
	// the receivers as a new sample.
	Fresh bool
}

// Queue is the outgoing state queue: a bounded FIFO of wire.State values
// that drops its oldest state when full. It owns the send lead, the one
// setting that carries a state forward from its sample to its write.
type Queue struct {
	lead    time.Duration
	buf     []Queued
	head, n int
	seen    Lead // heartbeat detection for Push (its Max unused)
}

// NewQueue returns a queue of size states with send lead lead (negative:
// off; see Lead).
func NewQueue(size int, lead time.Duration) (Queue, error) {
	if size < 1 {
		return Queue{}, fmt.Errorf("%w: %d", ErrQueueLen, size)
	}
	return Queue{lead: lead, buf: make([]Queued, size)}, nil
}

// Lead returns the send lead.
func (q *Queue) Lead() time.Duration { return q.lead }

// Len returns the number of states waiting.
func (q *Queue) Len() int { return q.n }

// Push queues st, whose wait started at from (see Queued.From), and
// reports whether the oldest state was dropped to make room.
func (q *Queue) Push(st *wire.State, from time.Duration) bool {
	fresh := q.seen.fresh(st)
	dropped := q.n == len(q.buf)
	if dropped {
		q.head = (q.head + 1) % len(q.buf)
		q.n--
	}
	q.buf[(q.head+q.n)%len(q.buf)] = Queued{State: *st, From: from, Fresh: fresh}
	q.n++
	return dropped
}

// Drain appends the waiting states to dst, oldest first, and empties the
// queue.
func (q *Queue) Drain(dst []Queued) []Queued {
	for i := range q.n {
		dst = append(dst, q.buf[(q.head+i)%len(q.buf)])
	}
	q.head, q.n = 0, 0
	return dst
}

// Clear empties the queue (a new connection: what waited for the old one
// is stale).
func (q *Queue) Clear() { q.head, q.n = 0, 0 }

// AppendBatch drains the queue and appends its states to batch as written
// at now (AppendBatch, the function). It does not allocate when batch has
// room.
func (q *Queue) AppendBatch(batch []byte, now time.Duration) []byte {
	for i := range q.n {
		qs := &q.buf[(q.head+i)%len(q.buf)]
		batch = appendOne(batch, qs, q.newerAt(i+1, qs.State.Entity), now, q.lead)
	}
	q.head, q.n = 0, 0
	return batch
}

// newerAt reports whether a state of entity waits at position i or later.
func (q *Queue) newerAt(i int, entity uint8) bool {
	for ; i < q.n; i++ {
		if q.buf[(q.head+i)%len(q.buf)].State.Entity == entity {
			return true
		}
	}
	return false
}

// AppendBatch appends states to batch, each encoded once, as written at
// now: the newest state of each entity, if fresh and waiting at most lead
// (and at least a stamp unit), is carried forward by its wait
// (sender.Carry) and stamped at the write. Older states of the same entity
// in the batch go as queued: carried too, they would all land on the
// write time, and states with one stamp but different positions read as
// teleports. A state that cannot be encoded is skipped.
func AppendBatch(batch []byte, states []Queued, now, lead time.Duration) []byte {
	for i := range states {
		newer := false
		for j := i + 1; j < len(states) && !newer; j++ {
			newer = states[j].State.Entity == states[i].State.Entity
		}
		batch = appendOne(batch, &states[i], newer, now, lead)
	}
	return batch
}

func appendOne(batch []byte, q *Queued, newer bool, now, lead time.Duration) []byte {
	st := q.State
	if q.Fresh && !newer {
		carry(&st, q.From, now, lead)
	}
	out, err := wire.AppendState(batch, &st)
	if err != nil {
		return batch // accepted samples cannot fail to encode
	}
	return out
}

// carry carries st forward from from to now when the lead is on and the
// wait is within it. The wait is taken between the two times' stamps, so a
// state sampled at from lands on the stamp of now exactly.
func carry(st *wire.State, from, now, lead time.Duration) {
	h := wire.StampOf(now).Sub(wire.StampOf(from))
	if lead <= 0 || h < wire.StampUnit || h > lead {
		return
	}
	sender.Carry(st, h)
}

// Lead carries states written at once (a direct link's send, which has no
// queue) forward from their sample to the write, as Queue does for the
// queued ones, and tells heartbeats (a stamp already seen for the entity)
// from fresh states. The zero value has the lead off.
type Lead struct {
	// Max is the longest time from the sample to the write over which a
	// state is carried; zero or negative: off.
	Max  time.Duration
	last [256]struct {
		stamp wire.Stamp
		ok    bool
	}
}

// fresh records st's stamp for its entity and reports whether it is new.
func (l *Lead) fresh(st *wire.State) bool {
	e := &l.last[st.Entity]
	f := !e.ok || e.stamp != st.Stamp
	e.stamp, e.ok = st.Stamp, true
	return f
}

// Apply carries st, sampled at from (local clock), forward to now when it
// is fresh and from is at most Max before now.
func (l *Lead) Apply(st *wire.State, from, now time.Duration) {
	if l.fresh(st) {
		carry(st, from, now, l.Max)
	}
}

// SampledAt returns the local time a state's stamp stands for, on a
// sender's own clock read at now (its stamp is that clock's, unwrapped
// near now).
func SampledAt(st *wire.State, now time.Duration) time.Duration { return st.Stamp.Near(now) }
