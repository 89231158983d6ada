package realtime

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nearzero/nearzero/netcode/lagsim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ms = time.Millisecond

func TestWallStartsAtZeroAndNeverGoesBack(t *testing.T) {
	w := NewWall()
	a := w.Now()
	b := w.Now()
	assert.GreaterOrEqual(t, a, time.Duration(0))
	assert.Less(t, a, time.Second, "a new clock reads about zero")
	assert.GreaterOrEqual(t, b, a)
	var _ Clock = w
}

// sink collects what a line delivers.
type sink struct {
	mu  sync.Mutex
	got [][]byte
	rel []bool
	ch  chan struct{}
}

func newSink() *sink { return &sink{ch: make(chan struct{}, 1024)} }

func (s *sink) deliver(b []byte, reliable bool) {
	s.mu.Lock()
	s.got = append(s.got, b)
	s.rel = append(s.rel, reliable)
	s.mu.Unlock()
	s.ch <- struct{}{}
}

func (s *sink) wait(t *testing.T, n int) [][]byte {
	t.Helper()
	for range n {
		select {
		case <-s.ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("delivered %d of %d", len(s.snapshot()), n)
		}
	}
	return s.snapshot()
}

func (s *sink) snapshot() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.got...)
}

func TestLagLineOffPassesThroughOnTheCallersGoroutine(t *testing.T) {
	g := NewLag(nil)
	defer g.Close()
	s := newSink()
	l, err := g.NewLine(lagsim.Config{}, 1, s.deliver)
	require.NoError(t, err)
	assert.False(t, l.Active())
	buf := []byte{1, 2, 3}
	l.Send(buf, true)
	got := s.snapshot() // no wait: delivered before Send returned
	require.Len(t, got, 1)
	assert.Equal(t, []byte{1, 2, 3}, got[0])
	assert.Same(t, &buf[0], &got[0][0], "no copy while off")
}

func TestLagLineOnDelaysACopy(t *testing.T) {
	g := NewLag(nil)
	defer g.Close()
	s := newSink()
	const latency = 30 * ms
	l, err := g.NewLine(lagsim.Config{Latency: latency}, 1, s.deliver)
	require.NoError(t, err)
	require.True(t, l.Active())
	buf := []byte{7}
	start := time.Now()
	l.Send(buf, false)
	buf[0] = 9 // the caller keeps its buffer
	got := s.wait(t, 1)
	assert.GreaterOrEqual(t, time.Since(start), latency, "not before its due time")
	assert.Equal(t, []byte{7}, got[0])
}

func TestLagKeepsReliableOrderAcrossLines(t *testing.T) {
	g := NewLag(nil)
	defer g.Close()
	a, b := newSink(), newSink()
	cfg := lagsim.Config{Latency: 5 * ms, Jitter: 20 * ms}
	la, err := g.NewLine(cfg, 1, a.deliver)
	require.NoError(t, err)
	lb, err := g.NewLine(cfg, 2, b.deliver)
	require.NoError(t, err)
	const n = 40
	for i := range n {
		la.Push([]byte{byte(i)}, true)
		lb.Send([]byte{byte(i)}, true)
	}
	for _, got := range [][][]byte{a.wait(t, n), b.wait(t, n)} {
		for i := range n {
			assert.Equal(t, byte(i), got[i][0], "reliable messages keep their order")
		}
	}
}

func TestLagSetConfigTurnsEveryLineOffAndLosesOnPurpose(t *testing.T) {
	g := NewLag(nil)
	defer g.Close()
	s := newSink()
	l1, err := g.NewLine(lagsim.Config{Loss: 1}, 1, s.deliver)
	require.NoError(t, err)
	l2, err := g.NewLine(lagsim.Config{Loss: 1}, 2, s.deliver)
	require.NoError(t, err)
	l1.Send([]byte{1}, false)
	l2.Send([]byte{1}, false)
	assert.Equal(t, int64(1), l1.Lost())
	assert.Equal(t, int64(1), l2.Lost())
	require.Error(t, g.SetConfig(lagsim.Config{Loss: 2}))
	assert.Equal(t, 1.0, l1.Config().Loss, "an invalid config changes none")
	require.NoError(t, g.SetConfig(lagsim.Config{}))
	assert.False(t, l1.Active())
	assert.False(t, l2.Active())
	require.Error(t, l1.SetConfig(lagsim.Config{Latency: -1}))
	require.NoError(t, l1.SetConfig(lagsim.Config{Latency: ms}))
	assert.True(t, l1.Active())
}

func TestLagSurvivesAPanicInDeliver(t *testing.T) {
	var panics atomic.Int32
	g := NewLag(func(v any) { panics.Add(1) })
	defer g.Close()
	s := newSink()
	l, err := g.NewLine(lagsim.Config{Latency: ms}, 1, func(b []byte, rel bool) {
		if b[0] == 0 {
			panic("boom")
		}
		s.deliver(b, rel)
	})
	require.NoError(t, err)
	l.Send([]byte{0}, true)
	l.Send([]byte{1}, true)
	got := s.wait(t, 1)
	assert.Equal(t, []byte{1}, got[0], "the next message still comes")
	assert.Equal(t, int32(1), panics.Load())
}

func TestLagCloseDropsWhatWaits(t *testing.T) {
	g := NewLag(nil)
	s := newSink()
	l, err := g.NewLine(lagsim.Config{Latency: time.Second}, 1, s.deliver)
	require.NoError(t, err)
	l.Send([]byte{1}, true)
	assert.Equal(t, 1, l.Len())
	g.Close()
	g.Close() // safe to repeat
	assert.Empty(t, s.snapshot())
	_, err = g.NewLine(lagsim.Config{Loss: -1}, 1, s.deliver)
	require.ErrorIs(t, err, lagsim.ErrInvalidConfig)
}

func TestGroupWait(t *testing.T) {
	var g Group
	assert.True(t, g.Wait(ms), "nothing running")
	release := make(chan struct{})
	g.Go(func() { <-release })
	g.Go(func() {
		defer func() { _ = recover() }()
		panic("its own to recover")
	})
	assert.False(t, g.Wait(10*ms), "one still blocked")
	assert.GreaterOrEqual(t, g.Running(), 1)
	close(release)
	assert.True(t, g.Wait(5*time.Second))
	assert.Equal(t, 0, g.Running())
}
