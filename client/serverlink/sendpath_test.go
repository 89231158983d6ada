package serverlink_test

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// stepClock is a clock the test moves.
type stepClock struct{ t atomic.Int64 }

func (c *stepClock) Now() time.Duration { return time.Duration(c.t.Load()) }

// seated is the offline client as the Room's ServerLink: it reports the room
// joined once (the server would), with another player to link with.
type seated struct {
	*serverlink.Conn
	told bool
}

func (s *seated) PollEvents(dst []serverlink.Event) []serverlink.Event {
	if !s.told {
		s.told = true
		dst = append(dst, serverlink.Event{Kind: serverlink.EventMessage, Msg: &protocol.Joined{Code: "ABCDEF", Slot: 1,
			Room: protocol.RoomState{Code: "ABCDEF", Rev: 1, Phase: protocol.PhasePlaying, Host: 1, Players: []protocol.PlayerState{
				{Slot: 1, User: "u1", Name: "Ann", Connected: true}, {Slot: 2, User: "u2", Name: "Bob", Connected: true}}}}})
	}
	return s.Conn.PollEvents(dst)
}

func (s *seated) Synced() bool { return true }

// Leave is answered at once: there is no server to confirm it.
func (s *seated) Leave(context.Context) error { return nil }

// wireLinks is a direct link set whose Send is the socket: it keeps the
// last frame handed to it.
type wireLinks struct{ last []byte }

func (l *wireLinks) SetPeers(int, []int)                                 {}
func (l *wireLinks) Signal(*protocol.Signal)                             {}
func (l *wireLinks) Tick()                                               {}
func (l *wireLinks) Send(frame []byte)                                   { l.last = append(l.last[:0], frame...) }
func (l *wireLinks) Poll(dst []direct.State) []direct.State              { return dst }
func (l *wireLinks) PollSignals(dst []protocol.Signal) []protocol.Signal { return dst }
func (l *wireLinks) Open(int) bool                                       { return true }
func (l *wireLinks) SetLag(lagsim.Config) error                          { return nil }
func (l *wireLinks) Close()                                              {}

// sendPath is a local NetPredictor in a room, over the real client with
// no socket: Predictor.Sample hands the state to the Room, which sends it
// on the direct links (encoded once into the Room's buffer) and queues it
// on the client (as a wire.State); write is the client's writer encoding
// the queue once into its buffer, the bytes handed to the socket.
type sendPath struct {
	clk   *stepClock
	pred  *entity.Predictor
	links *wireLinks
	write func() []byte
	i     int
}

func newSendPath(tb testing.TB) *sendPath {
	tb.Helper()
	g := &sendPath{clk: &stepClock{}, links: &wireLinks{}}
	g.clk.t.Store(int64(time.Second))
	c, write, stop, err := serverlink.Offline(&serverlink.Options{Clock: g.clk}, "ABCDEF", 1)
	require.NoError(tb, err)
	tb.Cleanup(stop)
	g.write = write
	room, err := netroom.New(netroom.Config{Server: "127.0.0.1:1", Options: serverlink.Options{Clock: g.clk},
		Dial: func(context.Context, string, *serverlink.Options) (netroom.ServerLink, error) {
			return &seated{Conn: c}, nil
		},
		NewDirect: func(direct.Config) (direct.Links, error) { return g.links, nil },
	})
	require.NoError(tb, err)
	tb.Cleanup(func() {
		room.Close()
		room.Wait(5 * time.Second)
	})
	require.NoError(tb, room.Connect())
	for start := time.Now(); !room.InRoom(); {
		room.Update(g.clk.Now())
		require.Less(tb, time.Since(start), 5*time.Second, "seated")
		time.Sleep(time.Millisecond)
	}
	g.pred = entity.NewPredictor()
	g.pred.SetDim(entity.Dim3D)
	g.pred.Ready(room)
	return g
}

// step is one physics frame of a car on a circle: sample, and the writer's
// next write. It returns the bytes for the socket (nil: none due).
func (g *sendPath) step() []byte {
	const dt = time.Second / 60
	g.i++
	t := time.Second + time.Duration(g.i)*dt
	g.clk.t.Store(int64(t + 3*time.Millisecond)) // the hand-off trails the frame's time
	a := float64(g.i) / 60
	pos := geom.Vec3{X: 20 * math.Cos(a), Z: 20 * math.Sin(a)}
	vel := geom.Vec3{X: -20 * math.Sin(a), Z: 20 * math.Cos(a)}
	if !g.pred.Sample(t, pos, geom.AxisAngle(geom.Up3D, -a), vel, true) {
		return nil
	}
	g.clk.t.Store(int64(t + 4*time.Millisecond)) // the writer wakes up
	return g.write()
}

// TestSendPathDoesNotAllocate: from Predictor.Sample to the bytes handed
// to the socket (the server link's writer and the direct links), nothing
// allocates, and each state is encoded once per socket, stamped at its
// write.
func TestSendPathDoesNotAllocate(t *testing.T) {
	g := newSendPath(t)
	for range 120 {
		g.step() // grow the buffers
	}
	b := g.step()
	require.NotEmpty(t, b, "a state every frame at 60 Hz")
	var st wire.State
	require.NoError(t, wire.DecodeState(b, &st))
	assert.Equal(t, wire.FrameSize(b), len(b), "one state, one message")
	assert.Equal(t, uint8(1), st.Slot)
	assert.Equal(t, wire.StampOf(g.clk.Now()), st.Stamp, "carried from its sample to the write")
	require.NoError(t, wire.DecodeState(g.links.last, &st))
	assert.Equal(t, wire.StampOf(g.clk.Now()-time.Millisecond), st.Stamp, "the direct send: carried to its hand-off")
	allocs := testing.AllocsPerRun(200, func() {
		if g.step() == nil {
			t.Error("no state")
		}
	})
	assert.Zero(t, allocs)
}

// BenchmarkSendPath is one local state from Predictor.Sample to the bytes
// handed to the sockets: the Room's direct send and the client's queue and
// writer.
func BenchmarkSendPath(b *testing.B) {
	g := newSendPath(b)
	for range 120 {
		g.step()
	}
	b.ReportAllocs()
	for b.Loop() {
		g.step()
	}
}
