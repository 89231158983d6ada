package netroom

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// fakeLinks is a scriptable direct.Links: the test queues states and
// signals for the Room to poll and reads what the Room asked of it.
type fakeLinks struct {
	mu       sync.Mutex
	cfg      direct.Config
	self     int
	peers    []int
	got      []protocol.Signal // signals handed over by the Room
	out      []protocol.Signal // signals to send
	states   []direct.State
	sent     [][]byte
	lag      []lagsim.Config
	ticks    int
	isClosed bool
	ice      [][]protocol.ICEServer // SetICEServers
	share    []bool                 // SetShareHostCandidates
}

func (f *fakeLinks) SetPeers(self int, peers []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.self, f.peers = self, append([]int(nil), peers...)
}

func (f *fakeLinks) Signal(s *protocol.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, *s)
}

func (f *fakeLinks) Tick() { f.mu.Lock(); f.ticks++; f.mu.Unlock() }

func (f *fakeLinks) Send(frame []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, append([]byte(nil), frame...))
}

func (f *fakeLinks) Poll(dst []direct.State) []direct.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	dst = append(dst, f.states...)
	f.states = f.states[:0]
	return dst
}

func (f *fakeLinks) PollSignals(dst []protocol.Signal) []protocol.Signal {
	f.mu.Lock()
	defer f.mu.Unlock()
	dst = append(dst, f.out...)
	f.out = f.out[:0]
	return dst
}

func (f *fakeLinks) Open(int) bool { return false }

func (f *fakeLinks) SetLag(cfg lagsim.Config) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lag = append(f.lag, cfg)
	return nil
}

func (f *fakeLinks) Close() { f.mu.Lock(); f.isClosed = true; f.mu.Unlock() }

// SetICEServers records the servers, as *direct.Mesh takes them.
func (f *fakeLinks) SetICEServers(servers []protocol.ICEServer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ice = append(f.ice, servers)
	return nil
}

// SetShareHostCandidates records the setting, as *direct.Mesh takes it.
func (f *fakeLinks) SetShareHostCandidates(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.share = append(f.share, on)
}

// TestDirectUsesTheSeatsICEServers: the links get the STUN and TURN
// servers that came with the seat (joined: TURN credentials go only with
// a seat), with Config.Direct's added; a reconnect's joined brings fresh
// credentials, which the links take for their next attempts.
func TestDirectUsesTheSeatsICEServers(t *testing.T) {
	var fl *fakeLinks
	var made direct.Config
	extra := protocol.ICEServer{URLs: []string{"stun:stun.example.com:3478"}}
	h := newHarness(t, Config{Direct: direct.Config{ICEServers: []protocol.ICEServer{extra}},
		NewDirect: func(c direct.Config) (direct.Links, error) {
			made, fl = c, &fakeLinks{cfg: c}
			return fl, nil
		}})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	stun := protocol.ICEServer{URLs: []string{"stun:198.51.100.7:3478"}}
	relay := func(cred string) protocol.ICEServer {
		return protocol.ICEServer{URLs: []string{"turn:198.51.100.7:3478?transport=udp"}, Username: "1:uBob", Credential: cred}
	}
	j := joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob"))
	j.ICEServers = []protocol.ICEServer{stun, relay("first")}
	h.link.Msg(j)
	h.until(has(EventJoined))
	require.NotNil(t, fl)
	assert.Equal(t, []protocol.ICEServer{stun, relay("first"), extra}, made.ICEServers)

	again := joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob"))
	again.Reconnected, again.Room.Rev = true, 2
	again.ICEServers = []protocol.ICEServer{stun, relay("second")}
	h.link.Msg(again)
	h.update()
	fl.mu.Lock()
	defer fl.mu.Unlock()
	require.NotEmpty(t, fl.ice, "the reconnect's servers reach the links")
	assert.Equal(t, []protocol.ICEServer{stun, relay("second"), extra}, fl.ice[len(fl.ice)-1])
	assert.False(t, fl.isClosed, "the links stay up")
}

// TestShareHostCandidates: the setting reaches the links, live and when
// they are made.
func TestShareHostCandidates(t *testing.T) {
	var fl *fakeLinks
	h := newHarness(t, Config{NewDirect: func(c direct.Config) (direct.Links, error) {
		fl = &fakeLinks{cfg: c}
		return fl, nil
	}})
	assert.False(t, h.room.ShareHostCandidates(), "off by default")
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	require.NotNil(t, fl)
	assert.False(t, fl.cfg.ShareHostCandidates)
	h.room.SetShareHostCandidates(true)
	assert.True(t, h.room.ShareHostCandidates())
	assert.Equal(t, []bool{true}, fl.share)
	h.room.SetDirectLinks(false)
	h.room.SetDirectLinks(true)
	assert.True(t, fl.cfg.ShareHostCandidates, "new links take it")
}

// TestDirectWiring drives a Room's direct links through a fake: peers
// follow the room, signals go both ways, our states go out on the links,
// theirs reach the Remote on the direct path and are reported up and down,
// and turning the links off closes them and tells the server.
func TestDirectWiring(t *testing.T) {
	var fl *fakeLinks
	var made direct.Config
	h := newHarness(t, Config{NewDirect: func(c direct.Config) (direct.Links, error) {
		made, fl = c, &fakeLinks{cfg: c}
		return fl, nil
	}, Options: serverlink.Options{Lag: lagsim.Config{Latency: 20 * time.Millisecond}}})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob"), player(2, "Cy")))
	h.until(has(EventJoined))
	require.NotNil(t, fl, "links made once there are other players")
	assert.True(t, h.room.DirectLinks())
	assert.Equal(t, 1, fl.self)
	assert.ElementsMatch(t, []int{0, 2}, fl.peers)
	assert.NotNil(t, made.Now, "the Room's clock")
	assert.Equal(t, 20*time.Millisecond, made.Lag.Latency, "the server link's lag covers the direct links")

	// Cy leaves: the links follow.
	st := joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob")).Room
	st.Rev = 2
	h.link.Msg(&st)
	h.until(has(EventPlayerLeft))
	assert.Equal(t, []int{0}, fl.peers)

	// Signals: the server's go to the links, the links' go to the server.
	h.link.Msg(&protocol.Signal{To: 1, From: 0, Kind: direct.KindOffer, Data: "sdp"})
	h.link.Msg(&protocol.Signal{To: 7, From: 0, Kind: direct.KindOffer, Data: "not ours"})
	fl.mu.Lock()
	fl.out = append(fl.out, protocol.Signal{To: 0, From: 1, Kind: direct.KindAnswer, Data: "sdp2"})
	fl.mu.Unlock()
	h.update()
	assert.Equal(t, []protocol.Signal{{To: 1, From: 0, Kind: direct.KindOffer, Data: "sdp"}}, fl.got)
	assert.Contains(t, h.link.Sent(), protocol.Message(&protocol.Signal{To: 0, From: 1, Kind: direct.KindAnswer, Data: "sdp2"}))
	assert.Positive(t, fl.ticks)

	// Our state goes out on the links as a frame, as well as to the server.
	require.NoError(t, h.room.SendState(&wire.State{Slot: 1, Seq: 5, Rot: geom.Identity}))
	require.Len(t, fl.sent, 1)
	var dec wire.State
	require.NoError(t, wire.DecodeState(fl.sent[0], &dec))
	assert.Equal(t, wire.Seq(5), dec.Seq)

	// Theirs reach the Remote on the direct path and, once the link has
	// carried enough of them without losses, report it up.
	rem := newDrawn(t)
	require.NoError(t, h.room.Bind(0, rem))
	now := h.clock.Now()
	fl.mu.Lock()
	for i := range core.HealthStates {
		at := now - time.Duration(core.HealthStates-i)*time.Millisecond
		fl.states = append(fl.states, direct.State{State: wire.State{Slot: 0, Seq: wire.Seq(1 + i), Rot: geom.Identity}, Local: at, Arrival: at})
	}
	fl.mu.Unlock()
	assert.Equal(t, core.HealthStates, h.room.Route())
	assert.Equal(t, uint64(core.HealthStates), h.room.Stats().DirectRouted)
	assert.True(t, h.room.DirectUp(0))
	pose := rem.Frame(now)
	assert.Equal(t, predict.PathDirect, pose.Path)
	assert.Contains(t, h.link.Sent(), protocol.Message(&protocol.DirectLink{Slot: 0, Up: true}))

	// Live lag settings reach the links: by default the server link's
	// setting covers them too, so a "50 ms" test is 50 ms on every path.
	require.NoError(t, h.room.SetLag(lagsim.Config{Latency: 50 * time.Millisecond}))
	require.Len(t, fl.lag, 1)
	assert.Equal(t, lagsim.Config{Latency: 50 * time.Millisecond}, fl.lag[0])
	// Their own setting is kept but not applied until they are set apart.
	require.NoError(t, h.room.SetDirectLag(lagsim.Config{Loss: 1}))
	assert.Len(t, fl.lag, 1)
	require.NoError(t, h.room.SetDirectLagApart(true))
	assert.Equal(t, lagsim.Config{Loss: 1}, fl.lag[len(fl.lag)-1])
	require.NoError(t, h.room.SetLag(lagsim.Config{Latency: 80 * time.Millisecond}))
	assert.Equal(t, lagsim.Config{Loss: 1}, fl.lag[len(fl.lag)-1], "apart: SetLag leaves the direct links alone")
	require.NoError(t, h.room.SetDirectLagApart(false))
	assert.Equal(t, lagsim.Config{Latency: 80 * time.Millisecond}, fl.lag[len(fl.lag)-1], "together again: the server link's")
	assert.Error(t, h.room.SetDirectLag(lagsim.Config{Loss: 2}))

	// Off: the links close and the server hears the link is down.
	h.room.SetDirectLinks(false)
	assert.True(t, fl.isClosed)
	assert.Nil(t, h.room.Direct())
	assert.False(t, h.room.DirectUp(0))
	assert.Contains(t, h.link.Sent(), protocol.Message(&protocol.DirectLink{Slot: 0, Up: false}))
	require.NoError(t, h.room.SendState(&wire.State{Slot: 1, Seq: 6, Rot: geom.Identity}))
	// On again: new links.
	old := fl
	h.room.SetDirectLinks(true)
	assert.NotSame(t, old, fl)
	assert.Equal(t, []int{0}, fl.peers)

	// Leaving closes them.
	h.link.Msg(&protocol.Left{})
	h.until(has(EventLeft))
	assert.True(t, fl.isClosed)
	assert.Nil(t, h.room.Direct())
}

// TestDirectReportedAgainAfterReconnect: the server forgets a player's
// link reports with its connection; the Room reports its live links again.
func TestDirectReportedAgainAfterReconnect(t *testing.T) {
	h := newHarness(t, Config{})
	require.NoError(t, h.room.Create())
	h.until(has(EventConnected))
	h.link.Msg(joinedAs("ABCDEF", 1, 0, player(0, "Ann"), player(1, "Bob")))
	h.until(has(EventJoined))
	now := h.clock.Now()
	for i := range core.HealthStates {
		require.False(t, h.room.AddDirect(&wire.State{Slot: 0, Seq: wire.Seq(1 + i), Rot: geom.Identity}, now, now), "no Remote bound")
	}
	require.True(t, h.room.DirectUp(0))
	ups := func() int {
		n := 0
		for _, m := range h.link.Sent() {
			if d, ok := m.(*protocol.DirectLink); ok && d.Up {
				n++
			}
		}
		return n
	}
	assert.Equal(t, 1, ups())
	h.link.Push(serverlink.Event{Kind: serverlink.EventReconnecting}, serverlink.Event{Kind: serverlink.EventReconnected})
	h.until(has(EventReconnected))
	assert.Equal(t, 2, ups(), "reported again")
}
