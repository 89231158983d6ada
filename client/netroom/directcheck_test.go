package netroom

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// directRig is Bob (slot 1) in a room with Ann (slot 0), Ann's states
// arriving over a fake direct link.
type directRig struct {
	h     *harness
	fl    *fakeLinks
	rem   *drawn
	seq   int
	flags wire.Flags // of the next state
}

func newDirectRig(t *testing.T) *directRig {
	t.Helper()
	d := &directRig{}
	d.h = newHarness(t, Config{NewDirect: func(c direct.Config) (direct.Links, error) {
		d.fl = &fakeLinks{cfg: c}
		return d.fl, nil
	}})
	require.NoError(t, d.h.room.Create())
	d.h.until(has(EventConnected))
	d.h.link.Msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob")))
	d.h.until(has(EventJoined))
	require.NotNil(t, d.fl)
	rem := newDrawn(t)
	require.NoError(t, d.h.room.Bind(0, rem))
	d.rem = rem
	return d
}

// direct delivers one of Ann's states over the direct link, sampled at
// (Ann's stamp) and arriving at arrival, and routes it.
func (d *directRig) direct(pos, vel geom.Vec3, at, arrival time.Duration) int {
	d.fl.mu.Lock()
	d.fl.states = append(d.fl.states, direct.State{
		State: wire.State{Slot: 0, Seq: wire.Seq(d.seq), Stamp: wire.StampOf(at), Pos: pos, Vel: vel, Rot: geom.Identity, Flags: d.flags},
		Local: at, Arrival: arrival})
	d.fl.mu.Unlock()
	d.seq++
	return d.h.room.Route()
}

// reports is the DirectLink messages Bob sent about slot 0.
func (d *directRig) reports() []protocol.DirectLink {
	var out []protocol.DirectLink
	for _, m := range d.h.link.Sent() {
		if l, ok := m.(*protocol.DirectLink); ok && l.Slot == 0 {
			out = append(out, *l)
		}
	}
	return out
}

// TestDirectCheaterFallsBackToServer: Ann moves 5x the top speed over the
// direct link (reporting a plausible speed). Her states are dropped, not
// drawn; after DirectFailLimit failures her link is closed, reported down
// to the server with DirectCheat, and her states come by the server again.
func TestDirectCheaterFallsBackToServer(t *testing.T) {
	d := newDirectRig(t)
	top := motion.DefaultTopSpeed
	const dt = time.Second / 60
	base := d.h.clock.Now()
	drawn := 0
	for i := range 60 {
		at := base + time.Duration(i)*dt
		x := 5 * top * float64(i) / 60 // 5x top speed
		drawn += d.direct(geom.Vec3{X: x}, geom.Vec3{X: top}, at, at+20*time.Millisecond)
	}
	t.Logf("cheater: %d of 60 direct states routed to the Remote", drawn)
	assert.LessOrEqual(t, drawn, 2, "the cheater's direct states are not drawn")
	pose := d.rem.Frame(base + time.Second)
	assert.Less(t, pose.Pos.X, 2*top, "the drawn position never ran away at 5x")

	assert.Contains(t, d.reports(), protocol.DirectLink{Slot: 0, Up: false, Reason: protocol.DirectCheat},
		"the server hears the report")
	assert.False(t, d.h.room.DirectUp(0))
	assert.NotContains(t, d.fl.peers, 0, "the direct link to Ann is closed")

	// The server path: its states (checked by the server) are drawn.
	now := base + 2*time.Second
	d.h.link.PushStates(serverlink.RemoteState{
		State: wire.State{Slot: 0, Seq: 1000, Stamp: wire.StampOf(now), Rot: geom.Identity}, Local: now, Arrival: now})
	d.h.update()
	assert.Equal(t, 1, d.h.room.Route())
	pose = d.rem.Frame(now)
	assert.Equal(t, predict.PathServer, pose.Path)
}

// TestDirectCheaterDistrusted: the counters and the state behind the
// fallback; a new player in the seat starts trusted.
func TestDirectCheaterDistrusted(t *testing.T) {
	d := newDirectRig(t)
	top := motion.DefaultTopSpeed
	const dt = time.Second / 60
	base := d.h.clock.Now()
	for i := range 10 {
		at := base + time.Duration(i)*dt
		d.direct(geom.Vec3{X: 5 * top * float64(i) / 60}, geom.Vec3{X: 5 * top}, at, at) // reports 5x too
	}
	assert.True(t, d.h.room.DirectDistrusted(0))
	st := d.h.room.Stats()
	assert.Equal(t, uint64(10), st.DirectRejected)
	assert.Equal(t, uint64(1), st.DirectDistrusted)
	assert.Zero(t, st.DirectRouted)
	n := 0
	for _, r := range d.reports() {
		if r.Reason == protocol.DirectCheat {
			n++
		}
	}
	assert.Equal(t, 1, n, "reported once")

	// Ann leaves; Cy takes slot 0: trusted.
	rs := joinedAs("ABCDEF", 1, 1, player(1, "Bob")).Room
	rs.Rev = 2
	d.h.link.Msg(&rs)
	d.h.until(has(EventPlayerLeft))
	rs = joinedAs("ABCDEF", 1, 1, player(0, "Cy"), player(1, "Bob")).Room
	rs.Rev = 3
	d.h.link.Msg(&rs)
	d.h.until(has(EventPlayerJoined))
	assert.False(t, d.h.room.DirectDistrusted(0))
	assert.Contains(t, d.fl.peers, 0)
}

// TestDirectHonestPlayPasses: the bench's movement (a circle, here at the
// top speed and at the plausible limit) over a jittery direct link with a
// stall that bunches states, out-of-order arrivals and a respawn: no
// state is rejected.
func TestDirectHonestPlayPasses(t *testing.T) {
	for _, speed := range []float64{5, motion.DefaultTopSpeed, 0.99 * motion.DefaultSpeedFactor * motion.DefaultTopSpeed} {
		d := newDirectRig(t)
		rng := rand.New(rand.NewPCG(1, uint64(speed)))
		const dt = time.Second / 60
		base := d.h.clock.Now()
		radius := 5.0
		w := speed / radius // angular speed for that linear speed
		type pending struct {
			pos, vel    geom.Vec3
			at, arrival time.Duration
			seq         int
			flags       wire.Flags
		}
		var q []pending
		respawn, flags := geom.Vec3{}, wire.Flags(0)
		for i := range 1200 {
			at := base + time.Duration(i)*dt
			a := w * float64(i) / 60
			pos := respawn.Add(geom.Vec3{X: radius * math.Cos(a), Z: radius * math.Sin(a)})
			vel := geom.Vec3{X: -speed * math.Sin(a), Z: speed * math.Cos(a)}
			arrival := at + 20*time.Millisecond + time.Duration(rng.IntN(30))*time.Millisecond
			if i >= 300 && i < 318 {
				arrival = base + 318*dt + 20*time.Millisecond // a 300 ms stall: bunched
			}
			q = append(q, pending{pos, vel, at, arrival, i, flags})
			flags = 0
			if i == 600 {
				respawn, flags = geom.Vec3{X: 1000}, wire.FlagTeleport // the next state jumps
			}
		}
		// Deliver in arrival order (jitter reorders some).
		for i := range q {
			for j := i + 1; j < len(q) && j < i+4; j++ {
				if q[j].arrival < q[i].arrival {
					q[i], q[j] = q[j], q[i]
				}
			}
		}
		for _, p := range q {
			d.seq, d.flags = p.seq, p.flags
			d.direct(p.pos, p.vel, p.at, p.arrival)
		}
		st := d.h.room.Stats()
		assert.Zero(t, st.DirectRejected, "speed %v", speed)
		assert.False(t, d.h.room.DirectDistrusted(0))
		assert.True(t, d.h.room.DirectUp(0))
	}
}
