package entity

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/wire"
)

func TestRemoteChanges(t *testing.T) {
	rem, err := NewRemote(predict.Config{GhostAfter: 500 * time.Millisecond, HideAfter: 2 * time.Second})
	require.NoError(t, err)
	assert.True(t, rem.Hidden(), "hidden before any data")
	_, ch := rem.Frame(0)
	assert.Zero(t, ch, "still hidden: no change")

	s := wire.State{Seq: 1, Rot: geom.Identity, Vel: geom.Vec3{X: 1}}
	require.True(t, rem.Add(predict.PathServer, &s, 0, 10*time.Millisecond))
	steps := []struct {
		at           time.Duration
		want         Change
		ghost, hides bool
	}{
		{at: 20 * time.Millisecond, want: ChangeHidden},
		{at: 100 * time.Millisecond, want: 0},
		{at: 510 * time.Millisecond, want: ChangeGhost, ghost: true},
		{at: 600 * time.Millisecond, want: 0, ghost: true},
		{at: 2010 * time.Millisecond, want: ChangeGhost | ChangeHidden, hides: true},
	}
	for _, st := range steps {
		pose, ch := rem.Frame(st.at)
		assert.Equal(t, st.want, ch, "at %v", st.at)
		assert.Equal(t, st.ghost, rem.Ghost(), "at %v", st.at)
		assert.Equal(t, st.hides, rem.Hidden(), "at %v", st.at)
		assert.Equal(t, pose, rem.Pose())
	}

	// Back with a teleport far away: visible again, and snapped.
	s = wire.State{Seq: 2, Rot: geom.Identity, Pos: geom.Vec3{X: 100}, Flags: wire.FlagTeleport}
	require.True(t, rem.Add(predict.PathServer, &s, 2100*time.Millisecond, 2110*time.Millisecond))
	pose, ch := rem.Frame(2120 * time.Millisecond)
	assert.Equal(t, ChangeHidden, ch&ChangeHidden)
	assert.InDelta(t, 100, pose.Pos.X, 0.1)
	s = wire.State{Seq: 3, Rot: geom.Identity, Pos: geom.Vec3{X: 200}, Flags: wire.FlagTeleport}
	require.True(t, rem.Add(predict.PathServer, &s, 2130*time.Millisecond, 2140*time.Millisecond))
	_, ch = rem.Frame(2150 * time.Millisecond)
	assert.Equal(t, ChangeSnapped, ch)
	assert.Equal(t, uint64(3), rem.Added())

	rem.Reset()
	_, ch = rem.Frame(2200 * time.Millisecond)
	assert.Equal(t, ChangeHidden, ch, "reset: hidden until new data")
}

func TestNewRemoteRejectsBadConfig(t *testing.T) {
	_, err := NewRemote(predict.Config{GhostAfter: 3 * time.Second, HideAfter: 2 * time.Second})
	assert.ErrorIs(t, err, predict.ErrConfig)
	_, err = NewLocal(sender.Config{Rate: -1})
	assert.ErrorIs(t, err, sender.ErrConfig)
}

// TestLocalSends: 60 Hz physics with jittered callbacks sends 60 states a
// second, each stamped with its physics step's time, with the extras set.
func TestLocalSends(t *testing.T) {
	loc, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	loc.SetExtras(3, 0x81)
	const step = time.Second / 60
	var sent []wire.State
	var stamps []time.Duration
	var clk FrameClock
	for i := range 120 {
		wall := 10*time.Second + time.Duration(i)*step + time.Duration(i%3)*time.Millisecond
		pos := geom.Vec3{X: float64(i) * 0.1}
		t0 := clk.At(uint64(i), wall, step)
		loc.Sample(t0, pos, geom.Identity, geom.Vec3{X: 6}, true)
		stamps = append(stamps, t0)
		if st, ok := loc.Poll(4); ok {
			sent = append(sent, *st)
		}
	}
	assert.InDelta(t, 120, len(sent), 2, "one state per 60 Hz physics frame")
	for i, st := range sent {
		assert.Equal(t, uint8(4), st.Slot)
		assert.Equal(t, uint8(3), st.Anim)
		assert.Equal(t, uint8(0x81), st.Input)
		assert.InDelta(t, 6, st.Vel.X, 0.01, "the body's own velocity")
		if i > 0 {
			assert.Equal(t, wire.Seq(1), st.Seq-sent[i-1].Seq)
		}
	}
	// Stamps are the frame clock's times.
	assert.Equal(t, wire.StampOf(stamps[len(stamps)-1]), sent[len(sent)-1].Stamp)
	assert.Equal(t, uint64(120), loc.Stats().Samples)

	loc.Teleport()
	loc.Sample(20*time.Second, geom.Vec3{X: 50}, geom.Identity, geom.Vec3{}, false)
	st, ok := loc.Poll(4)
	require.True(t, ok)
	assert.NotZero(t, st.Flags&wire.FlagTeleport)
	loc.Reset()
	_, ok = loc.Poll(4)
	assert.False(t, ok, "nothing to send after Reset until the next sample")
}

// TestLocalToRemote runs the owning and the drawing side back to back with
// a fixed delay: a circle drawn 50 ms later is drawn where it is.
func TestLocalToRemote(t *testing.T) {
	loc, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	rem, err := NewRemote(predict.Config{})
	require.NoError(t, err)
	const (
		step   = time.Second / 60
		delay  = 50 * time.Millisecond
		radius = 5.0
		omega  = 1.0 // rad/s
	)
	at := func(tm time.Duration) geom.Vec3 {
		a := omega * tm.Seconds()
		return geom.Vec3{X: radius * math.Cos(a), Z: radius * math.Sin(a)}
	}
	type inflight struct {
		st     wire.State
		arrive time.Duration
	}
	var queue []inflight
	var worst float64
	for i := range 600 {
		now := time.Duration(i) * step
		stamp := now
		loc.Sample(stamp, at(now), geom.Identity, geom.Vec3{}, false)
		if st, ok := loc.Poll(1); ok {
			queue = append(queue, inflight{*st, now + delay})
		}
		for len(queue) > 0 && queue[0].arrive <= now {
			q := queue[0]
			queue = queue[1:]
			rem.Add(predict.PathServer, &q.st, q.st.Stamp.Near(stamp), q.arrive)
		}
		pose, _ := rem.Frame(now)
		if i > 120 && pose.Valid {
			worst = max(worst, pose.Pos.Sub(at(now)).Len())
		}
	}
	t.Logf("worst error on a 5 m circle at 5 m/s with 50 ms delay: %.4f m", worst)
	assert.Less(t, worst, 0.05, "the predictor carries the circle across the delay")
}
