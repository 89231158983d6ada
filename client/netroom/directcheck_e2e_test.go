package netroom_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server"
)

// TestDirectCheaterOnLoopback: a real server and real direct links. Once
// the link is up, Ann (a modified client) sends the server honest states
// but Bob, over the direct link, states that run away at 5x the top
// speed. Bob drops them, falls back to the server path (her honest
// states) and reports her; the server counts the report.
func TestDirectCheaterOnLoopback(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	// Ann's server link, to send it honest states past her Room.
	links := make(chan netroom.ServerLink, 1)
	annDirect := direct.Config{RetryAfter: time.Hour}
	testkit.LoopbackDirect(&annDirect)
	ann := newPeerWith(t, srv, "Ann", netroom.Config{
		Direct: annDirect,
		Dial: func(ctx context.Context, url string, opts *serverlink.Options) (netroom.ServerLink, error) {
			l, err := netroom.DialServer(ctx, url, opts)
			if err == nil {
				select {
				case links <- l:
				default: // only the first
				}
			}
			return l, err
		}})
	bob := newDirectPeer(t, srv, "Bob", direct.Config{})
	d := seatTwo(t, ann, bob)
	annLink := <-links
	d.until(10*time.Second, "the direct path", func(p predict.Pose) bool {
		return p.Path == predict.PathDirect && ann.room.DirectUp(1) && bob.room.DirectUp(0)
	})
	for range 30 { // the server hears both reports
		d.frame()
	}
	before := srv.Counter(t, "nearzero_direct_cheat_reports_total")

	const step = time.Second / 60
	top := motion.DefaultTopSpeed
	var frame []byte
	far := 0
	start := d.i
	for range 120 {
		now := d.phys.At(d.i, ann.room.Now(), step)
		d.i++
		st, _ := ann.room.ServerTime(now)
		d.anl.Sample(now, circle(st), geom.Identity, geom.Vec3{}, false)
		if s, ok := d.anl.Poll(ann.room.Slot()); ok {
			require.NoError(t, annLink.SendState(s)) // honest to the server, past her Room
			cheat := *s
			cheat.Pos.X += 5 * top * float64(d.i-start) / 60 // 5x top speed, direct only
			var err error
			frame, err = wire.AppendState(frame[:0], &cheat)
			require.NoError(t, err)
			ann.room.Direct().Send(frame)
		}
		ann.frame()
		bob.frame()
		bnow := bob.room.Now()
		if pose, _ := bob.remotes[0].Frame(bnow); pose.Valid && pose.Pos.Sub(circle(st)).Len() > 10 {
			far++
		}
		time.Sleep(time.Until(d.t0.Add(time.Duration(d.i) * step)))
	}
	t.Logf("frames Bob drew Ann more than 10 m off her honest path: %d of 120; rejected %d, distrusted %d",
		far, bob.room.Stats().DirectRejected, bob.room.Stats().DirectDistrusted)
	assert.LessOrEqual(t, far, 3, "the cheater's direct states are not drawn")
	assert.True(t, bob.room.DirectDistrusted(0))
	assert.False(t, bob.room.DirectUp(0))
	d.until(2*time.Second, "the server path", func(p predict.Pose) bool { return p.Path == predict.PathServer })
	assert.Equal(t, before+1, srv.Counter(t, "nearzero_direct_cheat_reports_total"), "the server heard the report")
}
