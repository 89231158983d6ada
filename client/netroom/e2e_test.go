package netroom_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/typedargs"
	"github.com/nearzero/nearzero/server"
)

// The end-to-end set-up, one for every test on a real server: Rooms on
// loopback (testkit.StartServer) with the entity models their nodes bind
// (client/entity), the same every frame (peer.frame), seated the same way
// (seat), and two players on the bench's circle (twoPlayers).

// peer is one player on a real server: a Room plus what its NetRoom and
// NetPredictor nodes would hold (a Remote per spawned player).
type peer struct {
	t       *testing.T
	room    *netroom.Room
	events  []netroom.Event
	remotes map[int]*entity.Remote
}

// newPeer is a player of srv named name, direct links on as by default.
func newPeer(t *testing.T, srv *testkit.Server, name string) *peer {
	return newPeerWith(t, srv, name, netroom.Config{})
}

// newPeerWith is newPeer with cfg (its Server, Name and Sync set here: a
// quick clock sync); the Room is closed at the test's end.
func newPeerWith(t *testing.T, srv *testkit.Server, name string, cfg netroom.Config) *peer {
	t.Helper()
	cfg.Server, cfg.Name, cfg.Sync = srv.Addr, name, testkit.QuickSync
	r, err := netroom.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		r.Close()
		assert.True(t, r.Wait(5*time.Second))
	})
	return &peer{t: t, room: r, remotes: map[int]*entity.Remote{}}
}

// newDirectPeer is a player whose direct links stay on loopback and, once
// killed, stay down for the test.
func newDirectPeer(t *testing.T, srv *testkit.Server, name string, dc direct.Config) *peer {
	t.Helper()
	return newLaggedPeer(t, srv, name, dc, serverlink.LagConfig{})
}

// newLaggedPeer is newDirectPeer with the lag simulator on the server
// link (lag) and on the direct links (dc.Lag) apart.
func newLaggedPeer(t *testing.T, srv *testkit.Server, name string, dc direct.Config, lag serverlink.LagConfig) *peer {
	t.Helper()
	testkit.LoopbackDirect(&dc)
	dc.RetryAfter = time.Hour // a killed link stays down for the test
	return newPeerWith(t, srv, name, netroom.Config{Options: serverlink.Options{Lag: lag}, Direct: dc, DirectLagApart: true})
}

// frame is what a NetRoom does each frame: update, apply spawns, route.
func (p *peer) frame() {
	for _, e := range p.room.Update(p.room.Now()) {
		p.events = append(p.events, e)
		switch e.Kind {
		case netroom.EventSpawn:
			rem, err := entity.NewRemote(predict.Config{})
			require.NoError(p.t, err)
			require.NoError(p.t, p.room.Bind(e.Slot, rem))
			p.remotes[e.Slot] = rem
		case netroom.EventDespawn:
			p.room.Unbind(e.Slot, p.remotes[e.Slot])
			delete(p.remotes, e.Slot)
		}
	}
	p.room.Route()
}

func (p *peer) saw(k netroom.EventKind) bool {
	return slices.ContainsFunc(p.events, func(e netroom.Event) bool { return e.Kind == k })
}

// of returns the events of kind k seen so far.
func (p *peer) of(k netroom.EventKind) []netroom.Event {
	var out []netroom.Event
	for _, e := range p.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// frames runs frames of every peer, 2 ms apart, until cond holds, failing
// after 10 s with what each peer saw.
func frames(t *testing.T, cond func() bool, ps ...*peer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			var saw []string
			for _, p := range ps {
				kinds := make([]string, len(p.events))
				for i, e := range p.events {
					kinds[i] = e.Kind.String()
				}
				saw = append(saw, strings.Join(kinds, " "))
			}
			t.Fatalf("condition not met in 10 s; events per player:\n%s", strings.Join(saw, "\n"))
		}
		for _, p := range ps {
			p.frame()
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// seat makes the first peer create a room and the others join it, and
// runs frames until everyone is seated, synced and draws everyone else.
func seat(t *testing.T, ps ...*peer) {
	t.Helper()
	require.NoError(t, ps[0].room.Create())
	frames(t, ps[0].room.InRoom, ps...)
	for _, p := range ps[1:] {
		require.NoError(t, p.room.Join(ps[0].room.Code()))
	}
	frames(t, func() bool {
		for _, p := range ps {
			if !p.room.InRoom() || !p.room.Synced() || len(p.room.Players()) != len(ps) || len(p.remotes) != len(ps)-1 {
				return false
			}
		}
		return true
	}, ps...)
}

// circle is where Ann is at server time t: a 5 m circle at 1 rad/s.
func circle(t time.Duration) geom.Vec3 {
	a := t.Seconds()
	return geom.Vec3{X: 5 * math.Cos(a), Z: 5 * math.Sin(a)}
}

// twoPlayers is two seated players on a real server: Ann moves on the
// circle, Bob on a smaller one; each frame both send and Bob draws Ann.
type twoPlayers struct {
	t        *testing.T
	ann, bob *peer
	anl, bol *entity.Local
	phys     entity.FrameClock
	i        uint64
	t0       time.Time // the frame schedule's origin
	errPrev  geom.Vec3
	hasPrev  bool
	valid    int       // frames Bob drew Ann
	errs     []float64 // Bob's drawing error, after warmUp frames
	maxJump  float64   // largest frame-to-frame change of Bob's drawing error, after warmUp frames
	maxErr   float64   // largest drawing error, after warmUp frames
	paths    map[predict.Path]int
	sent     int // states both players sent
}

// warmUp is how many drawn frames the error measures skip: the
// predictor's first states (no velocity history, Auto learning) are not a
// path switch.
const warmUp = 30

// seatTwo seats ann and bob (seat) and gives each a Local to send with.
func seatTwo(t *testing.T, ann, bob *peer) *twoPlayers {
	t.Helper()
	seat(t, ann, bob)
	anl, err := entity.NewLocal(sender.Config{})
	require.NoError(t, err)
	bol, err := entity.NewLocal(sender.Config{})
	require.NoError(t, err)
	return &twoPlayers{t: t, ann: ann, bob: bob, anl: anl, bol: bol, paths: map[predict.Path]int{}}
}

// frame runs one 60 Hz frame of both players and returns Bob's pose of Ann.
func (d *twoPlayers) frame() predict.Pose {
	const step = time.Second / 60
	now := d.phys.At(d.i, d.ann.room.Now(), step)
	d.i++
	// The position is that of the physics frame's time, as game code
	// moving by NetRoom.physics_server_time does.
	st, _ := d.ann.room.ServerTime(now)
	d.anl.Sample(now, circle(st), geom.Identity, geom.Vec3{}, false)
	if s, ok := d.anl.Poll(d.ann.room.Slot()); ok {
		require.NoError(d.t, d.ann.room.SendState(s))
		d.sent++
	}
	bnow := d.bob.room.Now()
	d.bol.Sample(bnow, geom.Vec3{X: math.Sin(bnow.Seconds())}, geom.Identity, geom.Vec3{}, false)
	if s, ok := d.bol.Poll(d.bob.room.Slot()); ok {
		require.NoError(d.t, d.bob.room.SendState(s))
		d.sent++
	}
	d.ann.frame()
	d.bob.frame()
	bnow = d.bob.room.Now()
	pose, _ := d.bob.remotes[0].Frame(bnow)
	if d.t0.IsZero() {
		d.t0 = time.Now()
	}
	if bst, _ := d.bob.room.ServerTime(bnow); pose.Valid {
		e := pose.Pos.Sub(circle(bst))
		if d.valid++; d.hasPrev && d.valid > warmUp {
			d.maxJump = max(d.maxJump, e.Sub(d.errPrev).Len())
			d.maxErr = max(d.maxErr, e.Len())
			d.errs = append(d.errs, e.Len())
		}
		d.errPrev, d.hasPrev = e, true
		d.paths[pose.Path]++
	}
	// Frames on a fixed 60 Hz schedule, as an engine runs them: a loop that
	// slept a step after its work would run slow, and its frame clock
	// would fall MaxStepLag behind the wall clock.
	time.Sleep(time.Until(d.t0.Add(time.Duration(d.i) * step)))
	return pose
}

// until runs frames until cond holds, within limit.
func (d *twoPlayers) until(limit time.Duration, what string, cond func(predict.Pose) bool) time.Duration {
	d.t.Helper()
	start := time.Now()
	for {
		p := d.frame()
		if cond(p) {
			return time.Since(start)
		}
		require.Less(d.t, time.Since(start), limit, "waiting for %s", what)
	}
}

// TestTwoPlayersOnLoopback runs two Rooms against a real server: one
// creates, the other joins by code, each spawns the other, and the
// joiner draws the creator's circle close to where it is.
func TestTwoPlayersOnLoopback(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	ann, bob := newPeer(t, srv, "Ann"), newPeer(t, srv, "Bob")
	d := seatTwo(t, ann, bob)
	assert.Equal(t, 0, ann.room.Slot())
	assert.Equal(t, 1, bob.room.Slot())
	assert.Equal(t, 0, bob.room.Host())
	assert.Len(t, bob.room.Players(), 2)
	for _, k := range []netroom.EventKind{netroom.EventConnected, netroom.EventJoined, netroom.EventPlayerJoined,
		netroom.EventHostChanged, netroom.EventPhaseChanged, netroom.EventSpawn, netroom.EventSynced} {
		assert.True(t, ann.saw(k), "ann saw %s", k)
		assert.True(t, bob.saw(k), "bob saw %s", k)
	}

	// Ann moves on the circle on the server's clock; Bob draws her each
	// frame.
	for range 90 {
		d.frame()
	}
	errs := d.errs
	require.NotEmpty(t, errs, "bob drew ann")
	slices.Sort(errs)
	t.Logf("loopback error over %d frames: p50 %.4f m, max %.4f m", len(errs), errs[len(errs)/2], errs[len(errs)-1])
	assert.Less(t, errs[len(errs)/2], 0.1, "median error on loopback at 5 m/s")
	assert.Positive(t, bob.room.Stats().Routed)

	// Bob leaves: Ann sees the peer leave and despawns him.
	require.NoError(t, bob.room.Leave())
	frames(t, func() bool { return !bob.room.InRoom() && ann.saw(netroom.EventDespawn) }, ann, bob)
	assert.True(t, bob.saw(netroom.EventLeft))
	assert.Empty(t, bob.remotes, "bob despawned everyone on leaving")
	assert.True(t, ann.saw(netroom.EventPlayerLeft))
	assert.Nil(t, ann.remotes[1])
	assert.Equal(t, protocol.PhaseLobby, ann.room.Phase())
}

// TestEventsAndChatOnLoopback sends events and chat between two Rooms
// through a real server.
func TestEventsAndChatOnLoopback(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	ann, bob := newPeer(t, srv, "Ann"), newPeer(t, srv, "Bob")
	seat(t, ann, bob)

	for i := range 5 {
		require.NoError(t, ann.room.SendEvent("fire", []any{i, "x", typedargs.Vector2{1.5, 2}}, protocol.ToAll))
	}
	require.NoError(t, ann.room.SendChat("  gg\u202e  ", protocol.ToAll))
	frames(t, func() bool {
		return len(bob.of(netroom.EventGameEvent)) == 5 && len(bob.of(netroom.EventChat)) == 1
	}, ann, bob)
	for i, e := range bob.of(netroom.EventGameEvent) {
		assert.Equal(t, netroom.Event{Kind: netroom.EventGameEvent, Slot: 0, Text: "fire",
			Args: []any{int64(i), "x", typedargs.Vector2{1.5, 2}}}, e)
	}
	assert.Equal(t, netroom.Event{Kind: netroom.EventChat, Slot: 0, Text: "gg"}, bob.of(netroom.EventChat)[0])
	assert.Empty(t, ann.of(netroom.EventGameEvent), "no echo to the sender")

	// Refused locally, with EventError and the error returned.
	n := len(ann.of(netroom.EventError))
	err := ann.room.SendEvent("big", []any{strings.Repeat("x", protocol.MaxEventSize)}, protocol.ToAll)
	assert.ErrorIs(t, err, protocol.ErrEventTooBig)
	err = ann.room.SendEvent("bad", []any{math.NaN()}, protocol.ToAll)
	assert.ErrorIs(t, err, typedargs.ErrBadArg)
	err = ann.room.SendChat(strings.Repeat("a", 201), protocol.ToAll)
	assert.ErrorIs(t, err, protocol.ErrBadChat)
	ann.frame()
	assert.Len(t, ann.of(netroom.EventError), n+3)

	// Over the server's rate: refused there, reported as rate_limited.
	for range 70 {
		require.NoError(t, ann.room.SendEvent("spam", nil, 1))
	}
	frames(t, func() bool {
		for _, e := range ann.of(netroom.EventError) {
			if e.Code == protocol.CodeRateLimited && strings.Contains(e.Text, "events per second") {
				return true
			}
		}
		return false
	}, ann, bob)
}

// TestPropsOnLoopback: a NetPredictor's synced properties (entity.Props)
// go out through its Room merged at most Rate times a second, unchanged
// values not at all, and a late joiner gets the last values.
func TestPropsOnLoopback(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	ann, bob := newPeer(t, srv, "Ann"), newPeer(t, srv, "Bob")
	seat(t, ann, bob)

	p := entity.Props{Rate: 10}
	now := time.Duration(0)
	sent := 0
	// 60 physics frames (1 s) of a health bar falling every frame and a
	// colour that never changes: about 10 sends of health, 1 of colour.
	for i := range 60 {
		require.NoError(t, p.Set("health", 100-i))
		require.NoError(t, p.Set("modulate", typedargs.Color{1, 0.5, 0.5, 1}))
		sent += p.Flush(now, ann.room)
		now += time.Second / 60
	}
	assert.InDelta(t, 11, sent, 1, "health 10 times in 1 s, the colour once")
	now += time.Second
	sent += p.Flush(now, ann.room)
	frames(t, func() bool { return bob.room.PropsOf(netroom.Key{})["health"] == int64(41) }, ann, bob)
	assert.Equal(t, typedargs.Color{1, 0.5, 0.5, 1}, bob.room.PropsOf(netroom.Key{})["modulate"])
	props := bob.of(netroom.EventProp)
	assert.Len(t, props, sent)
	assert.Equal(t, netroom.Event{Kind: netroom.EventProp, Slot: 0, Text: "health", Args: []any{int64(41)}}, props[len(props)-1])

	carl := newPeer(t, srv, "Carl")
	require.NoError(t, carl.room.Join(ann.room.Code()))
	frames(t, func() bool { return carl.room.PropsOf(netroom.Key{})["health"] == int64(41) }, ann, bob, carl)
	assert.Len(t, carl.of(netroom.EventProp), 2, "the late joiner gets the last value of each key")

	// A second entity of Ann's (a trailer, id 3) has its own values under
	// the same key; the spawned copy's node applies them.
	trailer := entity.Props{Rate: 10, Entity: 3}
	require.NoError(t, trailer.Set("health", 7))
	require.Equal(t, 1, trailer.Flush(now, ann.room))
	frames(t, func() bool { return bob.room.PropsOf(netroom.Key{Slot: 0, Entity: 3})["health"] == int64(7) }, ann, bob)
	assert.Equal(t, int64(41), bob.room.PropsOf(netroom.Key{})["health"], "the player's own keeps its value")
	props = bob.of(netroom.EventProp)
	assert.Equal(t, netroom.Event{Kind: netroom.EventProp, Slot: 0, Entity: 3, Text: "health", Args: []any{int64(7)}},
		props[len(props)-1])

	// Ann leaves: her properties are forgotten.
	require.NoError(t, ann.room.Leave())
	frames(t, func() bool { return bob.room.PropsOf(netroom.Key{}) == nil }, ann, bob)
}
