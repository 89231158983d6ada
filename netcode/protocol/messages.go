package protocol

import (
	"encoding/json"
	"fmt"

	"github.com/nearzero/nearzero/netcode/wire"
)

// Control message types. Values below 64 go from client to server, values
// from 64 up from server to client; Signal goes both ways. Never renumber.
const (
	TypeHello      wire.ControlType = 1
	TypeCreate     wire.ControlType = 2
	TypeJoin       wire.ControlType = 3
	TypeLeave      wire.ControlType = 4
	TypeSetName    wire.ControlType = 5
	TypeLoading    wire.ControlType = 6
	TypeReady      wire.ControlType = 7
	TypeSettings   wire.ControlType = 8
	TypeStart      wire.ControlType = 9
	TypeInPosition wire.ControlType = 10
	TypeFinish     wire.ControlType = 11
	TypeVote       wire.ControlType = 12
	TypePing       wire.ControlType = 13
	TypeDirectLink wire.ControlType = 14
	TypeSignal     wire.ControlType = 15
	TypeInvite     wire.ControlType = 16
	TypeKick       wire.ControlType = 17

	TypeWelcome wire.ControlType = 64
	TypeJoined  wire.ControlType = 65
	TypeRoom    wire.ControlType = 66
	TypeNotice  wire.ControlType = 67
	TypeResults wire.ControlType = 68
	TypePong    wire.ControlType = 69
	TypeError   wire.ControlType = 70
	TypeLeft    wire.ControlType = 71
)

// TypeName returns the snake_case name of a control type ("hello"), or
// "type_N" for an unknown one.
func TypeName(t wire.ControlType) string {
	if f, ok := registry[t]; ok {
		return f.name
	}
	return fmt.Sprintf("type_%d", t)
}

// Message is a control message body. Its Type says which.
type Message interface {
	Type() wire.ControlType
}

// Hello is the first message on a connection. It must arrive within the
// server's hello time-out (5 s by default).
type Hello struct {
	// Rules is the client's wire.RulesVersion; another value is refused
	// with CodeUpdateRequired. (The protocol version is in the frame header.)
	Rules uint16 `json:"rules"`
	// Token is the identity token from an earlier Welcome; empty asks for a
	// new anonymous identity.
	Token string `json:"token,omitempty"`
	// Name is the display name to use; empty keeps the stored one (or gets
	// a generated "Player-XXXX" for a new identity).
	Name string `json:"name,omitempty"`
	// Client names the client build for logs ("godot-4.3/nearzero-0.1"); at
	// most 64 bytes.
	Client string `json:"client,omitempty"`
}

// Welcome answers Hello: who the client is and the server's limits.
type Welcome struct {
	User     string `json:"user"`      // stable anonymous user id
	Token    string `json:"token"`     // keep it and send it in the next Hello
	Name     string `json:"name"`      // the display name in use
	ServerUS int64  `json:"server_us"` // server clock when sent
	Protocol uint16 `json:"protocol"`
	Rules    uint16 `json:"rules"`
	Draining bool   `json:"draining,omitempty"` // no new rooms: go elsewhere
	Limits   Limits `json:"limits"`
	// ICEServers are the STUN servers for direct links (absent when the
	// server offers none). The TURN servers, with their credentials, come
	// with a seat: Joined.ICEServers. Servers from before that put TURN
	// here too; a client uses Joined's list when it has one. Added after
	// protocol 1 shipped: old clients ignore it.
	ICEServers []ICEServer `json:"ice_servers,omitempty"`
	// Nodes are the public URLs of the other live nodes of a cluster
	// (absent from a single server): where a client reconnects when this
	// node is gone, to be told where its room went, or that it is lost.
	// Added after protocol 1 shipped: old clients ignore it.
	Nodes []string `json:"nodes,omitempty"`
	// Datagram offers the datagram path for states (absent when the
	// server has it off). Added after protocol 4 shipped: old clients
	// ignore it and keep every state on the WebSocket.
	Datagram *DatagramOffer `json:"datagram,omitempty"`
}

// DatagramOffer is the datagram path a welcome offers (docs/protocol.md,
// "Datagram path"; netcode/datagram): a QUIC endpoint that carries the
// states, and the pings that map their clocks, as unreliable datagrams.
type DatagramOffer struct {
	// Port is the UDP port to reach it at, on the host of the WebSocket
	// URL unless Host is set.
	Port int `json:"port"`
	// Host, when set, is the host to reach it at instead.
	Host string `json:"host,omitempty"`
	// CertSHA256 is the SHA-256 hash of the server's certificate (DER),
	// 64 hex digits: the client accepts that certificate and no other,
	// so a self-signed one needs no CA.
	CertSHA256 string `json:"cert_sha256"`
	// Token is the one-time binding token (32 hex digits) that ties a
	// QUIC connection to this WebSocket session.
	Token string `json:"token"`
}

// ICEServer is one STUN or TURN server for direct links, as WebRTC's
// RTCIceServer: URLs such as "stun:host:3478" or
// "turn:host:3478?transport=udp", and for TURN a username and credential
// (the TURN REST scheme: username "expiry:user", credential
// base64(HMAC-SHA1(secret, username)), valid until expiry, Unix seconds).
type ICEServer struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username,omitempty"`
	Credential string   `json:"credential,omitempty"`
}

// Limits are the server's limits a client should respect.
type Limits struct {
	MaxPlayers int     `json:"max_players"` // seats per room
	SendRate   float64 `json:"send_rate"`   // expected states per second
	MaxStates  float64 `json:"max_states"`  // states per second before rate limiting
	NameMax    int     `json:"name_max"`    // display name length in characters
	SeatHoldUS int64   `json:"seat_hold_us"`
	// Motion are the room's motion check limits, by which clients check
	// the states their direct peers send them (those skip the server's
	// checks). Added after protocol 1 shipped: absent from older servers,
	// whose clients use netcode/motion's defaults.
	Motion *Motion `json:"motion,omitempty"`
}

// Motion are the parameters of the motion checks (netcode/motion.Limits;
// durations in microseconds).
type Motion struct {
	Off                 bool    `json:"off,omitempty"` // the room checks no motion
	TopSpeed            float64 `json:"top_speed"`
	TopSpeed2D          float64 `json:"top_speed_2d"`
	SpeedFactor         float64 `json:"speed_factor"`
	MoveSlack           float64 `json:"move_slack"`
	MoveSlack2D         float64 `json:"move_slack_2d"`
	MoveSlackRefillUS   int64   `json:"move_slack_refill_us"`
	StampGapAllowanceUS int64   `json:"stamp_gap_allowance_us"`
	TeleportEveryUS     int64   `json:"teleport_every_us"`
	TeleportsPerMinute  float64 `json:"teleports_per_minute"`
	WorldBounds         float64 `json:"world_bounds,omitempty"`
	WorldBounds2D       float64 `json:"world_bounds_2d,omitempty"`
	// MaxTeleport and MaxTeleport2D bound one teleport's jump (negative:
	// none); absent from older servers, whose clients take the default.
	MaxTeleport   float64 `json:"max_teleport,omitempty"`
	MaxTeleport2D float64 `json:"max_teleport_2d,omitempty"`
}

// Create asks for a new room; the answer is Joined (or Error). In a
// cluster the answer may be an Error with CodeRedirect: create it again at
// the Error's URL, with Placed set.
type Create struct {
	Settings *Settings `json:"settings,omitempty"`
	// Region asks a cluster for a node of this region; empty means the
	// region of the node connected to. A single server ignores it.
	Region string `json:"region,omitempty"`
	// Placed says a cluster already chose this node (the create follows a
	// redirect): open the room here rather than place it again.
	Placed bool `json:"placed,omitempty"`
}

// Via says how a player arrived in a room (for the analytics funnel).
type Via string

// Ways to arrive.
const (
	ViaCreate    Via = "create"    // made the room
	ViaCode      Via = "code"      // typed the code
	ViaLink      Via = "link"      // opened an invite link
	ViaReconnect Via = "reconnect" // came back after losing the connection
)

// Valid reports whether v is one of the defined values.
func (v Via) Valid() bool {
	switch v {
	case ViaCreate, ViaCode, ViaLink, ViaReconnect:
		return true
	}
	return false
}

// Join asks for a seat in the room with Code; the answer is Joined (or
// Error). A user who still holds a seat there gets it back, slot and all.
type Join struct {
	Code string `json:"code"`          // a room code or an invite link
	Via  Via    `json:"via,omitempty"` // default ViaCode
}

// Joined tells a client it has a seat.
type Joined struct {
	Code        string    `json:"code"`
	Invite      string    `json:"invite"` // link to share
	Slot        int       `json:"slot"`   // the client's slot: its states carry it
	Reconnected bool      `json:"reconnected,omitempty"`
	Room        RoomState `json:"room"`
	// ICEServers are the STUN and TURN servers for this seat's direct
	// links, TURN ones with credentials of this player, good while it
	// holds the seat (absent when the server offers none, and from
	// servers that hand them out in Welcome). Each seat, a reconnect's
	// too, gets fresh ones. Added after protocol 1 shipped: old clients
	// ignore it.
	ICEServers []ICEServer `json:"ice_servers,omitempty"`
}

// Leave gives the seat up at once (a mid-round leave is a did-not-finish).
type Leave struct{}

// Left confirms a Leave.
type Left struct {
	Reason string `json:"reason,omitempty"`
}

// SetName changes the display name (NormalizeName rules).
type SetName struct {
	Name string `json:"name"`
}

// Loading reports level loading progress in the lobby, 0 to 1; 1 is loaded.
type Loading struct {
	Progress float64 `json:"progress"`
}

// Ready sets or clears the ready flag in the lobby.
type Ready struct {
	Ready bool `json:"ready"`
}

// Settings are the host's room settings. Sent by the host in the lobby;
// changing them clears everyone's ready flag.
type Settings struct {
	// RoundUS is the round time limit in microseconds; 0 means the server's
	// default (3 minutes unless configured).
	RoundUS int64 `json:"round_us,omitempty"`
	// Game is opaque game data (track, mode...), at most MaxGameSettings bytes of JSON.
	Game json.RawMessage `json:"game,omitempty"`
	// MaxPlayers is the room's size: at most this many seats (held ones
	// included); 0 means the server's maximum. A room state carries the
	// size in force. Protocol 5 and later.
	MaxPlayers int `json:"max_players,omitempty"`
	// InputDelay is the room's input delay (netcode/inputdelay); nil or
	// mode off: none. A server that sets it (room.Config.InputDelay)
	// refuses another. Added after protocol 1 shipped: old servers
	// ignore it, old clients never send it.
	InputDelay *InputDelay `json:"input_delay,omitempty"`
}

// Input delay modes (InputDelay.Mode).
const (
	InputDelayOff      = ""         // no input delay
	InputDelayFixed    = "fixed"    // US, always
	InputDelayAdaptive = "adaptive" // follows the room's round trips, up to CapUS
)

// MaxInputDelayUS bounds InputDelay.US and CapUS (250 ms): beyond it the
// owner's own input lag is more than any game can hide.
const MaxInputDelayUS = 250_000

// InputDelay is a room's input delay setting: every player shows its own
// entity that much late and places the others' states that far ahead
// (netcode/inputdelay), so receivers draw data of the future.
type InputDelay struct {
	// Mode is InputDelayOff, InputDelayFixed or InputDelayAdaptive.
	Mode string `json:"mode,omitempty"`
	// US is the fixed delay in microseconds (mode fixed), 0 to
	// MaxInputDelayUS.
	US int64 `json:"us,omitempty"`
	// CapUS is the most the adaptive delay may reach (mode adaptive), 0
	// to MaxInputDelayUS; 0 means MaxInputDelayUS.
	CapUS int64 `json:"cap_us,omitempty"`
}

// InputDelayState is the input delay in force (RoomState): at server
// time t every player applies inputdelay.Slide(FromUS, US, AtUS, t), the
// delay sliding from FromUS toward US from AtUS at inputdelay.Slew, so
// that every player applies the same one at the same moment.
type InputDelayState struct {
	// InputDelay is the room's setting; in mode adaptive US is the delay
	// the server chose from the players' round trips.
	InputDelay
	// FromUS is the delay in force before the last change, AtUS the
	// server time of that change.
	FromUS int64 `json:"from_us,omitempty"`
	AtUS   int64 `json:"at_us,omitempty"`
}

// MaxGameSettings is the largest Settings.Game in bytes.
const MaxGameSettings = 2048

// Start is the host's start button.
type Start struct{}

// InPosition reports, during the start handshake, that the player's entity
// is at its start position.
type InPosition struct{}

// Finish reports that the player finished the round, with a game score.
type Finish struct {
	Score float64 `json:"score,omitempty"`
}

// Vote casts or withdraws a restart vote (playing or results phase). Once
// every connected player voted, a new round starts.
type Vote struct {
	Restart bool `json:"restart"`
}

// Ping is the clock-sync probe. The server answers at once with Pong.
type Ping struct {
	// TUS is the client's clock when sent, echoed in the Pong.
	TUS int64 `json:"t_us"`
	// RTTUS is the client's best round trip so far (0 if none): the
	// fastest trip each way (clock.Sync.Trips); the server feeds it to the
	// re-stamp estimator for this player.
	RTTUS int64 `json:"rtt_us,omitempty"`
	// GapUS is the client's lowest gap from a pong's ServerUS to its
	// receipt, on the client's clock (clock.Sync.ReturnGap), µs; nil
	// before the first pong. The server adds its own lowest gap of the
	// client's states to it: a round trip of the fastest trip each way,
	// which maps the client's stamps more closely than RTTUS.
	GapUS *int64 `json:"gap_us,omitempty"`
}

// Pong answers Ping.
type Pong struct {
	TUS      int64 `json:"t_us"`      // the Ping's TUS
	ServerUS int64 `json:"server_us"` // server clock when answered
	// Probe, when not 0, asks the client to answer with Echo{Probe} at
	// once: the server measures the round trip itself (TypeEcho). Added
	// after protocol 1 shipped: older clients ignore it.
	Probe uint32 `json:"probe,omitempty"`
}

// DirectLink reports that the direct link to Slot went up or down. Once both
// players of a pair report it up, the server stops relaying their states to
// each other (it still receives them).
type DirectLink struct {
	Slot int  `json:"slot"`
	Up   bool `json:"up"`
	// Reason, on a link reported down, says why when it is not silence:
	// DirectCheat when Slot's direct states failed the motion checks
	// (Limits.Motion). The server logs and counts it; the pair goes back
	// to the server's relay either way. Added after protocol 1 shipped:
	// old servers ignore it.
	Reason string `json:"reason,omitempty"`
}

// DirectCheat is DirectLink.Reason for a peer dropped from direct play
// because its direct states failed the motion checks.
const DirectCheat = "motion"

// Signal kinds relayed for direct-link set-up.
const (
	SignalOffer     = "offer"
	SignalAnswer    = "answer"
	SignalCandidate = "candidate"
)

// Signal carries direct-link signalling (offer, answer, candidate; Data is
// client/direct's and the server relays it unread) to another player. The
// client sets To; the server sets From.
type Signal struct {
	To   int    `json:"to"`
	From int    `json:"from"`
	Kind string `json:"kind"`
	Data string `json:"data"`
}

// Invite reports that the player shared the invite link (analytics only).
type Invite struct {
	Channel string `json:"channel,omitempty"` // "copy", "share-sheet"..., at most 32 bytes
}

// Kick is the host removing the player in Slot (connected or held) from
// the room, outside a round (lobby or results). The player is closed with
// CodeKicked and may not rejoin the room for a while; the others see the
// seat freed in the next room state. Refused with CodeNotHost,
// CodeWrongPhase or CodeBadRequest (no other player in Slot).
type Kick struct {
	Slot int `json:"slot"`
}

// Phase is a room's phase in the round flow.
type Phase string

// Phases in order. After Results the room goes back to Lobby.
const (
	PhaseLobby     Phase = "lobby"
	PhaseHandshake Phase = "handshake"
	PhaseCountdown Phase = "countdown"
	PhasePlaying   Phase = "playing"
	PhaseResults   Phase = "results"
)

// Phases lists every phase in flow order.
var Phases = []Phase{PhaseLobby, PhaseHandshake, PhaseCountdown, PhasePlaying, PhaseResults}

// RoomState is the whole visible state of a room, sent on every change;
// the server merges changes into at most one every 100 ms (its default),
// and the last one always arrives.
type RoomState struct {
	Code  string `json:"code"`
	Rev   uint64 `json:"rev"` // increases with every change
	Phase Phase  `json:"phase"`
	// PhaseUS is when the phase began (server clock).
	PhaseUS int64 `json:"phase_us"`
	// DeadlineUS is when the phase ends on its own (handshake time-out,
	// countdown end = go, round time limit, results end); 0 for none.
	DeadlineUS int64 `json:"deadline_us,omitempty"`
	// GoUS is when the current round starts (go!) on the server clock; set
	// from the countdown on.
	GoUS     int64    `json:"go_us,omitempty"`
	Round    int      `json:"round"` // rounds started in this room
	Host     int      `json:"host"`  // the host's slot, -1 for none
	Settings Settings `json:"settings"`
	// InputDelay is the input delay in force; nil for none. Added after
	// protocol 1 shipped: old servers send none.
	InputDelay *InputDelayState `json:"input_delay,omitempty"`
	Draining   bool             `json:"draining,omitempty"`
	Players    []PlayerState    `json:"players"`
}

// PlayerState is one seat in RoomState.
type PlayerState struct {
	Slot        int     `json:"slot"`
	User        string  `json:"user"`
	Name        string  `json:"name"`
	Connected   bool    `json:"connected"` // false while the seat is held
	Loaded      float64 `json:"loaded"`
	Ready       bool    `json:"ready"`
	Participant bool    `json:"participant,omitempty"` // plays the current round
	InPosition  bool    `json:"in_position,omitempty"`
	Finished    bool    `json:"finished,omitempty"`
	Voted       bool    `json:"voted,omitempty"`
}

// Notice kinds.
const (
	// NoticeTimeWarning: the round time limit is near; LeftUS says how near.
	NoticeTimeWarning = "time_warning"
	// NoticeServerUpdating: the server is draining; finish the round, then
	// expect a close with CodeGoingAway. LeftUS is the grace left.
	NoticeServerUpdating = "server_updating"
	// NoticeHandshakeTimeout: the start handshake timed out; the round
	// starts without those not yet in position.
	NoticeHandshakeTimeout = "handshake_timeout"
)

// Notice is a one-off announcement to the room.
type Notice struct {
	Kind   string `json:"kind"`
	Text   string `json:"text,omitempty"`
	LeftUS int64  `json:"left_us,omitempty"`
}

// Result statuses.
const (
	StatusFinished = "finished"
	StatusDNF      = "dnf" // left, lost the connection, or out of time
)

// Results ends a round. The server hands it to its database writer before
// sending it.
type Results struct {
	Code    string         `json:"code"`
	Round   int            `json:"round"`
	Aborted bool           `json:"aborted,omitempty"` // ended by a restart vote
	StartUS int64          `json:"start_us"`          // go time
	EndUS   int64          `json:"end_us"`
	Players []PlayerResult `json:"players"`  // finishers by time, then the rest
	RoundUS int64          `json:"round_us"` // the time limit that applied
}

// PlayerResult is one participant's result.
type PlayerResult struct {
	Slot   int     `json:"slot"`
	User   string  `json:"user"`
	Name   string  `json:"name"`
	Status string  `json:"status"`
	TimeUS int64   `json:"time_us,omitempty"` // finish time after go
	Score  float64 `json:"score,omitempty"`
	Place  int     `json:"place,omitempty"` // 1-based among finishers
}

// Error reports a refused request or bad input. If the connection must end,
// a close frame with the same Code follows.
type Error struct {
	Code    Code             `json:"code"`
	Name    string           `json:"name"`          // Code's String, for humans and logs
	Message string           `json:"message"`       // readable English
	Request wire.ControlType `json:"req,omitempty"` // the type of the message refused
	// URL is where to send the request again, with CodeRedirect only: the
	// WebSocket URL of the node that runs the room (or was chosen for it).
	URL string `json:"url,omitempty"`
}

// Error implements error.
func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s (%d)", e.Code, int(e.Code))
	}
	return fmt.Sprintf("%s (%d): %s", e.Code, int(e.Code), e.Message)
}

// Errorf returns an *Error with code c and a formatted message.
func Errorf(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Name: c.String(), Message: fmt.Sprintf(format, args...)}
}

// Type implements Message.
func (*Hello) Type() wire.ControlType { return TypeHello }

// Type implements Message.
func (*Welcome) Type() wire.ControlType { return TypeWelcome }

// Type implements Message.
func (*Create) Type() wire.ControlType { return TypeCreate }

// Type implements Message.
func (*Join) Type() wire.ControlType { return TypeJoin }

// Type implements Message.
func (*Joined) Type() wire.ControlType { return TypeJoined }

// Type implements Message.
func (*Leave) Type() wire.ControlType { return TypeLeave }

// Type implements Message.
func (*Left) Type() wire.ControlType { return TypeLeft }

// Type implements Message.
func (*SetName) Type() wire.ControlType { return TypeSetName }

// Type implements Message.
func (*Loading) Type() wire.ControlType { return TypeLoading }

// Type implements Message.
func (*Ready) Type() wire.ControlType { return TypeReady }

// Type implements Message.
func (*Settings) Type() wire.ControlType { return TypeSettings }

// Type implements Message.
func (*Start) Type() wire.ControlType { return TypeStart }

// Type implements Message.
func (*InPosition) Type() wire.ControlType { return TypeInPosition }

// Type implements Message.
func (*Finish) Type() wire.ControlType { return TypeFinish }

// Type implements Message.
func (*Vote) Type() wire.ControlType { return TypeVote }

// Type implements Message.
func (*Ping) Type() wire.ControlType { return TypePing }

// Type implements Message.
func (*Pong) Type() wire.ControlType { return TypePong }

// Type implements Message.
func (*DirectLink) Type() wire.ControlType { return TypeDirectLink }

// Type implements Message.
func (*Signal) Type() wire.ControlType { return TypeSignal }

// Type implements Message.
func (*Invite) Type() wire.ControlType { return TypeInvite }

// Type implements Message.
func (*Kick) Type() wire.ControlType { return TypeKick }

// Type implements Message.
func (*RoomState) Type() wire.ControlType { return TypeRoom }

// Type implements Message.
func (*Notice) Type() wire.ControlType { return TypeNotice }

// Type implements Message.
func (*Results) Type() wire.ControlType { return TypeResults }

// Type implements Message.
func (*Error) Type() wire.ControlType { return TypeError }

type entry struct {
	name string
	make func() Message
}

var registry = map[wire.ControlType]entry{
	TypeHello:      {"hello", func() Message { return new(Hello) }},
	TypeCreate:     {"create", func() Message { return new(Create) }},
	TypeJoin:       {"join", func() Message { return new(Join) }},
	TypeLeave:      {"leave", func() Message { return new(Leave) }},
	TypeSetName:    {"set_name", func() Message { return new(SetName) }},
	TypeLoading:    {"loading", func() Message { return new(Loading) }},
	TypeReady:      {"ready", func() Message { return new(Ready) }},
	TypeSettings:   {"settings", func() Message { return new(Settings) }},
	TypeStart:      {"start", func() Message { return new(Start) }},
	TypeInPosition: {"in_position", func() Message { return new(InPosition) }},
	TypeFinish:     {"finish", func() Message { return new(Finish) }},
	TypeVote:       {"vote", func() Message { return new(Vote) }},
	TypePing:       {"ping", func() Message { return new(Ping) }},
	TypeDirectLink: {"direct_link", func() Message { return new(DirectLink) }},
	TypeSignal:     {"signal", func() Message { return new(Signal) }},
	TypeInvite:     {"invite", func() Message { return new(Invite) }},
	TypeKick:       {"kick", func() Message { return new(Kick) }},
	TypeWelcome:    {"welcome", func() Message { return new(Welcome) }},
	TypeJoined:     {"joined", func() Message { return new(Joined) }},
	TypeRoom:       {"room", func() Message { return new(RoomState) }},
	TypeNotice:     {"notice", func() Message { return new(Notice) }},
	TypeResults:    {"results", func() Message { return new(Results) }},
	TypePong:       {"pong", func() Message { return new(Pong) }},
	TypeError:      {"error", func() Message { return new(Error) }},
	TypeLeft:       {"left", func() Message { return new(Left) }},
}

// Types returns every control type in increasing order.
func Types() []wire.ControlType {
	out := make([]wire.ControlType, 0, len(registry))
	for t := 0; t < 256; t++ {
		if _, ok := registry[wire.ControlType(t)]; ok {
			out = append(out, wire.ControlType(t))
		}
	}
	return out
}

// New returns a new zero message of type t, or nil for an unknown type.
func New(t wire.ControlType) Message {
	if e, ok := registry[t]; ok {
		return e.make()
	}
	return nil
}
