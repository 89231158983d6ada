package room

import (
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// Reject is why a frame was refused.
type Reject uint8

// Reasons for refusing a frame.
const (
	RejectRate        Reject = iota // state over the rate limit
	RejectMalformed                 // state that does not decode
	RejectStale                     // state not newer than the last one
	RejectSpeed                     // reported speed above SpeedFactor x TopSpeed
	RejectTeleport                  // moved farther than the speed allows, or teleport flag too often
	RejectControlRate               // control message over its rate limit
	RejectUnknownType               // control type unknown
	RejectBadRequest                // control body invalid, or not allowed now
	RejectVersion                   // control frame of another protocol version
	RejectBounds                    // state outside Config.WorldBounds
	RejectSignalRate                // Signal over its sender→recipient budget
	RejectEntities                  // state of a new entity past EntityLimits.MaxPerPlayer
	RejectRecipient                 // event, chat or property over its recipient's budget (inbox.go)
	RejectSpawn                     // a player's first state outside the spawn area
	RejectLate                      // state over the rate or the distance its time allows, later than the room's backlog credit while the room is behind (timeline.go)
	numRejects
)

var rejectNames = [numRejects]string{"rate", "malformed", "stale", "speed", "teleport",
	"control_rate", "unknown_type", "bad_request", "version", "bounds", "signal_rate", "entities",
	"recipient_budget", "spawn", "late"}

// String returns the reason's snake_case name (a metrics label).
func (r Reject) String() string {
	if r < numRejects {
		return rejectNames[r]
	}
	return "unknown"
}

// Rejects lists every reason.
func Rejects() []Reject {
	out := make([]Reject, numRejects)
	for i := range out {
		out[i] = Reject(i)
	}
	return out
}

// weight is how much abuse score a rejection adds.
func (r Reject) weight() float64 {
	switch r {
	case RejectMalformed, RejectUnknownType, RejectVersion, RejectSignalRate, RejectRecipient:
		return 5
	case RejectBadRequest:
		return 2
	case RejectSpawn: // a client keeps sending where the game put it: no fault of the player
		return 0
	case RejectLate: // the server's delay, not the player's doing
		return 0
	}
	return 1
}

// code is the close code for a player disconnected for repeated r.
func (r Reject) code() protocol.Code {
	switch r {
	case RejectRate, RejectControlRate, RejectSignalRate, RejectRecipient:
		return protocol.CodeRateLimited
	case RejectSpeed, RejectTeleport, RejectBounds, RejectSpawn:
		return protocol.CodeImplausible
	case RejectEntities:
		return protocol.CodeTooMany
	}
	return protocol.CodeBadFrame
}

// Metrics receives a room's counters. Methods are called with the room's
// lock held: they must be cheap and must not block. The server's
// implementation feeds Prometheus; nil means none.
type Metrics interface {
	// StatesIn counts state frames received from players.
	StatesIn(n int)
	// StatesRelayed counts state frames sent on to other players.
	StatesRelayed(n int)
	// Rejected counts one refused frame.
	Rejected(r Reject)
	// RestampAge samples, for one state in offsetSampleEvery per player,
	// its arrival time minus its re-stamped sample time: the one-way delay
	// the shared estimator attributes to it (clock offsets taken out).
	RestampAge(d time.Duration)
	// PhaseChanged counts a room moving between phases; from is "" for a
	// new room and to is "" for a closed one.
	PhaseChanged(from, to protocol.Phase)
	// Kicked counts a player disconnected for abuse, by close code, or
	// kicked by the host (protocol.CodeKicked).
	Kicked(code protocol.Code)
}

// DirectMetrics is an optional part of Metrics: a Metrics that has it also
// counts the states not relayed because sender and recipient are linked
// directly (both reported protocol.DirectLink up), so relayed plus skipped
// is every state times its recipients.
type DirectMetrics interface {
	// StatesSkippedDirect counts state frames not relayed to recipients
	// that receive the sender directly.
	StatesSkippedDirect(n int)
}

// DirectReportMetrics is an optional part of Metrics: a Metrics that has
// it also counts the peers players dropped from direct play because their
// direct states failed the motion checks (protocol.DirectLink with Reason
// protocol.DirectCheat).
type DirectReportMetrics interface {
	// DirectCheatReported counts one such report.
	DirectCheatReported()
}

// RoundTripMetrics is an optional part of Metrics: a Metrics that has it
// also sees the round trips the room measures itself (protocol.Echo) and
// counts the claimed round trips (protocol.Ping.RTTUS) it cut to them.
type RoundTripMetrics interface {
	// RoundTripMeasured samples one measured round trip.
	RoundTripMeasured(d time.Duration)
	// RoundTripCapped counts one claimed round trip cut to the measured
	// one (plus its slack).
	RoundTripCapped()
}

// RoundTripFlags is an optional part of Metrics: a Metrics that has it
// also counts the players flagged for round-trip claims that keep
// exceeding what the room measured (roundtrip.go).
type RoundTripFlags interface {
	// RoundTripFlagged counts one flagged player (once per connection).
	RoundTripFlagged()
}

// TeleportMetrics is an optional part of Metrics: a Metrics that has it
// also counts the teleports the room accepted (states flagged
// wire.FlagTeleport that jumped, each at most Limits.MaxTeleport).
type TeleportMetrics interface {
	// Teleported counts one accepted jump.
	Teleported()
}

type nopMetrics struct{}

func (nopMetrics) StatesIn(int)                         {}
func (nopMetrics) StatesRelayed(int)                    {}
func (nopMetrics) Rejected(Reject)                      {}
func (nopMetrics) RestampAge(time.Duration)             {}
func (nopMetrics) PhaseChanged(from, to protocol.Phase) {}
func (nopMetrics) Kicked(protocol.Code)                 {}
