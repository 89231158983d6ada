// Package funnel names the steps of the player funnel (joined a room,
// loaded, ready, start clicked, ...) and the Event a room reports for each.
// Rooms and the server report Events; package analytics writes them. It
// holds only these types, so a server embedded in a game links no sink.
package funnel

import (
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// Step is a funnel step.
type Step string

// Funnel steps, roughly in the order a player meets them. A room emits each
// at most once per player per visit of the step (a ready flag toggled ten
// times is one "ready").
const (
	StepRoomJoined       Step = "room_joined"
	StepInviteShared     Step = "invite_shared"
	StepLoaded           Step = "loaded"
	StepReady            Step = "ready"
	StepStartClicked     Step = "start_clicked"
	StepHandshakeDone    Step = "handshake_done"
	StepRoundStarted     Step = "round_started"
	StepRoundFinished    Step = "round_finished"
	StepRestartVote      Step = "restart_vote"
	StepBackInRoom       Step = "back_in_room"
	StepReconnected      Step = "reconnected"
	StepLeft             Step = "left"
	StepConnectionFailed Step = "connection_failed"
)

// Steps lists every step.
var Steps = []Step{StepRoomJoined, StepInviteShared, StepLoaded, StepReady, StepStartClicked,
	StepHandshakeDone, StepRoundStarted, StepRoundFinished, StepRestartVote, StepBackInRoom,
	StepReconnected, StepLeft, StepConnectionFailed}

// Event is one player's funnel step.
type Event struct {
	// Time is the wall-clock time, filled by the server (a room only knows At).
	Time time.Time `json:"time"`
	// At is the server clock (time since its origin) when it happened.
	At      time.Duration  `json:"-"`
	Step    Step           `json:"event"`
	User    string         `json:"user,omitempty"`
	Room    string         `json:"room,omitempty"`
	Via     protocol.Via   `json:"via,omitempty"`    // how the player arrived in the room
	Players int            `json:"players"`          // seats taken in the room at the time
	Phase   protocol.Phase `json:"phase,omitempty"`  // room phase at the time
	Round   int            `json:"round,omitempty"`  // rounds started in the room
	Detail  string         `json:"detail,omitempty"` // step-specific: result status, close reason...
}
