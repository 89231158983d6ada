package entity

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

// frameRig is a room with n bound remotes whose link delivers one state
// per remote per 60 Hz frame: the per-frame path of a NetRoom and its
// NetPredictors.
type frameRig struct {
	room    *netroom.Room
	link    *testkit.FakeLink
	remotes []*Remote
	frame   int
}

func newFrameRig(tb testing.TB, n int) *frameRig {
	return newFrameRigWith(tb, n, predict.Config{})
}

// newFrameRigWith is newFrameRig with every remote's predictor on cfg.
func newFrameRigWith(tb testing.TB, n int, cfg predict.Config) *frameRig {
	tb.Helper()
	players := make([]protocol.PlayerState, n+1)
	for i := range players {
		players[i] = player(i, fmt.Sprint("p", i))
	}
	h := seated(tb, 0, 0, players...)
	h.update()
	g := &frameRig{room: h.room, link: h.link}
	for i := range n {
		rem, err := NewRemote(cfg)
		require.NoError(tb, err)
		require.NoError(tb, h.room.Bind(i+1, rem))
		g.remotes = append(g.remotes, rem)
	}
	return g
}

var rigRot = geom.AxisAngle(geom.Up3D, 0.3)

// step runs one frame: states arrive, the room updates and routes, every
// remote draws.
func (g *frameRig) step() {
	const dt = time.Second / 60
	now := time.Duration(g.frame) * dt
	for i := range g.remotes {
		a := float64(g.frame) / 60
		g.link.PushStates(serverlink.RemoteState{
			State: wire.State{Slot: uint8(i + 1), Seq: wire.Seq(g.frame), Fields: wire.HasAcc | wire.HasTurn,
				Pos: geom.Vec3{X: 5 * math.Cos(a), Z: 5 * math.Sin(a)}, Vel: geom.Vec3{X: -5 * math.Sin(a), Z: 5 * math.Cos(a)},
				Acc: geom.Vec3{X: -5 * math.Cos(a), Z: -5 * math.Sin(a)}, Turn: 1, Rot: rigRot},
			Local: now - 30*time.Millisecond, Arrival: now - time.Millisecond,
		})
	}
	g.room.Update(now)
	g.room.Route()
	for _, rem := range g.remotes {
		rem.Frame(now)
	}
	g.frame++
}

func TestFramePathDoesNotAllocate(t *testing.T) {
	g := newFrameRig(t, 64)
	for range 100 {
		g.step() // grow the buffers
	}
	allocs := testing.AllocsPerRun(200, g.step)
	assert.Zero(t, allocs, "Update, Route and 64 Frames per frame")
	assert.Equal(t, uint64(64*g.frame), g.room.Stats().Routed, "every state reached its Remote")

	loc, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	i := 0
	allocs = testing.AllocsPerRun(200, func() {
		i++
		loc.Sample(time.Duration(i)*time.Second/60, geom.Vec3{X: float64(i)}, rigRot, geom.Vec3{}, false)
		loc.Poll(1)
	})
	assert.Zero(t, allocs, "Local.Sample and Poll")
	allocs = testing.AllocsPerRun(200, func() {
		i++
		loc.Sample(time.Duration(i)*time.Second/60, geom.Vec3{}, rigRot, geom.Vec3{}, false)
		loc.Poll(1)
	})
	assert.Zero(t, allocs, "Local.Sample and Poll at rest")
}

// BenchmarkFrame64 is one frame of 64 remote entities, each with a new
// state: the room's Update and Route plus 64 predictor frames. The
// entity/op metric is the cost per remote entity per frame in Go (the
// NetPredictor node adds one engine call to place its root).
func BenchmarkFrame64(b *testing.B) { benchFrame64(b, predict.Config{}) }

// BenchmarkFrame64Auto is BenchmarkFrame64 with Auto on, the NetPredictor's
// default (ProfileAuto): the Go part of its per-entity frame in the engine.
func BenchmarkFrame64Auto(b *testing.B) { benchFrame64(b, predict.Config{Auto: true}) }

func benchFrame64(b *testing.B, cfg predict.Config) {
	g := newFrameRigWith(b, 64, cfg)
	for range 100 {
		g.step()
	}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		g.step()
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/64, "ns/entity")
}

// BenchmarkLocal is one physics frame of the local entity: sample and poll.
func BenchmarkLocal(b *testing.B) {
	loc, err := NewLocal(sender.Config{})
	require.NoError(b, err)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		a := float64(i) / 60
		loc.Sample(time.Duration(i)*time.Second/60, geom.Vec3{X: 5 * math.Cos(a), Z: 5 * math.Sin(a)}, rigRot, geom.Vec3{}, false)
		loc.Poll(1)
	}
}
