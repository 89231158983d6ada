package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// playing starts a round in a new room of the given bots.
func playing(t *testing.T, bots ...*bot) string {
	t.Helper()
	j, err := bots[0].Create(ctxT(t), nil)
	require.NoError(t, err)
	for _, b := range bots[1:] {
		_, err := b.Join(ctxT(t), j.Code)
		require.NoError(t, err)
	}
	for _, b := range bots {
		require.NoError(t, b.Send(&protocol.Loading{Progress: 1}))
		require.NoError(t, b.Send(&protocol.Ready{Ready: true}))
	}
	bots[0].waitRoom("all ready", func(s protocol.RoomState) bool {
		for _, p := range s.Players {
			if !p.Ready || p.Loaded < 1 {
				return false
			}
		}
		return len(s.Players) == len(bots)
	})
	require.NoError(t, bots[0].Send(&protocol.Start{}))
	bots[0].waitRoom("handshake", func(s protocol.RoomState) bool { return s.Phase == protocol.PhaseHandshake })
	for _, b := range bots {
		require.NoError(t, b.Send(&protocol.InPosition{}))
	}
	bots[0].waitRoom("playing", func(s protocol.RoomState) bool { return s.Phase == protocol.PhasePlaying })
	return j.Code
}

func health(t *testing.T, e *env) (int, Health) {
	t.Helper()
	code, body := e.get("/healthz")
	var h Health
	require.NoError(t, json.Unmarshal([]byte(body), &h), body)
	return code, h
}

func TestDrainLetsRoundsFinish(t *testing.T) {
	e := newEnv(t, nil)
	ann, bob := e.dial("Ann", nil), e.dial("Bob", nil)
	playing(t, ann, bob)
	idle := e.dial("Idle", nil)
	_, err := idle.Create(ctxT(t), nil)
	require.NoError(t, err)

	code, h := health(t, e)
	assert.Equal(t, 200, code)
	assert.Equal(t, "ready", h.State)
	assert.Equal(t, 2, h.Rooms)
	assert.Equal(t, 3, h.Players)

	drained := make(chan error, 1)
	go func() { drained <- e.s.Drain(ctxT(t)) }()
	n := waitMsg[*protocol.Notice](ann, "server updating", func(n *protocol.Notice) bool {
		return n.Kind == protocol.NoticeServerUpdating
	})
	assert.Positive(t, n.LeftUS)
	waitMsg[*protocol.Notice](idle, "idle room told too", func(n *protocol.Notice) bool {
		return n.Kind == protocol.NoticeServerUpdating
	})
	code, h = health(t, e)
	assert.Equal(t, 503, code, "load balancers stop sending players")
	assert.Equal(t, "draining", h.State)
	assert.InDelta(t, 5, h.GraceS, 0)
	assert.Positive(t, h.GraceLeftS)
	assert.LessOrEqual(t, h.GraceLeftS, h.GraceS)
	assert.Equal(t, 1, h.BusyRooms)

	late := e.dial("Late", nil)
	assert.True(t, late.Welcome().Draining)
	_, err = late.Create(ctxT(t), nil)
	assert.Equal(t, protocol.CodeDraining, protocol.CodeOf(err), "no new rooms")

	// The running round goes on: states still flow and the drain waits.
	ann.waitSynced()
	bob.waitSynced()
	require.NoError(t, ann.SendState(state(1, 0)))
	waitStates(t, bob, 1)
	select {
	case err := <-drained:
		t.Fatalf("drain ended while a round runs: %v", err)
	default:
	}
	assert.True(t, idle.Connected(), "nobody is closed while a round runs")

	require.NoError(t, ann.Send(&protocol.Finish{}))
	require.NoError(t, bob.Send(&protocol.Finish{}))
	waitMsg[*protocol.Results](ann, "results", nil)
	for _, b := range []*bot{ann, bob, idle, late} {
		ev := b.wait("going away", func(ev serverlink.Event) bool {
			return ev.Kind == serverlink.EventReconnecting || ev.Kind == serverlink.EventDisconnected
		})
		assert.Equal(t, protocol.CodeGoingAway, protocol.CloseCodeOf(ev.Err), "%s: %v", b.name, ev.Err)
	}
	select {
	case err := <-drained:
		require.NoError(t, err)
	case <-time.After(waitFor):
		t.Fatal("drain did not end")
	}
}

func TestDrainGraceEnds(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.DrainGrace = 300 * time.Millisecond; c.CloseSpread = 10 * time.Millisecond })
	ann := e.dial("Ann", &serverlink.Options{NoReconnect: true})
	playing(t, ann)
	require.NoError(t, e.s.Drain(ctxT(t)), "the grace runs out even though a round runs")
	ev := ann.wait("closed", func(ev serverlink.Event) bool { return ev.Kind == serverlink.EventDisconnected })
	assert.Equal(t, protocol.CodeGoingAway, protocol.CloseCodeOf(ev.Err))
	_, h := health(t, e)
	assert.Equal(t, "draining", h.State)
	assert.Zero(t, h.GraceLeftS)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, e.s.Shutdown(ctx))
	require.NoError(t, e.s.Shutdown(ctx), "a second shutdown is a no-op")
	assert.ErrorIs(t, e.s.Drain(ctx), ErrClosed)
}

func TestHealthMetricsAndPages(t *testing.T) {
	e := newEnv(t, nil)
	ann := e.dial("Ann", nil)
	_, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)
	_, h := health(t, e)
	assert.Equal(t, 1, h.Rooms)
	assert.Equal(t, 1, h.Players)
	assert.Equal(t, 1, h.Connections)
	assert.NotEmpty(t, h.Go)

	code, body := e.get("/metrics")
	assert.Equal(t, 200, code)
	for _, name := range []string{"nearzero_rooms 1", "nearzero_players 1", "nearzero_connections 1",
		"nearzero_states_in_total", "nearzero_states_relayed_total", "nearzero_rejected_total",
		`nearzero_room_phase{phase="lobby"} 1`, "nearzero_build_info", "nearzero_restamp_age_seconds"} {
		assert.Contains(t, body, name)
	}
	code, body = e.get("/")
	assert.Equal(t, 200, code)
	assert.Contains(t, body, "/ws")

	require.NoError(t, ann.Leave(ctxT(t)))
	eventually(t, "the empty room closes", func() (int, bool) { n := e.s.Health().Rooms; return n, n == 0 })
	_, body = e.get("/metrics")
	assert.Contains(t, body, "nearzero_rooms 0")
	assert.Contains(t, body, "nearzero_players 0")
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"defaults", Config{}, ""},
		{"spread over grace", Config{DrainGrace: time.Second, CloseSpread: 2 * time.Second}, "CloseSpread 2s longer than DrainGrace 1s"},
		{"tiny messages", Config{MaxMessage: 10}, "MaxMessage 10"},
		{"bad room", Config{Room: roomCfg(func(c *roomConfig) { c.MaxPlayers = 999 })}, "Room: room: invalid config: MaxPlayers 999"},
		{"bad proxy", Config{TrustedProxies: []string{"10.0.0.0/8", "proxy"}}, `TrustedProxies: trusted proxy "proxy"`},
		{"no idle time-out", Config{IdleTimeout: -time.Second}, "IdleTimeout -1s"},
		{"zero burst", Config{JoinFailBurst: -1}, "JoinFailBurst -1"},
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
}

// A second SIGTERM cuts the drain short: the round that was running must
// be on record as interrupted, with the players who were in it.
func TestForcedStopRecordsInterruptedRound(t *testing.T) {
	e := newEnv(t, nil)
	ann, bob := e.dial("Ann", nil), e.dial("Bob", nil)
	code := playing(t, ann, bob)
	lobby := e.dial("Cid", nil)
	_, err := lobby.Create(ctxT(t), nil)
	require.NoError(t, err)

	ctx, secondSignal := context.WithCancel(context.Background())
	drained := make(chan error, 1)
	go func() { drained <- e.s.Drain(ctx) }()
	waitMsg[*protocol.Notice](ann, "server updating", func(n *protocol.Notice) bool {
		return n.Kind == protocol.NoticeServerUpdating
	})
	secondSignal()
	require.ErrorIs(t, <-drained, context.Canceled)
	require.NoError(t, e.s.Shutdown(ctxT(t)))

	rounds, err := e.store.Rounds(ctxT(t), code, 5)
	require.NoError(t, err)
	require.Len(t, rounds, 1, "the interrupted round is on record")
	r := rounds[0]
	assert.True(t, r.Interrupted)
	assert.Equal(t, 1, r.Round)
	assert.Positive(t, r.StartUS)
	assert.GreaterOrEqual(t, r.EndUS, r.StartUS)
	var users []string
	for _, p := range r.Players {
		users = append(users, p.User)
		assert.Equal(t, protocol.StatusDNF, p.Status)
	}
	assert.ElementsMatch(t, []string{ann.User(), bob.User()}, users)
	lobbyRounds, err := e.store.Rounds(ctxT(t), lobby.Room().Code, 5)
	require.NoError(t, err)
	assert.Empty(t, lobbyRounds, "a room in its lobby had no round to interrupt")
}
