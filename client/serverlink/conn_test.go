package serverlink

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		opts *Options
		want string
	}{
		{"nil is defaults", nil, ""},
		{"backoff crossed", &Options{BackoffMin: time.Second, BackoffMax: time.Millisecond}, "BackoffMin 1s must be positive and at most BackoffMax 1ms"},
		{"loss over 1", &Options{Lag: LagConfig{Loss: 2}}, "Lag: lagsim: invalid config: loss 2"},
		{"negative latency", &Options{Lag: LagConfig{Latency: -1}}, "Lag: lagsim: invalid config: latency -1ns"},
		{"bad sync", &Options{Sync: syncWithSlew(2)}, "Sync"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrInvalidOptions)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestRingDropsOldest(t *testing.T) {
	r := newRing[int](3)
	for i := 1; i <= 5; i++ {
		dropped := r.push(i)
		assert.Equal(t, i > 3, dropped, "push %d", i)
	}
	assert.Equal(t, []int{3, 4, 5}, r.drain(nil))
	assert.Empty(t, r.drain(nil))
	r.push(6)
	assert.Equal(t, []int{0, 6}, r.drain([]int{0}), "appends to dst")
}

func TestDelayLine(t *testing.T) {
	var mu sync.Mutex
	var got []int
	var reliable []int
	done := make(chan struct{})
	const n = 200
	// The server link's line is a stream, as TCP: every message arrives,
	// in order; a lost one is sent again and holds back what follows.
	d, err := newDelayLine(LagConfig{Latency: time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.2}, 7,
		func(b []byte, rel bool) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, int(b[0]))
			if rel {
				reliable = append(reliable, int(b[0]))
			}
			if len(got) == n {
				close(done)
			}
		})
	require.NoError(t, err)
	defer d.close()
	for i := 0; i < n; i++ {
		d.push([]byte{byte(i)}, i%2 == 0)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("messages not all delivered")
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range got {
		assert.Equal(t, i, got[i], "in order")
	}
	assert.Len(t, reliable, n/2, "each says how it was pushed")
	assert.Zero(t, d.dropped(), "nothing lost")
	assert.Positive(t, d.retransmitted(), "seed 7: some transmissions lost and made again")
}

func TestDialFailsWithoutHanging(t *testing.T) {
	// A listener that accepts and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	var conns []net.Conn
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	defer func() {
		_ = ln.Close()
		wg.Wait()
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	_, err = Dial(context.Background(), "ws://"+ln.Addr().String()+"/ws", &Options{DialTimeout: 200 * time.Millisecond})
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a silent server times out")

	// Nothing listens: refused at once.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := dead.Addr().String()
	require.NoError(t, dead.Close())
	_, err = Dial(context.Background(), "ws://"+addr+"/ws", nil)
	assert.Error(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Dial(ctx, "ws://"+ln.Addr().String()+"/ws", nil)
	assert.ErrorIs(t, err, context.Canceled)

	_, err = Dial(context.Background(), "ws://x/ws", &Options{BackoffMin: -1})
	assert.ErrorIs(t, err, ErrInvalidOptions)
}
