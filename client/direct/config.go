package direct

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/stun/v4"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// Defaults of Config.
const (
	// DefaultConnectTimeout bounds one attempt at a link, from the offer to
	// the open data channel.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultRetryAfter is how long the initiator waits after a failed or
	// lost link before it offers again.
	DefaultRetryAfter = 5 * time.Second
	// DefaultPingInterval is how often a link measures its round trip once
	// warm (the first pings go every quarter of it).
	DefaultPingInterval = core.DefaultPingInterval
	// DefaultMaxRate is how many messages a second one peer may send before
	// it is dropped: states go at 60 a second, so four times that.
	DefaultMaxRate = 240.0
	// DefaultMaxBurst is how many messages one peer may send at once.
	DefaultMaxBurst = 120.0
	// DefaultMaxBad is how many undecodable messages one peer may send
	// before it is dropped (a few are tolerated: a newer client's frame).
	DefaultMaxBad = 8
	// DefaultMaxCandidates is how many remote candidates one attempt
	// takes: a player has a few (a host candidate per interface, one
	// server-reflexive and one relay per server and IP version).
	DefaultMaxCandidates = 16
	// DefaultOfferRate is how many offers a second one peer may make us
	// answer once its burst is spent: one per DefaultRetryAfter, the pace
	// of an honest peer whose links keep failing.
	DefaultOfferRate = 0.2
	// DefaultOfferBurst is how many offers one peer may make us answer at
	// once.
	DefaultOfferBurst = 3.0
	// MaxMessage is the largest message taken from a peer; a state is at
	// most 40 bytes.
	MaxMessage = 256
	// maxBuffered is the most bytes queued on one data channel before
	// states to it are skipped (a stalled link must not grow memory).
	maxBuffered = 64 << 10
	// queueLen bounds the received states and outgoing signals waiting
	// for Poll.
	queueLen = 1024
)

// ErrConfig indicates an invalid Config; the wrapping error names the field.
var ErrConfig = errors.New("direct: invalid config")

// Config configures a Mesh. The zero value of every field means its
// default; Now is required.
type Config struct {
	// Now is the local clock every time is on (arrivals, the re-stamped
	// sample times). Required.
	Now func() time.Duration
	// ICEServers are the STUN and TURN servers (the server hands them out
	// when it seats the player). Default none: host candidates only.
	ICEServers []protocol.ICEServer
	// RelayOnly gathers relay (TURN) candidates only: for tests, and for
	// players who must not reveal their address to peers. Default false.
	RelayOnly bool
	// ShareHostCandidates sends our host candidates (our own addresses:
	// LAN, IPv6) to peers as they are. Default false: each goes as an
	// mDNS name (a random "….local"), which only a peer on our network
	// resolves (by multicast DNS, as browsers do), so a player elsewhere
	// learns no address of ours but those the STUN and TURN servers see.
	// Turn it on where players share a network that carries no multicast
	// (some Wi-Fi, VPNs). Peers' mDNS names are resolved either way.
	ShareHostCandidates bool
	// LoopbackCandidates gathers, sends and takes loopback candidates
	// (127.0.0.1, ::1): for two game instances on a machine with no
	// network, and tests. It takes effect only with ShareHostCandidates
	// (an mDNS name does not name a loopback address). Default false: a
	// peer's loopback candidate would aim our checks at our own machine.
	LoopbackCandidates bool
	// MaxCandidates bounds the remote candidates one attempt at a link
	// takes, those its offer or answer lists and those trickled after it
	// together, no one type (host, server-reflexive, relay) more than half
	// of them; the rest are ignored. Each costs connectivity checks from
	// each of our candidates (up to 41 each), so a peer must not choose
	// how many addresses we send them to. Default 16.
	MaxCandidates int
	// OfferRate and OfferBurst bound the offers one peer may make us
	// answer, per second and at once (each answer is a new attempt: its
	// gathering, and checks to the candidates the offer names); offers
	// over them are ignored. Defaults 0.2 (one per DefaultRetryAfter) and
	// 3.
	OfferRate, OfferBurst float64
	// Lag is the lag simulator under the direct links, both ways; the
	// zero value is off.
	Lag lagsim.Config
	// Restamp tunes each peer's re-stamp estimator (the server's, so both
	// paths agree). Zero fields: netcode/clock's defaults.
	Restamp clock.RestampConfig
	// ConnectTimeout bounds one attempt at a link. Default 10 s.
	ConnectTimeout time.Duration
	// RetryAfter is the pause before the initiator offers again after a
	// failed or lost link. Default 5 s.
	RetryAfter time.Duration
	// PingInterval is how often each link measures its round trip. Default 1 s.
	PingInterval time.Duration
	// MaxRate and MaxBurst bound the messages one peer may send, per
	// second and at once; over them the peer is dropped from direct play.
	// Defaults 240 and 120.
	MaxRate, MaxBurst float64
	// MaxBad is how many undecodable messages one peer may send before it
	// is dropped. Default 8.
	MaxBad int
	// ICEOptions are applied to each link's ICE agent after the Mesh's
	// own, so they override them (tests restrict candidates to loopback
	// and shorten ICE timeouts). Default none: pion's defaults, UDP over
	// IPv4 and IPv6, host candidates as ShareHostCandidates and
	// LoopbackCandidates say. What candidates go to a peer, and which of a
	// peer's are taken, is checked after ICE whatever the options.
	ICEOptions []ice.AgentOption
	// Seed seeds the lag simulator's random draws. Default 0.
	Seed uint64
	// Log receives the links' logs. Default: discarded.
	Log *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.ConnectTimeout, DefaultConnectTimeout)
	def(&c.RetryAfter, DefaultRetryAfter)
	def(&c.PingInterval, DefaultPingInterval)
	if c.MaxRate == 0 {
		c.MaxRate = DefaultMaxRate
	}
	if c.MaxBurst == 0 {
		c.MaxBurst = DefaultMaxBurst
	}
	if c.MaxBad == 0 {
		c.MaxBad = DefaultMaxBad
	}
	if c.MaxCandidates == 0 {
		c.MaxCandidates = DefaultMaxCandidates
	}
	if c.OfferRate == 0 {
		c.OfferRate = DefaultOfferRate
	}
	if c.OfferBurst == 0 {
		c.OfferBurst = DefaultOfferBurst
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports the first field out of range, with defaults applied.
func (c Config) Validate() error {
	d := c.withDefaults()
	switch {
	case d.Now == nil:
		return fmt.Errorf("%w: Now is required", ErrConfig)
	case d.ConnectTimeout < 0 || d.RetryAfter < 0 || d.PingInterval < 0:
		return fmt.Errorf("%w: ConnectTimeout %v, RetryAfter %v and PingInterval %v must not be negative",
			ErrConfig, d.ConnectTimeout, d.RetryAfter, d.PingInterval)
	case !(d.MaxRate > 0) || !(d.MaxBurst >= 1) || d.MaxBad < 0:
		return fmt.Errorf("%w: MaxRate %v, MaxBurst %v, MaxBad %d: need positive, at least 1, not negative",
			ErrConfig, d.MaxRate, d.MaxBurst, d.MaxBad)
	case d.MaxCandidates < 1:
		return fmt.Errorf("%w: MaxCandidates %d: need at least 1", ErrConfig, d.MaxCandidates)
	case !(d.OfferRate > 0) || !(d.OfferBurst >= 1):
		return fmt.Errorf("%w: OfferRate %v, OfferBurst %v: need positive and at least 1", ErrConfig, d.OfferRate, d.OfferBurst)
	}
	if err := d.Lag.Validate(); err != nil {
		return fmt.Errorf("%w: Lag: %w", ErrConfig, err)
	}
	if err := d.Restamp.Validate(); err != nil {
		return fmt.Errorf("%w: Restamp: %w", ErrConfig, err)
	}
	if _, err := iceURLs(d.ICEServers); err != nil {
		return fmt.Errorf("%w: ICEServers: %w", ErrConfig, err)
	}
	return nil
}

// iceURLs converts the welcome's ICE servers to pion's, with each TURN
// server's credentials (as WebRTC's RTCIceServer does).
func iceURLs(in []protocol.ICEServer) ([]*stun.URI, error) {
	var out []*stun.URI
	for _, s := range in {
		for _, raw := range s.URLs {
			u, err := stun.ParseURI(raw)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", raw, err)
			}
			if u.Scheme == stun.SchemeTypeTURN || u.Scheme == stun.SchemeTypeTURNS {
				if s.Username == "" || s.Credential == "" {
					return nil, fmt.Errorf("%q: a TURN server needs a username and a credential", raw)
				}
				u.Username, u.Password = s.Username, s.Credential
			}
			out = append(out, u)
		}
	}
	return out, nil
}
