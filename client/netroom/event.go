package netroom

import (
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// EventKind says what happened; each kind is one NetRoom signal.
type EventKind uint8

// Event kinds. The comment names the fields set.
const (
	// EventConnected: the server welcomed us (connected()).
	EventConnected EventKind = iota + 1
	// EventDisconnected: the connection is gone for good; Text says why
	// ("" after Disconnect or Close) (disconnected(reason)).
	EventDisconnected
	// EventReconnecting: the connection dropped and is being retried; Text
	// says why (reconnecting(reason)).
	EventReconnecting
	// EventReconnected: the connection is back, with the seat if we had one
	// (reconnected()).
	EventReconnected
	// EventSynced: the clock is synchronised to the server; remote
	// entities are drawn from now on (clock_synced()).
	EventSynced
	// EventJoined: we have a seat: Code, Slot (room_joined(code, slot)).
	EventJoined
	// EventLeft: we no longer have a seat (room_left()).
	EventLeft
	// EventError: a request was refused or failed: Code (a protocol.Code,
	// or CodeLocal for a failure on this side), Text the message
	// (room_error(code, message)).
	EventError
	// EventPlayerJoined: Slot took a seat; Text is the name
	// (player_joined(slot, name)). On joining a room, one for every
	// player already there, ourselves included.
	EventPlayerJoined
	// EventPlayerLeft: Slot's seat is free (player_left(slot)).
	EventPlayerLeft
	// EventPlayerUpdated: something about Slot changed: name, connected,
	// loaded, ready, round flags (player_updated(slot)).
	EventPlayerUpdated
	// EventHostChanged: Slot is the host now, -1 for none (host_changed(slot)).
	EventHostChanged
	// EventPhaseChanged: the room entered Phase; Next is when the next phase
	// begins on its own, on the server clock (0 for no deadline); in the
	// countdown it is the go time (phase_changed(phase, next_phase_time)).
	EventPhaseChanged
	// EventResults: a round ended: Results (results(results)).
	EventResults
	// EventNotice: a one-off announcement: Text is the kind, Detail the
	// text (notice(kind, text)).
	EventNotice
	// EventSpawn: remote player Slot needs its scene (player_spawned).
	EventSpawn
	// EventDespawn: remote player Slot's scene must go (player_despawned).
	EventDespawn
	// EventGameEvent: slot Slot sent the event named Text with Args
	// (event_received(from_slot, name, args)).
	EventGameEvent
	// EventChat: slot Slot said Text, sanitised by the server
	// (chat_received(from_slot, text)).
	EventChat
	// EventProp: synced property Text of slot Slot's entity is Args[0]
	// (NetPredictor applies it to its root).
	EventProp
	// EventHit: the server decided a reported hit: Hit (every player gets
	// the accepted ones, the shooter alone the refused) (hit_result(result)).
	EventHit
	// EventEntitySpawned: slot Slot spawned its entity Entity from scene
	// Text with Spawn.Args (entity_spawned).
	EventEntitySpawned
	// EventEntityDespawned: slot Slot's entity Entity is gone
	// (entity_despawned).
	EventEntityDespawned
	// EventOwner: shared object Entity is owned by Slot now (-1: nobody),
	// or our claim was refused: Text is the reason (owner_changed).
	EventOwner
	// EventConnectionError: a connection could not be made, dropped, or
	// reconnecting gave up: Conn says why, Text in words
	// (connection_error(reason, message)). It comes before the
	// EventReconnecting or EventDisconnected it explains.
	EventConnectionError
)

var eventNames = map[EventKind]string{
	EventConnected: "connected", EventDisconnected: "disconnected", EventReconnecting: "reconnecting",
	EventReconnected: "reconnected", EventSynced: "synced", EventJoined: "joined", EventLeft: "left",
	EventError: "error", EventPlayerJoined: "player_joined", EventPlayerLeft: "player_left",
	EventPlayerUpdated: "player_updated", EventHostChanged: "host_changed", EventPhaseChanged: "phase_changed",
	EventResults: "results", EventNotice: "notice", EventSpawn: "spawn", EventDespawn: "despawn",
	EventGameEvent: "game_event", EventChat: "chat", EventProp: "prop", EventHit: "hit",
	EventEntitySpawned: "entity_spawned", EventEntityDespawned: "entity_despawned", EventOwner: "owner",
	EventConnectionError: "connection_error",
}

// String returns the kind's name ("player_joined"), or "unknown".
func (k EventKind) String() string {
	if s, ok := eventNames[k]; ok {
		return s
	}
	return "unknown"
}

// CodeLocal is EventError's Code for a failure on this side: a malformed
// room code, a request while another is in flight, an argument that
// cannot be sent. (Connections that fail are EventConnectionError.)
const CodeLocal protocol.Code = 0

// Event is one thing for the node to signal. Only the fields its kind
// names are set.
type Event struct {
	Kind    EventKind
	Slot    int
	Code    protocol.Code
	Text    string
	Detail  string
	Phase   protocol.Phase
	Next    time.Duration // server clock
	Results *protocol.Results
	// Args are EventGameEvent's arguments, as typedargs.Decode returns them.
	Args []any
	// Hit is EventHit's decision.
	Hit *protocol.HitResult
	// Entity is the entity id (wire) of the entity events.
	Entity int
	// Spawn is EventEntitySpawned's announcement; Owner EventOwner's.
	Spawn *protocol.Spawn
	Owner *protocol.Owner
	// Internal marks an EventError made from a recovered panic (a bug,
	// serverlink.ErrPanic or ErrPanic), worth a line in the console.
	Internal bool
	// Conn is EventConnectionError's reason.
	Conn ConnError
	// View is the room as this event left it, set by the Room for every
	// event: what the signal's handlers read back (Room.SetView).
	View View
}

// Phases lists the room phases in the order of the NetRoom.Phase enum
// (PHASE_LOBBY = 0…); PhaseIndex maps a phase to it.
var Phases = []protocol.Phase{protocol.PhaseLobby, protocol.PhaseHandshake, protocol.PhaseCountdown,
	protocol.PhasePlaying, protocol.PhaseResults}

// PhaseIndex returns ph's index in Phases, or -1 for none (not in a room)
// or a phase this build does not know.
func PhaseIndex(ph protocol.Phase) int {
	for i, p := range Phases {
		if p == ph {
			return i
		}
	}
	return -1
}
