package server

import (
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/metrics"
)

// stallListener hands out connections whose reads wait while the test
// holds gate: a server that does not get round to reading.
type stallListener struct {
	net.Listener
	gate *sync.RWMutex
}

func (l stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return stallConn{Conn: c, gate: l.gate}, nil
}

type stallConn struct {
	net.Conn
	gate *sync.RWMutex
}

func (c stallConn) Read(p []byte) (int, error) {
	c.gate.RLock()
	c.gate.RUnlock() //nolint:staticcheck // a gate: wait while the test holds it
	return c.Conn.Read(p)
}

// labelled returns a labelled counter family's series by label.
func labelled(s *Server, name string) map[string]float64 {
	out := map[string]float64{}
	for _, f := range s.Metrics().Families() {
		if f.Name == name && f.Counters != nil {
			f.Counters.Each(func(label string, c *metrics.Counter) {
				if v := c.Value(); v != 0 {
					out[label] = v
				}
			})
		}
	}
	return out
}

// TestDelayedReaderRefusesNoHonestPlayer plays four honest players (real
// clients: clock sync, send lead, 60 states a second at 0.9 of the speed
// limit) against a server that stops reading for 1.5 s, as a starved
// server does, and knows itself behind (Deps.Delay, what its scheduler
// measure reports then). Their states reach it seconds late and all at
// once; judged on arrival, they were refused as over the rate and as
// teleports, and the players kicked. Now nobody is refused, told of a
// refusal, or kicked, and every player hears the others again after.
func TestDelayedReaderRefusesNoHonestPlayer(t *testing.T) {
	var gate sync.RWMutex
	var busy atomic.Bool
	e := newEnvOpts(t, func(c *Config) { c.Room.MaxPlayers = 4 }, envOpts{
		listen: func(ln net.Listener) net.Listener { return stallListener{Listener: ln, gate: &gate} },
		delay: func() time.Duration {
			if busy.Load() {
				return 300 * time.Millisecond
			}
			return 0
		},
	})
	const players = 4
	bots := make([]*bot, players)
	for i := range bots {
		// On the WebSocket: the stall is its reader's (states over the
		// datagram path would pass it by).
		bots[i] = e.dial(fmt.Sprint("p", i), &serverlink.Options{NoDatagrams: true})
	}
	j, err := bots[0].Create(ctxT(t), nil)
	require.NoError(t, err)
	for _, b := range bots[1:] {
		_, err := b.Join(ctxT(t), j.Code)
		require.NoError(t, err)
	}
	for _, b := range bots {
		b.waitSynced()
	}

	const speed = 0.9 * 200 // the default limit: 2 x 100 m/s
	start := time.Now()
	var (
		seq      int
		errs     []string
		received = make([]int, players)
		worst    time.Duration // the latest a state arrived
		buf      []serverlink.RemoteState
		evs      []serverlink.Event
	)
	tick := time.NewTicker(time.Second / 60)
	defer tick.Stop()
	stalled, held := false, false
	for el := time.Duration(0); el < 5*time.Second; el = time.Since(start) {
		<-tick.C
		switch {
		case !stalled && el >= time.Second:
			stalled, held = true, true
			busy.Store(true)
			gate.Lock()
		case held && el >= 2500*time.Millisecond:
			held = false
			gate.Unlock()
		}
		seq++
		for i, b := range bots {
			now := b.Now()
			a := float64(i) + time.Since(start).Seconds()*speed/30 // a circle of radius 30
			st := &wire.State{Seq: wire.Seq(seq), Stamp: wire.StampOf(now), Rot: geom.Quat{W: 1},
				Pos: geom.Vec3{X: 30 * math.Cos(a), Z: 30 * math.Sin(a)},
				Vel: geom.Vec3{X: -speed * math.Sin(a), Z: speed * math.Cos(a)}}
			require.NoError(t, b.SendState(st))
			buf = b.PollStates(buf[:0])
			for _, rs := range buf {
				if rs.Local > 0 {
					worst = max(worst, rs.Arrival-rs.Local)
				}
			}
			if el > 3500*time.Millisecond {
				received[i] += len(buf)
			}
			evs = b.PollEvents(evs[:0])
			for _, ev := range evs {
				switch {
				case ev.Kind == serverlink.EventMessage:
					if m, ok := ev.Msg.(*protocol.Error); ok {
						errs = append(errs, fmt.Sprintf("%s: %s", b.name, m.Message))
					}
				case ev.Kind != serverlink.EventSynced:
					errs = append(errs, fmt.Sprintf("%s: %s %v", b.name, ev.Kind, ev.Err))
				}
			}
		}
	}
	if held {
		gate.Unlock()
	}
	t.Logf("states arrived up to %v late; refused %v", worst.Round(time.Millisecond), labelled(e.s, "rejected_total"))
	require.Greater(t, worst, time.Second, "the server read seconds late (else the test shows nothing)")
	assert.Empty(t, labelled(e.s, "rejected_total"), "no state refused")
	assert.Empty(t, labelled(e.s, "kicked_total"), "nobody kicked")
	assert.Empty(t, errs, "no player told of a refusal, none disconnected")
	for i, n := range received {
		assert.Positive(t, n, "player %d hears the others after the stall", i)
	}
}

// TestOverloadRefusesNewRoomsOnly: while the server's delay is past
// OverloadAfter, a create is refused with CodeServerFull and counted
// (limited "overload", nearzero_overloaded 1), while a join to a room
// that plays still goes through; once the delay falls, rooms open again.
func TestOverloadRefusesNewRoomsOnly(t *testing.T) {
	var delay atomic.Int64
	e := newEnvOpts(t, func(c *Config) { c.OverloadAfter = DefaultOverloadAfter },
		envOpts{delay: func() time.Duration { return time.Duration(delay.Load()) }})
	host := e.dial("host", nil)
	j, err := host.Create(ctxT(t), nil)
	require.NoError(t, err)

	delay.Store(int64(DefaultOverloadAfter))
	eventually(t, "the server says it is overloaded", func() (float64, bool) {
		v := e.s.Metrics().Overloaded.Value()
		return v, v == 1
	})
	other := e.dial("other", nil)
	_, err = other.Create(ctxT(t), nil)
	require.Error(t, err)
	assert.Equal(t, protocol.CodeServerFull, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), "busy")
	assert.Equal(t, 1.0, labelled(e.s, "limited_total")["overload"])
	_, err = other.Join(ctxT(t), j.Code)
	require.NoError(t, err, "a join to a room that exists goes through")

	delay.Store(int64(DefaultOverloadAfter - time.Millisecond))
	eventually(t, "the server keeps up again", func() (float64, bool) {
		v := e.s.Metrics().Overloaded.Value()
		return v, v == 0
	})
	third := e.dial("third", nil)
	_, err = third.Create(ctxT(t), nil)
	require.NoError(t, err)
}

// TestP99Since reads the 99th percentile off the difference of two
// cumulative histograms as runtime/metrics gives them.
func TestP99Since(t *testing.T) {
	buckets := []float64{math.Inf(-1), 0.001, 0.01, 0.1, math.Inf(1)}
	prev := []uint64{5, 5, 5, 5}
	assert.Zero(t, p99Since(buckets, prev, prev), "nothing counted")
	assert.Equal(t, 10*time.Millisecond, p99Since(buckets, prev, []uint64{5, 105, 5, 5}), "all in (1 ms, 10 ms]")
	assert.Equal(t, 100*time.Millisecond, p99Since(buckets, prev, []uint64{5, 103, 7, 5}), "2 of 100 above 10 ms")
	assert.Equal(t, 10*time.Millisecond, p99Since(buckets, prev, []uint64{5, 104, 6, 5}), "1 of 100 above 10 ms")
	assert.Equal(t, 100*time.Millisecond, p99Since(buckets, prev, []uint64{5, 5, 5, 15}), "the last bucket: its lower bound")
}

// TestOverloadNeedsASustainedDelay checks the overload reading: one late
// tick of 150 ms (a hitch of a shared machine) is held as the server's
// delay for 5 s, which rooms credit, but is no overload; five of the 20
// samples held (1.25 s of 5) are.
func TestOverloadNeedsASustainedDelay(t *testing.T) {
	b := newBusyMeter()
	b.read(0)
	b.read(150 * time.Millisecond)
	for range 10 {
		b.read(0)
	}
	assert.GreaterOrEqual(t, time.Duration(b.delay.Load()), 150*time.Millisecond, "the hitch is held")
	assert.Less(t, time.Duration(b.sustained.Load()), DefaultOverloadAfter, "one hitch is no overload")
	for range 4 {
		b.read(150 * time.Millisecond)
	}
	assert.GreaterOrEqual(t, time.Duration(b.sustained.Load()), 150*time.Millisecond, "a quarter of the samples: overloaded")
	for range len(b.recent) {
		b.read(0)
	}
	assert.Less(t, time.Duration(b.sustained.Load()), DefaultOverloadAfter, "and it passes")
}
