// Command nearzero-server runs the nearzero room server: rooms by code over
// WebSocket, with health on /healthz and Prometheus metrics on /metrics.
//
//	nearzero-server                      # loopback :8787, ./nearzero.db
//	nearzero-server -addr :8787 -log-format json -analytics events.jsonl
//	nearzero-server -h                   # every flag with its default
//
// One node of a cluster (README, "Scale-out"); every node has the same
// $NEARZERO_SECRET:
//
//	nearzero-server -addr :8787 -nats nats://nats:4222 -node-id eu-1 \
//	    -node-url wss://eu-1.play.example.com/ws -region eu
//
// SIGTERM or SIGINT drains: no new rooms or rounds, running rounds finish
// (up to -drain-grace), then every connection closes with 1001 going away.
// A second signal stops at once.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/version"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server"
	"github.com/nearzero/nearzero/server/cluster"
	"github.com/nearzero/nearzero/server/identity"
	"github.com/nearzero/nearzero/server/internal/analytics"
	"github.com/nearzero/nearzero/server/internal/store"
	"github.com/nearzero/nearzero/server/metrics/prom"
	"github.com/nearzero/nearzero/server/room"
)

func main() {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	os.Exit(run(os.Args[1:], sig, os.Stdout, os.Stderr, nil))
}

// options are the command-line flags.
type options struct {
	addr, db, secret, publicURL, logFormat, logLevel, analytics string
	origins                                                     multi
	roomSize, maxRooms, minPlayers                              int
	drainGrace, seatHold, roundLimit, handshake, countdown      time.Duration
	sendRate, topSpeed, topSpeed2D, teleportsPerMinute          float64
	backlogCredit                                               time.Duration
	noMotionChecks, version                                     bool
	healthcheck                                                 bool // probe -addr's /healthz and exit (the image's HEALTHCHECK)
	cluster                                                     clusterFlags

	limits  server.Config // per-address limits and idle time-out; only those fields
	proxies multi

	worldBounds, worldBounds2D float64 // room.Config.WorldBounds, WorldBounds2D
	maxTeleport, maxTeleport2D float64 // room.Config.MaxTeleport, MaxTeleport2D
	kickBan                    time.Duration
	signalCandidates           int

	hits room.HitRules // -hits, -hit-*: server-decided hits

	entities               room.EntityLimits // -max-entities, -claim-radius*, -spawn-*
	spawnArea, spawnArea2D area

	recipient room.Config // -recipient-*, -reliable-backlog: only those fields

	inputDelay inputDelayFlag // -input-delay: room.Config.InputDelay

	turn      server.TURNConfig // ICE servers for direct links: -turn-*, -stun-url, -stun-addr, -public-addr
	stun      multi
	stunAddr  string // -stun-addr
	turnPorts string // -turn-ports

	noDatagrams             bool   // -no-datagrams
	dgCert, dgKey, dgPublic string // -datagram-cert, -datagram-key, -datagram-public
}

// area is a -spawn-area flag: a box, "minx,miny,minz,maxx,maxy,maxz" (3D)
// or "minx,miny,maxx,maxy" (2D).
type area room.Area

func (a *area) String() string {
	if a == nil || room.Area(*a).IsZero() {
		return ""
	}
	return fmt.Sprintf("%g,%g,%g,%g,%g,%g", a.Min.X, a.Min.Y, a.Min.Z, a.Max.X, a.Max.Y, a.Max.Z)
}

func (a *area) Set(v string) error {
	var f []float64
	for _, s := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("area %q: %w", v, err)
		}
		f = append(f, x)
	}
	switch len(f) {
	case 6:
		a.Min, a.Max = geom.Vec3{X: f[0], Y: f[1], Z: f[2]}, geom.Vec3{X: f[3], Y: f[4], Z: f[5]}
	case 4:
		a.Min, a.Max = geom.Vec3{X: f[0], Y: f[1]}, geom.Vec3{X: f[2], Y: f[3]}
	default:
		return fmt.Errorf("area %q: want minx,miny,minz,maxx,maxy,maxz (or minx,miny,maxx,maxy in 2D)", v)
	}
	return nil
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// inputDelayFlag is -input-delay: "off", a duration (fixed), "adaptive" or
// "adaptive:CAP".
type inputDelayFlag struct{ d protocol.InputDelay }

func (f *inputDelayFlag) String() string {
	switch f.d.Mode {
	case protocol.InputDelayFixed:
		return protocol.DurationUS(f.d.US).String()
	case protocol.InputDelayAdaptive:
		if f.d.CapUS == 0 {
			return "adaptive"
		}
		return "adaptive:" + protocol.DurationUS(f.d.CapUS).String()
	}
	return "off"
}

func (f *inputDelayFlag) Set(v string) error {
	var d protocol.InputDelay
	switch mode, capText, _ := strings.Cut(v, ":"); {
	case v == "off" || v == "":
	case mode == "adaptive":
		d.Mode = protocol.InputDelayAdaptive
		if capText != "" {
			c, err := time.ParseDuration(capText)
			if err != nil {
				return fmt.Errorf("adaptive cap: %w", err)
			}
			d.CapUS = protocol.US(c)
		}
	default:
		fixed, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("want off, a duration, adaptive or adaptive:CAP: %w", err)
		}
		d.Mode, d.US = protocol.InputDelayFixed, protocol.US(fixed)
	}
	if err := d.Validate(); err != nil {
		return err
	}
	f.d = d
	return nil
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("nearzero-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", server.DefaultAddr, "listen address (host:port); loopback by default, use :8787 to listen on every interface")
	fs.StringVar(&o.db, "db", "./nearzero.db", "SQLite database for identities and results (created on first run); :memory: keeps nothing")
	fs.StringVar(&o.secret, "secret", "", "identity signing secret, at least 32 bytes (default: $NEARZERO_SECRET, else generated and kept in the database); prefer the environment variable: command lines are visible to every local user (ps)")
	fs.StringVar(&o.publicURL, "public-url", "", "base of invite links, e.g. https://play.example.com (links are BASE/join/CODE; default nearzero://join/CODE)")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&o.analytics, "analytics", "", "file to append funnel events to as JSON lines; - for stdout (default: none)")
	fs.Var(&o.origins, "origin", "browser origin allowed to connect, e.g. game.example.com (repeatable; default: same origin and native clients only)")
	fs.IntVar(&o.roomSize, "room-size", room.DefaultMaxPlayers, fmt.Sprintf("players per room, at most %d (each receives room-size-1 states per tick)", room.MaxSlots))
	fs.IntVar(&o.minPlayers, "min-players", room.DefaultMinPlayers, "connected players needed to start a round")
	fs.IntVar(&o.maxRooms, "max-rooms", server.DefaultMaxRooms, "rooms open at once")
	fs.DurationVar(&o.drainGrace, "drain-grace", server.DefaultDrainGrace, "on SIGTERM, how long running rounds may finish before connections close")
	fs.DurationVar(&o.seatHold, "seat-hold", room.DefaultSeatHold, "how long a disconnected player's seat is kept for a reconnect")
	fs.DurationVar(&o.roundLimit, "round-limit", room.DefaultRoundLimit, "default round time limit (the host may change it)")
	fs.DurationVar(&o.handshake, "handshake-timeout", room.DefaultHandshakeTimeout, "how long the start handshake waits for players to be in position")
	fs.DurationVar(&o.countdown, "countdown", room.DefaultCountdown, "countdown before a round starts")
	fs.Float64Var(&o.sendRate, "send-rate", room.DefaultSendRate, "expected states per second per player; the limit is 1.5x this")
	fs.Float64Var(&o.topSpeed, "top-speed", motion.DefaultTopSpeed, "the game's top speed in metres per second (3D states); states faster than twice this, or moving farther, are refused")
	fs.Float64Var(&o.topSpeed2D, "top-speed-2d", motion.DefaultTopSpeed2D, "the same for 2D states, in pixels per second")
	fs.BoolVar(&o.noMotionChecks, "no-motion-checks", false, "turn the speed and teleport checks off")
	fs.Float64Var(&o.teleportsPerMinute, "teleports-per-minute", motion.DefaultTeleportsPerMinute, "teleport-flagged jumps (respawns) one entity may make per minute, all at once at most; more are refused")
	fs.Float64Var(&o.worldBounds, "world-bounds", 0, "refuse 3D states with a coordinate beyond ± this, in units (0: no bounds)")
	fs.Float64Var(&o.worldBounds2D, "world-bounds-2d", 0, "the same for 2D states, in pixels (0: no bounds)")
	fs.Float64Var(&o.maxTeleport, "max-teleport", motion.DefaultMaxTeleport, "longest jump of a teleport-flagged state (a respawn), in metres (3D); longer ones are refused; -1 for no bound")
	fs.Float64Var(&o.maxTeleport2D, "max-teleport-2d", motion.DefaultMaxTeleport2D, "the same for 2D states, in pixels; -1 for no bound")
	fs.DurationVar(&o.kickBan, "kick-ban", room.DefaultKickBan, "how long a player the host kicked may not rejoin; new seats from its address and network (/24, /56) are refused as long, on the host's own network only identities made after the kick")
	fs.IntVar(&o.signalCandidates, "signal-candidates", room.DefaultSignalCandidates, "trickled ICE candidates one player may send another per direct-link offer or answer")
	fs.IntVar(&o.entities.MaxPerPlayer, "max-entities", room.DefaultMaxEntities, fmt.Sprintf("extra entities (spawned, or sending states) one player may have at once, at most %d", wire.MaxPlayerEntity))
	fs.Float64Var(&o.entities.ClaimRadius, "claim-radius", room.DefaultClaimRadius, "how near in metres a player must be to take a shared object from its owner (3D; the host takes any)")
	fs.Float64Var(&o.entities.ClaimRadius2D, "claim-radius-2d", room.DefaultClaimRadius2D, "the same for 2D games, in pixels")
	fs.Float64Var(&o.entities.SpawnRadius, "spawn-radius", room.DefaultSpawnRadius, "how far in metres from its player an entity's first state may lie (3D)")
	fs.Float64Var(&o.entities.SpawnRadius2D, "spawn-radius-2d", room.DefaultSpawnRadius2D, "the same for 2D games, in pixels")
	fs.Var(&o.inputDelay, "input-delay", "every room's input delay (netcode/inputdelay), which hosts may then not change: off, a duration such as 100ms, adaptive (follows the players' round trips) or adaptive:CAP such as adaptive:150ms (default off: the host chooses)")
	fs.DurationVar(&o.entities.ClaimAfterSpawn, "claim-after-spawn", room.DefaultClaimAfterSpawn, "how long after a player first appears its claims on objects others own are refused")
	fs.Float64Var(&o.entities.SpawnClearance, "spawn-clearance", 0, "how far in metres a player that first appeared nearer to a shared object another player owns must get from it before claiming it (3D; default 0: none; honest games place players beside the ball: prefer -spawn-area)")
	fs.Float64Var(&o.entities.SpawnClearance2D, "spawn-clearance-2d", 0, "the same for 2D games, in pixels (default 0: none)")
	fs.Var(&o.spawnArea, "spawn-area", "box a player must first appear in, minx,miny,minz,maxx,maxy,maxz in metres (3D; default: anywhere)")
	fs.Var(&o.spawnArea2D, "spawn-area-2d", "the same for 2D games, minx,miny,maxx,maxy in pixels")
	fs.BoolVar(&o.hits.On, "hits", false, "decide reported hits (protocol hit): keep what each player was sent and rebuild what they drew")
	fs.IntVar(&o.hits.Damage, "hit-damage", room.DefaultDamage, "health one accepted hit takes (of -hit-health)")
	fs.IntVar(&o.hits.Health, "hit-health", room.DefaultHealth, "a player's full health")
	fs.DurationVar(&o.hits.MaxRewind, "hit-rewind", room.DefaultMaxRewind, "how far into the past a reported shot is judged: its age plus the delay states took to reach the shooter")
	fs.Float64Var(&o.hits.Tolerance, "hit-tolerance", room.DefaultHitTolerance, "largest distance in metres between a reported hit point and the drawn target (3D)")
	fs.Float64Var(&o.hits.Tolerance2D, "hit-tolerance-2d", room.DefaultHitTolerance2, "the same for 2D games, in pixels")
	fs.Float64Var(&o.hits.Range, "hit-range", room.DefaultHitRange, "farthest a shooter's own entity may be from where it drew the target, in metres (3D; -1 for no range rule)")
	fs.Float64Var(&o.hits.Range2D, "hit-range-2d", room.DefaultHitRange2D, "the same for 2D games, in pixels (-1 for no range rule)")
	fs.DurationVar(&o.hits.FireSlack, "hit-fire-slack", room.DefaultFireSlack, "how much older than the delay the server measured to the shooter (half the round trip plus its jitter) a shot's fire time may be")
	fs.IntVar(&o.limits.MaxConnsPerAddr, "max-conns-per-addr", server.DefaultMaxConnsPerAddr, "open connections per client address (IP; /64 for IPv6); -1 for no limit")
	fs.IntVar(&o.limits.MaxRoomsPerAddr, "max-rooms-per-addr", server.DefaultMaxRoomsPerAddr, "open rooms created per client address; -1 for no limit")
	fs.IntVar(&o.limits.MaxRoomsPerPrefix, "max-rooms-per-prefix", server.DefaultMaxRoomsPerPrefix, "open rooms created per client network (/24 for IPv4, /48 for IPv6); -1 for no limit")
	fs.Float64Var(&o.limits.PlayingReserve, "playing-reserve", server.DefaultPlayingReserve, "share of -max-rooms that rooms in the lobby may not take (kept for rooms playing a round); -1 for none")
	fs.Float64Var(&o.limits.SmallNetReserve, "small-net-reserve", server.DefaultSmallNetReserve, "share of the lobbies' rooms kept for networks (/24, /48) holding fewer than 2 rooms; -1 for none")
	fs.DurationVar(&o.limits.WriteCoalesce, "write-coalesce", 0, "how long a connection's writer waits for the other states of a tick before it writes them as one message (fewer system calls for that much more latency); 0 for none")
	fs.DurationVar(&o.limits.BusyAfter, "busy-after", server.DefaultBusyAfter, "the server's own delay (Go scheduler, 99th percentile) from which rooms judge states on their players' timelines, crediting the server's backlog up to -backlog-credit; -1s for never")
	fs.DurationVar(&o.limits.OverloadAfter, "overload-after", server.DefaultOverloadAfter, "the server's own delay from which it refuses new rooms (and in a cluster takes no placements) until it keeps up again; -1s for never")
	fs.DurationVar(&o.backlogCredit, "backlog-credit", room.DefaultBacklogCredit, "the most of the server's own backlog in reading that the rate limit and motion checks forgive while it is busy; later states are dropped as late, never counted against the player; -1s for none")
	fs.DurationVar(&o.limits.LobbyTimeout, "lobby-timeout", server.DefaultLobbyTimeout, "close a room that sits in the lobby this long without starting a round, ready or not; -1s for never")
	fs.Float64Var(&o.limits.NewIdentityRate, "new-identity-rate", server.DefaultNewIdentityRate, "new identities (hellos without a token) per second per address after the burst; -1 for no limit")
	fs.IntVar(&o.limits.NewIdentityBurst, "new-identity-burst", server.DefaultNewIdentityBurst, "new identities one address may take at once")
	fs.Float64Var(&o.limits.JoinFailRate, "join-fail-rate", server.DefaultJoinFailRate, "failed joins (unknown room codes) per second per address after the burst; then every join is refused; -1 for no limit")
	fs.IntVar(&o.limits.JoinFailBurst, "join-fail-burst", server.DefaultJoinFailBurst, "failed joins one address may make at once")
	fs.IntVar(&o.limits.MaxConns, "max-conns", 0, fmt.Sprintf("open WebSocket connections in all; more get HTTP 503 before the upgrade (0: %d, or 3/4 of -max-sockets if lower; -1 for no limit)", server.DefaultMaxConns))
	fs.IntVar(&o.limits.MaxConnsPerPrefix, "max-conns-per-prefix", 0, fmt.Sprintf("open connections per client network (/24 for IPv4, /48 for IPv6), sockets twice that (0: %d x -max-conns-per-addr; -1 for no limit)", server.DefaultConnsPerPrefix))
	fs.Float64Var(&o.limits.ConnReserve, "conn-reserve", server.DefaultConnReserve, "share of -max-conns and -max-sockets kept for addresses holding few connections (health checks, honest joins); -1 for none")
	fs.IntVar(&o.limits.MaxSockets, "max-sockets", 0, fmt.Sprintf("open TCP connections in all (handshakes, HTTP and WebSockets), keep it below the open-file limit; more are closed at accept (0: the open-file limit less 128, at most %d; -1 for no limit)", server.DefaultMaxSockets))
	fs.DurationVar(&o.limits.HeaderTimeout, "header-timeout", server.DefaultHeaderTimeout, "close a new connection that has not sent its HTTP request (the WebSocket handshake) within this time")
	fs.Float64Var(&o.recipient.RecipientRate, "recipient-rate", room.DefaultRecipientRate, "events, chat lines and synced properties relayed to one player per second, shared evenly by the players sending to it; over a sender's share, the sender is refused (rate_limited) and closed if it keeps on")
	fs.Float64Var(&o.recipient.RecipientBytes, "recipient-bytes", room.DefaultRecipientBytes, "the same budget in bytes per second")
	fs.IntVar(&o.recipient.BacklogBytes, "reliable-backlog", room.DefaultBacklogBytes, "bytes of reliable messages waiting for a player past which events, chat and properties to it are refused the same way")
	fs.DurationVar(&o.limits.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "close connections that send no message for this long (clients ping every second)")
	fs.Var(&o.proxies, "trusted-proxy", "reverse proxy (address or CIDR prefix) whose X-Forwarded-For names the client for the per-address limits (repeatable; default none: behind a proxy, set it, or every client shares the proxy's limits)")
	fs.StringVar(&o.turn.Addr, "turn-addr", "", "UDP listen address of an embedded TURN relay for direct links, e.g. :3478 (default: none)")
	fs.StringVar(&o.turn.Realm, "turn-realm", server.DefaultTURNRealm, "realm of the embedded TURN relay")
	fs.StringVar(&o.turn.PublicHost, "public-addr", "", "host (IP or DNS name) players reach this server at, named in the STUN and TURN addresses handed to them and, resolved, the relay's relayed address (default: each player gets the host it connected to; set it behind NAT or a proxy)")
	fs.StringVar(&o.stunAddr, "stun-addr", "", "UDP listen address of the server's STUN responder, which lets players behind NATs link directly (default: the -addr address over UDP; none: off)")
	fs.StringVar(&o.turn.PublicIP, "turn-public-ip", "", "relayed address of the embedded TURN relay (default: -public-addr, else the -turn-addr IP, else the host's first global address)")
	fs.StringVar(&o.turnPorts, "turn-ports", "", "UDP port range of the embedded relay's relayed sockets, e.g. 50000-50999, for a firewall (default: any port)")
	fs.StringVar(&o.turn.URL, "turn-url", "", "external TURN server for direct links, e.g. turn:turn.example.com:3478, with -turn-secret (instead of -turn-addr)")
	fs.StringVar(&o.turn.Secret, "turn-secret", "", "shared secret of the TURN REST scheme (required with -turn-url; default for -turn-addr: generated); prefer $NEARZERO_TURN_SECRET: command lines are visible to every local user")
	fs.DurationVar(&o.turn.TTL, "turn-ttl", server.DefaultTURNTTL, "lifetime of the TURN credentials handed out in the welcome")
	fs.DurationVar(&o.turn.AllocationLifetime, "turn-allocation-lifetime", server.DefaultTURNAllocationLifetime, "how long an embedded TURN allocation lives unless refreshed, whatever the client asks")
	fs.IntVar(&o.turn.AllocationsPerUser, "turn-allocations-per-user", server.DefaultTURNAllocationsPerUser, "embedded TURN allocations one player may hold at once; -1 for no limit")
	fs.IntVar(&o.turn.AllocationsPerAddr, "turn-allocations-per-addr", server.DefaultTURNAllocationsPerAddr, "embedded TURN allocations one client address may hold at once; -1 for no limit")
	fs.IntVar(&o.turn.MaxAllocations, "turn-max-allocations", 0, "embedded TURN allocations in all, each a socket counted in -max-sockets (0: a quarter of -max-sockets; -1 for no limit)")
	fs.BoolVar(&o.noDatagrams, "no-datagrams", false, "serve no datagram path: states ride the WebSocket alone (default: a QUIC endpoint on the UDP port of -addr's number carries them as datagrams; open that UDP port too)")
	fs.StringVar(&o.dgCert, "datagram-cert", "", "PEM certificate of the datagram path, with -datagram-key (default: a self-signed one made at start; clients pin its hash from the welcome, so it needs no CA)")
	fs.StringVar(&o.dgKey, "datagram-key", "", "PEM private key of -datagram-cert")
	fs.StringVar(&o.dgPublic, "datagram-public", "", "host:port or :port players reach the datagram path at, when not the host they connect to and -addr's port (a UDP port forwarded elsewhere)")
	fs.Var(&o.stun, "stun-url", "STUN server handed to players for direct links, e.g. stun:stun.example.com:3478 (repeatable)")
	fs.BoolVar(&o.version, "version", false, "print the release, protocol and rules versions and exit")
	fs.StringVar(&o.cluster.nats, "nats", "", "NATS server URL(s), comma-separated, with JetStream: makes this server one node of a cluster sharing a room directory (default: none, a single server); needs -node-id, -node-url and the same secret on every node")
	fs.StringVar(&o.cluster.nodeID, "node-id", "", "this node's id in the cluster, unique, kept across restarts (letters, digits, - and _)")
	fs.StringVar(&o.cluster.nodeURL, "node-url", "", "WebSocket URL players reach this node at directly, e.g. wss://eu-1.play.example.com/ws (redirects send them there)")
	fs.StringVar(&o.cluster.region, "region", cluster.DefaultRegion, "this node's region: new rooms go to the least-loaded node of the region the player asks for (default: the region of the node asked)")
	fs.IntVar(&o.cluster.replicas, "cluster-replicas", cluster.DefaultReplicas, "JetStream replicas of the directory buckets: 3 or 5 with a NATS cluster of as many servers, so the directory survives losing one")
	fs.DurationVar(&o.cluster.timeout, "cluster-timeout", cluster.DefaultTimeout, "how long one directory call (a NATS JetStream read or write) may take before it counts as failed")
	fs.DurationVar(&o.cluster.ttl, "cluster-ttl", cluster.DefaultTTL, "how long a directory entry outlives its node's last refresh (refreshed every third of it): how long a dead node's rooms stay listed")
	fs.BoolVar(&o.healthcheck, "healthcheck", false, "GET /healthz of the server at -addr (127.0.0.1 for an unspecified host), exit 0 if ready, 1 if not")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: nearzero-server [flags]\n\n"+
			"Runs the nearzero room server: rooms by code over WebSocket at /ws, health at\n"+
			"/healthz, Prometheus metrics at /metrics, invite pages at /join/CODE.\n"+
			"SIGTERM or SIGINT drains gracefully; a second signal stops at once.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return o, nil
}

// parsePorts parses -turn-ports: "LOW-HIGH", or empty for none.
func parsePorts(s string) ([2]uint16, error) {
	if s == "" {
		return [2]uint16{}, nil
	}
	lo, hi, ok := strings.Cut(s, "-")
	a, errA := strconv.ParseUint(lo, 10, 16)
	b, errB := strconv.ParseUint(hi, 10, 16)
	if !ok || errA != nil || errB != nil || a == 0 || b < a {
		return [2]uint16{}, fmt.Errorf("-turn-ports %q: want LOW-HIGH, e.g. 50000-50999", s)
	}
	return [2]uint16{uint16(a), uint16(b)}, nil
}

// clusterFlags are the -nats, -node-* and -region flags.
type clusterFlags struct {
	nats, nodeID, nodeURL, region string
	ttl, timeout                  time.Duration
	replicas                      int
}

// config returns the cluster configuration, or nil for a single server.
func (f *clusterFlags) config(maxRooms int, reg prometheus.Registerer, log *slog.Logger) (*cluster.Config, error) {
	if f.nats == "" {
		if f.nodeID != "" || f.nodeURL != "" {
			return nil, errors.New("-node-id and -node-url need -nats")
		}
		return nil, nil
	}
	c := &cluster.Config{URL: f.nats, NodeID: f.nodeID, PublicURL: f.nodeURL, Region: f.region, TTL: f.ttl,
		Timeout: f.timeout, Replicas: f.replicas, MaxRooms: maxRooms, Registry: reg, Log: log}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("cluster flags: %w", err)
	}
	return c, nil
}

func (o *options) config() *server.Config {
	rc := room.Config{MaxPlayers: o.roomSize, MinPlayers: o.minPlayers, SeatHold: o.seatHold, RoundLimit: o.roundLimit,
		HandshakeTimeout: o.handshake, Countdown: o.countdown, SendRate: o.sendRate, NoMotionChecks: o.noMotionChecks,
		Limits: motion.Limits{TopSpeed: o.topSpeed, TopSpeed2D: o.topSpeed2D, TeleportsPerMinute: o.teleportsPerMinute,
			WorldBounds: o.worldBounds, WorldBounds2D: o.worldBounds2D, MaxTeleport: o.maxTeleport, MaxTeleport2D: o.maxTeleport2D},
		KickBan: o.kickBan, SignalCandidates: o.signalCandidates, BacklogCredit: o.backlogCredit}
	rc.Hits = o.hits
	rc.Entities = o.entities
	rc.InputDelay = o.inputDelay.d
	rc.Entities.SpawnArea, rc.Entities.SpawnArea2D = room.Area(o.spawnArea), room.Area(o.spawnArea2D)
	rc.RecipientRate, rc.RecipientBytes, rc.BacklogBytes = o.recipient.RecipientRate, o.recipient.RecipientBytes, o.recipient.BacklogBytes
	if o.publicURL != "" {
		rc.InviteBase = o.publicURL
	}
	if rc.RoundLimit > room.DefaultMaxRoundLimit {
		rc.MaxRoundLimit = rc.RoundLimit
	}
	if rc.RoundLimit < room.DefaultMinRoundLimit {
		rc.MinRoundLimit = rc.RoundLimit
		rc.TimeWarning = rc.RoundLimit / 4
	}
	c := &server.Config{Addr: o.addr, MaxRooms: o.maxRooms, DrainGrace: o.drainGrace, Room: rc,
		OriginPatterns: o.origins} // CloseSpread's default already fits within a short DrainGrace
	l := &o.limits
	c.MaxConnsPerAddr, c.MaxRoomsPerAddr, c.IdleTimeout = l.MaxConnsPerAddr, l.MaxRoomsPerAddr, l.IdleTimeout
	c.NewIdentityRate, c.NewIdentityBurst = l.NewIdentityRate, l.NewIdentityBurst
	c.MaxRoomsPerPrefix, c.PlayingReserve, c.LobbyTimeout = l.MaxRoomsPerPrefix, l.PlayingReserve, l.LobbyTimeout
	c.MaxConns, c.MaxSockets, c.HeaderTimeout = l.MaxConns, l.MaxSockets, l.HeaderTimeout
	c.MaxConnsPerPrefix, c.ConnReserve, c.SmallNetReserve = l.MaxConnsPerPrefix, l.ConnReserve, l.SmallNetReserve
	c.JoinFailRate, c.JoinFailBurst = l.JoinFailRate, l.JoinFailBurst
	c.BusyAfter, c.OverloadAfter, c.WriteCoalesce = l.BusyAfter, l.OverloadAfter, l.WriteCoalesce
	c.TrustedProxies = o.proxies
	c.NoDatagrams, c.DatagramPublic = o.noDatagrams, o.dgPublic
	return c
}

// datagramCert loads -datagram-cert and -datagram-key; nil when neither
// is set (the server makes its own).
func (o *options) datagramCert() (*tls.Certificate, error) {
	if o.dgCert == "" && o.dgKey == "" {
		return nil, nil
	}
	if o.dgCert == "" || o.dgKey == "" {
		return nil, errors.New("-datagram-cert and -datagram-key go together")
	}
	c, err := tls.LoadX509KeyPair(o.dgCert, o.dgKey)
	if err != nil {
		return nil, fmt.Errorf("datagram certificate: %w", err)
	}
	return &c, nil
}

func newLogger(format, level string, w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: %w", level, err)
	}
	ho := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("-log-format %q: want text or json", format)
}

// run is main without the process: it returns the exit code. ready, if
// set, is called with the listen address once serving.
func run(args []string, sig <-chan os.Signal, stdout, stderr io.Writer, ready func(addr string)) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "nearzero-server:", err)
		return 2
	}
	if o.version {
		fmt.Fprintf(stdout, "nearzero-server %s protocol %d rules %d\n", version.Version, wire.ProtocolVersion, wire.RulesVersion)
		return 0
	}
	if o.healthcheck {
		return healthcheck(o.addr, stdout, stderr)
	}
	log, err := newLogger(o.logFormat, o.logLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "nearzero-server:", err)
		return 2
	}
	if err := serve(o, sig, stdout, log, ready); err != nil {
		log.Error("stopped", "err", err)
		return 1
	}
	return 0
}

func serve(o *options, sig <-chan os.Signal, stdout io.Writer, log *slog.Logger, ready func(string)) error {
	// Before the config: the connection caps' defaults follow this limit.
	files, err := server.RaiseFileLimit()
	if err != nil {
		log.Warn("open-file limit not raised; the connection caps follow the lower one", "limit", files, "err", err)
	}
	cfg := o.config()
	if err := cfg.Validate(); err != nil {
		return err
	}
	ctx := context.Background()
	st, err := store.Open(ctx, o.db)
	if err != nil {
		return err
	}
	defer st.Close()
	deps := server.Deps{Store: st, Log: log}
	if deps.DatagramCert, err = o.datagramCert(); err != nil {
		return err
	}
	secret := o.secret
	if secret == "" {
		secret = os.Getenv("NEARZERO_SECRET")
	}
	if secret != "" {
		if len(secret) < identity.MinSecret {
			return fmt.Errorf("secret is %d bytes, need at least %d", len(secret), identity.MinSecret)
		}
		deps.Secret = []byte(secret)
	}
	tc := o.turn
	tc.STUN = o.stun
	switch o.stunAddr {
	case "":
		tc.STUNAddr = o.addr // the same port number, over UDP
	case "none":
	default:
		tc.STUNAddr = o.stunAddr
	}
	if !o.noDatagrams && tc.STUNAddr == o.addr {
		// The datagram path and the STUN responder on one UDP socket, the
		// port number of -addr: QUIC packets to the one, STUN to the other.
		pc, err := net.ListenPacket("udp", o.addr)
		if err != nil {
			return fmt.Errorf("datagram path and STUN: listen on udp %s: %w", o.addr, err)
		}
		deps.DatagramConn, tc.STUNConn = server.ShareUDP(pc)
		// Closed by the server and the STUN responder as they end; these
		// cover a start that fails before either took its side.
		defer deps.DatagramConn.Close()
		defer tc.STUNConn.Close()
	}
	if tc.RelayPorts, err = parsePorts(o.turnPorts); err != nil {
		return err
	}
	if tc.Secret == "" {
		tc.Secret = os.Getenv("NEARZERO_TURN_SECRET")
	}
	turnSrv, err := server.StartTURN(tc, log)
	if err != nil {
		return err
	}
	defer turnSrv.Close()
	deps.TURN = turnSrv // seated players only; its sockets count in -max-sockets
	deps.ICEFor = turnSrv.ICEServersFor
	switch o.analytics {
	case "":
	case "-":
		deps.Analytics = analytics.NewSink(stdout, nil)
	default:
		f, err := os.OpenFile(o.analytics, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("open analytics file: %w", err)
		}
		defer f.Close()
		deps.Analytics = analytics.NewSink(f, nil)
	}
	reg := prometheus.NewRegistry() // shared by the server and the cluster metrics
	if deps.Metrics, deps.MetricsHandler, err = prom.New(reg); err != nil {
		return err
	}
	cc, err := o.cluster.config(cfg.MaxRooms, reg, log)
	if err != nil {
		return err
	}
	if cc != nil {
		if deps.Secret == nil {
			// Each node would mint its own secret: tokens of one would be
			// refused by the others.
			return errors.New("a cluster needs the same identity secret on every node: set $NEARZERO_SECRET (or -secret)")
		}
		node, err := cluster.Start(ctx, cc)
		if err != nil {
			return err
		}
		defer func() {
			closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := node.Close(closeCtx); err != nil {
				log.Warn("leaving the cluster", "err", err)
			}
		}()
		deps.Cluster = node
	}
	s, err := server.New(cfg, deps)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	<-s.Ready()
	log.Info("nearzero-server ready", "addr", ln.Addr().String(), "db", o.db, "protocol", wire.ProtocolVersion,
		"rules", wire.RulesVersion, "room_size", cfg.Room.MaxPlayers, "max_rooms", cfg.MaxRooms, "drain_grace", cfg.DrainGrace,
		"open_file_limit", files, "max_conns", cfg.Effective().MaxConns, "max_sockets", cfg.Effective().MaxSockets,
		"datagrams", s.DatagramAddr() != nil)
	if ready != nil {
		ready(ln.Addr().String())
	}

	select {
	case err := <-served:
		return err
	case got := <-sig:
		log.Info("signal: draining (send it again to stop at once)", "signal", got.String(), "grace", cfg.DrainGrace)
	}
	drainCtx, cancelDrain := context.WithTimeout(ctx, cfg.DrainGrace+30*time.Second)
	drained := make(chan error, 1)
	go func() { drained <- s.Drain(drainCtx) }()
	var drainErr error
	select {
	case drainErr = <-drained:
	case got := <-sig:
		log.Warn("second signal: stopping now", "signal", got.String())
		cancelDrain()
		drainErr = <-drained
	}
	cancelDrain()
	shutCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = errors.Join(drainErr, s.Shutdown(shutCtx), <-served)
	if err == nil {
		log.Info("stopped cleanly")
	}
	if errors.Is(err, context.Canceled) {
		return nil // a forced stop is what was asked for
	}
	return err
}

// healthcheck GETs /healthz of the server listening on addr, for a
// container's HEALTHCHECK (the image has no curl): 0 when it answers 200
// (ready), 1 otherwise (down, or 503 while draining). An unspecified host
// (":8787", "0.0.0.0:8787", "[::]:8787") is probed on 127.0.0.1.
func healthcheck(addr string, stdout, stderr io.Writer) int {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		fmt.Fprintf(stderr, "nearzero-server: healthcheck: -addr %q: %v\n", addr, err)
		return 1
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/healthz"
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		fmt.Fprintf(stderr, "nearzero-server: healthcheck: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(stdout, "%s %s\n", resp.Status, strings.Join(strings.Fields(string(body)), " ")) // one line
	if resp.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}
