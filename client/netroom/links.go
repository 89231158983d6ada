package netroom

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// welcomer is the part of a ServerLink that says what the server's welcome
// offered (*serverlink.Conn has it): the ICE servers for direct links of
// a server that hands them out there.
type welcomer interface {
	Welcome() protocol.Welcome
}

// iceServers returns the STUN and TURN servers for the direct links: those
// the seat came with (joined's; TURN credentials go only with a seat),
// else the welcome's (an older server hands them all out there), then
// Config.Direct's own.
func (r *Room) iceServers() []protocol.ICEServer {
	out := append([]protocol.ICEServer(nil), r.seatICE...)
	if len(out) == 0 {
		if w, ok := r.link.(welcomer); ok {
			out = append(out, w.Welcome().ICEServers...)
		}
	}
	return append(out, r.cfg.Direct.ICEServers...)
}

// setSeatICE takes the ICE servers a joined brought: a new seat's, or a
// reconnect's fresh credentials, which links made from now on use.
func (r *Room) setSeatICE(servers []protocol.ICEServer) {
	r.seatICE = servers
	s, ok := r.mesh.(interface {
		SetICEServers([]protocol.ICEServer) error
	})
	if !ok {
		return
	}
	if err := s.SetICEServers(r.iceServers()); err != nil {
		r.cfg.Log.Warn("netroom: the seat's ICE servers are unusable; keeping the last", "err", err)
	}
}

// DirectLinks reports whether direct peer links are on (NetRoom's
// direct_links).
func (r *Room) DirectLinks() bool { return !r.cfg.NoDirect }

// SetDirectLinks turns direct peer links on or off, at once: off closes
// them and tells the server, which relays every state again.
func (r *Room) SetDirectLinks(on bool) {
	r.cfg.NoDirect = !on
	if !on {
		r.closeDirect()
		return
	}
	r.syncDirect()
}

// SetDirectLag sets the direct links' own lag simulator setting, used
// while SetDirectLagApart(true) (at once on open links, and for later ones).
// An invalid setting is reported as EventError and returned.
func (r *Room) SetDirectLag(l serverlink.LagConfig) error {
	if err := l.Validate(); err != nil {
		return r.fail(fmt.Errorf("set direct lag: %w", err))
	}
	r.cfg.Direct.Lag = l
	if !r.cfg.DirectLagApart {
		return nil
	}
	return r.applyDirectLag()
}

// SetDirectLagApart chooses whether the direct links take their own
// setting (SetDirectLag) or the server link's (SetLag, the default).
func (r *Room) SetDirectLagApart(apart bool) error {
	r.cfg.DirectLagApart = apart
	return r.applyDirectLag()
}

// DirectLagApart reports whether the direct links take their own setting.
func (r *Room) DirectLagApart() bool { return r.cfg.DirectLagApart }

// DirectLag returns the direct links' own lag simulator setting (applied
// only while DirectLagApart).
func (r *Room) DirectLag() serverlink.LagConfig { return r.cfg.Direct.Lag }

// applyDirectLag puts the setting the direct links get on the open ones
// (later ones take it from cfg when made).
func (r *Room) applyDirectLag() error {
	if r.mesh == nil {
		return nil
	}
	if err := r.mesh.SetLag(r.cfg.directLag()); err != nil {
		return r.fail(fmt.Errorf("set direct lag: %w", err))
	}
	return nil
}

// ShareHostCandidates reports whether the direct links send this player's
// own addresses (LAN, IPv6) to peers as they are, rather than as mDNS
// names that only a peer on its network resolves (NetRoom's
// direct_share_host_candidates; direct.Config.ShareHostCandidates).
func (r *Room) ShareHostCandidates() bool { return r.cfg.Direct.ShareHostCandidates }

// SetShareHostCandidates turns ShareHostCandidates on or off, for link
// attempts from now on.
func (r *Room) SetShareHostCandidates(on bool) {
	r.cfg.Direct.ShareHostCandidates = on
	if s, ok := r.mesh.(interface{ SetShareHostCandidates(bool) }); ok {
		s.SetShareHostCandidates(on)
	}
}

// Direct returns the direct links, nil while there are none (not in a
// room, links off, or no other player yet).
func (r *Room) Direct() direct.Links { return r.mesh }

// DirectLinkStats returns the figures of the direct link to slot: the
// selected candidate pair's types, its round trip, the states sent and
// received on it; ok is false while there is no link to slot (or the
// links are not client/direct's).
func (r *Room) DirectLinkStats(slot int) (direct.LinkStats, bool) {
	s, ok := r.mesh.(interface {
		LinkStats(slot int) (direct.LinkStats, bool)
	})
	if !ok {
		return direct.LinkStats{}, false
	}
	return s.LinkStats(slot)
}

// DirectUp reports whether states from slot currently arrive directly.
func (r *Room) DirectUp(slot int) bool {
	return r.direct.Up(slot)
}

// syncDirect makes the direct links follow the room: one per connected
// player, none when out of a room or turned off.
func (r *Room) syncDirect() {
	if r.cfg.NoDirect || !r.inRoom || r.slot < 0 || r.link == nil {
		return
	}
	r.peerSlots = r.peerSlots[:0]
	var seated [MaxSlots]bool
	for _, p := range r.players {
		if p.Slot >= 0 && p.Slot < MaxSlots {
			seated[p.Slot] = true
		}
		if p.Connected && p.Slot != r.slot && !r.DirectDistrusted(p.Slot) {
			r.peerSlots = append(r.peerSlots, p.Slot)
		}
	}
	for slot := range MaxSlots {
		if !seated[slot] {
			r.dcheck.forgetSlot(slot) // left: a new player may take the seat
		}
	}
	for _, p := range r.players {
		if !p.Connected && p.Slot >= 0 && p.Slot < MaxSlots {
			r.dcheck.unstamp(p.Slot) // it may come back with a new clock
		}
	}
	if r.mesh == nil {
		if len(r.peerSlots) == 0 {
			return
		}
		cfg := r.cfg.Direct
		cfg.Now, cfg.Log, cfg.Lag = r.clock.Now, r.cfg.Log, r.cfg.directLag()
		cfg.ICEServers = r.iceServers()
		m, err := r.cfg.NewDirect(cfg)
		if err != nil {
			// Direct links are an optimisation: without them every state
			// still comes by the server.
			r.cfg.Log.Warn("netroom: direct links unavailable", "err", err)
			r.cfg.NoDirect = true
			return
		}
		r.mesh = m
	}
	r.mesh.SetPeers(r.slot, r.peerSlots)
}

// closeDirect closes the direct links and reports every link that was up
// as down, so the server relays those states again.
func (r *Room) closeDirect() {
	if r.mesh != nil {
		r.mesh.Close()
		if w, ok := r.mesh.(interface{ Wait(time.Duration) bool }); ok {
			// Room.Wait covers the links' closing too.
			timeout := r.cfg.CloseTimeout
			r.spawn(func() { w.Wait(timeout) }, opGoodbye, r.gen)
		}
		r.mesh = nil
	}
	for slot := range MaxSlots {
		if r.direct.Up(slot) && r.link != nil && r.inRoom {
			_ = r.link.Send(&protocol.DirectLink{Slot: slot, Up: false})
		}
	}
	r.direct = directWatch{}
}

// tickDirect runs the links' timers and sends their signals.
func (r *Room) tickDirect() {
	if r.mesh == nil {
		return
	}
	r.mesh.Tick()
	r.signals = r.mesh.PollSignals(r.signals[:0])
	for i := range r.signals {
		if r.status == StatusConnected {
			sig := r.signals[i]   // the ServerLink may keep the message; the buffer is reused
			_ = r.link.Send(&sig) // a refused one fails the attempt by its timeout
		}
		r.signals[i] = protocol.Signal{}
	}
}

// sendDirect sends our state on every direct link: a direct send has no
// queue, so the state is carried from its sample to now here (the send
// lead, client/core's Lead) and encoded once into the room's buffer.
func (r *Room) sendDirect(s *wire.State) {
	if r.mesh == nil {
		return
	}
	st := *s
	now := r.clock.Now()
	r.dlead.Apply(&st, core.SampledAt(&st, now), now)
	b, err := wire.AppendState(r.frame[:0], &st)
	if err != nil {
		return // the server link refused it already
	}
	r.frame = b
	r.mesh.Send(b)
}

// reportDirectUp reports every direct link that is up to the server again.
func (r *Room) reportDirectUp() {
	if r.link == nil || !r.inRoom || r.direct.Count() == 0 {
		return
	}
	for slot := range MaxSlots {
		if r.direct.Up(slot) {
			_ = r.link.Send(&protocol.DirectLink{Slot: slot, Up: true})
		}
	}
}
