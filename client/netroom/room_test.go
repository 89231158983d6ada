package netroom

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

func eventsOf(evs []Event, k EventKind) []Event {
	var out []Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func slotsOf(evs []Event, k EventKind) []int {
	var out []int
	for _, e := range eventsOf(evs, k) {
		out = append(out, e.Slot)
	}
	return out
}

func TestCreateConnectsThenCreates(t *testing.T) {
	h := newHarness(t, Config{Server: "example.org:9000", Options: serverlink.Options{Name: "Ann", Token: "old",
		Lag: serverlink.LagConfig{Latency: 40 * time.Millisecond}}})
	require.NoError(t, h.room.Create())
	assert.Equal(t, StatusConnecting, h.room.Status())
	evs := h.until(has(EventConnected))
	assert.Equal(t, []string{"connected"}, kinds(evs))
	assert.Equal(t, StatusConnected, h.room.Status())

	h.mu.Lock()
	require.Len(t, h.dials, 1)
	d := h.dials[0]
	h.mu.Unlock()
	assert.Equal(t, "ws://example.org:9000/ws", d.url)
	assert.Equal(t, "Ann", d.opts.Name)
	assert.Equal(t, "old", d.opts.Token)
	assert.Equal(t, 40*time.Millisecond, d.opts.Lag.Latency, "the lag simulator goes to the client")
	assert.Same(t, h.clock, d.opts.Clock, "arrivals are stamped on the room's clock")

	require.Eventually(t, func() bool {
		return h.link.Creates() == 1
	}, 5*time.Second, time.Millisecond, "the create waits for the connection, then goes")
	assert.Equal(t, "tok-1", h.room.Token(), "the server's token once connected")
}

func TestJoinedEmitsRoomEvents(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Join("abc-def"))
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob"), player(3, "Cy")))
	evs := h.update()
	assert.Equal(t, []string{"joined", "player_joined", "player_joined", "player_joined",
		"host_changed", "phase_changed", "spawn", "spawn"}, kinds(evs))
	assert.Equal(t, "ABCDEF", evs[0].Text)
	assert.Equal(t, 1, evs[0].Slot)
	assert.Equal(t, []int{0, 1, 3}, slotsOf(evs, EventPlayerJoined))
	assert.Equal(t, "Bob", eventsOf(evs, EventPlayerJoined)[1].Text)
	assert.Equal(t, []int{0, 3}, slotsOf(evs, EventSpawn), "every remote player, never ourselves")
	assert.Equal(t, protocol.PhaseLobby, eventsOf(evs, EventPhaseChanged)[0].Phase)
	assert.True(t, h.room.InRoom())
	assert.Equal(t, "ABCDEF", h.room.Code())
	assert.Equal(t, 1, h.room.Slot())
	assert.Equal(t, 0, h.room.Host())
	assert.Len(t, h.room.Players(), 3)
	assert.True(t, h.room.Spawned(3))
	assert.False(t, h.room.Spawned(1))
}

func TestRoomStateDiff(t *testing.T) {
	joined := func() *harness {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Create())
		h.until(has(EventConnected))
		h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob")))
		h.until(has(EventJoined))
		return h
	}
	ready := player(1, "Bob")
	ready.Ready = true
	cases := []struct {
		name  string
		state protocol.RoomState
		want  []string
		slots map[EventKind][]int
		next  time.Duration
	}{
		{
			name:  "a player arrives",
			state: protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{player(0, "Ann"), player(1, "Bob"), player(2, "Cy")}},
			want:  []string{"player_joined", "spawn"},
			slots: map[EventKind][]int{EventPlayerJoined: {2}, EventSpawn: {2}},
		},
		{
			name:  "a player leaves",
			state: protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{player(0, "Ann")}},
			want:  []string{"player_left", "despawn"},
			slots: map[EventKind][]int{EventPlayerLeft: {1}, EventDespawn: {1}},
		},
		{
			name:  "a player is ready",
			state: protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 0, Players: []protocol.PlayerState{player(0, "Ann"), ready}},
			want:  []string{"player_updated"},
			slots: map[EventKind][]int{EventPlayerUpdated: {1}},
		},
		{
			name:  "the host moves",
			state: protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 1, Players: []protocol.PlayerState{player(0, "Ann"), player(1, "Bob")}},
			want:  []string{"host_changed"},
			slots: map[EventKind][]int{EventHostChanged: {1}},
		},
		{
			name:  "countdown: next phase at go",
			state: protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseCountdown, GoUS: 7_000_000, Host: 0, Players: []protocol.PlayerState{player(0, "Ann"), player(1, "Bob")}},
			want:  []string{"phase_changed"},
			next:  7 * time.Second,
		},
		{
			name:  "playing: next phase at the deadline",
			state: protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhasePlaying, DeadlineUS: 190_000_000, GoUS: 10_000_000, Host: 0, Players: []protocol.PlayerState{player(0, "Ann"), player(1, "Bob")}},
			want:  []string{"phase_changed"},
			next:  190 * time.Second,
		},
		{
			name:  "an older revision is ignored",
			state: protocol.RoomState{Code: "ABCDEF", Rev: 0, Phase: protocol.PhaseLobby, Host: 1, Players: []protocol.PlayerState{player(0, "Ann")}},
			want:  []string{},
		},
		{
			name:  "another room's state is ignored",
			state: protocol.RoomState{Code: "ZZZZZZ", Rev: 9, Phase: protocol.PhaseLobby, Host: 1, Players: []protocol.PlayerState{player(0, "Ann")}},
			want:  []string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := joined()
			st := tc.state
			h.link.Msg(&st)
			evs := h.update()
			assert.Equal(t, tc.want, kinds(evs))
			for k, slots := range tc.slots {
				assert.Equal(t, slots, slotsOf(evs, k), k.String())
			}
			if tc.next != 0 {
				assert.Equal(t, tc.next, eventsOf(evs, EventPhaseChanged)[0].Next)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Run("no server address", func(t *testing.T) {
		h := newHarness(t, Config{})
		h.room.SetServer("  ")
		err := h.room.Create()
		require.ErrorIs(t, err, ErrNoServer)
		evs := h.update()
		require.Equal(t, []string{"error"}, kinds(evs))
		assert.Equal(t, CodeLocal, evs[0].Code)
		assert.Equal(t, StatusDisconnected, h.room.Status())
	})
	t.Run("bad room code", func(t *testing.T) {
		h := newHarness(t, Config{})
		require.ErrorIs(t, h.room.Join("0O1IL"), protocol.ErrBadRoomCode)
		evs := h.update()
		require.Equal(t, []string{"error"}, kinds(evs))
		assert.Equal(t, StatusDisconnected, h.room.Status(), "nothing dialled")
	})
	t.Run("update required", func(t *testing.T) {
		h := newHarness(t, Config{})
		h.dialErr = &protocol.CloseError{Code: protocol.CodeUpdateRequired, Reason: "protocol 2"}
		require.NoError(t, h.room.Create())
		evs := h.until(has(EventDisconnected))
		require.Equal(t, []string{"error", "disconnected"}, kinds(evs))
		assert.Equal(t, protocol.CodeUpdateRequired, evs[0].Code)
		assert.Contains(t, evs[0].Text, "update required")
		assert.Equal(t, StatusDisconnected, h.room.Status())
	})
	t.Run("refused join is reported once", func(t *testing.T) {
		h := newHarness(t, Config{})
		refusal := protocol.Errorf(protocol.CodeRoomNotFound, "no room ABCDEF")
		refusal.Request = protocol.TypeJoin
		h.link.OnJoin(func(string) error { return refusal })
		require.NoError(t, h.room.Join("ABCDEF"))
		h.until(has(EventConnected))
		h.link.Msg(refusal) // the client delivers the Error message too
		evs := h.until(func(evs []Event) bool {
			return len(h.link.Joins()) == 1 && !h.room.busy
		})
		errs := eventsOf(evs, EventError)
		require.Len(t, errs, 1)
		assert.Equal(t, protocol.CodeRoomNotFound, errs[0].Code)
		assert.Equal(t, "no room ABCDEF", errs[0].Text)
	})
	t.Run("local request failure", func(t *testing.T) {
		h := newHarness(t, Config{})
		h.link.OnCreate(func() error { return errors.New("deadline exceeded") })
		require.NoError(t, h.room.Create())
		evs := h.until(has(EventError))
		e := eventsOf(evs, EventError)[0]
		assert.Equal(t, CodeLocal, e.Code)
		assert.Contains(t, e.Text, "deadline exceeded")
	})
	t.Run("busy and not in a room", func(t *testing.T) {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Create())
		assert.ErrorIs(t, h.room.Join("ABCDEF"), ErrBusy)
		assert.ErrorIs(t, h.room.SetReady(true), ErrNotInRoom)
		assert.ErrorIs(t, h.room.Leave(), ErrNotInRoom)
		evs := h.update()
		assert.Len(t, eventsOf(evs, EventError), 3)
	})
}

func TestRoundMessages(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann")))
	h.until(has(EventJoined))
	require.NoError(t, h.room.ReportLoaded(1.7))
	require.NoError(t, h.room.SetReady(true))
	require.NoError(t, h.room.Start())
	require.NoError(t, h.room.ReportInPosition())
	require.NoError(t, h.room.Finish(12))
	require.NoError(t, h.room.Vote(true))
	require.NoError(t, h.room.SetName("Anna"))
	require.NoError(t, h.room.Kick(3))
	require.Error(t, h.room.Kick(-1), "a slot that cannot exist is refused before the network")
	assert.Equal(t, []protocol.Message{
		&protocol.Loading{Progress: 1}, &protocol.Ready{Ready: true}, &protocol.Start{}, &protocol.InPosition{},
		&protocol.Finish{Score: 12}, &protocol.Vote{Restart: true}, &protocol.SetName{Name: "Anna"},
		&protocol.Kick{Slot: 3},
	}, h.link.Sent())

	h.link.Msg(&protocol.Results{Code: "ABCDEF", Round: 1, Players: []protocol.PlayerResult{{Slot: 0, Status: protocol.StatusFinished, Place: 1}}})
	h.link.Msg(&protocol.Notice{Kind: protocol.NoticeTimeWarning, Text: "10 s left"})
	evs := h.update()
	require.Equal(t, []string{"results", "notice"}, kinds(evs))
	assert.Equal(t, 1, evs[0].Results.Players[0].Place)
	assert.Equal(t, protocol.NoticeTimeWarning, evs[1].Text)
	assert.Equal(t, "10 s left", evs[1].Detail)
}

func TestReconnectKeepsSeatAndSpawns(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))

	h.link.Push(serverlink.Event{Kind: serverlink.EventReconnecting, Err: errors.New("connection reset")})
	evs := h.update()
	assert.Equal(t, []string{"reconnecting"}, kinds(evs))
	assert.Equal(t, "connection reset", evs[0].Text)
	assert.Equal(t, StatusReconnecting, h.room.Status())
	assert.ErrorIs(t, h.room.SetReady(true), ErrNotConnected)
	h.update()

	j := joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob"))
	j.Reconnected = true
	j.Room.Rev = 5
	h.link.Msg(j)
	h.link.Push(serverlink.Event{Kind: serverlink.EventReconnected})
	evs = h.update()
	assert.Equal(t, []string{"reconnected"}, kinds(evs), "same seat, same players: nothing to re-announce or respawn")
	assert.Equal(t, StatusConnected, h.room.Status())
	assert.True(t, h.room.Spawned(1))
}

func TestDisconnectAndLeave(t *testing.T) {
	setup := func(t *testing.T) *harness {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Create())
		h.until(has(EventConnected))
		h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob"), player(2, "Cy")))
		h.until(has(EventJoined))
		return h
	}
	t.Run("left message", func(t *testing.T) {
		h := setup(t)
		require.NoError(t, h.room.Leave())
		h.link.Msg(&protocol.Left{})
		evs := h.until(has(EventLeft))
		assert.Equal(t, []int{1, 2}, slotsOf(evs, EventDespawn))
		assert.False(t, h.room.InRoom())
		assert.Equal(t, -1, h.room.Slot())
		assert.Empty(t, h.room.Players())
		assert.Equal(t, StatusConnected, h.room.Status())
	})
	t.Run("connection gone", func(t *testing.T) {
		h := setup(t)
		h.link.Push(serverlink.Event{Kind: serverlink.EventDisconnected, Err: &protocol.CloseError{Code: protocol.CodeSessionReplaced}})
		evs := h.update()
		assert.Equal(t, []string{"despawn", "despawn", "left", "disconnected"}, kinds(evs))
		assert.Equal(t, StatusDisconnected, h.room.Status())
		require.Eventually(t, h.link.Closed, 5*time.Second, time.Millisecond)
	})
	t.Run("Disconnect", func(t *testing.T) {
		h := setup(t)
		h.room.Disconnect()
		evs := h.update()
		assert.Equal(t, []string{"despawn", "despawn", "left", "disconnected"}, kinds(evs))
		assert.Empty(t, evs[3].Text, "no reason: we hung up")
		require.Eventually(t, h.link.Closed, 5*time.Second, time.Millisecond)
	})
	t.Run("Quit", func(t *testing.T) {
		h := setup(t)
		h.until(func([]Event) bool { return !h.room.busy })
		h.room.Quit()
		evs := h.update()
		assert.Equal(t, []string{"despawn", "despawn", "left", "disconnected"}, kinds(evs))
		require.Eventually(t, h.link.Closed, 5*time.Second, time.Millisecond)
		assert.Equal(t, 1, h.link.Leaves(), "the seat is given up before the close")
		require.NoError(t, h.room.Connect(), "the room can connect again")
	})
	t.Run("room lost after reconnect", func(t *testing.T) {
		h := setup(t)
		h.link.Push(serverlink.Event{Kind: serverlink.EventRoomLost, Err: protocol.Errorf(protocol.CodeRoomNotFound, "gone")})
		evs := h.update()
		assert.Equal(t, []string{"error", "despawn", "despawn", "left"}, kinds(evs))
		assert.Equal(t, protocol.CodeRoomNotFound, evs[0].Code)
	})
	t.Run("Disconnect while connecting", func(t *testing.T) {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Connect())
		h.room.Disconnect()
		assert.Equal(t, StatusDisconnected, h.room.Status())
		// The dial still completes; its link is stale and gets closed.
		require.Eventually(t, func() bool { h.update(); return h.link.Closed() }, 5*time.Second, time.Millisecond)
		assert.Equal(t, StatusDisconnected, h.room.Status())
	})
}

func TestRoute(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob"), player(2, "Cy")))
	h.until(has(EventJoined))

	rem := newDrawn(t)
	require.NoError(t, h.room.Bind(1, rem))
	require.ErrorIs(t, h.room.Bind(MaxSlots, rem), ErrSlot)
	st := func(slot uint8, seq wire.Seq) serverlink.RemoteState {
		return serverlink.RemoteState{State: wire.State{Slot: slot, Seq: seq, Rot: geom.Identity, Pos: geom.Vec3{X: float64(seq)}},
			Local: time.Duration(seq) * 16 * time.Millisecond, Arrival: time.Duration(seq)*16*time.Millisecond + 5*time.Millisecond}
	}
	h.link.PushStates(st(1, 1), st(1, 2), st(2, 1), st(0, 1), st(1, 2))
	assert.Equal(t, 2, h.room.Route())
	assert.Equal(t, Stats{Routed: 2, Unrouted: 2, Refused: 1}, h.room.Stats(),
		"slot 2 has no Remote, slot 0 is ours, the second seq 2 is a duplicate")
	assert.Equal(t, uint64(2), rem.Added())
	pose := rem.Frame(32 * time.Millisecond)
	assert.InDelta(t, 2, pose.Pos.X, 1e-9)

	h.room.Unbind(1, rem)
	assert.Nil(t, h.room.Bound(1))
}

func TestDirectLinkWatchdog(t *testing.T) {
	h := newHarness(t, Config{DirectSilence: 250 * time.Millisecond})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	rem := newDrawn(t)
	require.NoError(t, h.room.Bind(1, rem))

	directLinks := func() []protocol.DirectLink {
		var out []protocol.DirectLink
		for _, m := range h.link.Sent() {
			if d, ok := m.(*protocol.DirectLink); ok {
				out = append(out, *d)
			}
		}
		return out
	}
	n := core.HealthStates
	for i := range n {
		at := time.Duration(i) * 16 * time.Millisecond
		s := wire.State{Slot: 1, Seq: wire.Seq(i), Rot: geom.Identity}
		assert.True(t, h.room.AddDirect(&s, at, at+2*time.Millisecond))
		h.room.Update(at + 2*time.Millisecond)
		if i == n-2 {
			assert.Empty(t, directLinks(), "not up before the link has carried HealthStates states")
		}
	}
	assert.Equal(t, []protocol.DirectLink{{Slot: 1, Up: true}}, directLinks(), "up once")
	last := time.Duration(n-1)*16*time.Millisecond + 2*time.Millisecond
	h.room.Update(last + 250*time.Millisecond)
	assert.Len(t, directLinks(), 1, "250 ms of silence is not yet down")
	h.room.Update(last + 251*time.Millisecond)
	h.room.Update(last + 400*time.Millisecond)
	assert.Equal(t, []protocol.DirectLink{{Slot: 1, Up: true}, {Slot: 1, Up: false}}, directLinks(), "down once")
	assert.Equal(t, uint64(1), h.room.Stats().DirectDown)
	assert.Equal(t, uint64(n), rem.Added(), "direct states reach the Remote on the direct path")

	// A healthy link back from a silence is up again at its first state.
	at := last + 500*time.Millisecond
	s := wire.State{Slot: 1, Seq: wire.Seq(n + 5), Rot: geom.Identity}
	assert.True(t, h.room.AddDirect(&s, at, at))
	assert.Equal(t, []protocol.DirectLink{{Slot: 1, Up: true}, {Slot: 1, Up: false}, {Slot: 1, Up: true}}, directLinks(),
		"up again at once after a silence")
}

// TestDirectLinkHealth: a direct link that loses states the server path
// would deliver (here one in four, as a data channel that discards late
// messages under jitter did) is never reported up, so the server goes on
// relaying; one that delivers is, and is reported down again when it
// starts losing more than twice DirectMaxLoss. Its states reach the
// Remote all along.
func TestDirectLinkHealth(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	rem := newDrawn(t)
	require.NoError(t, h.room.Bind(1, rem))
	reports := func() []protocol.DirectLink {
		var out []protocol.DirectLink
		for _, m := range h.link.Sent() {
			if d, ok := m.(*protocol.DirectLink); ok {
				out = append(out, *d)
			}
		}
		return out
	}
	seq, at, added := 0, time.Duration(0), 0
	run := func(states int, lose func(i int) bool) {
		for i := range states {
			seq++
			at += time.Second / 60
			if lose(i) {
				continue
			}
			s := wire.State{Slot: 1, Seq: wire.Seq(seq), Rot: geom.Identity}
			h.room.AddDirect(&s, at, at)
			h.room.Update(at)
			added++
		}
	}
	run(600, func(i int) bool { return i%4 == 1 })
	assert.Empty(t, reports(), "a link losing a quarter of its states is never reported up")
	assert.False(t, h.room.DirectUp(1))

	run(3*core.HealthWindow, func(int) bool { return false })
	assert.Equal(t, []protocol.DirectLink{{Slot: 1, Up: true}}, reports(), "up once it delivers")

	run(600, func(i int) bool { return i%4 == 1 })
	assert.Equal(t, []protocol.DirectLink{{Slot: 1, Up: true}, {Slot: 1, Up: false}}, reports(), "down when it loses")
	assert.Equal(t, uint64(1), h.room.Stats().DirectLossy)
	assert.Equal(t, uint64(added), rem.Added(), "every direct state reached the Remote")
}

func TestServerTime(t *testing.T) {
	h := newHarness(t, Config{})
	_, ok := h.room.ServerTime(time.Second)
	assert.False(t, ok, "not connected")
	require.NoError(t, h.room.Connect())
	h.until(has(EventConnected))
	h.link.SetOffset(40 * time.Second)
	_, ok = h.room.ServerTime(time.Second)
	assert.False(t, ok, "connected, not synced")
	h.link.Push(serverlink.Event{Kind: serverlink.EventSynced})
	assert.Equal(t, []string{"synced"}, kinds(h.update()))
	st, ok := h.room.ServerTime(time.Second)
	assert.True(t, ok)
	assert.Equal(t, 41*time.Second, st)
	lt, ok := h.room.LocalTime(41 * time.Second)
	assert.True(t, ok)
	assert.Equal(t, time.Second, lt)
}

func TestCloseLeaves(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann")))
	h.until(func([]Event) bool { return h.room.InRoom() && !h.room.busy })
	h.room.Close()
	require.True(t, h.room.Wait(5*time.Second))
	assert.Equal(t, 1, h.link.Leaves(), "closing for good gives the seat up")
	assert.True(t, h.link.Closed())
}

func TestIdleWhileSayingGoodbye(t *testing.T) {
	h := newHarness(t, Config{})
	assert.True(t, h.room.Idle(), "a new Room runs nothing")
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann")))
	h.until(func([]Event) bool { return h.room.InRoom() && !h.room.busy })
	release := make(chan struct{})
	h.link.OnLeave(func() error { <-release; return nil })
	h.room.Close()
	assert.False(t, h.room.Idle(), "the goodbye is in flight")
	close(release)
	require.True(t, h.room.Wait(5*time.Second))
	assert.True(t, h.room.Idle())
}

func TestClosedRoom(t *testing.T) {
	h := newHarness(t, Config{})
	h.room.Close()
	assert.ErrorIs(t, h.room.Connect(), ErrClosed)
	assert.ErrorIs(t, h.room.Create(), ErrClosed)
	assert.True(t, h.room.Wait(time.Second))
}
