package netdebug_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/netdebug"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/server"
)

func TestFeedDue(t *testing.T) {
	var f netdebug.Feed
	n := 0
	for now := time.Duration(0); now < time.Second; now += time.Second / 60 {
		if f.Due(now) {
			n++
		}
	}
	assert.InDelta(t, 10, n, 1, "10 samples a second at 60 frames a second")
	assert.True(t, f.Due(10*time.Second), "after a pause: one sample")
	assert.False(t, f.Due(10*time.Second+time.Millisecond), "not a burst")
}

// TestSampleOnLoopback: two players on a real server; Bob's samples show
// the room, the server link's round trip and bytes per second, and Ann's
// entity drawn from fresh data, moving.
func TestSampleOnLoopback(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	newRoom := func(name string) *netroom.Room {
		cfg := netroom.Config{Server: srv.Addr, NoDirect: true}
		cfg.Name = name
		r, err := netroom.New(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { r.Close(); r.Wait(5 * time.Second) })
		return r
	}
	ann, bob := newRoom("Ann"), newRoom("Bob")
	var rem *entity.Remote
	frame := func() {
		ann.Update(ann.Now())
		for _, e := range bob.Update(bob.Now()) {
			if e.Kind == netroom.EventSpawn {
				var err error
				rem, err = entity.NewRemote(predict.Config{})
				require.NoError(t, err)
				require.NoError(t, bob.Bind(e.Slot, rem))
			}
		}
		ann.Route()
		bob.Route()
		if rem != nil {
			rem.Frame(bob.Now())
		}
	}
	require.NoError(t, ann.Create())
	for !ann.InRoom() {
		frame()
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, bob.Join(ann.Code()))
	local, err := entity.NewLocal(sender.Config{})
	require.NoError(t, err)
	var feed netdebug.Feed
	var s netdebug.Sample
	samples := 0
	deadline := time.Now().Add(15 * time.Second)
	for samples < 5 || s.Links[0].InPerSec <= 0 || len(s.Entities) == 0 || s.Entities[0].Speed < 1 {
		require.True(t, time.Now().Before(deadline), "timed out: %+v", s)
		now := ann.Now()
		local.Sample(now, geom.Vec3{X: 3 * now.Seconds()}, geom.Identity, geom.Vec3{X: 3}, true)
		if st, ok := local.PollAt(now, ann.Slot()); ok && ann.InRoom() {
			_ = ann.SendState(st)
		}
		frame()
		if bob.Synced() && feed.Due(bob.Now()) {
			feed.Sample(bob, bob.Now(), &s)
			samples++
		}
		time.Sleep(time.Second / 60)
	}
	assert.Equal(t, "connected", s.Room.Status)
	assert.Equal(t, ann.Code(), s.Room.Code)
	assert.Equal(t, 1, s.Room.Slot)
	assert.Equal(t, 0, s.Room.Host)
	assert.Len(t, s.Room.Players, 2)
	require.NotEmpty(t, s.Links)
	assert.Equal(t, "server", s.Links[0].Name)
	assert.True(t, s.Links[0].Up)
	assert.Positive(t, s.Links[0].RTT)
	assert.GreaterOrEqual(t, s.Links[0].OutPerSec, 0.0, "known: Bob sends no states here")
	require.Len(t, s.Entities, 1)
	e := s.Entities[0]
	assert.Equal(t, 0, e.Slot)
	assert.Equal(t, "server", e.Path)
	assert.Equal(t, "visible", e.Visibility)
	assert.InDelta(t, 3, e.Speed, 1.5, "drawn at 3 m/s")
	assert.Less(t, e.Age, 500*time.Millisecond)
}

// TestSampleDirectLink: a direct link's row carries its round trip, its
// selected candidate pair's types and its bytes each way.
func TestSampleDirectLink(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	newRoom := func(name string) *netroom.Room {
		var dc direct.Config
		testkit.LoopbackDirect(&dc)
		cfg := netroom.Config{Server: srv.Addr, Direct: dc}
		cfg.Name = name
		r, err := netroom.New(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { r.Close(); r.Wait(5 * time.Second) })
		return r
	}
	ann, bob := newRoom("Ann"), newRoom("Bob")
	rooms := []*netroom.Room{ann, bob}
	locals := make([]*entity.Local, 2)
	for i := range locals {
		l, err := entity.NewLocal(sender.Config{})
		require.NoError(t, err)
		locals[i] = l
	}
	frame := func() {
		for i, r := range rooms {
			now := r.Now()
			r.Update(now)
			locals[i].Sample(now, geom.Vec3{X: float64(i) + now.Seconds()}, geom.Identity, geom.Vec3{X: 1}, true)
			if st, ok := locals[i].PollAt(now, r.Slot()); ok && r.InRoom() {
				_ = r.SendState(st)
			}
			r.Route()
		}
	}
	require.NoError(t, ann.Create())
	for !ann.InRoom() {
		frame()
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, bob.Join(ann.Code()))
	var feed netdebug.Feed
	var s netdebug.Sample
	link := func() *netdebug.Link {
		for i := range s.Links {
			if s.Links[i].Slot == 0 {
				return &s.Links[i]
			}
		}
		return nil
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		require.True(t, time.Now().Before(deadline), "timed out: %+v", s.Links)
		frame()
		if bob.InRoom() && feed.Due(bob.Now()) {
			feed.Sample(bob, bob.Now(), &s)
			if l := link(); l != nil && l.Up && l.RTT > 0 && l.InPerSec > 0 && l.OutPerSec > 0 {
				break
			}
		}
		time.Sleep(time.Second / 60)
	}
	l := link()
	assert.Equal(t, "direct 0", l.Name)
	assert.Equal(t, "host/host", l.Candidates, "a loopback pair")
	assert.Less(t, l.RTT, time.Second)
	assert.Equal(t, -1.0, l.Loss, "loss is the server row's")
}

// BenchmarkSample64 is one sample of a room drawing 64 remote players: the
// work a NetRoom adds ten times a second while the editor's tab listens
// (the node's conversion to engine Dictionaries comes on top).
func BenchmarkSample64(b *testing.B) {
	link := testkit.NewFakeLink("tok")
	clock := &testkit.Clock{}
	cfg := netroom.Config{Server: "127.0.0.1:1", NoDirect: true}
	cfg.Clock = clock
	cfg.Dial = func(context.Context, string, *serverlink.Options) (netroom.ServerLink, error) { return link, nil }
	r, err := netroom.New(cfg)
	require.NoError(b, err)
	defer r.Close()
	require.NoError(b, r.Create())
	players := []protocol.PlayerState{{Slot: 0, Name: "me", Connected: true}}
	for i := 1; i <= 64; i++ {
		players = append(players, protocol.PlayerState{Slot: i, Name: "p", Connected: true})
	}
	deadline := time.Now().Add(5 * time.Second)
	for r.Status() != netroom.StatusConnected && time.Now().Before(deadline) {
		r.Update(clock.Now())
		time.Sleep(time.Millisecond)
	}
	link.Msg(&protocol.Joined{Code: "ABCDEF", Slot: 0, Room: protocol.RoomState{Code: "ABCDEF", Rev: 1,
		Phase: protocol.PhaseLobby, Host: 0, Players: players}})
	r.Update(clock.Now())
	for i := 1; i <= 64; i++ {
		rem, err := entity.NewRemote(predict.Config{})
		require.NoError(b, err)
		require.NoError(b, r.Bind(i, rem))
		rem.AddSample(predict.PathServer, predict.Sample{Time: 0, Seq: 1, Rot: geom.Identity}, 0)
		rem.Frame(time.Millisecond)
	}
	var f netdebug.Feed
	var s netdebug.Sample
	f.Sample(r, 0, &s)
	require.Len(b, s.Entities, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		f.Sample(r, time.Duration(i)*time.Millisecond, &s)
	}
}
