package core

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// RemoteState is a state relayed from another player.
type RemoteState struct {
	// State is the state as relayed: Slot is the sender's slot, Stamp its
	// sample time on the server clock (or the peer's, on a direct link).
	State wire.State
	// Local is the sample time on the local clock: the stamp mapped
	// through the clock sync (or the link's re-stamp). Feed it to the
	// predictor.
	Local time.Duration
	// Arrival is when it arrived, on the local clock (after the lag
	// simulator, if on).
	Arrival time.Duration
}

// Counts says what DecodeStates did with one message.
type Counts struct {
	Queued    int // states decoded and mapped
	Unsynced  int // states dropped because the clock was not synced yet
	Malformed int // frames that could not be read
}

// ServerPath is the logic of one client's server path, its link to the
// room server (a direct link's is Peer): clock sync, the mapping of
// relayed stamps onto the local clock, and the outgoing state queue. It is
// no server: client/serverlink's Conn wraps it with the socket, the bench
// with simulated links. The zero value is not usable: call NewServerPath.
type ServerPath struct {
	sync   *clock.Sync
	synced bool
	out    Queue
}

// NewServerPath returns a ServerPath with the clock sync tuned by cfg (zero
// fields: netcode/clock's defaults), an outgoing queue of queueLen states
// and the send lead lead (Queue).
func NewServerPath(cfg *clock.SyncConfig, queueLen int, lead time.Duration) (*ServerPath, error) {
	s := &ServerPath{}
	var err error
	if s.sync, err = clock.NewSync(cfg); err != nil {
		return nil, fmt.Errorf("core.NewServerPath: %w", err)
	}
	if s.out, err = NewQueue(queueLen, lead); err != nil {
		return nil, fmt.Errorf("core.NewServerPath: %w", err)
	}
	return s, nil
}

// ResetSync starts the clock sync over (a new server node: every node has
// its own clock). States are not mapped until it has synced again.
func (s *ServerPath) ResetSync() {
	s.sync.Reset()
	s.synced = false
}

// Synced reports whether the clock is synced to the server.
func (s *ServerPath) Synced() bool { return s.synced }

// NextPing returns when the next clock-sync ping is due (local clock).
func (s *ServerPath) NextPing() time.Duration { return s.sync.NextPing() }

// Ping returns the clock-sync ping to send at now, carrying our best round
// trip, and books it as sent. The round trip claimed is the fastest trip
// each way (clock.Sync.Trips), which the room's re-stamper halves to map
// our stamps: the fastest single round trip sits a few ms higher under
// jitter, and half that excess mapped every state of ours that much older
// than it was (2-7 ms in the network lab at 40 ± 10 ms each way).
func (s *ServerPath) Ping(now time.Duration) protocol.Ping {
	s.sync.Sent(now)
	var rtt time.Duration
	if s.sync.RTT() > 0 {
		// At least 1 µs: on loopback the trips may sum to less, and 0
		// claims nothing.
		rtt = max(s.sync.Trips(), time.Microsecond)
	}
	p := protocol.Ping{TUS: protocol.US(now), RTTUS: protocol.US(rtt)}
	if g, ok := s.sync.ReturnGap(); ok {
		us := protocol.US(g)
		p.GapUS = &us
	}
	return p
}

// Pong takes the server's answer to a ping, arrived at at, and reports
// whether the clock has just become synced.
func (s *ServerPath) Pong(m *protocol.Pong, at time.Duration) bool {
	s.sync.Observe(protocol.DurationUS(m.TUS), protocol.DurationUS(m.ServerUS), at)
	if !s.synced && s.sync.Synced() {
		s.synced = true
		return true
	}
	return false
}

// Echo returns the answer to a pong's probe (protocol.Pong.Probe), to be
// sent at once by the path states take (the lag simulator, the writer's
// queue): the server times it to learn the round trip our states see, and
// trusts our claimed one (Ping.RTTUS) no further. False for a pong without
// a probe (outside a room).
func Echo(m *protocol.Pong) (protocol.Echo, bool) {
	return protocol.Echo{Probe: m.Probe}, m.Probe != 0
}

// Map maps a relayed state's stamp (server clock), arrived at arrival,
// onto the server clock unwrapped (server) and onto the local clock
// (local). It reports false before the clock is synced: nothing can be
// mapped then.
func (s *ServerPath) Map(stamp wire.Stamp, arrival time.Duration) (server, local time.Duration, ok bool) {
	if !s.synced {
		return 0, 0, false
	}
	server = stamp.Near(s.sync.ServerTime(arrival))
	return server, s.sync.LocalTime(server), true
}

// DecodeStates appends the states of one relayed message (a batch of
// state frames), arrived at arrival, to dst, mapped onto the local clock.
func (s *ServerPath) DecodeStates(dst []RemoteState, msg []byte, arrival time.Duration) ([]RemoteState, Counts) {
	var n Counts
	for len(msg) > 0 {
		frame, rest, ok := protocol.NextState(msg)
		if !ok {
			n.Malformed++
			break
		}
		msg = rest
		dst = append(dst, RemoteState{Arrival: arrival})
		rs := &dst[len(dst)-1]
		if wire.DecodeState(frame, &rs.State) != nil {
			n.Malformed++
			dst = dst[:len(dst)-1]
			continue
		}
		_, local, ok := s.Map(rs.State.Stamp, arrival)
		if !ok {
			n.Unsynced++
			dst = dst[:len(dst)-1]
			continue
		}
		rs.Local = local
		n.Queued++
	}
	return dst, n
}

// ServerTime maps a local time onto the server clock.
func (s *ServerPath) ServerTime(local time.Duration) time.Duration { return s.sync.ServerTime(local) }

// LocalTime maps a server time onto the local clock.
func (s *ServerPath) LocalTime(server time.Duration) time.Duration { return s.sync.LocalTime(server) }

// RTT returns the best round trip to the server seen recently.
func (s *ServerPath) RTT() time.Duration { return s.sync.RTT() }

// Out returns the outgoing state queue.
func (s *ServerPath) Out() *Queue { return &s.out }
