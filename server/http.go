package server

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"runtime"
	"strings"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Health is what /healthz reports.
type Health struct {
	// State is "ready", or "draining" once Drain began (then /healthz
	// answers 503 so load balancers stop sending players here).
	State       string  `json:"state"`
	Rooms       int     `json:"rooms"`
	Players     int     `json:"players"` // seated players with a connection
	Connections int     `json:"connections"`
	GraceS      float64 `json:"grace_s"`                // the drain grace period
	GraceLeftS  float64 `json:"grace_left_s,omitempty"` // while draining
	BusyRooms   int     `json:"busy_rooms,omitempty"`   // while draining: rounds still running
	UptimeS     float64 `json:"uptime_s"`
	Protocol    uint16  `json:"protocol"`
	Rules       uint16  `json:"rules"`
	Go          string  `json:"go"`
	// Cluster holds the cluster figures (node, NATS state, live nodes,
	// rooms in the directory, redirects); absent for a single node.
	Cluster any `json:"cluster,omitempty"`
}

// Health returns the server's health.
func (s *Server) Health() Health {
	now := s.now()
	s.mu.Lock()
	h := Health{State: "ready", Rooms: len(s.rooms), Connections: len(s.conns),
		GraceS: s.cfg.DrainGrace.Seconds(), UptimeS: now.Seconds(),
		Protocol: wire.ProtocolVersion, Rules: wire.RulesVersion, Go: runtime.Version()}
	draining, at := s.draining, s.drainAt
	s.mu.Unlock()
	h.Players = int(s.players.Load())
	if s.cluster != nil {
		h.Cluster = s.cluster.Health()
	}
	if draining {
		h.State = "draining"
		h.GraceLeftS = max(0, (at + s.cfg.DrainGrace - now)).Seconds()
		h.BusyRooms = s.busyRooms()
	}
	return h
}

// Handler returns the server's HTTP routes:
//
//	/ws          the WebSocket endpoint (docs/protocol.md)
//	/healthz     Health as JSON; 503 while draining
//	/metrics     Prometheus metrics, when Deps.MetricsHandler is set
//	/join/CODE   the invite page for a room
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ws", s.serveWS)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	if s.metrics != nil {
		mux.Handle("GET /metrics", s.metrics)
	}
	mux.HandleFunc("GET /join/{code}", s.serveJoin)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "nearzero room server (protocol %d, rules %d)\nWebSocket: /ws  health: /healthz  metrics: /metrics\n",
			wire.ProtocolVersion, wire.RulesVersion)
	})
	return mux
}

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	h := s.Health()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if h.State != "ready" {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(h)
}

// joinPage is the invite page, CODE standing for the room code. It is the
// same for every well-formed code, open or not, so that it cannot be used
// to find open rooms; the game tries the code and says whether the room is
// still open (joins that fail are rate-limited per address). A plain
// replacement, not html/template: a parsed code holds only letters and
// digits (escaped all the same), and a game that embeds the server need
// not link a template engine.
const joinPage = `<!doctype html>
<meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Join room CODE</title>
<body style="font-family:sans-serif;text-align:center;margin-top:4em">
<p>You are invited to room</p>
<p style="font-size:3em;letter-spacing:.2em;font-family:monospace">CODE</p>
<p><a href="nearzero://join/CODE">Open the game</a>, or type the code in the game's Join screen.</p>
<p>The game will tell you if the room has already ended.</p>
</body>
`

func (s *Server) serveJoin(w http.ResponseWriter, r *http.Request) {
	code, err := protocol.ParseRoomCode(r.PathValue("code"))
	w.Header().Set("Cache-Control", "no-store")
	if err != nil { // malformed: says nothing about which rooms are open
		http.Error(w, "not a room code", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, strings.ReplaceAll(joinPage, "CODE", html.EscapeString(code)))
}
