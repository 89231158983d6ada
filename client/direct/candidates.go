package direct

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/pion/ice/v4"
)

// Which candidates go to a peer, and which of a peer's are checked. A
// peer's candidates are addresses of its choosing that we send checks to,
// and ours tell any player in the room where we are: both ways only
// addresses that name one machine somewhere go, a peer's in bounded
// numbers, ours without our own addresses unless the player shares them.

// Candidate types, counted apart by an attempt's cap.
const (
	kindHost = iota
	kindSrflx
	kindRelay
	kinds
)

// errCandidate indicates a candidate that is not sent or not taken.
var errCandidate = errors.New("direct: candidate refused")

// usableAddr reports whether ip may be a candidate's address: a unicast
// address of one machine (not unspecified, multicast, broadcast, reserved,
// "this network" or link-local: link-local addresses need an interface to
// mean anything); loopback only when loopback is set.
func usableAddr(ip netip.Addr, loopback bool) bool {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid(), ip.IsUnspecified(), ip.IsMulticast(), ip.IsLinkLocalUnicast(),
		ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return false
	case ip.IsLoopback():
		return loopback
	case ip.Is4():
		b := ip.As4()
		return b[0] != 0 && b[0] < 240 // 0/8 "this network"; 240/4 reserved, broadcast
	}
	return true
}

// isMDNSName reports whether s is an mDNS name as a host candidate carries
// one: a single label, then ".local".
func isMDNSName(s string) bool {
	label, ok := strings.CutSuffix(s, ".local")
	if !ok || label == "" || len(label) > 63 {
		return false
	}
	for _, r := range label {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// kindOf returns c's type as counted by the cap, or false for a type a
// peer never signals (peer-reflexive: learnt from checks, not signalled).
func kindOf(c ice.Candidate) (int, bool) {
	switch c.Type() {
	case ice.CandidateTypeHost:
		return kindHost, true
	case ice.CandidateTypeServerReflexive:
		return kindSrflx, true
	case ice.CandidateTypeRelay:
		return kindRelay, true
	}
	return 0, false
}

// remoteCandidate parses a peer's candidate (a signal's Data, or an entry
// of an offer's or answer's list) and checks that it may be checked: UDP,
// host, server-reflexive or relay, a port, and a usable address (loopback
// when loopback is set) or, for a host candidate, an mDNS name (which only
// a machine on our network answers). It returns the candidate and its
// kind.
func remoteCandidate(raw string, loopback bool) (ice.Candidate, int, error) {
	c, err := ice.UnmarshalCandidate(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", errCandidate, err)
	}
	kind, ok := kindOf(c)
	switch {
	case !ok:
		return nil, 0, fmt.Errorf("%w: type %s", errCandidate, c.Type())
	case !c.NetworkType().IsUDP():
		return nil, 0, fmt.Errorf("%w: network %s", errCandidate, c.NetworkType())
	case c.Port() <= 0 || c.Port() > 65535:
		return nil, 0, fmt.Errorf("%w: port %d", errCandidate, c.Port())
	case isMDNSName(c.Address()):
		if kind != kindHost {
			return nil, 0, fmt.Errorf("%w: an mDNS name on a %s candidate", errCandidate, c.Type())
		}
		return c, kind, nil
	}
	ip, err := netip.ParseAddr(c.Address())
	if err != nil {
		return nil, 0, fmt.Errorf("%w: address %.64q", errCandidate, c.Address())
	}
	if !usableAddr(ip, loopback) {
		return nil, 0, fmt.Errorf("%w: address %s", errCandidate, ip)
	}
	return c, kind, nil
}

// localCandidate returns the text of one of our candidates for a peer, or
// an error when it is not sent: an address that is not usable (loopback
// unless loopback is set), or a host candidate's address as it is unless
// shareHost (pion names host candidates by mDNS; where it cannot open a
// multicast socket it falls back to the addresses, which are then not
// sent). The related address (where a server-reflexive or relay candidate
// was gathered from, a local address) is hidden, as browsers hide it.
func localCandidate(c ice.Candidate, shareHost, loopback bool) (string, error) {
	kind, ok := kindOf(c)
	if !ok {
		return "", fmt.Errorf("%w: type %s", errCandidate, c.Type())
	}
	if !isMDNSName(c.Address()) {
		ip, err := netip.ParseAddr(c.Address())
		switch {
		case err != nil:
			return "", fmt.Errorf("%w: address %q", errCandidate, c.Address())
		case !usableAddr(ip, loopback):
			return "", fmt.Errorf("%w: address %s", errCandidate, ip)
		case kind == kindHost && !shareHost:
			return "", fmt.Errorf("%w: a host address (ShareHostCandidates is off and mDNS is unavailable)", errCandidate)
		}
	}
	return hideRelated(c.Marshal()), nil
}

// hideRelated replaces the related address and port of a candidate's
// text with "0.0.0.0" and 0.
func hideRelated(s string) string {
	f := strings.Fields(s)
	// foundation component transport priority address port "typ" type,
	// then the optional attributes.
	for i := 8; i+1 < len(f); i++ {
		switch f[i] {
		case "raddr":
			f[i+1] = "0.0.0.0"
			i++
		case "rport":
			f[i+1] = "0"
			i++
		}
	}
	return strings.Join(f, " ")
}

// admit counts a remote candidate of kind against the attempt's cap and
// reports whether it is taken: at most limit in all, no kind more than
// half of them (rounded up), so that a peer's many host candidates, which
// come first, leave room for its server-reflexive and relay ones. Called
// with the Mesh's mu held.
func (a *attempt) admit(kind, limit int) bool {
	total := 0
	for _, n := range a.taken {
		total += n
	}
	if total >= limit || a.taken[kind] >= (limit+1)/2 {
		return false
	}
	a.taken[kind]++
	return true
}

// takeRemote checks and counts a peer's candidates for attempt gen with
// slot and returns those taken; the others are counted in Stats.Ignored
// and logged. Nil when the attempt is no longer current.
func (m *Mesh) takeRemote(slot int, gen uint64, raws []string) []ice.Candidate {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.peers[slot]
	if p == nil || p.gen != gen || p.att == nil || m.closed {
		return nil
	}
	var out []ice.Candidate
	for _, raw := range raws {
		if c, ok := m.takeRemoteLocked(p, raw); ok {
			out = append(out, c)
		}
	}
	return out
}

// takeRemoteLocked checks one candidate from p for its current attempt and
// counts it; see takeRemote.
func (m *Mesh) takeRemoteLocked(p *peer, raw string) (ice.Candidate, bool) {
	c, kind, err := remoteCandidate(raw, m.cfg.LoopbackCandidates && m.shareHost)
	if err == nil && !p.att.admit(kind, m.cfg.MaxCandidates) {
		err = fmt.Errorf("%w: over %d candidates for this attempt", errCandidate, m.cfg.MaxCandidates)
	}
	if err != nil {
		m.stats.Ignored++
		p.stats.Ignored++
		m.cfg.Log.Debug("direct: remote candidate ignored", "slot", p.slot, "cand", raw, "err", err)
		return nil, false
	}
	return c, true
}
