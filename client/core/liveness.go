package core

import "time"

// Liveness tells a live link from a dead one by what arrives on it: after
// a third of Timeout without a message it asks for a keepalive ping (the
// peer answers any ping), and after Timeout plus the link's round trip
// without one it calls the link dead. A server that is hung, a host gone
// from the network, or a NAT that dropped the mapping send nothing, and
// nothing tells the socket so for minutes: this does. The zero value is
// off (never dead, no pings).
type Liveness struct {
	// Timeout is the silence after which the link is dead, before the
	// round trip is added; 0 turns the check off.
	Timeout time.Duration
	heard   time.Duration // last arrival
	probed  time.Duration // last keepalive ping
}

// Reset starts watching a new connection at now, as if a message had
// just arrived.
func (l *Liveness) Reset(now time.Duration) { l.heard, l.probed = now, now }

// Heard records an arrival at at (a message of any kind).
func (l *Liveness) Heard(at time.Duration) { l.heard = max(l.heard, at) }

// every is the silence after which a keepalive ping goes out, and the
// time between two of them.
func (l *Liveness) every() time.Duration { return l.Timeout / 3 }

// Probe reports whether a keepalive ping is due at now (a third of Timeout
// since the last arrival and the last keepalive) and books it as sent.
func (l *Liveness) Probe(now time.Duration) bool {
	if l.Timeout <= 0 || now-max(l.heard, l.probed) < l.every() {
		return false
	}
	l.probed = now
	return true
}

// Dead reports whether the link has been silent at now for longer than
// Timeout plus rtt, the link's round trip (an answer to the last
// keepalive may still be on its way for that long).
func (l *Liveness) Dead(now, rtt time.Duration) bool {
	return l.Timeout > 0 && now-l.heard > l.Timeout+max(rtt, 0)
}

// Silence returns how long the link has been silent at now.
func (l *Liveness) Silence(now time.Duration) time.Duration { return now - l.heard }

// Next returns when to look again after now: the next keepalive or the
// verdict, whichever comes first.
func (l *Liveness) Next(now, rtt time.Duration) time.Duration {
	if l.Timeout <= 0 {
		return now + time.Hour
	}
	probe := max(l.heard, l.probed) + l.every()
	dead := l.heard + l.Timeout + max(rtt, 0) + time.Millisecond
	return max(min(probe, dead), now)
}
