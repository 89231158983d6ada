package entity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/wire"
)

const ms = time.Millisecond

// feed adds the state seq of an entity moving along X at 20 m/s, sampled
// every 10 ms, arriving latency later.
func feed(t *testing.T, rem *Remote, path predict.Path, seq int, latency time.Duration) {
	t.Helper()
	at := time.Duration(seq) * 10 * ms
	s := predict.Sample{Time: at, Seq: wire.Seq(seq), Pos: geom.Vec3{X: 20 * at.Seconds()},
		Vel: geom.Vec3{X: 20}, Rot: geom.Identity}
	rem.AddSample(path, s, at+latency)
}

func TestMarkers(t *testing.T) {
	rem, err := NewRemote(predict.Config{})
	require.NoError(t, err)
	_, ok := rem.NewestState()
	assert.False(t, ok, "nothing received")
	_, ok = rem.Interpolated(0)
	assert.False(t, ok)

	for seq := 1; seq <= 10; seq++ {
		feed(t, rem, predict.PathServer, seq, 100*ms)
	}
	pos, ok := rem.NewestState()
	require.True(t, ok)
	assert.InDelta(t, 2.0, pos.X, 1e-9, "the newest state as it was: 20 m/s at 100 ms")

	// At 200 ms, a 100 ms buffer draws the entity at 100 ms: between
	// states; earlier and later clamp.
	pos, _ = rem.Interpolated(200*ms - 100*ms)
	assert.InDelta(t, 2.0, pos.X, 1e-9)
	pos, _ = rem.Interpolated(55 * ms)
	assert.InDelta(t, 1.1, pos.X, 1e-9, "halfway between 50 and 60 ms")
	pos, _ = rem.Interpolated(0)
	assert.InDelta(t, 0.2, pos.X, 1e-9, "clamped to the oldest")
	pos, _ = rem.Interpolated(time.Second)
	assert.InDelta(t, 2.0, pos.X, 1e-9, "clamped to the newest")

	// A state arriving late (jitter) goes in time order and is not the
	// newest; the same state on the direct path counts once.
	feed(t, rem, predict.PathServer, 12, 100*ms)
	feed(t, rem, predict.PathServer, 11, 150*ms)
	feed(t, rem, predict.PathDirect, 12, 20*ms)
	pos, _ = rem.NewestState()
	assert.InDelta(t, 2.4, pos.X, 1e-9)
	pos, _ = rem.Interpolated(105 * ms)
	assert.InDelta(t, 2.1, pos.X, 1e-9, "the late state fills its place")
	assert.Equal(t, 12, rem.received.n)

	// The ring keeps the newest markerCap states.
	for seq := 13; seq < 13+markerCap; seq++ {
		feed(t, rem, predict.PathServer, seq, 100*ms)
	}
	assert.Equal(t, markerCap, rem.received.n)
	pos, _ = rem.Interpolated(0)
	assert.InDelta(t, 0.2*13, pos.X, 1e-9, "the oldest kept")
	for i := 1; i < rem.received.n; i++ {
		assert.Less(t, rem.received.s[i-1].t, rem.received.s[i].t)
	}

	rem.Reset()
	_, ok = rem.NewestState()
	assert.False(t, ok, "a reset forgets the states")
}

func TestMarkerRingFullOldest(t *testing.T) {
	var m markerRing
	for i := range markerCap {
		m.add(time.Duration(i+10)*ms, wire.Seq(i+10), geom.Vec3{X: float64(i + 10)})
	}
	m.add(5*ms, 5, geom.Vec3{X: 5}) // older than all kept: dropped
	p, _ := m.at(0)
	assert.InDelta(t, 10, p.X, 1e-9)
	m.add(10500*ms/1000, 9999, geom.Vec3{X: 10.5}) // between the two oldest: the oldest goes
	p, _ = m.at(0)
	assert.InDelta(t, 10.5, p.X, 1e-9)
	assert.Equal(t, markerCap, m.n)
	assert.Equal(t, wire.Seq(11), m.s[1].seq)
}

func TestPredictorMarkers(t *testing.T) {
	p := NewPredictor()
	_, ok := p.NewestStatePosition()
	assert.False(t, ok, "unbound")
	assert.Zero(t, p.PredictionDistance())

	p.SetDim(Dim2D)
	for i := 1; i <= 10; i++ {
		at := time.Duration(i) * 10 * ms
		require.NoError(t, p.Push(at, geom.Vec3{X: 100 * at.Seconds(), Y: 5}, geom.Identity, geom.Vec3{X: 100}, at+50*ms))
	}
	pos, ok := p.NewestStatePosition()
	require.True(t, ok)
	assert.Equal(t, geom.Vec3{X: 10, Y: 5}, pos, "2D: Z is 0")
	pos, ok = p.InterpolatedPosition(150*ms, 100*ms)
	require.True(t, ok)
	assert.InDelta(t, 5, pos.X, 1e-9)

	pose, _ := p.Frame(150 * ms)
	require.True(t, pose.Valid)
	assert.Greater(t, pose.Pos.X, 10.0, "predicted past the newest state")
	assert.InDelta(t, pose.Pos.Sub(geom.Vec3{X: 10, Y: 5}).Len(), p.PredictionDistance(), 1e-9)
	assert.Greater(t, p.PredictionDistance(), 1.0)
}

func TestLossEstimate(t *testing.T) {
	var l lossEstimate
	_, ok := l.value()
	assert.False(t, ok)
	seq := wire.Seq(65000) // across the wrap
	for i := range 2000 {
		if i%10 != 3 { // one in ten lost
			l.add(seq)
		}
		seq++
	}
	v, ok := l.value()
	require.True(t, ok)
	assert.InDelta(t, 0.1, v, 0.02)

	for range 2000 {
		l.add(seq)
		seq++
	}
	v, _ = l.value()
	assert.InDelta(t, 0, v, 0.001, "recovers once nothing is lost")

	// A late state fills its gap.
	l.add(seq + 1)
	before, _ := l.value()
	l.add(seq)
	after, _ := l.value()
	assert.Less(t, after, before)

	// A big jump is a new sender, not losses.
	l.add(seq + 5000)
	v, _ = l.value()
	assert.Zero(t, v)
}

func TestLinkFigures(t *testing.T) {
	r, err := netroom.New(netroom.Config{Options: serverlink.Options{Clock: realtime.NewWall()}})
	require.NoError(t, err)
	_, _, ok := r.LinkFigures()
	assert.False(t, ok)
	_, ok = r.ClockOffset(0)
	assert.False(t, ok, "not synced")

	a, _ := NewRemote(predict.Config{})
	b, _ := NewRemote(predict.Config{})
	require.NoError(t, r.Bind(1, a))
	require.NoError(t, r.Bind(2, b))
	for seq := 1; seq <= 100; seq++ {
		feed(t, a, predict.PathServer, seq, 50*ms)
		if seq%5 != 0 {
			feed(t, b, predict.PathServer, seq, 50*ms)
		}
	}
	a.Frame(time.Second)
	b.Frame(time.Second)
	jitter, loss, ok := r.LinkFigures()
	require.True(t, ok)
	assert.InDelta(t, 0.1, loss, 0.02, "the mean of 0 and 20%%")
	assert.Zero(t, jitter, "constant latency")
}

// TestLossCountsEveryPath: a state counts as received whichever path
// brought it, once. With a direct link up the server stops relaying, and
// counting the server path alone read 78-99% loss in the demo.
func TestLossCountsEveryPath(t *testing.T) {
	direct, _ := NewRemote(predict.Config{})
	split, _ := NewRemote(predict.Config{})
	for seq := 1; seq <= 200; seq++ {
		feed(t, direct, predict.PathDirect, seq, 20*ms)
		if seq%10 == 0 { // the odd state also relayed: no double count
			feed(t, direct, predict.PathServer, seq, 50*ms)
		}
		path := predict.PathServer
		if seq%2 == 0 {
			path = predict.PathDirect
		}
		if seq%4 != 0 { // every fourth state lost on its path
			feed(t, split, path, seq, 30*ms)
		}
	}
	loss, ok := direct.Loss()
	require.True(t, ok)
	assert.Zero(t, loss, "every state came on the direct link")
	loss, ok = split.Loss()
	require.True(t, ok)
	assert.InDelta(t, 0.25, loss, 0.03, "a quarter lost, over both paths")
}
