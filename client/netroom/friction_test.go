package netroom

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// The friction a second ported game met (issue 33), at the model: what a
// signal handler reads back, leaving outside a room, connection errors
// apart from room errors, messages without package prefixes.

// viewsOf returns the Views of the events of kind k.
func viewsOf(evs []Event, k EventKind) []View {
	var out []View
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e.View)
		}
	}
	return out
}

func TestSignalViews(t *testing.T) {
	t.Run("the host leaves", func(t *testing.T) {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Join("ABCDEF"))
		h.until(has(EventConnected))
		h.link.Msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob")))
		h.until(has(EventJoined))

		// One room state: Ann gone, Bob host. Both land in one Update.
		st := protocol.RoomState{Code: "ABCDEF", Rev: 2, Phase: protocol.PhaseLobby, Host: 1, Players: []protocol.PlayerState{player(1, "Bob")}}
		h.link.Msg(&st)
		evs := h.update()
		left, changed := viewsOf(evs, EventPlayerLeft), viewsOf(evs, EventHostChanged)
		require.Len(t, left, 1)
		require.Len(t, changed, 1)
		assert.Equal(t, 0, left[0].Host, "player_left of the host: the host is still the one leaving")
		assert.Equal(t, 1, changed[0].Host, "host_changed: the new host")
		assert.Less(t, indexOf(evs, EventPlayerLeft), indexOf(evs, EventHostChanged), "player_left first")
		assert.Equal(t, 1, h.room.Host(), "after the frame: the live state")

		// The node shows an event's View to its handlers.
		h.room.SetView(left[0])
		assert.Equal(t, 0, h.room.Host())
		assert.Equal(t, 1, h.room.Slot())
		h.room.ClearView()
		assert.Equal(t, 1, h.room.Host())
	})
	t.Run("a kick in the frame of the join", func(t *testing.T) {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Join("ABCDEF"))
		h.until(has(EventConnected))
		h.link.Msg(joinedAs("ABCDEF", 2, 0, player(0, "Ann"), player(2, "Cy")))
		h.link.Msg(protocol.Errorf(protocol.CodeKicked, "the host removed you"))
		h.link.Msg(&protocol.Left{})
		evs := h.update()
		joined, pj, left := viewsOf(evs, EventJoined), viewsOf(evs, EventPlayerJoined), viewsOf(evs, EventLeft)
		require.Len(t, joined, 1)
		require.Len(t, left, 1)
		assert.Equal(t, 2, joined[0].Slot, "room_joined sees its own slot, not the -1 of the kick after")
		assert.Equal(t, 0, joined[0].Host, "and the host the join brought (the racer's is_host() in room_joined)")
		assert.True(t, joined[0].InRoom)
		assert.Equal(t, "ABCDEF", joined[0].Code)
		for _, v := range pj {
			assert.Equal(t, 2, v.Slot, "player_joined sees our slot")
		}
		assert.Equal(t, -1, left[0].Slot, "room_left: out of the room")
		assert.False(t, left[0].InRoom)
		assert.Equal(t, -1, h.room.Slot())
	})
	t.Run("phase changes with its signal", func(t *testing.T) {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Create())
		h.until(has(EventConnected))
		h.link.Msg(joinedAs("ABCDEF", 0, 0, player(0, "Ann")))
		h.until(has(EventJoined))
		st := h.room.State()
		st.Rev, st.Phase = st.Rev+1, protocol.PhaseHandshake
		st.Players = []protocol.PlayerState{player(0, "Ann"), player(1, "Bob")}
		h.link.Msg(&st)
		evs := h.update()
		assert.Equal(t, protocol.PhaseLobby, viewsOf(evs, EventPlayerJoined)[0].Phase, "the join came before the phase change")
		assert.Equal(t, protocol.PhaseHandshake, viewsOf(evs, EventPhaseChanged)[0].Phase)
	})
}

func indexOf(evs []Event, k EventKind) int {
	for i, e := range evs {
		if e.Kind == k {
			return i
		}
	}
	return -1
}

func TestLeaveOutsideARoom(t *testing.T) {
	t.Run("disconnected", func(t *testing.T) {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Leave(), "nothing to leave: not an error")
		assert.Empty(t, h.update())
	})
	t.Run("connected, in no room", func(t *testing.T) {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Connect())
		h.until(has(EventConnected))
		require.NoError(t, h.room.Leave())
		assert.Empty(t, eventsOf(h.update(), EventError))
		assert.Zero(t, h.link.Leaves(), "nothing sent")
	})
	t.Run("a create waiting for the connection is dropped", func(t *testing.T) {
		h := newHarness(t, Config{})
		require.NoError(t, h.room.Create())
		require.NoError(t, h.room.Leave())
		evs := h.until(has(EventConnected))
		assert.Empty(t, eventsOf(evs, EventError))
		h.update()
		assert.Zero(t, h.link.Creates(), "the create was never sent")
	})
}

func TestConnErrorOf(t *testing.T) {
	refused := func() error {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		c, err := net.Dial("tcp", addr)
		if c != nil {
			_ = c.Close()
		}
		return fmt.Errorf("dial ws://%s/ws: %w", addr, err)
	}()
	require.ErrorIs(t, refused, syscall.ECONNREFUSED, "a closed port on loopback refuses")
	for _, c := range []struct {
		err  error
		want ConnError
	}{
		{nil, ConnNone},
		{fmt.Errorf("connect: %w", ErrNoServer), ConnBadAddress},
		{refused, ConnRefused},
		{&net.DNSError{Err: "no such host", Name: "nowhere.invalid"}, ConnUnreachable},
		{fmt.Errorf("dial: %w", context.DeadlineExceeded), ConnTimeout},
		{fmt.Errorf("%w: nothing for 2.4s", serverlink.ErrServerSilent), ConnTimeout},
		{errors.New("failed to get reader: EOF"), ConnLost},
		{&protocol.CloseError{Code: protocol.CodeGoingAway}, ConnServerClosed},
		{&protocol.CloseError{Code: protocol.CodeDraining}, ConnServerClosed},
		{&protocol.CloseError{Code: protocol.CodeSessionReplaced}, ConnRejected},
		{&protocol.CloseError{Code: protocol.CodeTooSlow}, ConnRejected},
		{&protocol.CloseError{Code: protocol.CodeUpdateRequired}, ConnUpdateRequired},
		{&wire.UpdateRequiredError{What: "protocol", Peer: 3, Local: 5}, ConnUpdateRequired},
		{gaveUp(fmt.Errorf("reconnect: gave up after 9 attempts over 20s: %w", refused)), ConnGaveUp},
	} {
		assert.Equal(t, c.want, ConnErrorOf(c.err), "%v", c.err)
	}
	assert.Equal(t, "refused", ConnRefused.String())
	assert.Len(t, ConnErrors, len(connErrorNames), "every reason is listed once, for the enum")
}

func TestUserText(t *testing.T) {
	h := newHarness(t, Config{})
	require.Error(t, h.room.Join("0O1IL"))
	evs := h.update()
	require.Len(t, evs, 1)
	assert.NotContains(t, evs[0].Text, "protocol:", "no package prefix")
	assert.Contains(t, evs[0].Text, "not a room code")

	for in, want := range map[string]string{
		"leave: client: not connected":                      "leave: not connected",
		"join: protocol: not a room code or invite link":    "join: not a room code or invite link",
		"set_ready: netroom: not in a room":                 "set_ready: not in a room",
		"send state: serverlink: closed":                    "send state: closed",
		"event \"x\": typedargs: argument not carried: ...": "event \"x\": argument not carried: ...",
	} {
		assert.Equal(t, want, UserText(errors.New(in)))
	}
	assert.Equal(t, "no room ABCDEF", UserText(fmt.Errorf("join: %w", protocol.Errorf(protocol.CodeRoomNotFound, "no room ABCDEF"))))
}

func TestConnectionErrorsApartFromRoomErrors(t *testing.T) {
	h := newHarness(t, Config{})
	h.dialErr = fmt.Errorf("dial ws://127.0.0.1:9/ws: %w", syscall.ECONNREFUSED)
	require.NoError(t, h.room.Create())
	evs := h.until(has(EventDisconnected))
	assert.Equal(t, []string{"connection_error", "disconnected"}, kinds(evs), "no room_error for a connection failure")
	assert.Equal(t, ConnRefused, evs[0].Conn)
	assert.Contains(t, evs[0].Text, "127.0.0.1:8787", "names the server as typed")
	assert.NotContains(t, evs[0].Text, "serverlink:")

	// A drop then a reconnect that gives up: each says why.
	h.dialErr = nil
	require.NoError(t, h.room.Connect())
	h.until(has(EventConnected))
	h.link.Push(serverlink.Event{Kind: serverlink.EventReconnecting, Err: errors.New("failed to get reader: EOF")},
		serverlink.Event{Kind: serverlink.EventDisconnected,
			Err: fmt.Errorf("reconnect: gave up after 4 attempts over 2s: %w", fmt.Errorf("dial: %w", syscall.ECONNREFUSED))})
	evs = h.update()
	require.Equal(t, []string{"connection_error", "reconnecting", "connection_error", "disconnected"}, kinds(evs))
	assert.Equal(t, ConnLost, evs[0].Conn)
	assert.Equal(t, StatusReconnecting, evs[0].View.Status)
	assert.Equal(t, ConnGaveUp, evs[2].Conn)
	assert.Contains(t, evs[2].Text, "not running", "the last attempt was refused: the server is gone")
	assert.NotContains(t, evs[2].Text, "reconnect:")

	// Hanging up ourselves is no connection error.
	require.NoError(t, h.room.Connect())
	h.until(has(EventConnected))
	h.room.Disconnect()
	assert.Empty(t, eventsOf(h.update(), EventConnectionError))
}
