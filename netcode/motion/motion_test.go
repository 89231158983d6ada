package motion_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

const ms = time.Millisecond

// run steps a track with a state every 1/60 s moving along x at speed (units
// per second), its velocity reported as speed, and counts the rejections.
func run(l motion.Limits, speed float64, n int) (rejected int, last motion.Reason) {
	var tr motion.Track
	dt := time.Second / 60
	for i := range n {
		at := time.Duration(i) * dt
		st := wire.State{
			Seq:   wire.Seq(i),
			Stamp: wire.StampOf(at),
			Pos:   geom.Vec3{X: speed * at.Seconds()},
			Vel:   geom.Vec3{X: speed},
		}
		if why := tr.Step(at+20*ms, &l, &st); why != motion.Pass {
			rejected++
			last = why
		}
	}
	return rejected, last
}

func TestHonestMovementPasses(t *testing.T) {
	l := motion.Defaults()
	n, _ := run(l, l.TopSpeed, 600)
	assert.Zero(t, n, "top speed for 10 s")
	n, _ = run(l, l.SpeedFactor*l.TopSpeed, 600)
	assert.Zero(t, n, "at the limit")
}

func TestTooFastIsRejected(t *testing.T) {
	l := motion.Defaults()
	n, why := run(l, 5*l.TopSpeed, 60)
	assert.Equal(t, 60, n, "every state reports 5x the top speed")
	assert.Equal(t, motion.Speed, why)
}

func TestUnreportedSpeedIsATeleport(t *testing.T) {
	l := motion.Defaults()
	var tr motion.Track
	dt := time.Second / 60
	rejected := 0
	for i := range 60 {
		at := time.Duration(i) * dt
		// Moves 5x top speed but reports standing still.
		st := wire.State{Seq: wire.Seq(i), Stamp: wire.StampOf(at), Pos: geom.Vec3{X: 5 * l.TopSpeed * at.Seconds()}}
		switch why := tr.Step(at, &l, &st); why {
		case motion.Pass:
		case motion.Teleport:
			rejected++
		default:
			t.Fatalf("state %d: %v", i, why)
		}
	}
	assert.Greater(t, rejected, 50)
}

func TestTeleportBudget(t *testing.T) {
	l := motion.Defaults()
	var tr motion.Track
	st := wire.State{Stamp: wire.StampOf(0)}
	assert.Equal(t, motion.Pass, tr.Step(0, &l, &st))
	jumps := 0
	for i := 1; i <= 30; i++ {
		at := time.Duration(i) * l.TeleportEvery
		st := wire.State{Seq: wire.Seq(i), Stamp: wire.StampOf(at), Pos: geom.Vec3{X: 500 * math.Cos(float64(i)), Z: 500 * math.Sin(float64(i))}, Flags: wire.FlagTeleport}
		if tr.Step(at, &l, &st) == motion.Pass {
			jumps++
		}
	}
	// A burst of TeleportsPerMinute, then one per 5 s: 12 + 30/5 - slack.
	assert.InDelta(t, l.TeleportsPerMinute+30/5, jumps, 1)
	early := wire.State{Seq: 99, Stamp: wire.StampOf(30*time.Second + 100*ms), Pos: geom.Vec3{X: -1e5}, Flags: wire.FlagTeleport}
	assert.Equal(t, motion.Teleport, tr.Step(30*time.Second+100*ms, &l, &early), "within TeleportEvery")
}

// TestTeleportLength: a jump is bounded by MaxTeleport, in 2D by
// MaxTeleport2D; a negative bound lifts it.
func TestTeleportLength(t *testing.T) {
	jump := func(l motion.Limits, dim2D bool, d float64) motion.Reason {
		var tr motion.Track
		st := wire.State{Dim2D: dim2D}
		tr.Step(0, &l, &st)
		st = wire.State{Dim2D: dim2D, Seq: 1, Stamp: wire.StampOf(ms), Pos: geom.Vec3{Y: d}, Flags: wire.FlagTeleport}
		return tr.Step(ms, &l, &st)
	}
	l := motion.Defaults()
	assert.Equal(t, motion.DefaultMaxTeleport, l.MaxTeleport)
	assert.Equal(t, motion.Pass, jump(l, false, l.MaxTeleport))
	assert.Equal(t, motion.TooFar, jump(l, false, l.MaxTeleport+1))
	assert.Equal(t, motion.TooFar, jump(l, false, 1e6))
	assert.Equal(t, motion.Pass, jump(l, true, l.MaxTeleport2D))
	assert.Equal(t, motion.TooFar, jump(l, true, l.MaxTeleport2D+1))
	assert.Equal(t, "teleport_far", motion.TooFar.String())

	off := motion.Limits{MaxTeleport: -1}
	off.SetDefaults()
	assert.Equal(t, motion.Pass, jump(off, false, 1e6), "negative: no bound")

	got, _ := motion.FromProtocol(off.Protocol(false))
	assert.Equal(t, -1.0, got.MaxTeleport, "no bound survives the wire")
	got, _ = motion.FromProtocol(&protocol.Motion{})
	assert.Equal(t, l.MaxTeleport, got.MaxTeleport, "an older server's welcome: the default")
}

func TestBounds(t *testing.T) {
	l := motion.Defaults()
	l.WorldBounds = 50
	var tr motion.Track
	st := wire.State{Pos: geom.Vec3{Y: 51}}
	assert.Equal(t, motion.Bounds, tr.Step(0, &l, &st), "even the first state")
	st.Dim2D = true
	assert.Equal(t, motion.Pass, tr.Step(0, &l, &st), "2D has bounds of its own")
}

func TestDefaults(t *testing.T) {
	var l motion.Limits
	l.SetDefaults()
	assert.Equal(t, motion.Defaults(), l)
	assert.Equal(t, 100.0, l.TopSpeed)
	assert.Zero(t, l.WorldBounds, "no bounds by default")
	assert.Equal(t, "teleport", motion.Teleport.String())
}

func TestProtocolRoundTrip(t *testing.T) {
	l := motion.Defaults()
	l.TopSpeed, l.WorldBounds = 7, 500
	got, on := motion.FromProtocol(l.Protocol(false))
	assert.True(t, on)
	assert.Equal(t, l, got)
	_, on = motion.FromProtocol(l.Protocol(true))
	assert.False(t, on, "the room checks no motion")
	got, on = motion.FromProtocol(nil)
	assert.True(t, on, "an older server: defaults, checks on")
	assert.Equal(t, motion.Defaults(), got)
	got, _ = motion.FromProtocol(&protocol.Motion{TopSpeed: -1, SpeedFactor: 0.5, TeleportEveryUS: -5})
	assert.Equal(t, motion.Defaults(), got, "nonsense takes the defaults")
}
