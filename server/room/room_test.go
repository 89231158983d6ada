package room

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/funnel"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for valid
	}{
		{"zero is defaults", Config{}, ""},
		{"too many players", Config{MaxPlayers: MaxSlots + 1}, "MaxPlayers 33"},
		{"min above max", Config{MaxPlayers: 2, MinPlayers: 3}, "MinPlayers 3"},
		{"round limits crossed", Config{MinRoundLimit: time.Hour, MaxRoundLimit: time.Minute}, "MinRoundLimit 1h0m0s above MaxRoundLimit 1m0s"},
		{"warning not below min round", Config{TimeWarning: 40 * time.Second}, "TimeWarning 40s not below MinRoundLimit 30s"},
		{"rate factor below 1", Config{RateFactor: 0.5}, "RateFactor 0.5"},
		{"negative hold", Config{SeatHold: -time.Second}, "SeatHold -1s"},
		{"negative empty hold", Config{EmptyHold: -time.Second}, "EmptyHold -1s"},
		{"negative world bounds", Config{Limits: motion.Limits{WorldBounds2D: -1}}, "WorldBounds2D -1"},
		{"signal burst below one signal", Config{SignalBytesBurst: 100}, "SignalBytesBurst 100"},
		{"negative kick ban", Config{KickBan: -time.Minute}, "KickBan -1m0s"},
		{"invite base too long", Config{InviteBase: strings.Repeat("x", MaxInviteBase+1)}, "InviteBase is 257 bytes"},
		{"teleport budget below one", Config{Limits: motion.Limits{TeleportsPerMinute: 0.5}}, "TeleportsPerMinute 0.5"},
		{"negative slack refill", Config{Limits: motion.Limits{MoveSlackRefill: -time.Second}}, "MoveSlackRefill -1s"},
		{"negative claim window", Config{Entities: EntityLimits{ClaimAfterTeleport: -time.Second}}, "ClaimAfterTeleport -1s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrInvalidConfig)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err := New("ABCDEF", &Config{MaxPlayers: -1}, nil, 0)
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

func TestJoinHostAndLeave(t *testing.T) {
	h := newHarness(t, testConfig())
	a, slotA := h.join("a")
	h.now += time.Second
	b, slotB := h.join("b")
	assert.Equal(t, 0, slotA)
	assert.Equal(t, 1, slotB)

	joined := ofType[*protocol.Joined](msgs(b))
	require.Len(t, joined, 1)
	assert.Equal(t, "ABCDEF", joined[0].Code)
	assert.Equal(t, "nearzero://join/ABCDEF", joined[0].Invite)
	assert.Equal(t, 0, joined[0].Room.Host, "the first player in is the host")
	assert.Len(t, joined[0].Room.Players, 2)

	st, ok := lastRoom(msgs(a))
	require.True(t, ok, "a hears of b")
	assert.Len(t, st.Players, 2)

	require.True(t, h.r.Leave(h.now, a))
	assert.Equal(t, 1, h.r.Host(), "the host moves at once when the host leaves")
	assert.NotEmpty(t, ofType[*protocol.Left](msgs(a)))
	h.settle()
	st, _ = lastRoom(msgs(b))
	assert.Equal(t, 1, st.Host)
	assert.Len(t, st.Players, 1)
	assert.False(t, h.r.Leave(h.now, a), "a second leave is a no-op")

	h.r.Leave(h.now, b)
	assert.True(t, h.r.Closed(), "an empty room closes")
	_, err := h.r.Join(h.now, &MemPeer{}, Member{User: "c"})
	assert.Equal(t, protocol.CodeRoomNotFound, protocol.CodeOf(err))
	assert.Equal(t, []funnel.Step{funnel.StepRoomJoined, funnel.StepLeft}, h.stepsOf("a"))
}

func TestJoinRefusals(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPlayers = 2
	h := newHarness(t, cfg)
	a, _ := h.join("a")
	h.join("b")
	_, err := h.r.Join(h.now, &MemPeer{}, Member{User: "c"})
	assert.Equal(t, protocol.CodeRoomFull, protocol.CodeOf(err))
	_, err = h.r.Join(h.now, a, Member{User: "a2"})
	assert.Equal(t, protocol.CodeAlreadyInRoom, protocol.CodeOf(err))
}

func TestReconnectWithinHold(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	h.now += time.Second
	b, slotB := h.join("b")
	h.r.Disconnect(h.now, b)
	h.settle()
	st, _ := lastRoom(msgs(a))
	require.Len(t, st.Players, 2, "the seat is held")
	assert.False(t, st.Players[1].Connected)

	h.advance(19 * time.Second)
	b2 := &MemPeer{}
	slot, err := h.r.Join(h.now, b2, Member{User: "b", Via: protocol.ViaReconnect})
	require.NoError(t, err)
	assert.Equal(t, slotB, slot, "the client keeps its slot through the reconnect")
	joined := ofType[*protocol.Joined](msgs(b2))
	require.Len(t, joined, 1)
	assert.True(t, joined[0].Reconnected)
	assert.Contains(t, h.stepsOf("b"), funnel.StepReconnected)
	h.advance(time.Minute)
	assert.Equal(t, 2, h.r.Players(), "a reconnected seat is no longer on a timer")
}

func TestSeatHoldExpiryMovesHost(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	h.now += time.Second
	b, _ := h.join("b")
	h.r.Disconnect(h.now, a)
	held := h.now
	assert.Equal(t, 0, h.r.Host(), "a held host stays host")
	h.settle()
	at, ok := h.r.Next()
	require.True(t, ok)
	assert.Equal(t, held+20*time.Second, at, "the room asks to be ticked when the hold runs out")
	h.advance(at - h.now)
	assert.Equal(t, 1, h.r.Host(), "the host moves when their held seat expires")
	st, _ := lastRoom(msgs(b))
	assert.Len(t, st.Players, 1)

	// Coming back after the hold is a fresh join.
	a2 := &MemPeer{}
	_, err := h.r.Join(h.now, a2, Member{User: "a"})
	require.NoError(t, err)
	joined := ofType[*protocol.Joined](msgs(a2))
	require.Len(t, joined, 1)
	assert.False(t, joined[0].Reconnected)
	assert.Equal(t, 1, joined[0].Room.Host)
}

func TestSecondSessionReplacesFirst(t *testing.T) {
	h := newHarness(t, testConfig())
	a1, slot := h.join("a")
	b, _ := h.join("b")
	a2 := &MemPeer{}
	slot2, err := h.r.Join(h.now, a2, Member{User: "a"})
	require.NoError(t, err)
	assert.Equal(t, slot, slot2)
	assert.True(t, a1.Closed)
	assert.Equal(t, protocol.CodeSessionReplaced, a1.CloseCode)

	// The old connection's late frames and disconnect change nothing.
	b.Take()
	h.r.HandleFrame(h.now, a1, protocol.MustMarshal(&protocol.SetName{Name: "ghost"}))
	h.r.Disconnect(h.now, a1)
	assert.Empty(t, msgs(b))
	assert.Equal(t, 2, h.r.Connected())
	assert.Equal(t, slot, h.r.SlotOf(a2))
	assert.Equal(t, -1, h.r.SlotOf(a1))
}

func TestRoundFlowWithStuckPlayer(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	h.now += time.Millisecond
	b, _ := h.join("b")
	h.now += time.Millisecond
	c, _ := h.join("c")

	h.send(b, &protocol.Start{})
	assert.Equal(t, protocol.CodeNotHost, errorsIn(msgs(b))[0].Code)
	h.send(a, &protocol.Start{})
	errs := errorsIn(msgs(a))
	require.Len(t, errs, 1)
	assert.Equal(t, protocol.CodeNotReady, errs[0].Code)
	assert.Equal(t, protocol.TypeStart, errs[0].Request)

	h.readyAll(a, b)
	h.send(c, &protocol.Loading{Progress: 0.5})
	h.send(c, &protocol.Ready{Ready: true})
	h.send(a, &protocol.Start{})
	assert.Equal(t, protocol.CodeNotReady, errorsIn(msgs(a))[0].Code, "c is ready but not loaded")
	h.send(c, &protocol.Loading{Progress: 1})
	h.send(a, &protocol.Start{})
	require.Equal(t, protocol.PhaseHandshake, h.r.Phase())
	start := h.now

	// a and b are in position; c is stuck. The handshake times out.
	h.send(a, &protocol.InPosition{})
	h.send(b, &protocol.InPosition{})
	h.advance(9 * time.Second)
	assert.Equal(t, protocol.PhaseHandshake, h.r.Phase(), "waits for c until the time-out")
	h.advance(time.Second)
	require.Equal(t, protocol.PhaseCountdown, h.r.Phase(), "a stuck player does not block everyone")
	notices := ofType[*protocol.Notice](msgs(a))
	require.NotEmpty(t, notices)
	assert.Equal(t, protocol.NoticeHandshakeTimeout, notices[0].Kind)
	st := h.r.Snapshot()
	goAt := start + 10*time.Second + 3*time.Second
	assert.Equal(t, protocol.US(goAt), st.GoUS, "go is on the server clock")

	h.advance(3 * time.Second)
	require.Equal(t, protocol.PhasePlaying, h.r.Phase())
	assert.Equal(t, protocol.US(goAt+60*time.Second), h.r.Snapshot().DeadlineUS)

	// b finishes first, then c; a leaves mid-round.
	h.advance(20 * time.Second)
	h.send(b, &protocol.Finish{Score: 3})
	h.advance(5 * time.Second)
	h.send(c, &protocol.Finish{Score: 1})
	assert.Equal(t, protocol.PhasePlaying, h.r.Phase(), "a has not finished")
	h.send(a, &protocol.Leave{})
	require.Equal(t, protocol.PhaseResults, h.r.Phase(), "the round ends once everyone finished or left")

	require.Len(t, h.results, 1)
	res := h.results[0]
	assert.Equal(t, 1, res.Round)
	assert.False(t, res.Aborted)
	require.Len(t, res.Players, 3)
	assert.Equal(t, "b", res.Players[0].User)
	assert.Equal(t, 1, res.Players[0].Place)
	assert.Equal(t, protocol.US(20*time.Second), res.Players[0].TimeUS)
	assert.InDelta(t, 3, res.Players[0].Score, 0)
	assert.Equal(t, "c", res.Players[1].User)
	assert.Equal(t, 2, res.Players[1].Place)
	assert.Equal(t, "a", res.Players[2].User)
	assert.Equal(t, protocol.StatusDNF, res.Players[2].Status, "leaving mid-round is a did-not-finish")
	got := ofType[*protocol.Results](msgs(b))
	require.Len(t, got, 1)
	assert.Equal(t, res, got[0])

	h.advance(8 * time.Second)
	require.Equal(t, protocol.PhaseLobby, h.r.Phase())
	for _, p := range h.r.Snapshot().Players {
		assert.False(t, p.Ready, "ready clears in the lobby")
		assert.False(t, p.Participant)
	}
	assert.Equal(t, []funnel.Step{funnel.StepRoomJoined, funnel.StepLoaded, funnel.StepReady,
		funnel.StepHandshakeDone, funnel.StepRoundStarted, funnel.StepRoundFinished, funnel.StepBackInRoom},
		h.stepsOf("b"))
	assert.Contains(t, h.stepsOf("a"), funnel.StepStartClicked)
	assert.NotContains(t, h.stepsOf("c"), funnel.StepHandshakeDone)
	assert.Equal(t, 1, h.metrics.phases[protocol.PhaseResults])
}

func TestHandshakeEndsWhenAllInPosition(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.readyAll(a, b)
	h.send(a, &protocol.Start{})
	h.send(a, &protocol.InPosition{})
	h.r.Disconnect(h.now, b)
	assert.Equal(t, protocol.PhaseCountdown, h.r.Phase(), "a disconnected player does not hold up the handshake")
	assert.Equal(t, protocol.CodeWrongPhase, func() protocol.Code {
		h.send(a, &protocol.InPosition{})
		return errorsIn(msgs(a))[0].Code
	}())
}

func TestTimeLimitAndWarning(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	h.send(a, &protocol.Settings{RoundUS: protocol.US(30 * time.Second)})
	h.startRound(a)
	a.Take()
	h.advance(24 * time.Second)
	assert.Empty(t, ofType[*protocol.Notice](msgs(a)))
	h.advance(time.Second)
	n := ofType[*protocol.Notice](msgs(a))
	require.Len(t, n, 1, "warned when near the limit")
	assert.Equal(t, protocol.NoticeTimeWarning, n[0].Kind)
	assert.Equal(t, protocol.US(5*time.Second), n[0].LeftUS)
	h.advance(5 * time.Second)
	require.Equal(t, protocol.PhaseResults, h.r.Phase())
	require.Len(t, h.results, 1)
	assert.Equal(t, protocol.StatusDNF, h.results[0].Players[0].Status, "out of time")
	assert.Equal(t, protocol.US(30*time.Second), h.results[0].RoundUS)
}

func TestDisconnectedParticipantHoldsRoundUntilExpiry(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.startRound(a, b)
	h.send(a, &protocol.Finish{})
	h.r.Disconnect(h.now, b)
	h.advance(19 * time.Second)
	assert.Equal(t, protocol.PhasePlaying, h.r.Phase(), "b may still come back")
	h.advance(time.Second)
	require.Equal(t, protocol.PhaseResults, h.r.Phase())
	assert.Equal(t, protocol.StatusDNF, h.results[0].Players[1].Status)
}

func TestRestartVote(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.send(a, &protocol.Vote{Restart: true})
	assert.Equal(t, protocol.CodeWrongPhase, errorsIn(msgs(a))[0].Code, "no restart vote in the lobby")
	h.startRound(a, b)
	h.send(a, &protocol.Finish{})
	h.send(b, &protocol.Finish{})
	require.Equal(t, protocol.PhaseResults, h.r.Phase())

	h.send(a, &protocol.Vote{Restart: true})
	assert.Equal(t, protocol.PhaseResults, h.r.Phase(), "needs every connected player")
	c, _ := h.join("c") // a spectator joins: they must vote too
	h.send(b, &protocol.Vote{Restart: true})
	assert.Equal(t, protocol.PhaseResults, h.r.Phase())
	h.send(c, &protocol.Vote{Restart: true})
	require.Equal(t, protocol.PhaseHandshake, h.r.Phase(), "all voted: a new round starts")
	assert.Equal(t, 2, h.r.Round())
	assert.Len(t, h.r.entrants, 3)

	// Mid-round restart ends the round as aborted.
	for _, p := range []*MemPeer{a, b, c} {
		h.send(p, &protocol.InPosition{})
	}
	h.advance(3 * time.Second)
	require.Equal(t, protocol.PhasePlaying, h.r.Phase())
	h.r.Disconnect(h.now, c)
	h.send(a, &protocol.Vote{Restart: true})
	h.send(b, &protocol.Vote{Restart: true})
	require.Equal(t, protocol.PhaseHandshake, h.r.Phase(), "every connected player voted")
	require.Len(t, h.results, 2)
	assert.True(t, h.results[1].Aborted)
	assert.Len(t, h.r.entrants, 2, "only connected players take part")
	assert.Equal(t, 2, countSteps(h.stepsOf("a"), funnel.StepRestartVote), "one restart vote event per round")
}

func countSteps(steps []funnel.Step, s funnel.Step) int {
	n := 0
	for _, x := range steps {
		if x == s {
			n++
		}
	}
	return n
}

func TestDrain(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.readyAll(a, b)
	h.send(a, &protocol.Start{})
	h.r.Drain(h.now, time.Minute)
	n := ofType[*protocol.Notice](msgs(b))
	require.Len(t, n, 1)
	assert.Equal(t, protocol.NoticeServerUpdating, n[0].Kind)
	assert.Equal(t, protocol.US(time.Minute), n[0].LeftUS)
	assert.True(t, h.r.Snapshot().Draining)
	assert.True(t, h.r.Busy(), "the running round goes on")

	h.send(a, &protocol.InPosition{})
	h.send(b, &protocol.InPosition{})
	h.advance(3 * time.Second)
	h.send(a, &protocol.Finish{})
	h.send(b, &protocol.Finish{})
	require.Equal(t, protocol.PhaseResults, h.r.Phase())
	assert.False(t, h.r.Busy())
	h.send(a, &protocol.Vote{Restart: true})
	assert.Equal(t, protocol.CodeDraining, errorsIn(msgs(a))[0].Code, "no restart while draining")
	h.advance(8 * time.Second)
	h.readyAll(a, b)
	h.send(a, &protocol.Start{})
	assert.Equal(t, protocol.CodeDraining, errorsIn(msgs(a))[0].Code, "no new round while draining")

	h.r.Close(protocol.CodeGoingAway, "server updating")
	assert.True(t, a.Closed)
	assert.Equal(t, protocol.CodeGoingAway, a.CloseCode)
	assert.True(t, h.r.Closed())
}

func TestSettings(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.readyAll(a, b)
	h.send(b, &protocol.Settings{RoundUS: protocol.US(time.Minute)})
	assert.Equal(t, protocol.CodeNotHost, errorsIn(msgs(b))[0].Code)
	h.send(a, &protocol.Settings{RoundUS: protocol.US(time.Second)})
	assert.Equal(t, protocol.CodeBadRequest, errorsIn(msgs(a))[0].Code, "below MinRoundLimit")
	h.send(a, &protocol.Settings{RoundUS: protocol.US(2 * time.Minute), Game: []byte(`{"track":"hills"}`)})
	h.settle()
	st, _ := lastRoom(msgs(b))
	assert.Equal(t, protocol.US(2*time.Minute), st.Settings.RoundUS)
	assert.JSONEq(t, `{"track":"hills"}`, string(st.Settings.Game))
	for _, p := range st.Players {
		assert.False(t, p.Ready, "new settings clear ready")
	}
}

func TestNamesPingSignalInvite(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, slotB := h.join("b")

	h.send(a, &protocol.SetName{Name: "  Ann   Lee "})
	assert.Equal(t, "Ann Lee", h.renames["a"])
	h.settle()
	st, _ := lastRoom(msgs(b))
	assert.Equal(t, "Ann Lee", st.Players[0].Name)
	h.send(a, &protocol.SetName{Name: "\u202E\u200B"})
	assert.Equal(t, protocol.CodeBadName, errorsIn(msgs(a))[0].Code)

	h.now += 5 * time.Millisecond
	h.send(a, &protocol.Ping{TUS: 77, RTTUS: 30_000})
	pong := ofType[*protocol.Pong](msgs(a))
	require.Len(t, pong, 1)
	assert.Equal(t, int64(77), pong[0].TUS)
	assert.Equal(t, protocol.US(h.now), pong[0].ServerUS)

	h.send(a, &protocol.Signal{To: slotB, Kind: protocol.SignalOffer, Data: "sdp"})
	sig := ofType[*protocol.Signal](msgs(b))
	require.Len(t, sig, 1)
	assert.Equal(t, protocol.Signal{To: slotB, From: 0, Kind: protocol.SignalOffer, Data: "sdp"}, *sig[0])
	h.send(a, &protocol.Signal{To: 3, Kind: protocol.SignalOffer})
	assert.Equal(t, protocol.CodeBadRequest, errorsIn(msgs(a))[0].Code)

	h.send(a, &protocol.Invite{Channel: "copy"})
	h.send(a, &protocol.Invite{Channel: "copy"})
	assert.Equal(t, 1, countSteps(h.stepsOf("a"), funnel.StepInviteShared))

	for i := 0; i < 5; i++ {
		h.send(a, &protocol.Ready{Ready: i%2 == 0})
	}
	assert.Equal(t, 1, countSteps(h.stepsOf("a"), funnel.StepReady), "one event per player per step")

	h.send(a, &protocol.Join{Code: "ABCDEF"})
	assert.Equal(t, protocol.CodeAlreadyInRoom, errorsIn(msgs(a))[0].Code)
	h.send(a, &protocol.Welcome{})
	assert.Equal(t, protocol.CodeBadRequest, errorsIn(msgs(a))[0].Code)
	for _, e := range h.events {
		assert.Equal(t, "ABCDEF", e.Room)
		assert.Positive(t, e.Players)
		assert.NotEmpty(t, e.Phase)
	}
}

func TestErrorsAreProtocolErrors(t *testing.T) {
	h := newHarness(t, &Config{MaxPlayers: 1})
	h.join("a")
	_, err := h.r.Join(h.now, &MemPeer{}, Member{User: "b"})
	var pe *protocol.Error
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, "room_full", pe.Name)
}

// TestRoomWithoutPeopleExpires replays the empty-room attack: create a room
// and drop the connection, again and again. A room whose every seat is only
// held closes after EmptyHold, not after the longer SeatHold; a room with
// anyone connected keeps its held seats for the full SeatHold.
func TestRoomWithoutPeopleExpires(t *testing.T) {
	t.Run("creator drops", func(t *testing.T) {
		h := newHarness(t, testConfig())
		a, _ := h.join("a")
		h.r.Disconnect(h.now, a)
		at, ok := h.r.Next()
		require.True(t, ok)
		assert.Equal(t, h.now+DefaultEmptyHold, at, "the room asks to be ticked when the empty hold runs out")
		h.advance(DefaultEmptyHold - time.Millisecond)
		assert.False(t, h.r.Closed(), "a quick reconnect still finds the room")
		h.advance(time.Millisecond)
		assert.True(t, h.r.Closed(), "nobody connected for EmptyHold: the room closes")
	})
	t.Run("reconnect in time keeps it", func(t *testing.T) {
		h := newHarness(t, testConfig())
		a, _ := h.join("a")
		h.r.Disconnect(h.now, a)
		h.advance(DefaultEmptyHold / 2)
		_, err := h.r.Join(h.now, &MemPeer{}, Member{User: "a"})
		require.NoError(t, err)
		h.advance(time.Minute)
		assert.False(t, h.r.Closed())
	})
	t.Run("last connected player leaves, others held", func(t *testing.T) {
		cfg := testConfig()
		cfg.EmptyHold = 2 * time.Second
		h := newHarness(t, cfg)
		a, _ := h.join("a")
		b, _ := h.join("b")
		c, _ := h.join("c")
		h.r.Disconnect(h.now, a)
		h.r.Disconnect(h.now, b)
		h.advance(10 * time.Second)
		assert.Equal(t, 3, h.r.Players(), "someone is connected: held seats keep the full SeatHold")
		h.r.Leave(h.now, c)
		h.advance(2 * time.Second)
		assert.True(t, h.r.Closed(), "only held seats left: closed after EmptyHold")
	})
	t.Run("mid-round the results are still recorded", func(t *testing.T) {
		h := newHarness(t, testConfig())
		a, _ := h.join("a")
		h.startRound(a)
		h.r.Disconnect(h.now, a)
		h.advance(DefaultEmptyHold)
		assert.True(t, h.r.Closed())
		require.Len(t, h.results, 1, "the round ends with results")
		assert.Equal(t, protocol.StatusDNF, h.results[0].Players[0].Status)
	})
}

// TestHostKick is the answer to a griefer who joins and never readies,
// blocking every start: the host removes them, and they may not come back
// for KickBan.
func TestHostKick(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, _ := h.join("b")
	g, slotG := h.join("griefer")
	h.readyAll(a, b)
	h.send(g, &protocol.Loading{Progress: 1}) // loaded, never ready
	h.send(a, &protocol.Start{})
	require.Equal(t, protocol.CodeNotReady, errorsIn(msgs(a))[0].Code, "the griefer blocks the start")

	refusals := []struct {
		name string
		from *MemPeer
		slot int
		code protocol.Code
	}{
		{"not the host", b, slotG, protocol.CodeNotHost},
		{"yourself", a, 0, protocol.CodeBadRequest},
		{"empty slot", a, 3, protocol.CodeBadRequest},
		{"out of range", a, 99, protocol.CodeBadRequest},
	}
	for _, tc := range refusals {
		h.send(tc.from, &protocol.Kick{Slot: tc.slot})
		errs := errorsIn(msgs(tc.from))
		require.Len(t, errs, 1, tc.name)
		assert.Equal(t, tc.code, errs[0].Code, tc.name)
		assert.Equal(t, protocol.TypeKick, errs[0].Request, tc.name)
	}
	require.Equal(t, 3, h.r.Players())

	h.send(a, &protocol.Kick{Slot: slotG})
	assert.True(t, g.Closed)
	assert.Equal(t, protocol.CodeKicked, g.CloseCode)
	assert.Equal(t, protocol.CodeKicked, errorsIn(msgs(g))[0].Code, "the griefer hears why")
	assert.Equal(t, 2, h.r.Players())
	assert.Equal(t, 1, h.metrics.kicked[protocol.CodeKicked])
	h.settle()
	st, _ := lastRoom(msgs(b))
	assert.Len(t, st.Players, 2, "the others see the seat freed")

	_, err := h.r.Join(h.now, &MemPeer{}, Member{User: "griefer"})
	assert.Equal(t, protocol.CodeKicked, protocol.CodeOf(err), "no rejoining at once")
	h.send(a, &protocol.Start{})
	assert.Equal(t, protocol.PhaseHandshake, h.r.Phase(), "the round starts without the griefer")

	h.send(a, &protocol.Kick{Slot: 1})
	assert.Equal(t, protocol.CodeWrongPhase, errorsIn(msgs(a))[0].Code, "no kicks during a round")
	assert.False(t, b.Closed)

	h.advance(DefaultKickBan)
	_, err = h.r.Join(h.now, &MemPeer{}, Member{User: "griefer"})
	assert.NoError(t, err, "after KickBan they may come back")
}

// TestHostKicksHeldSeat checks that the host can free a seat held for a
// player who dropped, without waiting out the seat hold.
func TestHostKicksHeldSeat(t *testing.T) {
	h := newHarness(t, testConfig())
	a, _ := h.join("a")
	b, slotB := h.join("b")
	h.r.Disconnect(h.now, b)
	h.send(a, &protocol.Kick{Slot: slotB})
	assert.Equal(t, 1, h.r.Players())
	assert.Empty(t, errorsIn(msgs(a)))
}
