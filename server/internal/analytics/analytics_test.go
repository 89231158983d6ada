package analytics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/funnel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSinkWritesJSONLines(t *testing.T) {
	var buf bytes.Buffer
	s := NewSink(&buf, nil)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, step := range funnel.Steps {
		s.Emit(funnel.Event{Time: t0.Add(time.Duration(i) * time.Second), Step: step, User: "u1", Room: "ABCDEF",
			Via: protocol.ViaLink, Players: i, Phase: protocol.PhaseLobby})
	}
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close is harmless")
	sc := bufio.NewScanner(&buf)
	i := 0
	for sc.Scan() {
		var got map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &got), "line %d", i)
		assert.Equal(t, string(funnel.Steps[i]), got["event"])
		assert.Equal(t, "link", got["via"])
		assert.Equal(t, "ABCDEF", got["room"])
		assert.InDelta(t, float64(i), got["players"], 0)
		assert.Equal(t, t0.Add(time.Duration(i)*time.Second).Format(time.RFC3339), got["time"])
		i++
	}
	assert.Equal(t, len(funnel.Steps), i)
	assert.Zero(t, s.Dropped())
}

// blockingWriter blocks every write until released.
type blockingWriter struct{ release chan struct{} }

func (w *blockingWriter) Write(p []byte) (int, error) { <-w.release; return len(p), nil }

func TestEmitNeverBlocks(t *testing.T) {
	w := &blockingWriter{release: make(chan struct{})}
	s := NewSink(w, &SinkConfig{Queue: 2})
	// The goroutine takes at most one event and then blocks in the writer
	// once its buffer fills; bufio holds 4 KiB, so write enough to block.
	big := funnel.Event{Step: funnel.StepLeft, Detail: string(bytes.Repeat([]byte("x"), 5000))}
	for i := 0; i < 100; i++ {
		s.Emit(big)
	}
	assert.Greater(t, s.Dropped(), uint64(90))
	close(w.release)
	require.NoError(t, s.Close())
	s.Emit(big)
	assert.Greater(t, s.Dropped(), uint64(91), "emit after close drops")
}

func TestEmitDuringCloseDoesNotPanic(t *testing.T) {
	for round := range 50 {
		s := NewSink(io.Discard, &SinkConfig{Queue: 1})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 200 {
					s.Emit(funnel.Event{Step: funnel.StepLeft})
				}
			})
		}
		require.NoError(t, s.Close(), "round %d", round)
		wg.Wait()
		before := s.Dropped()
		s.Emit(funnel.Event{Step: funnel.StepLeft})
		assert.Equal(t, before+1, s.Dropped(), "round %d: emit after close drops", round)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorReported(t *testing.T) {
	s := NewSink(failingWriter{}, nil)
	s.Emit(funnel.Event{Step: funnel.StepLeft})
	err := s.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk full")
}

var _ io.Writer = (*blockingWriter)(nil)
