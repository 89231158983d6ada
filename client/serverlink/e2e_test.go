package serverlink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server"
)

// startServer runs a room server on loopback for the test and returns
// its URL.
func startServer(t *testing.T) string {
	t.Helper()
	return testkit.StartServer(t, server.Deps{}).URL()
}

var quickSync = testkit.QuickSync

func TestLagSimulator(t *testing.T) {
	url := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const latency = 40 * time.Millisecond
	clk := realtime.NewWall() // one clock for both: arrivals against sends
	// Both on the WebSocket alone: the datagram path's simulator loses
	// states (TestLagSimulatorOverDatagrams), and a burst released by a
	// stall may overflow a datagram queue on the way to plain.
	lagged, err := serverlink.Dial(ctx, url, &serverlink.Options{Sync: quickSync, Lag: serverlink.LagConfig{Latency: latency, Loss: 0.05}, Seed: 3, Clock: clk, NoDatagrams: true})
	require.NoError(t, err)
	defer lagged.Close(ctx)
	plain, err := serverlink.Dial(ctx, url, &serverlink.Options{Sync: quickSync, Clock: clk, NoDatagrams: true})
	require.NoError(t, err)
	defer plain.Close(ctx)

	j, err := lagged.Create(ctx, nil)
	require.NoError(t, err)
	_, err = plain.Join(ctx, j.Code)
	require.NoError(t, err)
	for !lagged.Synced() || !plain.Synced() {
		time.Sleep(5 * time.Millisecond)
		require.NoError(t, ctx.Err())
	}
	assert.GreaterOrEqual(t, lagged.RTT(), 2*latency, "latency is added each way")

	// The server link is TCP: the simulator loses no message but sends a
	// lost one again later, and everything behind it waits. States all
	// arrive, in order, some late; so do reliable messages.
	sent := map[wire.Seq]time.Duration{}
	for i := 1; i <= 100; i++ {
		sent[wire.Seq(i)] = clk.Now()
		require.NoError(t, lagged.SendState(&wire.State{Seq: wire.Seq(i), Rot: geom.Quat{W: 1}}))
		time.Sleep(time.Second / 60)
	}
	require.NoError(t, lagged.Send(&protocol.SetName{Name: "Lagged"}))
	for plain.Room().Players[0].Name != "Lagged" {
		time.Sleep(5 * time.Millisecond)
		require.NoError(t, ctx.Err(), "the reliable rename arrives")
	}
	time.Sleep(3 * latency) // the rename came after the states, on the same streams
	got := plain.PollStates(nil)
	// The server's own rate limit may refuse a few of a burst released by
	// a long stall (a loss, or two in a row), as it would over TCP;
	// the simulator loses none.
	assert.GreaterOrEqual(t, len(got), 90, "every state arrives, but for the server's rate limit")
	// In sequence order: a state sent over the WebSocket before the
	// datagram path answered may arrive after one sent over it (the
	// predictor sorts them).
	slices.SortFunc(got, func(a, b serverlink.RemoteState) int { return a.State.Seq.Diff(b.State.Seq) })
	late := 0
	for i := range got {
		if i > 0 {
			assert.Greater(t, got[i].State.Seq, got[i-1].State.Seq, "each state once")
		}
		if got[i].Arrival-sent[got[i].State.Seq] > 2*latency+lagsim.RetransmitWait {
			late++
		}
	}
	assert.Positive(t, late, "seed 3: some states wait for a retransmission")
	st := lagged.Stats()
	assert.Zero(t, st.LagDropped)
	assert.Positive(t, st.LagRetransmitted)
	// The bytes each way: at least the states that went out (30 bytes
	// each, batched) and the room's messages that came in.
	assert.Greater(t, st.BytesOut, int64(90*30), "states written")
	assert.Greater(t, plain.Stats().BytesIn, int64(len(got)*30), "states read")
}

func TestCallsAfterClose(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c, err := serverlink.Dial(ctx, url, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, c.SendState(&wire.State{Rot: geom.Quat{W: 1}}), serverlink.ErrNotInRoom)
	assert.ErrorIs(t, c.Leave(ctx), serverlink.ErrNotInRoom)
	require.NoError(t, c.Close(ctx))
	require.NoError(t, c.Close(ctx), "Close twice is fine")
	assert.ErrorIs(t, c.Send(&protocol.Ready{Ready: true}), serverlink.ErrClosed)
	_, err = c.Create(ctx, nil)
	assert.Error(t, err)
	evs := c.PollEvents(nil)
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	assert.Equal(t, serverlink.EventDisconnected, last.Kind)
	assert.NoError(t, last.Err, "a Close is not an error")
}

// Example connects two players to a room server on loopback.
func Example() {
	srv, err := testkit.RunServer(server.Deps{})
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	url := srv.URL()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	host, err := serverlink.Dial(ctx, url, &serverlink.Options{Name: "Ann"})
	if err != nil {
		panic(err)
	}
	defer host.Close(ctx)
	joined, err := host.Create(ctx, nil)
	if err != nil {
		panic(err)
	}
	guest, err := serverlink.Dial(ctx, url, &serverlink.Options{Name: "Bob"})
	if err != nil {
		panic(err)
	}
	defer guest.Close(ctx)
	j2, err := guest.Join(ctx, joined.Invite) // a code or the invite link
	if err != nil {
		panic(err)
	}
	fmt.Println("code has", len(joined.Code), "characters; host slot", joined.Slot, "guest slot", j2.Slot)

	// Each frame, the engine drains events and states without blocking.
	for _, ev := range guest.PollEvents(nil) {
		if m, ok := ev.Msg.(*protocol.Joined); ok {
			fmt.Println("event: joined", m.Code == joined.Code)
		}
	}
	// Output:
	// code has 6 characters; host slot 0 guest slot 1
	// event: joined true
}

// panicClock panics once, on the first reading after it is armed.
type panicClock struct {
	start time.Time
	armed atomic.Bool
}

func (c *panicClock) Now() time.Duration {
	if c.armed.CompareAndSwap(true, false) {
		panic("clock broke")
	}
	return time.Since(c.start)
}

// TestPanicInGoroutineIsAnEvent: a panic in one of the client's
// goroutines (here, in whichever reads the clock first) does not crash the
// process: it arrives as an event whose Err is ErrPanic, and the client
// connects again.
func TestPanicInGoroutineIsAnEvent(t *testing.T) {
	url := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	clk := &panicClock{start: time.Now()}
	c, err := serverlink.Dial(ctx, url, &serverlink.Options{Sync: quickSync, Clock: clk, BackoffMin: time.Millisecond})
	require.NoError(t, err)
	defer c.Close(ctx)
	clk.armed.Store(true)
	var faulted bool
	for !faulted {
		select {
		case <-c.Notify():
		case <-ctx.Done():
			t.Fatal("no event for the panic")
		}
		for _, e := range c.PollEvents(nil) {
			if errors.Is(e.Err, serverlink.ErrPanic) {
				faulted = true
				assert.Contains(t, []serverlink.EventKind{serverlink.EventReconnecting, serverlink.EventDisconnected}, e.Kind)
			}
		}
	}
}
