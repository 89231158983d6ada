package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/room"
)

// Defaults of Config.
const (
	DefaultAddr         = "127.0.0.1:8787"
	DefaultMaxRooms     = 1000
	DefaultDrainGrace   = 4 * time.Minute
	DefaultCloseSpread  = time.Second
	DefaultHelloTimeout = 5 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	DefaultStateQueue   = 256
	// DefaultControlQueue is large enough for what a join sends at once: a
	// full room replays up to room.MaxSlots x (PropKeys + MaxPerPlayer)
	// synced properties and spawns, and two messages per shared object.
	DefaultControlQueue = 4096
	// DefaultControlQueueBytes is what 256 of the largest control frames
	// take: the memory a slow reader may hold.
	DefaultControlQueueBytes = 256 * (wire.ControlHeaderSize + wire.MaxControlBody)
	// Per-address limits (see Config). An address is the client's IP
	// (its /64 for IPv6).
	DefaultMaxConnsPerAddr = 32
	DefaultMaxRoomsPerAddr = 8
	// DefaultMaxRoomsPerPrefix is the open rooms one network (/24, /48)
	// may create: four addresses' worth, for a shared office or NAT.
	DefaultMaxRoomsPerPrefix = 32
	// DefaultPlayingReserve is the share of MaxRooms lobbies may not take.
	DefaultPlayingReserve = 0.2
	// DefaultSmallNetReserve is the share of the lobbies' capacity kept
	// for networks holding fewer than smallNetRooms rooms.
	DefaultSmallNetReserve = 0.25
	// DefaultConnsPerPrefix times MaxConnsPerAddr is MaxConnsPerPrefix's
	// default: eight addresses' worth per network.
	DefaultConnsPerPrefix = 8
	// DefaultConnReserve is the share of MaxConns and MaxSockets kept for
	// addresses holding few connections.
	DefaultConnReserve = 0.1
	// DefaultLobbyTimeout is how long a room may sit in the lobby.
	DefaultLobbyTimeout     = 10 * time.Minute
	DefaultNewIdentityRate  = 0.2 // one new identity per 5 s per address...
	DefaultNewIdentityBurst = 20  // ...after 20 at once (a LAN party's first launch)
	DefaultJoinFailRate     = 0.5 // one failed join per 2 s per address...
	DefaultJoinFailBurst    = 10  // ...after 10 typos at once
	DefaultIdleTimeout      = 30 * time.Second
	// DefaultHeaderTimeout is how long a new connection has to send its
	// HTTP request (the WebSocket handshake): a client on a slow mobile
	// link needs well under a second.
	DefaultHeaderTimeout = 3 * time.Second
	// DefaultMaxConns is the most WebSocket connections in all, when the
	// descriptor limit allows as many (see Config.MaxConns).
	DefaultMaxConns = 10000
	// DefaultMaxSockets is the most accepted connections in all when the
	// descriptor limit is unknown or larger (see Config.MaxSockets).
	DefaultMaxSockets = 40000
	// fdReserve is what the connection caps leave of the descriptor limit
	// for everything else: listeners, the database, logs, DNS (the TURN
	// relay's sockets count in MaxSockets).
	fdReserve = 128
	// smallNetRooms: a network holding fewer rooms may use
	// SmallNetReserve.
	smallNetRooms = 2
	// fewConns and fewSockets: an address holding fewer WebSockets, or
	// fewer accepted connections, may use ConnReserve.
	fewConns   = 2
	fewSockets = 4
	// DefaultMaxMessage is the largest message read: one control frame
	// with the largest body.
	DefaultMaxMessage = wire.ControlHeaderSize + wire.MaxControlBody
)

// ErrInvalidConfig indicates a Config field out of range or two fields
// that contradict each other.
var ErrInvalidConfig = errors.New("server: invalid config")

// Config tunes a Server. The zero value of every field means its default.
type Config struct {
	// Addr is the listen address for ListenAndServe. Default
	// "127.0.0.1:8787": loopback only, so a laptop run is not exposed.
	Addr string
	// MaxRooms is the most rooms open at once; creating one more fails
	// with CodeServerFull. Default 1000.
	MaxRooms int
	// Room tunes every room (seats, durations, checks); zero fields are
	// the room package's defaults.
	Room room.Config
	// DrainGrace is how long Drain lets running rounds finish before
	// closing every connection. Default 4 min (longer than the default
	// 3-minute round plus countdown).
	DrainGrace time.Duration
	// CloseSpread spreads the final closes of a drain over this time so
	// that clients do not all reconnect at once. Default 1 s; at most DrainGrace.
	CloseSpread time.Duration
	// HelloTimeout is how long a new connection has to send Hello before
	// it is closed with CodeTimeout. Default 5 s.
	HelloTimeout time.Duration
	// WriteTimeout is how long one write may block before the connection
	// is closed as too slow (CodeTooSlow). Default 10 s.
	WriteTimeout time.Duration
	// WriteCoalesce is how long a connection's writer waits, once woken
	// for a relayed state, for the other states of the same tick before
	// it writes them as one message: up to one write per player per tick
	// rather than one per sender, fewer system calls for the server and
	// its players, for that much more latency. Reliable messages never
	// wait. Default 0: no wait (the writer only yields to the goroutines
	// relaying to it that instant, and a busy server batches anyway).
	WriteCoalesce time.Duration
	// StateQueue is how many relayed states may wait for a slow reader;
	// past it the oldest are dropped (states are droppable). Default 256.
	StateQueue int
	// ControlQueue is how many reliable messages may wait for a slow
	// reader; past it the connection is closed with CodeTooSlow. Default
	// 4096 (DefaultControlQueue), or more when Room's limits let a join
	// send more at once (room.Config.JoinBurst); a smaller value is refused.
	ControlQueue int
	// ControlQueueBytes bounds the same queue in bytes; past it the
	// connection is closed with CodeTooSlow. Default 4 MiB + 1 KiB
	// (DefaultControlQueueBytes).
	ControlQueueBytes int
	// MaxMessage is the largest message accepted in bytes; a larger one
	// closes the connection with 1009 (message too big). Default
	// DefaultMaxMessage (16 KiB + 4).
	MaxMessage int
	// OriginPatterns lists extra browser origins allowed to connect (see
	// websocket.AcceptOptions.OriginPatterns). Default none: same origin
	// or no Origin header (native clients) only. Allowing others opens
	// the server to cross-site use.
	OriginPatterns []string

	// MaxConnsPerAddr is the most open connections from one address
	// (IP; /64 for IPv6); more are refused with HTTP 429 before the
	// WebSocket upgrade. Default 32; negative means no limit.
	MaxConnsPerAddr int
	// MaxRoomsPerAddr is the most open rooms created from one address;
	// one more create fails with CodeRateLimited. Default 8; negative
	// means no limit.
	MaxRoomsPerAddr int
	// MaxRoomsPerPrefix is the most open rooms created from one network
	// prefix (/24 for IPv4, /48 for IPv6), so that many addresses of one
	// network cannot fill the server; one more create fails with
	// CodeRateLimited. Default 32; negative means no limit.
	MaxRoomsPerPrefix int
	// PlayingReserve is the share of MaxRooms kept for rooms with a round
	// under way: rooms in the lobby may take at most MaxRooms minus this
	// share (rounded down), past which a create fails with CodeServerFull.
	// Idle lobbies then cannot stop rooms that are playing. Default 0.2;
	// negative means none; below 1.
	PlayingReserve float64
	// SmallNetReserve is the share of the lobbies' capacity (MaxRooms less
	// PlayingReserve's share) kept for networks (/24, /48) holding fewer
	// than 2 rooms: past the rest, a create from a network holding more
	// fails with CodeServerFull, so that many addresses over a few dozen
	// networks cannot take every lobby. Default 0.25; negative means none;
	// below 1.
	SmallNetReserve float64
	// LobbyTimeout closes a room that stays in the lobby this long without
	// starting a round, ready players or not (its players get
	// CodeTimeout), so that rooms nobody plays in do not hold capacity.
	// The clock restarts when a round ends. Default 10 min; negative means
	// never.
	LobbyTimeout time.Duration
	// BusyAfter is the delay of the server's own work (the Go scheduler's:
	// how long a goroutine that is ready waits to run, its 99th
	// percentile, held 5 s) from which the server counts itself behind:
	// rooms then judge their players' states on the players' timelines,
	// crediting the delay the server's reading shows (room.Config's
	// BacklogCredit), so that nobody is refused or kicked for the
	// server's delays. Default 20 ms; negative means never (states judged
	// on arrival).
	BusyAfter time.Duration
	// OverloadAfter is the delay from which the server is overloaded, when
	// it lasts (at least a quarter of the 5 s held: one hitch is not
	// enough): it refuses new rooms (CodeServerFull; in a cluster it takes no
	// placements) until the delay falls back, and says so in its metrics
	// (nearzero_overloaded, nearzero_limited_total{limit="overload"}).
	// Rooms that play keep playing. Default 100 ms; negative means never.
	OverloadAfter time.Duration
	// NewIdentityRate and NewIdentityBurst limit Hellos without a token
	// (each mints an identity) per address: NewIdentityRate per second
	// after a burst of NewIdentityBurst. Over it the connection is closed
	// with CodeRateLimited; Hellos with a token are not limited. Defaults
	// 0.2/s and 20; a negative rate means no limit.
	NewIdentityRate  float64
	NewIdentityBurst int
	// JoinFailRate and JoinFailBurst limit failed joins (unknown codes)
	// per address across all its connections, so that room codes cannot
	// be guessed quickly: while an address has no failure left, every
	// join from it is refused with CodeRateLimited. Defaults 0.5/s and
	// 10; a negative rate means no limit.
	JoinFailRate  float64
	JoinFailBurst int
	// MaxConns is the most open WebSocket connections in all; more are
	// answered HTTP 503 before the upgrade. Default DefaultMaxConns
	// (10000), or three quarters of MaxSockets when that is lower;
	// negative means no limit; at most MaxSockets.
	MaxConns int
	// MaxConnsPerPrefix is the most open connections from one network
	// (/24 for IPv4, /48 for IPv6), below MaxConns, so that a hundred
	// addresses cannot hold most of it; more are refused with HTTP 429,
	// and sockets at accept past twice it. Default 8 x MaxConnsPerAddr
	// (256); negative means no limit.
	MaxConnsPerPrefix int
	// ConnReserve is the share of MaxConns and of MaxSockets that only
	// addresses holding few connections (fewer than 2 WebSockets, 4
	// sockets) may take: addresses that fill the rest cannot lock out an
	// honest join, a health check or a monitoring probe. Trusted proxies
	// are exempt. Default 0.1; negative means none; below 1.
	ConnReserve float64
	// MaxSockets is the most connections the listener holds at once
	// (handshakes, HTTP requests and WebSockets), and one address at most
	// twice MaxConnsPerAddr of them (trusted proxies excepted); past it a
	// new connection is closed as it is accepted. Default: the open-file
	// limit (RLIMIT_NOFILE, see RaiseFileLimit) less 128 for other files,
	// at most DefaultMaxSockets (40000); negative means no limit. Above
	// the open-file limit, accept fails and new connections stall.
	MaxSockets int
	// HeaderTimeout is how long a new connection has to send its HTTP
	// request, the WebSocket handshake; then it is closed. Default 3 s.
	HeaderTimeout time.Duration
	// IdleTimeout closes a connection from which no message arrived for
	// this long (CodeTimeout). Clients ping every second. Default 30 s.
	IdleTimeout time.Duration
	// TrustedProxies lists reverse proxies (addresses or CIDR prefixes,
	// e.g. "10.0.0.0/8") whose X-Forwarded-For names the client for the
	// per-address limits. Default none: the limits count the TCP peer,
	// which behind a proxy is the proxy itself (all clients would share
	// one address's limits).
	TrustedProxies []string

	// NoDatagrams turns the datagram path off (docs/protocol.md,
	// "Datagram path"): states then ride the WebSocket alone. Default
	// false: a QUIC endpoint on the UDP port of the listener's port
	// carries states as datagrams for the clients that take it.
	NoDatagrams bool
	// DatagramPublic is where clients reach the datagram path, "host:port"
	// or ":port", when that is not the host they connected to and the
	// port served (a port forwarded elsewhere). Default: those.
	DatagramPublic string
}

// withDefaults returns a copy with zero fields set to their defaults.
func (c *Config) withDefaults() Config {
	var d Config
	if c != nil {
		d = *c
	}
	if d.Addr == "" {
		d.Addr = DefaultAddr
	}
	if d.MaxRooms == 0 {
		d.MaxRooms = DefaultMaxRooms
	}
	if d.DrainGrace == 0 {
		d.DrainGrace = DefaultDrainGrace
	}
	if d.CloseSpread == 0 {
		d.CloseSpread = min(DefaultCloseSpread, d.DrainGrace)
	}
	if d.HelloTimeout == 0 {
		d.HelloTimeout = DefaultHelloTimeout
	}
	if d.WriteTimeout == 0 {
		d.WriteTimeout = DefaultWriteTimeout
	}
	if d.StateQueue == 0 {
		d.StateQueue = DefaultStateQueue
	}
	if d.ControlQueue == 0 {
		d.ControlQueue = max(DefaultControlQueue, d.Room.JoinBurst())
	}
	if d.ControlQueueBytes == 0 {
		d.ControlQueueBytes = DefaultControlQueueBytes
	}
	if d.MaxMessage == 0 {
		d.MaxMessage = DefaultMaxMessage
	}
	if d.MaxConnsPerAddr == 0 {
		d.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	if d.MaxRoomsPerAddr == 0 {
		d.MaxRoomsPerAddr = DefaultMaxRoomsPerAddr
	}
	if d.MaxRoomsPerPrefix == 0 {
		d.MaxRoomsPerPrefix = DefaultMaxRoomsPerPrefix
	}
	if d.PlayingReserve == 0 {
		d.PlayingReserve = DefaultPlayingReserve
	}
	if d.SmallNetReserve == 0 {
		d.SmallNetReserve = DefaultSmallNetReserve
	}
	if d.MaxConnsPerPrefix == 0 {
		d.MaxConnsPerPrefix = -1
		if d.MaxConnsPerAddr > 0 {
			d.MaxConnsPerPrefix = DefaultConnsPerPrefix * d.MaxConnsPerAddr
		}
	}
	if d.ConnReserve == 0 {
		d.ConnReserve = DefaultConnReserve
	}
	if d.BusyAfter == 0 {
		d.BusyAfter = DefaultBusyAfter
	}
	if d.OverloadAfter == 0 {
		d.OverloadAfter = DefaultOverloadAfter
	}
	if d.LobbyTimeout == 0 {
		d.LobbyTimeout = DefaultLobbyTimeout
	}
	if d.NewIdentityRate == 0 {
		d.NewIdentityRate = DefaultNewIdentityRate
	}
	if d.NewIdentityBurst == 0 {
		d.NewIdentityBurst = DefaultNewIdentityBurst
	}
	if d.JoinFailRate == 0 {
		d.JoinFailRate = DefaultJoinFailRate
	}
	if d.JoinFailBurst == 0 {
		d.JoinFailBurst = DefaultJoinFailBurst
	}
	if d.IdleTimeout == 0 {
		d.IdleTimeout = DefaultIdleTimeout
	}
	if d.HeaderTimeout == 0 {
		d.HeaderTimeout = DefaultHeaderTimeout
	}
	if d.MaxSockets == 0 {
		d.MaxSockets = defaultMaxSockets(fileLimit())
	}
	if d.MaxConns == 0 {
		d.MaxConns = DefaultMaxConns
		if d.MaxSockets > 0 {
			d.MaxConns = min(d.MaxConns, max(1, d.MaxSockets*3/4))
		}
	}
	return d
}

// defaultMaxSockets is MaxSockets's default under an open-file limit of
// n (0: unknown).
func defaultMaxSockets(n uint64) int {
	if n == 0 || n > DefaultMaxSockets+fdReserve {
		return DefaultMaxSockets
	}
	return int(n - min(fdReserve, n/2))
}

// Effective returns the configuration in force: a copy with every zero
// field set to its default (the connection caps follow the open-file
// limit at the time of the call).
func (c *Config) Effective() Config { return c.withDefaults() }

// Validate reports the first field out of range or contradiction, naming
// both values; defaults are applied first.
func (c *Config) Validate() error {
	d := c.withDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case d.MaxRooms < 1:
		return bad("MaxRooms %d below 1", d.MaxRooms)
	case d.DrainGrace < 0 || d.CloseSpread < 0:
		return bad("negative DrainGrace %v or CloseSpread %v", d.DrainGrace, d.CloseSpread)
	case d.CloseSpread > d.DrainGrace:
		return bad("CloseSpread %v longer than DrainGrace %v", d.CloseSpread, d.DrainGrace)
	case d.HelloTimeout <= 0 || d.WriteTimeout <= 0:
		return bad("HelloTimeout %v and WriteTimeout %v must be positive", d.HelloTimeout, d.WriteTimeout)
	case d.StateQueue < 1 || d.ControlQueue < 1:
		return bad("StateQueue %d and ControlQueue %d must be at least 1", d.StateQueue, d.ControlQueue)
	case d.ControlQueue < d.Room.JoinBurst():
		return bad("ControlQueue %d below what a join sends at once under the room limits (%d)", d.ControlQueue, d.Room.JoinBurst())
	case d.ControlQueueBytes < wire.ControlHeaderSize+wire.MaxControlBody:
		return bad("ControlQueueBytes %d below one control frame (%d)", d.ControlQueueBytes, wire.ControlHeaderSize+wire.MaxControlBody)
	case d.NewIdentityBurst < 1 || d.JoinFailBurst < 1:
		return bad("NewIdentityBurst %d and JoinFailBurst %d must be at least 1", d.NewIdentityBurst, d.JoinFailBurst)
	case d.PlayingReserve >= 1:
		return bad("PlayingReserve %v leaves lobbies no room (at least 1)", d.PlayingReserve)
	case d.SmallNetReserve >= 1 || d.ConnReserve >= 1:
		return bad("SmallNetReserve %v and ConnReserve %v must be below 1", d.SmallNetReserve, d.ConnReserve)
	case d.MaxSockets > 0 && d.MaxConns > d.MaxSockets:
		return bad("MaxConns %d above MaxSockets %d", d.MaxConns, d.MaxSockets)
	case d.HeaderTimeout <= 0:
		return bad("HeaderTimeout %v must be positive", d.HeaderTimeout)
	case d.IdleTimeout <= 0:
		return bad("IdleTimeout %v must be positive", d.IdleTimeout)
	case d.MaxMessage < wire.MaxStateSize || d.MaxMessage < wire.ControlHeaderSize+1024:
		return bad("MaxMessage %d below a state (%d) or a 1 KiB control frame", d.MaxMessage, wire.MaxStateSize)
	}
	if d.DatagramPublic != "" {
		_, port, err := net.SplitHostPort(d.DatagramPublic)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 1 || n > 65535 {
			return bad("DatagramPublic %q is not host:port or :port", d.DatagramPublic)
		}
	}
	if _, err := parseProxies(d.TrustedProxies); err != nil {
		return fmt.Errorf("%w: TrustedProxies: %w", ErrInvalidConfig, err)
	}
	if err := d.Room.Validate(); err != nil {
		return fmt.Errorf("%w: Room: %w", ErrInvalidConfig, err)
	}
	return nil
}
