package netroom

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/serverlink"
)

// Defaults of Config beyond serverlink.Options' own (the time-outs, queues
// and the rest are client's: one set of defaults).
const (
	// DefaultDirectSilence is how long a direct link may stay silent before
	// it is reported down: at 60 states a second, 15 missed states. The
	// bench found that waiting longer (500 ms) tripled the worst error of a
	// direct-link outage.
	DefaultDirectSilence = 250 * time.Millisecond
	// DefaultClientName names the client build in the server's logs.
	DefaultClientName = "nearzero-godot"
)

var (
	// ErrConfig indicates an invalid Config; the wrapping error names the field.
	ErrConfig = errors.New("netroom: invalid config")
	// ErrNoServer indicates a connect without a server address.
	ErrNoServer = errors.New("netroom: no server address")
)

// Config configures a Room. The zero value of every field means its
// default; only Server has none (connecting without it fails with
// ErrNoServer).
type Config struct {
	// Options are the network client's settings, handed to Dial as they
	// are (with Clock set to the Room's): Token and Name (the identity;
	// the setters change them), ClientName (default DefaultClientName
	// here), Clock (default a realtime.Wall started by New: every time of
	// the Room is on it), Log, the time-outs (DialTimeout bounds one
	// connection attempt, RequestTimeout create, join and leave,
	// CloseTimeout the goodbye at Close and Disconnect and the direct
	// links' closing), reconnection, queues, Sync, Seed, and Lag: the lag
	// simulator under the server link and, unless DirectLagApart, under
	// the direct links too (a game tested at "50 ms" gets 50 ms whichever
	// path its states take). Zero fields are client's defaults.
	serverlink.Options
	// Server is the room server: "ws://host:port/ws", "wss://...", an
	// http(s) URL, or just "host:port" (ws://, path /ws). See ServerURL.
	Server string
	// DirectLagApart gives the direct links their own lag simulator
	// setting, Direct.Lag, in place of Lag. Default false.
	DirectLagApart bool
	// Dial connects to the server. Default DialServer (the real client);
	// tests pass a fake.
	Dial Dialer
	// DirectSilence is how long a direct link may stay silent before the
	// room reports it down to the server. Default 250 ms.
	DirectSilence time.Duration
	// DirectMaxLoss is the share of its states a direct link may lose and
	// be reported up to the server (which then stops relaying that pair);
	// one losing more than twice this is reported down and the server
	// relays again. Default core.DefaultMaxLoss (5 %).
	DirectMaxLoss float64
	// NoDirect turns direct peer links off: every state comes by the
	// server. Default false (links on; NetRoom's direct_links).
	NoDirect bool
	// Direct tunes the direct links (client/direct): zero fields are its
	// defaults; Now is the Room's clock and Log the Room's, whatever is
	// set; ICEServers are added to those the server hands out with the
	// seat (its joined; an older server's welcome); Lag is
	// the lag simulator under the direct links when DirectLagApart (else
	// Lag above applies there).
	Direct direct.Config
	// NewDirect makes the direct links. Default NewMesh (WebRTC); tests
	// pass a fake.
	NewDirect func(direct.Config) (direct.Links, error)
}

// NewMesh is the default Config.NewDirect: direct.New.
func NewMesh(cfg direct.Config) (direct.Links, error) {
	m, err := direct.New(cfg)
	if err != nil {
		return nil, err // direct.New names itself
	}
	return m, nil
}

// withDefaults returns a copy of c with zero fields set to their
// defaults: client's for Options (ClientName and Log excepted), then
// the Room's own.
func (c Config) withDefaults() Config {
	if c.ClientName == "" {
		c.ClientName = DefaultClientName
	}
	c.Options = c.Options.WithDefaults()
	if c.DirectSilence == 0 {
		c.DirectSilence = DefaultDirectSilence
	}
	if c.DirectMaxLoss == 0 {
		c.DirectMaxLoss = core.DefaultMaxLoss
	}
	if c.Dial == nil {
		c.Dial = DialServer
	}
	if c.NewDirect == nil {
		c.NewDirect = NewMesh
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// directLag returns the lag simulator setting the direct links get.
func (c *Config) directLag() serverlink.LagConfig {
	if c.DirectLagApart {
		return c.Direct.Lag
	}
	return c.Lag
}

// Validate reports the first field out of range, with defaults applied:
// Options by serverlink.Options.Validate (the lag simulator's settings by
// lagsim.Config.Validate, there as for Direct.Lag here), then the Room's
// own. An empty Server is valid here (a Room may be made before the
// address is known); connecting without one fails.
func (c Config) Validate() error {
	d := c.withDefaults()
	if err := d.Options.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if d.DirectSilence < 0 {
		return fmt.Errorf("%w: DirectSilence %v must not be negative", ErrConfig, d.DirectSilence)
	}
	if !(d.DirectMaxLoss > 0 && d.DirectMaxLoss < 1) {
		return fmt.Errorf("%w: DirectMaxLoss %v must be in (0, 1)", ErrConfig, d.DirectMaxLoss)
	}
	if strings.TrimSpace(d.Server) != "" {
		if _, err := ServerURL(d.Server); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	if err := d.Direct.Lag.Validate(); err != nil {
		return fmt.Errorf("%w: Direct.Lag: %w", ErrConfig, err)
	}
	return nil
}

// ServerURL turns what a user typed as the server address into the
// WebSocket URL the client dials: "host:port" becomes
// "ws://host:port/ws", http and https become ws and wss, and an empty path
// becomes /ws. Other schemes and empty hosts are errors.
func ServerURL(addr string) (string, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", ErrNoServer
	}
	if !strings.Contains(addr, "://") {
		addr = "ws://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("server address %q: %w", addr, err)
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("server address %q: scheme %q is not ws, wss, http or https", addr, u.Scheme)
	}
	if u.Host == "" {
		return "", fmt.Errorf("server address %q: no host", addr)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/ws"
	}
	return u.String(), nil
}
