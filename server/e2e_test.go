package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/funnel"
)

// state returns a plausible state with sequence seq.
func state(seq int, x float64) *wire.State {
	return &wire.State{Seq: wire.Seq(seq), Pos: geom.Vec3{X: x}, Vel: geom.Vec3{X: 5}, Rot: geom.Quat{W: 1}}
}

// waitStates polls b until it has n remote states.
func waitStates(t *testing.T, b *bot, n int) []serverlink.RemoteState {
	t.Helper()
	var got []serverlink.RemoteState
	return eventually(t, b.name+" receives states", func() ([]serverlink.RemoteState, bool) {
		got = b.PollStates(got)
		return got, len(got) >= n
	})
}

func TestJoinByCodeAndRelay(t *testing.T) {
	e := newEnv(t, nil)
	ann := e.dial("Ann", nil)
	bob := e.dial("Bob", nil)
	assert.NotEqual(t, ann.User(), bob.User(), "each gets an anonymous identity")
	assert.NotEmpty(t, ann.Token())

	joined, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	assert.True(t, protocol.ValidRoomCode(joined.Code))
	assert.Equal(t, 0, joined.Slot)
	assert.Equal(t, 0, joined.Room.Host)

	// Bob types the code in lower case with a dash.
	typed := joined.Code[:3] + "-" + joined.Code[3:]
	jb, err := bob.Join(ctxT(t), typed)
	require.NoError(t, err)
	assert.Equal(t, 1, jb.Slot)
	st := ann.waitRoom("Ann sees Bob", func(s protocol.RoomState) bool { return len(s.Players) == 2 })
	assert.Equal(t, "Bob", st.Players[1].Name)

	// States: Ann's reach Bob re-stamped onto the server clock, mapped onto Bob's clock.
	ann.waitSynced()
	bob.waitSynced()
	var got []serverlink.RemoteState
	for i := 1; i <= 5; i++ {
		// Stamps are all 0 here, so each move spends the move slack (a
		// budget of 1 m a second): 1 cm a state, not 1 m. Each is sent
		// once the one before arrived: the client writes only the newest
		// state of an entity that waits in its queue, so states sent
		// faster than a busy machine writes them would merge.
		require.NoError(t, ann.SendState(state(i, float64(i)/100)))
		got = append(got, waitStates(t, bob, 1)...)
	}
	for i, rs := range got[:5] {
		assert.Equal(t, uint8(0), rs.State.Slot, "Ann's slot")
		assert.Equal(t, wire.Seq(i+1), rs.State.Seq)
		assert.LessOrEqual(t, rs.Local, rs.Arrival+5*time.Millisecond, "sampled before it arrived (within sync error)")
		assert.Greater(t, rs.Local, rs.Arrival-time.Second, "and not long before")
	}
	assert.Empty(t, ann.PollStates(nil), "no echo")

	// A third player joins with the invite link.
	cid := e.dial("Cid", nil)
	jc, err := cid.Join(ctxT(t), joined.Invite)
	require.NoError(t, err)
	assert.Equal(t, 2, jc.Slot)
	var via protocol.Via
	eventually(t, "analytics for Cid's join", func() (protocol.Via, bool) {
		for _, ev := range e.events.events(t) {
			if ev.Step == funnel.StepRoomJoined && ev.User == cid.User() {
				via = ev.Via
				return via, true
			}
		}
		return "", false
	})
	assert.Equal(t, protocol.ViaLink, via)

	code, body := e.get("/join/" + joined.Code)
	assert.Equal(t, 200, code)
	assert.Contains(t, body, joined.Code)
	code, _ = e.get("/join/not-a-code")
	assert.Equal(t, 404, code)
}

func TestJoinRefusals(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Room.MaxPlayers = 2; c.MaxRooms = 1 })
	ann := e.dial("Ann", nil)
	j, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	bob := e.dial("Bob", nil)
	_, err = bob.Create(ctxT(t), nil)
	assert.Equal(t, protocol.CodeServerFull, protocol.CodeOf(err))
	_, err = bob.Join(ctxT(t), "ZZZZZZ")
	assert.Equal(t, protocol.CodeRoomNotFound, protocol.CodeOf(err))
	_, err = bob.Join(ctxT(t), "not a code")
	assert.ErrorIs(t, err, protocol.ErrBadRoomCode)
	_, err = bob.Join(ctxT(t), j.Code)
	require.NoError(t, err)
	cid := e.dial("Cid", nil)
	_, err = cid.Join(ctxT(t), j.Code)
	assert.Equal(t, protocol.CodeRoomFull, protocol.CodeOf(err))
	_, err = ann.Join(ctxT(t), j.Code)
	assert.Equal(t, protocol.CodeAlreadyInRoom, protocol.CodeOf(err))
	assert.True(t, cid.Connected(), "a refused join does not end the connection")
}

func TestHostMigration(t *testing.T) {
	e := newEnv(t, nil)
	ann, bob, cid := e.dial("Ann", nil), e.dial("Bob", nil), e.dial("Cid", nil)
	j, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	_, err = bob.Join(ctxT(t), j.Code)
	require.NoError(t, err)
	_, err = cid.Join(ctxT(t), j.Code)
	require.NoError(t, err)
	require.NoError(t, ann.Leave(ctxT(t)))
	st := cid.waitRoom("host moves to Bob", func(s protocol.RoomState) bool { return len(s.Players) == 2 })
	assert.Equal(t, 1, st.Host, "the longest present player is the new host")
	assert.Equal(t, -1, ann.Slot())

	// Bob's connection drops: he stays host while his seat is held, then
	// the host moves when the hold runs out.
	require.NoError(t, bob.Close(ctxT(t)))
	st = cid.waitRoom("Bob held", func(s protocol.RoomState) bool {
		return len(s.Players) == 2 && !s.Players[0].Connected
	})
	assert.Equal(t, 1, st.Host)
	st = cid.waitRoom("Bob's hold expires", func(s protocol.RoomState) bool { return len(s.Players) == 1 })
	assert.Equal(t, 2, st.Host)
}

func TestReconnectInsideHold(t *testing.T) {
	e := newEnv(t, nil)
	p := newProxy(t, e.s.Addr().String())
	ann := e.dial("Ann", nil)
	bob := dialURL(t, p.url(), "Bob", nil)
	j, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	jb, err := bob.Join(ctxT(t), j.Code)
	require.NoError(t, err)

	p.cut(false)
	bob.wait("reconnecting", func(ev serverlink.Event) bool { return ev.Kind == serverlink.EventReconnecting })
	rj := waitMsg[*protocol.Joined](bob, "rejoined", func(m *protocol.Joined) bool { return m.Reconnected })
	assert.Equal(t, jb.Slot, rj.Slot, "the client keeps its slot through the reconnect")
	bob.wait("reconnected", func(ev serverlink.Event) bool { return ev.Kind == serverlink.EventReconnected })
	assert.Equal(t, jb.Slot, bob.Slot())
	st := ann.waitRoom("Bob connected again", func(s protocol.RoomState) bool {
		return len(s.Players) == 2 && s.Players[1].Connected
	})
	assert.Equal(t, 0, st.Host)

	// Relaying works on the new connection.
	bob.waitSynced()
	ann.waitSynced()
	require.NoError(t, bob.SendState(state(1, 0)))
	got := waitStates(t, ann, 1)
	assert.Equal(t, uint8(jb.Slot), got[0].State.Slot)
	eventually(t, "reconnected analytics", func() (bool, bool) {
		for _, ev := range e.events.events(t) {
			if ev.Step == funnel.StepReconnected && ev.User == bob.User() {
				return true, ev.Via == protocol.ViaCode
			}
		}
		return false, false
	})
}

func TestReconnectAfterHold(t *testing.T) {
	e := newEnv(t, nil)
	p := newProxy(t, e.s.Addr().String())
	ann := e.dial("Ann", nil)
	bob := dialURL(t, p.url(), "Bob", &serverlink.Options{ReconnectFor: 5 * time.Second})
	j, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	_, err = bob.Join(ctxT(t), j.Code)
	require.NoError(t, err)

	p.cut(true) // Bob cannot get back in for a while
	ann.waitRoom("Bob held", func(s protocol.RoomState) bool { return len(s.Players) == 2 && !s.Players[1].Connected })
	ann.waitRoom("Bob's seat expires", func(s protocol.RoomState) bool { return len(s.Players) == 1 })
	p.allow()
	rj := waitMsg[*protocol.Joined](bob, "joined again", nil)
	assert.False(t, rj.Reconnected, "after the hold, a reconnect is a fresh join")
	bob.wait("reconnected", func(ev serverlink.Event) bool { return ev.Kind == serverlink.EventReconnected })

	// Alone in a room whose hold expires, the room is gone.
	solo := dialURL(t, p.url(), "Solo", &serverlink.Options{ReconnectFor: 5 * time.Second})
	_, err = solo.Create(ctxT(t), nil)
	require.NoError(t, err)
	p.cut(true)
	eventually(t, "solo room closes", func() (int, bool) { n := e.s.Health().Rooms; return n, n == 1 })
	p.allow()
	ev := solo.wait("room lost", func(ev serverlink.Event) bool { return ev.Kind == serverlink.EventRoomLost })
	assert.Equal(t, protocol.CodeRoomNotFound, protocol.CodeOf(ev.Err))
	assert.Equal(t, -1, solo.Slot())
}

func TestSecondSessionReplacesFirst(t *testing.T) {
	e := newEnv(t, nil)
	first := e.dial("Ann", nil)
	j, err := first.Create(ctxT(t), nil)
	require.NoError(t, err)
	second := e.dial("Ann", &serverlink.Options{Token: first.Token()})
	assert.Equal(t, first.User(), second.User(), "same token, same user")
	ev := first.wait("replaced", func(ev serverlink.Event) bool { return ev.Kind == serverlink.EventDisconnected })
	assert.Equal(t, protocol.CodeSessionReplaced, protocol.CloseCodeOf(ev.Err))
	rj, err := second.Join(ctxT(t), j.Code)
	require.NoError(t, err)
	assert.True(t, rj.Reconnected, "the new session takes over the seat")
	assert.Equal(t, 0, rj.Slot)
	assert.Equal(t, 1, e.s.Health().Rooms)
}

func TestBadTokenGetsNewIdentity(t *testing.T) {
	e := newEnv(t, nil)
	other := newEnv(t, nil) // another server: another secret
	ann := other.dial("Ann", nil)
	b := e.dial("Ann", &serverlink.Options{Token: ann.Token()})
	assert.NotEqual(t, ann.User(), b.User())
	assert.NotEqual(t, ann.Token(), b.Token())
}

func TestRoundFlowWithStuckPlayer(t *testing.T) {
	e := newEnv(t, nil)
	ann, bob, cid := e.dial("Ann", nil), e.dial("Bob", nil), e.dial("Cid", nil)
	j, err := ann.Create(ctxT(t), &protocol.Settings{RoundUS: protocol.US(2 * time.Second)})
	require.NoError(t, err)
	for _, b := range []*bot{bob, cid} {
		_, err := b.Join(ctxT(t), j.Code)
		require.NoError(t, err)
	}
	for _, b := range []*bot{ann, bob, cid} {
		require.NoError(t, b.Send(&protocol.Loading{Progress: 1}))
		require.NoError(t, b.Send(&protocol.Ready{Ready: true}))
	}
	ann.waitRoom("all ready", func(s protocol.RoomState) bool {
		n := 0
		for _, p := range s.Players {
			if p.Ready && p.Loaded == 1 {
				n++
			}
		}
		return n == 3
	})
	require.NoError(t, ann.Send(&protocol.Start{}))
	ann.waitRoom("handshake", func(s protocol.RoomState) bool { return s.Phase == protocol.PhaseHandshake })
	require.NoError(t, ann.Send(&protocol.InPosition{}))
	require.NoError(t, bob.Send(&protocol.InPosition{}))
	// Cid is stuck; the handshake times out and the countdown starts.
	waitMsg[*protocol.Notice](bob, "handshake timeout", func(n *protocol.Notice) bool {
		return n.Kind == protocol.NoticeHandshakeTimeout
	})
	st := bob.waitRoom("playing", func(s protocol.RoomState) bool { return s.Phase == protocol.PhasePlaying })
	assert.Positive(t, st.GoUS)
	require.NoError(t, bob.Send(&protocol.Finish{Score: 7}))
	require.NoError(t, cid.Leave(ctxT(t)))
	waitMsg[*protocol.Notice](ann, "time warning", func(n *protocol.Notice) bool { return n.Kind == protocol.NoticeTimeWarning })
	res := waitMsg[*protocol.Results](ann, "results", nil)
	require.Len(t, res.Players, 3)
	assert.Equal(t, bob.User(), res.Players[0].User)
	assert.Equal(t, 1, res.Players[0].Place)
	assert.Equal(t, protocol.StatusDNF, res.Players[1].Status, "Ann ran out of time")
	assert.Equal(t, protocol.StatusDNF, res.Players[2].Status, "Cid left mid-round")

	saved := eventually(t, "results saved", func() ([]protocol.Results, bool) {
		r, err := e.store.Results(context.Background(), j.Code, 5)
		return r, err == nil && len(r) == 1
	})
	assert.Equal(t, res.Players, saved[0].Players)
	ann.waitRoom("back in the lobby", func(s protocol.RoomState) bool { return s.Phase == protocol.PhaseLobby })

	steps := map[funnel.Step]bool{}
	eventually(t, "funnel", func() (map[funnel.Step]bool, bool) {
		for _, ev := range e.events.events(t) {
			if ev.User == bob.User() {
				steps[ev.Step] = true
			}
		}
		return steps, steps[funnel.StepBackInRoom]
	})
	for _, s := range []funnel.Step{funnel.StepRoomJoined, funnel.StepLoaded, funnel.StepReady,
		funnel.StepHandshakeDone, funnel.StepRoundStarted, funnel.StepRoundFinished, funnel.StepBackInRoom} {
		assert.True(t, steps[s], "Bob's funnel has %s", s)
	}
}

func TestFloodIsDisconnectedOthersUnaffected(t *testing.T) {
	e := newEnv(t, nil)
	ann, bob := e.dial("Ann", nil), e.dial("Bob", nil)
	j, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	_, err = bob.Join(ctxT(t), j.Code)
	require.NoError(t, err)
	// Another room carries on during the flood.
	cid, dan := e.dial("Cid", nil), e.dial("Dan", nil)
	j2, err := cid.Create(ctxT(t), nil)
	require.NoError(t, err)
	_, err = dan.Join(ctxT(t), j2.Code)
	require.NoError(t, err)

	for i := 1; i < 2000 && bob.Connected(); i++ {
		_ = bob.SendState(state(i, 0))
		if i%50 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	ev := bob.wait("kicked", func(ev serverlink.Event) bool { return ev.Kind == serverlink.EventDisconnected })
	assert.Equal(t, protocol.CodeRateLimited, protocol.CloseCodeOf(ev.Err), "%v", ev.Err)
	st := ann.waitRoom("Bob removed", func(s protocol.RoomState) bool { return len(s.Players) == 1 })
	assert.Equal(t, 0, st.Host)

	dan.waitSynced()
	cid.waitSynced()
	require.NoError(t, dan.SendState(state(1, 0)))
	waitStates(t, cid, 1)
	_, body := e.get("/metrics")
	assert.Contains(t, body, `nearzero_rejected_total{reason="rate"}`)
	assert.Contains(t, body, `nearzero_kicked_total{code="rate_limited"} 1`)
}

func TestImplausibleMotionIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	ann, bob := e.dial("Ann", nil), e.dial("Bob", nil)
	j, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	_, err = bob.Join(ctxT(t), j.Code)
	require.NoError(t, err)
	ann.waitSynced()
	bob.waitSynced()
	require.NoError(t, bob.SendState(state(1, 0)))
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, bob.SendState(state(2, 5000))) // teleport
	fast := state(3, 0)
	fast.Vel = geom.Vec3{X: 900}
	require.NoError(t, bob.SendState(fast))
	require.NoError(t, bob.SendState(state(4, 0.1)))
	e1 := waitMsg[*protocol.Error](bob, "told why", nil)
	assert.Equal(t, protocol.CodeImplausible, e1.Code)
	// One connection relays in order: had 2 or 3 been relayed, they would
	// come before 4. So the first two states tell, with no wait for more.
	got := waitStates(t, ann, 2)
	var seqs []wire.Seq
	for _, rs := range got[:2] {
		seqs = append(seqs, rs.State.Seq)
	}
	slices.Sort(seqs) // the datagram path may reorder them
	assert.Equal(t, []wire.Seq{1, 4}, seqs, "the teleport and the speeding state are not relayed")
	_, body := e.get("/metrics")
	assert.Contains(t, body, `nearzero_rejected_total{reason="teleport"} 1`)
	assert.Contains(t, body, `nearzero_rejected_total{reason="speed"} 1`)
}
