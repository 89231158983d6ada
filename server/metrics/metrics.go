package metrics

import (
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/room"
)

// Namespace prefixes every metric name.
const Namespace = "nearzero"

// Metrics holds the server's metrics. It is safe for concurrent use.
type Metrics struct {
	Rooms          prometheus.Gauge
	Players        prometheus.Gauge // seated players with a connection
	Connections    prometheus.Gauge
	StatesInTotal  prometheus.Counter
	RelayedTotal   prometheus.Counter
	DroppedTotal   prometheus.Counter // states dropped for slow readers
	RoundsTotal    prometheus.Counter
	RestampAgeSecs prometheus.Histogram
	rejected       *prometheus.CounterVec
	rejectedRoom   []prometheus.Counter // by room.Reject
	phases         *prometheus.GaugeVec
	kicked         *prometheus.CounterVec
	closes         *prometheus.CounterVec
	limited        *prometheus.CounterVec
	// StorageDropped counts storage writes dropped because the queue was
	// full (never results: they have their own path).
	StorageDropped prometheus.Counter
	// ResultsRetries counts failed attempts to store a round's results
	// (each is retried until stored).
	ResultsRetries prometheus.Counter
	// SkippedDirectTotal counts states not relayed to a recipient that
	// receives the sender over a direct link.
	SkippedDirectTotal prometheus.Counter
	// NotOwnerTotal counts shared-object states dropped because their
	// sender does not own the object (normal around a handover).
	NotOwnerTotal prometheus.Counter
	// Panics counts panics recovered in server goroutines (a room closed,
	// a connection closed or a background loop restarted): each is a bug.
	Panics prometheus.Counter
}

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
)

// Limits lists the limit labels (for docs and tests).
func Limits() []string {
	return []string{LimitConnsPerAddr, LimitRoomsPerAddr, LimitNewIdentities, LimitJoinFailures, LimitIdle, LimitPingFrames,
		LimitRoomsPerNet, LimitLobbies, LimitIdleLobby, LimitConns, LimitSockets, LimitSocketsPerAddr}
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
)

// New creates the metrics and registers them on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Rooms: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "rooms",
			Help: "Rooms open."}),
		Players: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "players",
			Help: "Seated players with a live connection."}),
		Connections: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "connections",
			Help: "Open WebSocket connections."}),
		StatesInTotal: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "states_in_total",
			Help: "State frames received from players."}),
		RelayedTotal: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "states_relayed_total",
			Help: "State frames relayed to other players (one per recipient)."}),
		SkippedDirectTotal: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "states_skipped_direct_total",
			Help: "State frames not relayed because the recipient receives the sender over a direct link (one per recipient)."}),
		NotOwnerTotal: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "states_not_owner_total",
			Help: "Shared-object states dropped because the sender does not own the object (in flight during a handover)."}),
		DroppedTotal: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "states_dropped_total",
			Help: "Relayed states dropped because the recipient read too slowly (oldest first)."}),
		RoundsTotal: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "rounds_started_total",
			Help: "Rounds started (start handshakes begun)."}),
		RestampAgeSecs: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "restamp_age_seconds",
			Help:    "Arrival minus re-stamped sample time of sampled states: the one-way delay the shared re-stamp estimator attributes to them.",
			Buckets: []float64{-0.01, 0, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28}}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "rejected_total",
			Help: "Frames and requests refused, by reason."}, []string{"reason"}),
		phases: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "room_phase",
			Help: "Rooms in each phase of the round flow."}, []string{"phase"}),
		kicked: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "kicked_total",
			Help: "Players disconnected for repeated abuse, by close code."}, []string{"code"}),
		closes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "closes_total",
			Help: "Connections the server closed, by close code."}, []string{"code"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "limited_total",
			Help: "Requests and connections refused or closed by a per-address or abuse limit, by limit."}, []string{"limit"}),
		StorageDropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "storage_dropped_total",
			Help: "Storage writes (names) dropped because the write queue was full; results are never dropped."}),
		ResultsRetries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "results_retries_total",
			Help: "Failed attempts to store round results; each is retried until stored."}),
		Panics: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "panics_total",
			Help: "Panics recovered in server goroutines (room closed, connection closed or loop restarted); each is a bug."}),
	}
	for _, l := range Limits() {
		m.limited.WithLabelValues(l)
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help: "Build information; always 1."}, []string{"protocol", "rules", "go"})
	build.WithLabelValues(strconv.Itoa(int(wire.ProtocolVersion)), strconv.Itoa(int(wire.RulesVersion)), runtime.Version()).Set(1)
	for _, r := range room.Rejects() { // in order: the index is the Reject
		m.rejectedRoom = append(m.rejectedRoom, m.rejected.WithLabelValues(r.String()))
	}
	for _, r := range []string{ReasonNotInRoom, ReasonOversized, ReasonTextFrame, ReasonBadHello, ReasonBadToken,
		ReasonVersion, ReasonHelloSlow, ReasonJoinFailed} {
		m.rejected.WithLabelValues(r)
	}
	for _, p := range protocol.Phases {
		m.phases.WithLabelValues(string(p))
	}
	for _, c := range []prometheus.Collector{m.Rooms, m.Players, m.Connections, m.StatesInTotal, m.RelayedTotal,
		m.DroppedTotal, m.RoundsTotal, m.RestampAgeSecs, m.rejected, m.phases, m.kicked, m.closes, m.limited, m.StorageDropped, m.ResultsRetries, m.SkippedDirectTotal, m.NotOwnerTotal, m.Panics, build} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	return m, nil
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

// StatesNotOwner implements room.EntityMetrics.
func (m *Metrics) StatesNotOwner(n int) { m.NotOwnerTotal.Add(float64(n)) }

// Rejected implements room.Metrics.
func (m *Metrics) Rejected(r room.Reject) {
	if int(r) < len(m.rejectedRoom) {
		m.rejectedRoom[r].Inc()
		return
	}
	m.rejected.WithLabelValues(r.String()).Inc()
}

// RejectedConn counts a connection-level rejection (the Reason* constants).
func (m *Metrics) RejectedConn(reason string) { m.rejected.WithLabelValues(reason).Inc() }

// Limited counts a refusal or close by one of the Limit* limits.
func (m *Metrics) Limited(limit string) { m.limited.WithLabelValues(limit).Inc() }

// RestampAge implements room.Metrics.
func (m *Metrics) RestampAge(d time.Duration) { m.RestampAgeSecs.Observe(d.Seconds()) }

// PhaseChanged implements room.Metrics.
func (m *Metrics) PhaseChanged(from, to protocol.Phase) {
	if from != "" {
		m.phases.WithLabelValues(string(from)).Dec()
	}
	if to != "" {
		m.phases.WithLabelValues(string(to)).Inc()
	}
	if to == protocol.PhaseHandshake {
		m.RoundsTotal.Inc()
	}
}

// Kicked implements room.Metrics.
func (m *Metrics) Kicked(code protocol.Code) { m.kicked.WithLabelValues(code.String()).Inc() }

// Closed counts a connection the server closed with code.
func (m *Metrics) Closed(code protocol.Code) { m.closes.WithLabelValues(code.String()).Inc() }

var _ room.Metrics = (*Metrics)(nil)
