package metrics

import (
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server/room"
)

// Namespace prefixes every metric name.
const Namespace = "nearzero"

// Metrics holds the server's metrics. It is safe for concurrent use.
type Metrics struct {
	Rooms         *Gauge
	Players       *Gauge // seated players with a connection
	Connections   *Gauge
	StatesInTotal *Counter
	RelayedTotal  *Counter
	DroppedTotal  *Counter // states dropped for slow readers
	// SchedDelaySecs is how far behind its own work the server runs: the
	// Go scheduler's delay (99th percentile, held 5 s).
	SchedDelaySecs *Gauge
	// Overloaded is 1 while the server refuses new rooms for its delay.
	Overloaded *Gauge
	// StateWritesTotal counts the messages of relayed states written
	// (RelayedTotal over it is the states each write carries).
	StateWritesTotal *Counter
	RoundsTotal      *Counter
	RestampAgeSecs   *Histogram
	rejected         *Vec[Counter]
	rejectedRoom     []*Counter // by room.Reject
	phases           *Vec[Gauge]
	kicked           *Vec[Counter]
	closes           *Vec[Counter]
	limited          *Vec[Counter]
	// StorageDropped counts storage writes dropped because the queue was
	// full (never results: they have their own path).
	StorageDropped *Counter
	// ResultsRetries counts failed attempts to store a round's results
	// (each is retried until stored).
	ResultsRetries *Counter
	// SkippedDirectTotal counts states not relayed to a recipient that
	// receives the sender over a direct link.
	SkippedDirectTotal *Counter
	// NotOwnerTotal counts shared-object states dropped because their
	// sender does not own the object (normal around a handover).
	NotOwnerTotal *Counter
	// ICERefusedTotal counts welcomes that withheld the server's own STUN
	// or TURN address: loopback or private, to a player from elsewhere.
	ICERefusedTotal *Counter
	// DirectCheatTotal counts peers players dropped from direct play
	// because their direct states failed the motion checks.
	DirectCheatTotal *Counter
	// RoundTripSecs samples the round trips rooms measure themselves
	// (a probe in each pong, answered through the client's send queue).
	RoundTripSecs *Histogram
	// RTTCappedTotal counts claimed round trips cut to the measured one:
	// a client claiming more delay than it has (hits in the past).
	RTTCappedTotal *Counter
	// RTTFlaggedTotal counts players flagged for claims that kept
	// exceeding the round trip the server measured (room.RoundTripFlags).
	RTTFlaggedTotal *Counter
	// TeleportsTotal counts accepted teleports (respawns that jumped).
	TeleportsTotal *Counter
	// TURNAllocations is the embedded TURN relay's live allocations.
	TURNAllocations *Gauge
	// Panics counts panics recovered in server goroutines (a room closed,
	// a connection closed or a background loop restarted): each is a bug.
	Panics *Counter
	// DatagramLinks counts connections with a bound datagram path.
	DatagramLinks *Gauge
	// DatagramStatesIn and DatagramStatesOut count state frames received
	// and sent over datagram paths (a subset of StatesInTotal and
	// RelayedTotal).
	DatagramStatesIn, DatagramStatesOut *Counter
	// DatagramReordered counts states of sessions with a datagram path
	// dropped because a newer state of the same entity had arrived first
	// (UDP reorders, and the two paths overtake each other at a switch).
	DatagramReordered *Counter
	// DatagramFallbacks counts datagram paths that went down while bound
	// (their states then go by the WebSocket).
	DatagramFallbacks *Counter

	families []Family
}

// Kind is the type of a metric family.
type Kind int

// Kinds of metric families.
const (
	KindCounter Kind = iota
	KindGauge
	KindHistogram
)

// Family is one metric as an exporter names it: a single series
// (Counter, Gauge or Histogram set) or a labelled family (Counters or
// Gauges set, with Label the label's name).
type Family struct {
	Name, Help string // Name without the Namespace prefix
	Kind       Kind
	Counter    *Counter
	Gauge      *Gauge
	Histogram  *Histogram
	Label      string
	Counters   *Vec[Counter]
	Gauges     *Vec[Gauge]
}

// Families returns every metric with its name and help, for an exporter
// (metrics/prom).
func (m *Metrics) Families() []Family { return m.families }

// Per-address and abuse limits, the label of nearzero_limited_total.
const (
	LimitConnsPerAddr   = "conns_per_addr"   // a connection over Config.MaxConnsPerAddr
	LimitRoomsPerAddr   = "rooms_per_addr"   // a create over Config.MaxRoomsPerAddr
	LimitRoomsPerNet    = "rooms_per_prefix" // a create over Config.MaxRoomsPerPrefix
	LimitLobbies        = "lobbies"          // a create refused to keep Config.PlayingReserve
	LimitConns          = "conns"            // a connection over Config.MaxConns (HTTP 503)
	LimitSockets        = "sockets"          // a connection closed at accept over Config.MaxSockets
	LimitSocketsPerAddr = "sockets_per_addr" // the same over one address's share
	LimitIdleLobby      = "idle_lobby"       // a room closed after Config.LobbyTimeout in the lobby, nobody ready
	LimitNewIdentities  = "new_identities"   // a tokenless hello over Config.NewIdentityRate
	LimitJoinFailures   = "join_failures"    // a join refused after too many failed joins
	LimitIdle           = "idle"             // a connection closed after Config.IdleTimeout of silence
	LimitPingFrames     = "ping_frames"      // a connection closed for WebSocket ping/pong floods
	LimitConnsPerNet    = "conns_per_prefix" // a connection over Config.MaxConnsPerPrefix
	LimitConnsReserve   = "conns_reserve"    // a connection refused to keep Config.ConnReserve for addresses holding few
	LimitSocketsPerNet  = "sockets_per_prefix"
	LimitSocketsReserve = "sockets_reserve" // a connection closed at accept to keep Config.ConnReserve of MaxSockets
	LimitSmallNets      = "small_nets"      // a create refused to keep Config.SmallNetReserve for networks holding few rooms
	LimitTURNQuota      = "turn_quota"      // a TURN allocation over a user's, an address's or the relay's quota
	LimitTURNUnseated   = "turn_unseated"   // a TURN request with the credentials of a player holding no seat
	LimitTURNExpired    = "turn_expired"    // a TURN allocation closed for not being refreshed in its lifetime
	LimitDatagrams      = "datagrams"       // a connection closed for a datagram flood
	LimitDatagramBinds  = "datagram_binds"  // a QUIC connection refused after too many failed bindings
	LimitOverload       = "overload"        // a create refused while the server is overloaded (Config.OverloadAfter)
)

// Limits lists the limit labels (for docs and tests).
func Limits() []string {
	return []string{LimitConnsPerAddr, LimitRoomsPerAddr, LimitNewIdentities, LimitJoinFailures, LimitIdle, LimitPingFrames,
		LimitRoomsPerNet, LimitLobbies, LimitIdleLobby, LimitConns, LimitSockets, LimitSocketsPerAddr,
		LimitConnsPerNet, LimitConnsReserve, LimitSocketsPerNet, LimitSocketsReserve, LimitSmallNets,
		LimitTURNQuota, LimitTURNUnseated, LimitTURNExpired, LimitOverload,
		LimitDatagrams, LimitDatagramBinds}
}

// Connection-level rejection reasons (the room's come from room.Reject).
const (
	ReasonNotInRoom  = "not_in_room" // a state or room message before joining
	ReasonOversized  = "oversized"   // a message over the read limit
	ReasonTextFrame  = "text_frame"  // a WebSocket text message
	ReasonBadHello   = "bad_hello"   // first message not a valid Hello
	ReasonBadToken   = "bad_token"   // token not ours
	ReasonVersion    = "version"     // another protocol or rules version
	ReasonHelloSlow  = "hello_timeout"
	ReasonJoinFailed = "join_failed" // room full or not found
	ReasonDatagram   = "datagram"    // a datagram that is no state, ping, echo or keepalive
)

// New creates the metrics.
func New() *Metrics {
	m := &Metrics{
		Rooms: new(Gauge), Players: new(Gauge), Connections: new(Gauge),
		StatesInTotal: new(Counter), RelayedTotal: new(Counter), SkippedDirectTotal: new(Counter),
		DirectCheatTotal: new(Counter), RTTCappedTotal: new(Counter), RTTFlaggedTotal: new(Counter), ICERefusedTotal: new(Counter),
		TeleportsTotal: new(Counter), TURNAllocations: new(Gauge),
		RoundTripSecs: NewHistogram(0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28),
		NotOwnerTotal: new(Counter), DroppedTotal: new(Counter), RoundsTotal: new(Counter), StateWritesTotal: new(Counter),
		SchedDelaySecs: new(Gauge), Overloaded: new(Gauge),
		RestampAgeSecs: NewHistogram(-0.01, 0, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28),
		rejected:       new(Vec[Counter]), phases: new(Vec[Gauge]), kicked: new(Vec[Counter]),
		closes: new(Vec[Counter]), limited: new(Vec[Counter]),
		StorageDropped: new(Counter), ResultsRetries: new(Counter), Panics: new(Counter),
		DatagramLinks: new(Gauge), DatagramStatesIn: new(Counter), DatagramStatesOut: new(Counter),
		DatagramReordered: new(Counter), DatagramFallbacks: new(Counter),
	}
	for _, l := range Limits() {
		m.limited.With(l)
	}
	for _, r := range room.Rejects() { // in order: the index is the Reject
		m.rejectedRoom = append(m.rejectedRoom, m.rejected.With(r.String()))
	}
	for _, r := range []string{ReasonNotInRoom, ReasonOversized, ReasonTextFrame, ReasonBadHello, ReasonBadToken,
		ReasonVersion, ReasonHelloSlow, ReasonJoinFailed, ReasonDatagram} {
		m.rejected.With(r)
	}
	for _, p := range protocol.Phases {
		m.phases.With(string(p))
	}
	c := func(name, help string, v *Counter) Family {
		return Family{Name: name, Help: help, Kind: KindCounter, Counter: v}
	}
	g := func(name, help string, v *Gauge) Family {
		return Family{Name: name, Help: help, Kind: KindGauge, Gauge: v}
	}
	cv := func(name, help, label string, v *Vec[Counter]) Family {
		return Family{Name: name, Help: help, Kind: KindCounter, Label: label, Counters: v}
	}
	m.families = []Family{
		g("rooms", "Rooms open.", m.Rooms),
		g("players", "Seated players with a live connection.", m.Players),
		g("connections", "Open WebSocket connections.", m.Connections),
		c("states_in_total", "State frames received from players.", m.StatesInTotal),
		c("states_relayed_total", "State frames relayed to other players (one per recipient).", m.RelayedTotal),
		c("states_skipped_direct_total", "State frames not relayed because the recipient receives the sender over a direct link (one per recipient).", m.SkippedDirectTotal),
		c("ice_refused_total", "Welcomes that withheld the server's own STUN or TURN address because it is loopback or private and the player came from elsewhere (set -public-addr).", m.ICERefusedTotal),
		c("direct_cheat_reports_total", "Peers players dropped from direct play because their direct states failed the motion checks.", m.DirectCheatTotal),
		c("states_not_owner_total", "Shared-object states dropped because the sender does not own the object (in flight during a handover).", m.NotOwnerTotal),
		c("state_writes_total", "Messages of relayed states written (states_relayed_total over this is how many states each write carries).", m.StateWritesTotal),
		c("states_dropped_total", "Relayed states dropped because the recipient read too slowly (oldest first).", m.DroppedTotal),
		g("sched_delay_seconds", "How far behind its own work the server runs: the Go scheduler's delay, 99th percentile, held 5 s (rooms credit their players' states with their backlog from -busy-after).", m.SchedDelaySecs),
		g("overloaded", "1 while the server refuses new rooms because its delay reached -overload-after.", m.Overloaded),
		c("rounds_started_total", "Rounds started (start handshakes begun).", m.RoundsTotal),
		{Name: "restamp_age_seconds", Kind: KindHistogram, Histogram: m.RestampAgeSecs,
			Help: "Arrival minus re-stamped sample time of sampled states: the one-way delay the shared re-stamp estimator attributes to them."},
		{Name: "round_trip_seconds", Kind: KindHistogram, Histogram: m.RoundTripSecs,
			Help: "Round trips the server measured itself: a probe in each pong, answered through the client's send queue."},
		c("rtt_claims_capped_total", "Round trips claimed in pings that the server cut to the one it measured (plus slack).", m.RTTCappedTotal),
		c("rtt_flagged_total", "Players whose claimed round trips kept exceeding the measured one (their claims are then trusted no further than it).", m.RTTFlaggedTotal),
		c("teleports_total", "Teleports accepted (states flagged as a respawn that jumped, each within the room's MaxTeleport).", m.TeleportsTotal),
		g("turn_allocations", "Allocations open on the embedded TURN relay (each holds a socket, counted in -max-sockets).", m.TURNAllocations),
		cv("rejected_total", "Frames and requests refused, by reason.", "reason", m.rejected),
		{Name: "room_phase", Help: "Rooms in each phase of the round flow.", Kind: KindGauge, Label: "phase", Gauges: m.phases},
		cv("kicked_total", "Players disconnected for repeated abuse, by close code.", "code", m.kicked),
		cv("closes_total", "Connections the server closed, by close code.", "code", m.closes),
		cv("limited_total", "Requests and connections refused or closed by a per-address or abuse limit, by limit.", "limit", m.limited),
		c("storage_dropped_total", "Storage writes (names) dropped because the write queue was full; results are never dropped.", m.StorageDropped),
		c("results_retries_total", "Failed attempts to store round results; each is retried until stored.", m.ResultsRetries),
		c("panics_total", "Panics recovered in server goroutines (room closed, connection closed or loop restarted); each is a bug.", m.Panics),
		g("datagram_links", "Connections with a bound datagram path (QUIC).", m.DatagramLinks),
		c("datagram_states_in_total", "State frames received over datagram paths.", m.DatagramStatesIn),
		c("datagram_states_out_total", "State frames sent over datagram paths.", m.DatagramStatesOut),
		c("datagram_reordered_total", "States of sessions with a datagram path dropped because a newer state of the entity had arrived first (UDP reorders; the two paths overtake each other at a switch).", m.DatagramReordered),
		c("datagram_fallbacks_total", "Datagram paths that went down while bound (states then go by the WebSocket).", m.DatagramFallbacks),
	}
	return m
}

// StatesIn implements room.Metrics.
func (m *Metrics) StatesIn(n int) { m.StatesInTotal.Add(float64(n)) }

// StatesRelayed implements room.Metrics.
func (m *Metrics) StatesRelayed(n int) {
	if n > 0 {
		m.RelayedTotal.Add(float64(n))
	}
}

// StatesSkippedDirect implements room.DirectMetrics.
func (m *Metrics) StatesSkippedDirect(n int) { m.SkippedDirectTotal.Add(float64(n)) }

// RoundTripMeasured implements room.RoundTripMetrics.
func (m *Metrics) RoundTripMeasured(d time.Duration) { m.RoundTripSecs.Observe(d.Seconds()) }

// RoundTripCapped implements room.RoundTripMetrics.
func (m *Metrics) RoundTripCapped() { m.RTTCappedTotal.Inc() }

// RoundTripFlagged implements room.RoundTripFlags.
func (m *Metrics) RoundTripFlagged() { m.RTTFlaggedTotal.Inc() }

// Teleported implements room.TeleportMetrics.
func (m *Metrics) Teleported() { m.TeleportsTotal.Inc() }

// DirectCheatReported implements room.DirectReportMetrics.
func (m *Metrics) DirectCheatReported() { m.DirectCheatTotal.Inc() }

// StatesNotOwner implements room.EntityMetrics.
func (m *Metrics) StatesNotOwner(n int) { m.NotOwnerTotal.Add(float64(n)) }

// Rejected implements room.Metrics.
func (m *Metrics) Rejected(r room.Reject) {
	if int(r) < len(m.rejectedRoom) {
		m.rejectedRoom[r].Inc()
		return
	}
	m.rejected.With(r.String()).Inc()
}

// RejectedConn counts a connection-level rejection (the Reason* constants).
func (m *Metrics) RejectedConn(reason string) { m.rejected.With(reason).Inc() }

// Limited counts a refusal or close by one of the Limit* limits.
func (m *Metrics) Limited(limit string) { m.limited.With(limit).Inc() }

// RestampAge implements room.Metrics.
func (m *Metrics) RestampAge(d time.Duration) { m.RestampAgeSecs.Observe(d.Seconds()) }

// PhaseChanged implements room.Metrics.
func (m *Metrics) PhaseChanged(from, to protocol.Phase) {
	if from != "" {
		m.phases.With(string(from)).Dec()
	}
	if to != "" {
		m.phases.With(string(to)).Inc()
	}
	if to == protocol.PhaseHandshake {
		m.RoundsTotal.Inc()
	}
}

// Kicked implements room.Metrics.
func (m *Metrics) Kicked(code protocol.Code) { m.kicked.With(code.String()).Inc() }

// Closed counts a connection the server closed with code.
func (m *Metrics) Closed(code protocol.Code) { m.closes.With(code.String()).Inc() }

var (
	_ room.Metrics          = (*Metrics)(nil)
	_ room.RoundTripMetrics = (*Metrics)(nil)
	_ room.RoundTripFlags   = (*Metrics)(nil)
	_ room.TeleportMetrics  = (*Metrics)(nil)
)
