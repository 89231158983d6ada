package netroom_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server"
)

// crashProxy forwards TCP to a server until crash, which resets every
// connection and stops listening: to a player behind it, the server's
// process died (as a game hosting with host_local that crashed).
type crashProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []*net.TCPConn
}

func newCrashProxy(t *testing.T, to string) *crashProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &crashProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", to)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c.(*net.TCPConn), up.(*net.TCPConn))
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c) }()
			go func() { _, _ = io.Copy(c, up) }()
		}
	}()
	t.Cleanup(p.crash)
	return p
}

func (p *crashProxy) addr() string { return p.ln.Addr().String() }

// crash resets every connection (no close frame, no FIN) and refuses new
// ones.
func (p *crashProxy) crash() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.SetLinger(0)
		_ = c.Close()
	}
	p.conns = nil
}

// TestCrashedServerIsAConnectionError: a joiner whose server dies (the
// host's game, with host_local) hears it as connection errors a game can
// match on: the drop (ConnLost) with reconnecting, then, when reconnecting
// gives up, ConnGaveUp saying the server is not running. The time from the
// crash to the first one is logged; it is the operating system's reset,
// immediate here. (A server that goes silent without a reset is noticed by
// the server link's own dead-server detection.)
func TestCrashedServerIsAConnectionError(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	proxy := newCrashProxy(t, srv.Addr)
	ann := newPeer(t, srv, "Ann")
	bob := newPeerWith(t, srv, "Bob", netroom.Config{Options: serverlink.Options{
		ReconnectFor: 600 * time.Millisecond, BackoffMin: 50 * time.Millisecond, BackoffMax: 100 * time.Millisecond}})
	bob.room.SetServer(proxy.addr())
	seat(t, ann, bob)

	crashed := time.Now()
	proxy.crash()
	var noticed time.Duration
	frames(t, func() bool {
		if noticed == 0 && bob.saw(netroom.EventConnectionError) {
			noticed = time.Since(crashed)
		}
		return bob.saw(netroom.EventDisconnected)
	}, bob)
	t.Logf("the joiner noticed the crash after %v", noticed)

	errs := bob.of(netroom.EventConnectionError)
	require.GreaterOrEqual(t, len(errs), 2, "%v", errs)
	assert.Equal(t, netroom.ConnLost, errs[0].Conn, errs[0].Text)
	last := errs[len(errs)-1]
	assert.Equal(t, netroom.ConnGaveUp, last.Conn, last.Text)
	assert.Contains(t, last.Text, "not running", "every attempt after the crash was refused")
	assert.Empty(t, bob.of(netroom.EventError), "no room_error for a connection failure")
	assert.True(t, ann.room.InRoom(), "the server itself runs on: Ann keeps her seat")
}

// TestRoomSizeOnLoopback: a game of two (create_room(2)): the third
// player is refused as room_full, which the game can match on. Before, a
// room always held the server's 16, and the third joined.
func TestRoomSizeOnLoopback(t *testing.T) {
	srv := testkit.StartServer(t, server.Deps{})
	ann, bob, cy := newPeer(t, srv, "Ann"), newPeer(t, srv, "Bob"), newPeer(t, srv, "Cy")
	require.NoError(t, ann.room.CreateSized(2))
	frames(t, func() bool { return ann.room.InRoom() && ann.room.State().Settings.MaxPlayers == 2 }, ann)
	require.NoError(t, bob.room.Join(ann.room.Code()))
	frames(t, bob.room.InRoom, ann, bob)
	require.NoError(t, cy.room.Join(ann.room.Code()))
	frames(t, func() bool { return cy.saw(netroom.EventError) }, ann, bob, cy)
	errs := cy.of(netroom.EventError)
	assert.Equal(t, protocol.CodeRoomFull, errs[0].Code, errs[0].Text)
	assert.False(t, cy.room.InRoom())
	assert.Error(t, ann.room.CreateSized(-1))
}
