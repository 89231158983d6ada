package netroom

import (
	"context"
	"math"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/server"
)

// startServer runs a room server on loopback for the test.
func startServer(t *testing.T) string {
	t.Helper()
	s, err := server.New(nil, server.Deps{})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	<-s.Ready()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-done
	})
	return ln.Addr().String()
}

// peer is one side of the end-to-end test: a Room plus what its
// NetRoom and NetPredictor nodes would hold.
type peer struct {
	t       *testing.T
	room    *Room
	events  []Event
	remotes map[int]*Remote
}

var quickSync = clock.SyncConfig{WarmupInterval: 10 * time.Millisecond, SyncedAfter: 3, WarmupSamples: 4}

func newPeer(t *testing.T, addr, name string) *peer {
	t.Helper()
	r, err := New(Config{Server: addr, Options: serverlink.Options{Name: name, Sync: quickSync}})
	require.NoError(t, err)
	t.Cleanup(func() {
		r.Close()
		assert.True(t, r.Wait(5*time.Second))
	})
	return &peer{t: t, room: r, remotes: map[int]*Remote{}}
}

// frame is what a NetRoom does each frame: update, apply spawns, route.
func (p *peer) frame() {
	for _, e := range p.room.Update(p.room.Now()) {
		p.events = append(p.events, e)
		switch e.Kind {
		case EventSpawn:
			rem, err := NewRemote(predict.Config{})
			require.NoError(p.t, err)
			require.NoError(p.t, p.room.Bind(e.Slot, rem))
			p.remotes[e.Slot] = rem
		case EventDespawn:
			p.room.Unbind(e.Slot, p.remotes[e.Slot])
			delete(p.remotes, e.Slot)
		}
	}
	p.room.Route()
}

func (p *peer) saw(k EventKind) bool {
	return slices.ContainsFunc(p.events, func(e Event) bool { return e.Kind == k })
}

// TestTwoPlayersOnLoopback runs two Rooms against a real server: one
// creates, the other joins by code, each spawns the other, and the
// joiner draws the creator's circle close to where it is.
func TestTwoPlayersOnLoopback(t *testing.T) {
	addr := startServer(t)
	ann, bob := newPeer(t, addr, "Ann"), newPeer(t, addr, "Bob")
	frames := func(cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "ann %v / bob %v", kinds(ann.events), kinds(bob.events))
			ann.frame()
			bob.frame()
			time.Sleep(2 * time.Millisecond)
		}
	}
	require.NoError(t, ann.room.Create())
	frames(func() bool { return ann.room.InRoom() })
	code := ann.room.Code()
	require.NoError(t, bob.room.Join(code))
	frames(func() bool {
		return bob.room.InRoom() && ann.remotes[1] != nil && bob.remotes[0] != nil && ann.room.Synced() && bob.room.Synced()
	})
	assert.Equal(t, 0, ann.room.Slot())
	assert.Equal(t, 1, bob.room.Slot())
	assert.Equal(t, 0, bob.room.Host())
	assert.Len(t, bob.room.Players(), 2)
	for _, k := range []EventKind{EventConnected, EventJoined, EventPlayerJoined, EventHostChanged, EventPhaseChanged, EventSpawn, EventSynced} {
		assert.True(t, ann.saw(k), "ann saw %s", k)
		assert.True(t, bob.saw(k), "bob saw %s", k)
	}

	// Ann moves on a 5 m circle at 1 rad/s on the server's clock; Bob
	// draws her each frame.
	loc, err := NewLocal(sender.Config{})
	require.NoError(t, err)
	path := func(server time.Duration) geom.Vec3 {
		a := server.Seconds()
		return geom.Vec3{X: 5 * math.Cos(a), Z: 5 * math.Sin(a)}
	}
	const step = time.Second / 60
	var errs []float64
	var phys FrameClock
	for i := range 90 {
		// The position is that of the physics frame's time, as game code
		// moving by NetRoom.physics_server_time does.
		now := phys.At(uint64(i), ann.room.Now(), step)
		st, _ := ann.room.ServerTime(now)
		loc.Sample(now, path(st), geom.Identity, geom.Vec3{}, false)
		if s, ok := loc.Poll(ann.room.Slot()); ok {
			require.NoError(t, ann.room.SendState(s))
		}
		ann.frame()
		bob.frame()
		bnow := bob.room.Now()
		pose, _ := bob.remotes[0].Frame(bnow)
		if bst, _ := bob.room.ServerTime(bnow); pose.Valid && i > 30 {
			errs = append(errs, pose.Pos.Sub(path(bst)).Len())
		}
		time.Sleep(step)
	}
	require.NotEmpty(t, errs, "bob drew ann")
	slices.Sort(errs)
	t.Logf("loopback error over %d frames: p50 %.4f m, max %.4f m", len(errs), errs[len(errs)/2], errs[len(errs)-1])
	assert.Less(t, errs[len(errs)/2], 0.1, "median error on loopback at 5 m/s")
	assert.Positive(t, bob.room.Stats().Routed)

	// Bob leaves: Ann sees the peer leave and despawns him.
	require.NoError(t, bob.room.Leave())
	frames(func() bool { return !bob.room.InRoom() && ann.saw(EventDespawn) })
	assert.True(t, bob.saw(EventLeft))
	assert.Empty(t, bob.remotes, "bob despawned everyone on leaving")
	assert.True(t, ann.saw(EventPlayerLeft))
	assert.Nil(t, ann.remotes[1])
	assert.Equal(t, protocol.PhaseLobby, ann.room.Phase())
}
