package netroom

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/direct"
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
	addr, reg := startServerWith(t, server.Deps{})
	ann := newDirectPeer(t, addr, "Ann", direct.Config{})
	bob := newDirectPeer(t, addr, "Bob", direct.Config{})
	d := newDirectRun(t, ann, bob)
	d.until(10*time.Second, "the direct path", func(p predict.Pose) bool {
		return p.Path == predict.PathDirect && ann.room.DirectUp(1) && bob.room.DirectUp(0)
	})
	for range 30 { // the server hears both reports
		d.frame()
	}
	before := counter(t, reg, "nearzero_direct_cheat_reports_total")

	const step = time.Second / 60
	top := motion.DefaultTopSpeed
	var frame []byte
	far := 0
	start := d.i
	for range 120 {
		now := d.phys.At(d.i, ann.room.Now(), step)
		d.i++
		st, _ := ann.room.ServerTime(now)
		d.anl.Sample(now, annPath(st), geom.Identity, geom.Vec3{}, false)
		if s, ok := d.anl.Poll(ann.room.Slot()); ok {
			require.NoError(t, ann.room.link.SendState(s)) // honest to the server
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
		if pose, _ := bob.remotes[0].Frame(bnow); pose.Valid && pose.Pos.Sub(annPath(st)).Len() > 10 {
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
	assert.Equal(t, before+1, counter(t, reg, "nearzero_direct_cheat_reports_total"), "the server heard the report")
}
