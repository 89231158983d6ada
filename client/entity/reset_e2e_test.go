package entity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/server"
)

// TestSharedResetDrawnAsOneJump plays the ported game's goal on a real
// server: the host owns the ball, moving at 10 m/s, and resets it to the
// centre (reset_to). The other player draws the ball jump there once, with
// no frame in between, and keeps drawing it from there. Before, the
// server refused the jump (4012 "state rejected: teleport") and every
// later state of the ball, and the other player saw it fly on, then
// vanish.
func TestSharedResetDrawnAsOneJump(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	newRoom := func(name string) *netroom.Room {
		r, err := netroom.New(netroom.Config{Server: srv.Addr, NoDirect: true})
		require.NoError(t, err)
		r.SetName(name)
		t.Cleanup(func() { r.Close(); r.Wait(5 * time.Second) })
		return r
	}
	ann, bob := newRoom("Ann"), newRoom("Bob")
	var annErrs []netroom.Event
	frame := func() {
		for _, e := range ann.Update(ann.Now()) {
			if e.Kind == netroom.EventError {
				annErrs = append(annErrs, e)
			}
		}
		bob.Update(bob.Now())
		ann.Route()
		bob.Route()
	}
	wait := func(cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "timed out")
			frame()
			time.Sleep(2 * time.Millisecond)
		}
	}
	require.NoError(t, ann.Create())
	wait(ann.InRoom)
	require.NoError(t, bob.Join(ann.Code()))
	wait(func() bool { return bob.InRoom() && bob.Synced() && ann.Synced() && len(ann.Players()) == 2 })

	annBody := NewPredictor() // Ann's own entity: shared objects pass only once it has a position
	annBody.SetDim(Dim3D)
	annBody.Ready(ann)
	annBall, bobBall := NewPredictor(), NewPredictor()
	for _, p := range []*Predictor{annBall, bobBall} {
		require.NoError(t, p.SetEntity(0, true))
		p.SetDim(Dim3D)
	}
	annBall.Ready(ann)
	bobBall.Ready(bob)

	// The ball moves at 10 m/s by Ann's clock, from 0, then from -20 after
	// the reset (a busy machine's slow frames keep it on its line).
	const step = time.Second / 60
	base, baseAt := 0.0, ann.Now()
	var drawn []float64
	var drawnAt []time.Duration // Bob's clock at each drawn frame
	resetAt := -1
	for i := 0; i < 240; i++ {
		now := ann.Now()
		annBall.SyncOwner(now)
		bobBall.SyncOwner(bob.Now())
		annBody.Sample(now, geom.Vec3{Y: 1}, geom.Identity, geom.Vec3{}, true)
		if i == 150 {
			placeNow, err := annBall.ResetTo(Reset{Pos: geom.Vec3{X: -20}, Rot: geom.Identity})
			require.NoError(t, err)
			require.True(t, placeNow, "the host owns the ball")
			base, baseAt, resetAt = -20, now, len(drawn)
		}
		x := base + 10*(now-baseAt).Seconds()
		annBall.Sample(now, geom.Vec3{X: x}, geom.Identity, geom.Vec3{X: 10}, true)
		frame()
		bobNow := bob.Now()
		pose, _ := bobBall.Frame(bobNow)
		if pose.Valid {
			drawn = append(drawn, pose.Pos.X)
			drawnAt = append(drawnAt, bobNow)
		}
		time.Sleep(step)
	}
	require.True(t, annBall.Owned(), "the host claimed the unowned ball")
	require.Positive(t, resetAt)
	require.Greater(t, len(drawn), resetAt+30, "Bob draws the ball")
	jumps := 0
	for i := 1; i < len(drawn); i++ {
		// 10 m/s is 0.17 m a frame; a busy machine's stalled frame moves
		// as far as the time it took.
		want := 10 * (drawnAt[i] - drawnAt[i-1]).Seconds()
		if d := drawn[i] - drawn[i-1]; d < want-1 || d > want+1 {
			jumps++
			assert.InDelta(t, -20, drawn[i], 1.5, "one jump, to the centre")
		}
	}
	assert.Equal(t, 1, jumps, "drawn as one jump, no fly-past: %v", drawn[max(0, resetAt-5):min(len(drawn), resetAt+40)])
	last := drawn[len(drawn)-1]
	assert.InDelta(t, -20+10*(bob.Now()-baseAt).Seconds(), last, 1.5, "drawn from the reset on")
	assert.Empty(t, annErrs, "no 4012")
	assert.Equal(t, uint64(1), bobBall.DrawFigures().Snaps)
}
