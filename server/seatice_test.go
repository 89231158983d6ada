package server

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// turnOf returns the TURN servers among servers: a turn: or turns: URL,
// or credentials.
func turnOf(servers []protocol.ICEServer) []protocol.ICEServer {
	var out []protocol.ICEServer
	for _, s := range servers {
		for _, u := range s.URLs {
			if strings.HasPrefix(u, "turn:") || strings.HasPrefix(u, "turns:") || s.Username != "" || s.Credential != "" {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// TestTURNCredentialsOnlyOnSeat replays the rest of issue 30's item 1:
// every connected player got TURN credentials in its welcome, seated or
// not. The welcome keeps the STUN servers; the TURN server and its
// credentials come with the message that seats the player (joined, for a
// create, a join, and a reconnect's join), each with that player's own.
func TestTURNCredentialsOnlyOnSeat(t *testing.T) {
	tr, err := StartTURN(TURNConfig{Addr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	defer tr.Close()
	e := newEnvOpts(t, nil, envOpts{turn: tr})

	host := e.raw()
	w := host.hello()
	t.Logf("welcome: %+v", w.ICEServers)
	assert.Empty(t, turnOf(w.ICEServers), "no TURN credentials before a seat")
	require.Len(t, w.ICEServers, 1, "the STUN server stays in the welcome")
	assert.True(t, strings.HasPrefix(w.ICEServers[0].URLs[0], "stun:"), w.ICEServers)

	j, ok := host.request(&protocol.Create{}).(*protocol.Joined)
	require.True(t, ok)
	require.Len(t, j.ICEServers, 2, "joined: STUN and TURN")
	require.Len(t, turnOf(j.ICEServers), 1)
	assert.Contains(t, j.ICEServers[1].Username, ":"+w.User, "the player's own credentials")
	_, err = allocate(t, tr.Addr(), j.ICEServers, "127.0.0.1")
	assert.NoError(t, err, "a seated player's credentials allocate")

	guest := e.raw()
	gw := guest.hello()
	assert.Empty(t, turnOf(gw.ICEServers))
	gj, ok := guest.request(&protocol.Join{Code: j.Code}).(*protocol.Joined)
	require.True(t, ok)
	require.Len(t, turnOf(gj.ICEServers), 1, "a join's joined")
	assert.Contains(t, gj.ICEServers[1].Username, ":"+gw.User)

	// The guest comes back on a new connection (the same token): the
	// reconnect's joined carries fresh credentials.
	again := e.raw()
	again.send(protocol.MustMarshal(&protocol.Hello{Rules: wire.RulesVersion, Token: gw.Token}))
	aw, ok := again.next().(*protocol.Welcome)
	require.True(t, ok)
	assert.Empty(t, turnOf(aw.ICEServers))
	rj, ok := again.request(&protocol.Join{Code: j.Code, Via: protocol.ViaReconnect}).(*protocol.Joined)
	require.True(t, ok)
	assert.True(t, rj.Reconnected)
	require.Len(t, turnOf(rj.ICEServers), 1, "a reconnect's joined")
	assert.Contains(t, rj.ICEServers[1].Username, ":"+gw.User)
}

// TestSTUNOnly: a welcome's servers keep the STUN URLs, without
// credentials, and nothing else.
func TestSTUNOnly(t *testing.T) {
	got := stunOnly([]protocol.ICEServer{
		{URLs: []string{"stun:198.51.100.7:3478", "STUNS:stun.example.com"}},
		{URLs: []string{"turn:198.51.100.7:3478?transport=udp", "stun:198.51.100.7:3479"}, Username: "1:u", Credential: "c"},
		{URLs: []string{"turns:relay.example.com"}, Username: "1:u", Credential: "c"},
	})
	assert.Equal(t, []protocol.ICEServer{
		{URLs: []string{"stun:198.51.100.7:3478", "STUNS:stun.example.com"}},
		{URLs: []string{"stun:198.51.100.7:3479"}},
	}, got)
	assert.Nil(t, stunOnly(nil))
}
