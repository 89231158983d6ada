package serverlink

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/realtime"
	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/lagsim"
)

// Defaults of Options.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultRequestTimeout = 10 * time.Second
	DefaultReconnectFor   = 20 * time.Second
	DefaultBackoffMin     = 250 * time.Millisecond
	DefaultBackoffMax     = 4 * time.Second
	// DefaultSilenceTimeout is Options.SilenceTimeout's default: with the
	// round trip added, a server gone silent is noticed within 3 s on
	// any link under 600 ms.
	DefaultSilenceTimeout = 2400 * time.Millisecond
	DefaultEventQueue     = 1024
	DefaultStateQueue     = 1024
	DefaultSendQueue      = 64
	// DefaultCloseTimeout is Options.CloseTimeout's default: a goodbye
	// on a live link takes one round trip, so 2 s only runs out on a dead
	// one, and it fits inside the 2 s the Godot extension gives every
	// goodbye in flight when the game quits (longer would be cut there).
	DefaultCloseTimeout = 2 * time.Second
	// DefaultSendLead is Options.SendLead's default (client/core's).
	DefaultSendLead = core.DefaultSendLead
)

// Options configure a Conn. A nil *Options means every default; the zero
// value of each field means its default.
type Options struct {
	// Token is the identity token from an earlier Welcome (Conn.Token);
	// empty asks for a new anonymous identity. A token this server does not
	// recognise is dropped and a new identity issued.
	Token string
	// Name is the display name to use; empty keeps the stored one.
	Name string
	// ClientName names the client build in the server's logs.
	ClientName string
	// Clock is the local clock every time is on. Default: a
	// realtime.Wall started when the defaults are applied (at Dial).
	Clock realtime.Clock
	// Log receives the client's logs. Default: discarded.
	Log *slog.Logger
	// HTTPClient dials the WebSocket. Default http.DefaultClient.
	HTTPClient *http.Client

	// DialTimeout bounds one connection attempt: dial, hello and welcome.
	// Default 5 s.
	DialTimeout time.Duration
	// RequestTimeout bounds Create and Join waiting for the answer, on top
	// of their context. Default 10 s.
	RequestTimeout time.Duration
	// CloseTimeout bounds Close waiting for the goodbye. Default 2 s.
	CloseTimeout time.Duration

	// NoReconnect turns automatic reconnection off. Default false:
	// a lost connection is retried with back-off for ReconnectFor.
	NoReconnect bool
	// ReconnectFor is how long to keep retrying after the connection is
	// lost. Default 20 s, the server's default seat hold.
	ReconnectFor time.Duration
	// BackoffMin and BackoffMax bound the wait between attempts, which
	// doubles from BackoffMin (with ±20% jitter). Defaults 250 ms and 4 s.
	BackoffMin, BackoffMax time.Duration
	// SilenceTimeout is how long the server may send nothing before the
	// connection is taken for dead and the reconnect begins (the link's
	// measured round trip is added): a hung server, or a host or NAT
	// mapping gone from the network, sends nothing and the socket would
	// not say so for minutes. After a third of it without a message the
	// client pings, and the server answers every ping. Default 2.4 s;
	// negative turns the check off.
	SilenceTimeout time.Duration

	// EventQueue is how many events wait for PollEvents before the oldest
	// is dropped. Default 1024.
	EventQueue int
	// StateQueue is how many received states wait for PollStates before the
	// oldest is dropped. Default 1024.
	StateQueue int
	// SendQueue is how many outgoing states wait for the network before
	// the oldest is dropped. Default 64.
	SendQueue int
	// SendLead is the send lead, the one setting for it: the longest time
	// from a state's sample (its stamp, on Clock) to its socket write over
	// which a freshly sampled state is carried forward to its write and
	// stamped then (sender.Carry, once, by the writer: client/core's
	// Queue). The physics frame's time behind the wall clock, the rest of
	// the frame, the writer goroutine's wake-up and a write that blocks are
	// the sender's own delay, not the network's, and receivers cannot tell
	// them apart. Older states and heartbeats go as sampled. With the lag
	// simulator on, the simulated delay is not carried: the wait restarts
	// at its exit. Default DefaultSendLead (50 ms); negative turns it off.
	SendLead time.Duration

	// Sync tunes the clock synchronisation to the server; zero fields are
	// netcode/clock's defaults.
	Sync clock.SyncConfig
	// Lag simulates a worse network under this client. Off by default.
	Lag LagConfig
	// NoDatagrams keeps every state on the WebSocket: the datagram path
	// the server offers (QUIC datagrams over UDP, docs/protocol.md) is
	// not dialled. Default false: states go as datagrams while that path
	// answers, and by the WebSocket whenever it does not.
	NoDatagrams bool
	// DatagramAddr, when set (host:port), is dialled for the datagram
	// path instead of the address the server offers: a router or a test
	// in between. Default: the offer's.
	DatagramAddr string
	// Seed seeds the lag simulator and the jitter of the reconnect
	// back-off. 0 means a fixed default for the lag simulator (runs are
	// reproducible unless you vary it) and a random back-off seed per
	// client, so that clients dropped together do not retry together.
	Seed uint64
}

// defaultLagSeed seeds the lag simulator when Options.Seed is 0.
const defaultLagSeed = 0x6e656172 // "near"

// lagSeed returns the lag simulator's seed.
func (o *Options) lagSeed() uint64 {
	if o.Seed == 0 {
		return defaultLagSeed
	}
	return o.Seed
}

// backoffSeed returns the seed of the back-off jitter: Seed when set,
// else a random one of this client's own.
func (o *Options) backoffSeed() uint64 {
	if o.Seed != 0 {
		return o.Seed
	}
	var b [8]byte
	if _, err := crand.Read(b[:]); err != nil {
		return uint64(time.Now().UnixNano())
	}
	return binary.LittleEndian.Uint64(b[:])
}

// LagConfig is the lag simulator of docs/architecture.md §5 (netcode/lagsim):
// it sits under the server link, the same settings in both directions.
// On the WebSocket it behaves as TCP: nothing is lost, a loss is sent
// again and holds back what follows. On the datagram path it behaves as
// UDP: a loss loses that state alone, and jitter may reorder states. The
// zero value is off; Conn.SetLag changes it live.
type LagConfig = lagsim.Config

// ErrInvalidOptions indicates an Options field out of range.
var ErrInvalidOptions = errors.New("serverlink: invalid options")

// WithDefaults returns a copy of o (nil: the zero Options) with every
// zero field set to its default. Dial applies it; client/netroom applies
// it to its Config's Options, so both use this one set of defaults.
func (o *Options) WithDefaults() Options {
	var d Options
	if o != nil {
		d = *o
	}
	def := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	def(&d.DialTimeout, DefaultDialTimeout)
	def(&d.RequestTimeout, DefaultRequestTimeout)
	def(&d.CloseTimeout, DefaultCloseTimeout)
	def(&d.ReconnectFor, DefaultReconnectFor)
	def(&d.BackoffMin, DefaultBackoffMin)
	def(&d.BackoffMax, DefaultBackoffMax)
	def(&d.SilenceTimeout, DefaultSilenceTimeout)
	if d.EventQueue == 0 {
		d.EventQueue = DefaultEventQueue
	}
	if d.StateQueue == 0 {
		d.StateQueue = DefaultStateQueue
	}
	if d.SendQueue == 0 {
		d.SendQueue = DefaultSendQueue
	}
	if d.SendLead == 0 {
		d.SendLead = DefaultSendLead
	}
	if d.Clock == nil {
		d.Clock = realtime.NewWall()
	}
	if d.HTTPClient == nil {
		d.HTTPClient = http.DefaultClient
	}
	return d
}

// Validate reports the first field out of range, naming both values of a
// contradiction; defaults are applied first.
func (o *Options) Validate() error {
	d := o.WithDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidOptions, fmt.Sprintf(format, args...))
	}
	switch {
	case d.DialTimeout < 0 || d.RequestTimeout < 0 || d.CloseTimeout < 0 || d.ReconnectFor < 0:
		return bad("negative time-out")
	case d.BackoffMin <= 0 || d.BackoffMin > d.BackoffMax:
		return bad("BackoffMin %v must be positive and at most BackoffMax %v", d.BackoffMin, d.BackoffMax)
	case d.EventQueue < 1 || d.StateQueue < 1 || d.SendQueue < 1:
		return bad("queues must hold at least 1 (EventQueue %d, StateQueue %d, SendQueue %d)", d.EventQueue, d.StateQueue, d.SendQueue)
	}
	if err := d.Lag.Validate(); err != nil {
		return fmt.Errorf("%w: Lag: %w", ErrInvalidOptions, err)
	}
	if err := d.Sync.Validate(); err != nil {
		return fmt.Errorf("%w: Sync: %w", ErrInvalidOptions, err)
	}
	return nil
}
