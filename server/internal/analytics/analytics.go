package analytics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nearzero/nearzero/server/funnel"
)

// DefaultQueue is the default SinkConfig.Queue.
const DefaultQueue = 4096

// SinkConfig tunes a Sink.
type SinkConfig struct {
	// Queue is how many events may wait to be written before Emit drops
	// them. Default DefaultQueue (4096).
	Queue int
	// FlushEvery is how often buffered lines are flushed to the writer.
	// Default 1 s; a quiet sink flushes as soon as its queue is empty.
	FlushEvery time.Duration
}

// Sink writes events as JSON lines from its own goroutine.
type Sink struct {
	w       *bufio.Writer
	q       chan funnel.Event
	done    chan struct{}
	mu      sync.RWMutex // Emit holds it to read; Close takes it to close q
	closed  bool         // guarded by mu
	dropped atomic.Uint64
	err     error // guarded by done: written by the goroutine before it ends
}

// NewSink starts a sink writing to w. A nil cfg means defaults. Call Close
// to flush and stop it; it does not close w.
func NewSink(w io.Writer, cfg *SinkConfig) *Sink {
	var c SinkConfig
	if cfg != nil {
		c = *cfg
	}
	if c.Queue <= 0 {
		c.Queue = DefaultQueue
	}
	if c.FlushEvery <= 0 {
		c.FlushEvery = time.Second
	}
	s := &Sink{w: bufio.NewWriter(w), q: make(chan funnel.Event, c.Queue), done: make(chan struct{})}
	go s.run(c.FlushEvery)
	return s
}

// Emit queues e for writing. It never blocks: when the queue is full the
// event is dropped and counted (Dropped). Emit after Close drops too.
func (s *Sink) Emit(e funnel.Event) {
	// The read lock keeps Close from closing q under a send (a panic); it
	// is only ever held for a non-blocking send.
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		s.dropped.Add(1)
		return
	}
	select {
	case s.q <- e:
	default:
		s.dropped.Add(1)
	}
}

// Dropped returns how many events were dropped so far.
func (s *Sink) Dropped() uint64 { return s.dropped.Load() }

// Close writes what is queued, flushes, and stops the goroutine. It returns
// the first write error, if any. Later calls return the same.
func (s *Sink) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.q)
	}
	s.mu.Unlock()
	<-s.done
	return s.err
}

func (s *Sink) run(flushEvery time.Duration) {
	defer close(s.done)
	enc := json.NewEncoder(s.w)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case e, ok := <-s.q:
			if !ok {
				s.flush()
				return
			}
			if err := enc.Encode(e); err != nil && s.err == nil {
				s.err = fmt.Errorf("analytics: write: %w", err)
			}
			if len(s.q) == 0 {
				s.flush()
			}
		case <-t.C:
			s.flush()
		}
	}
}

func (s *Sink) flush() {
	if err := s.w.Flush(); err != nil && s.err == nil {
		s.err = fmt.Errorf("analytics: flush: %w", err)
	}
}
