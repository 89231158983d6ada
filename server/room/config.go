package room

import (
	"errors"
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// Defaults of Config.
const (
	DefaultMaxPlayers       = 16
	DefaultMinPlayers       = 1
	DefaultSeatHold         = 20 * time.Second
	DefaultEmptyHold        = 5 * time.Second
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultCountdown        = 3 * time.Second
	DefaultRoundLimit       = 3 * time.Minute
	DefaultMinRoundLimit    = 30 * time.Second
	DefaultMaxRoundLimit    = time.Hour
	DefaultTimeWarning      = 10 * time.Second
	DefaultResultsFor       = 10 * time.Second
	DefaultSendRate         = 60.0
	DefaultRateFactor       = 1.5
	DefaultControlRate      = 20.0
	DefaultControlBurst     = 40.0
	DefaultSignalRate       = 5.0
	DefaultSignalBurst      = 30.0
	DefaultSignalBytes      = 4 << 10
	DefaultSignalBytesBurst = 32 << 10
	DefaultSignalCandidates = 32
	DefaultSnapshotEvery    = 100 * time.Millisecond
	DefaultKickBan          = 5 * time.Minute
	DefaultAbuseLimit       = 60.0
	DefaultAbuseDecay       = 20.0
	DefaultInviteBase       = "nearzero://"
	// DefaultRestampSettle is how long from a player's first state (on each
	// connection) its re-stamper takes its estimate at once rather than
	// sliding to it (clock.RestampConfig.Settle): the estimate tightens by
	// milliseconds in the first seconds, and slid at 4 ms a second that
	// drew a joining player 10-13 ms off for 3 s in the network lab.
	DefaultRestampSettle = 2 * time.Second

	// MaxSlots is the largest MaxPlayers. The room state, with every seat
	// taken, the longest names and the largest game settings, must fit one
	// control message (wire.MaxControlBody; a test checks it), and each of
	// N players receives N-1 states per tick.
	MaxSlots = 32

	// MaxInviteBase is the longest InviteBase in bytes: the invite link
	// rides in Joined beside a full room state, which must still fit one
	// control message.
	MaxInviteBase = 256
)

// ErrInvalidConfig indicates a Config field out of range or two fields
// that contradict each other.
var ErrInvalidConfig = errors.New("room: invalid config")

// Config tunes a Room. The zero value of every field means its default.
type Config struct {
	// MaxPlayers is the seat count. Default 16, at most MaxSlots. Bandwidth
	// grows with its square: each of N players receives N-1 states per tick.
	MaxPlayers int
	// MinPlayers is how many connected players the host needs to start.
	// Default 1 (solo rounds allowed).
	MinPlayers int
	// SeatHold is how long a disconnected player's seat is kept for a
	// reconnect. Default 20 s.
	SeatHold time.Duration
	// EmptyHold is how long a room lasts once nobody is connected (every
	// seat only held): shorter than SeatHold, so rooms opened and abandoned
	// in bulk do not fill the server. When it runs out, every held seat is
	// freed and the room closes. Default 5 s.
	EmptyHold time.Duration
	// HandshakeTimeout is how long the start handshake waits for every
	// player to report in position. Default 10 s.
	HandshakeTimeout time.Duration
	// Countdown is the time from the end of the handshake to go. Default 3 s.
	Countdown time.Duration
	// RoundLimit is the default round time limit. Default 3 min. The host's
	// settings may choose another within [MinRoundLimit, MaxRoundLimit].
	RoundLimit time.Duration
	// MinRoundLimit and MaxRoundLimit bound the host's round time limit.
	// Defaults 30 s and 1 h.
	MinRoundLimit, MaxRoundLimit time.Duration
	// TimeWarning is how long before the time limit the room is warned.
	// Default 10 s; must be below MinRoundLimit.
	TimeWarning time.Duration
	// ResultsFor is how long the results phase lasts before the lobby.
	// Default 10 s.
	ResultsFor time.Duration

	// SendRate is the expected state rate per player, in states per second.
	// Default 60.
	SendRate float64
	// RateFactor times SendRate is the state rate limit. Default 1.5; at least 1.
	RateFactor float64
	// RateBurst is how many states may arrive at once (after a network
	// stall) before the rate limit bites. Default SendRate/2 (half a second).
	RateBurst float64
	// BacklogCredit is the most the checks (the rate limits and the motion
	// rules) forgive of the server's own delay in reading: a state is
	// judged at the time its player sent it, as the room measured the
	// player's clock, rather than when the server read it, so long as
	// that is no earlier than its arrival less how old the room's newest
	// news of its players is (the median, so that no player can fake it
	// for the others), nor less this. A server further behind than this
	// is past saving its players' play (README "Overload"). Default 2 s;
	// negative turns the credit off (states judged on arrival).
	BacklogCredit time.Duration

	// NoMotionChecks turns off the speed and teleport checks (for games
	// whose units the server cannot judge). Default false: checks on.
	NoMotionChecks bool
	// Limits are the motion rules the room checks every state by (speed,
	// distance, teleports, world bounds), documented field by field in
	// netcode/motion; clients get them in the welcome
	// (protocol.Limits.Motion) to check their direct peers by. Zero fields
	// take motion's defaults. Embedded, so cfg.TopSpeed and the rest read as
	// Config fields; its promoted SetDefaults covers only these fields.
	motion.Limits

	// ControlRate is the control message rate limit per player, in
	// messages per second (pings included). Default 20.
	ControlRate float64
	// ControlBurst is how many control messages may arrive at once. Default 40.
	ControlBurst float64
	// SignalRate is how many Signal messages one player may send another
	// per second, and SignalBurst how many at once (an offer, an answer and
	// a burst of ICE candidates). Defaults 5 and 30.
	SignalRate, SignalBurst float64
	// SignalBytes is how many bytes of Signal data one player may send
	// another per second, and SignalBytesBurst how many at once. Defaults
	// 4 KiB and 32 KiB. A signal over either budget is refused and weighs 5
	// in the abuse score, so a sender that keeps flooding is closed with
	// CodeRateLimited; the recipient is never affected.
	SignalBytes, SignalBytesBurst float64
	// SignalCandidates is how many "candidate" signals (trickled ICE
	// candidates) one player may send another after each offer or answer;
	// more are refused like a signal over its budget. Each candidate
	// makes the recipient send connectivity checks to an address the
	// sender chose. Default 32.
	SignalCandidates int
	// RecipientRate and RecipientBurst bound the events, chat lines and
	// synced properties relayed to one player, in messages per second and
	// at once; RecipientBytes and RecipientBytesBurst the same in bytes.
	// The budget is shared evenly by the other connected players, so that
	// senders within their own rates cannot together bury a recipient on a
	// slow link. A message over a sender's share is not relayed to that
	// recipient, and weighs 5 in the sender's abuse score (closed with
	// CodeRateLimited if it keeps on); the recipient is never affected.
	// Defaults 960/s, 1920, 96 KiB/s, 384 KiB.
	RecipientRate, RecipientBurst, RecipientBytes, RecipientBytesBurst float64
	// BacklogBytes is how many bytes of reliable frames may wait for a
	// recipient (a Peer that is Backlogged) before events, chat and synced
	// properties to it are refused the same way. Default 512 KiB.
	BacklogBytes int
	// SnapshotEvery is the least time between two room states (RoomState)
	// sent to the players: changes within it are merged into one room state
	// sent at its end; phase changes go out at once. Default 100 ms.
	SnapshotEvery time.Duration
	// KickBan is how long a player the host kicked (protocol.Kick) may not
	// rejoin the room. Default 5 min.
	KickBan time.Duration
	// AbuseLimit is the abuse score at which a player is disconnected. Each
	// rejected state or message adds 1 to 5 (5 for undecodable input).
	// Default 60.
	AbuseLimit float64
	// AbuseDecay is how much abuse score is forgiven per second. Default 20.
	AbuseDecay float64

	// InviteBase is the start of invite links: InviteBase + "join/" + code
	// (or "/join/"). Default "nearzero://"; at most MaxInviteBase bytes.
	InviteBase string
	// Restamp tunes each player's re-stamp estimator; zero fields are
	// clock's defaults, but for Settle: DefaultRestampSettle.
	Restamp clock.RestampConfig
	// Events bounds each player's events and chat (events.go).
	Events EventLimits
	// Hits turns on hits the server decides, and tunes them (hits.go).
	Hits HitRules
	// Entities bounds each player's extra entities and tunes the ownership
	// of shared objects (entities.go).
	Entities EntityLimits
	// InputDelay, when its mode is set, is every room's input delay
	// (netcode/inputdelay; fixed, or adaptive up to its cap), and a host's
	// settings that ask for another are refused. Default: none, and the
	// host chooses (protocol.Settings.InputDelay).
	InputDelay protocol.InputDelay
}

// withDefaults returns a copy with zero fields set to their defaults.
func (c *Config) withDefaults() Config {
	var d Config
	if c != nil {
		d = *c
	}
	setDefault(&d.MaxPlayers, DefaultMaxPlayers)
	setDefault(&d.MinPlayers, DefaultMinPlayers)
	setDefault(&d.SeatHold, DefaultSeatHold)
	setDefault(&d.EmptyHold, DefaultEmptyHold)
	setDefault(&d.HandshakeTimeout, DefaultHandshakeTimeout)
	setDefault(&d.Countdown, DefaultCountdown)
	setDefault(&d.RoundLimit, DefaultRoundLimit)
	setDefault(&d.MinRoundLimit, DefaultMinRoundLimit)
	setDefault(&d.MaxRoundLimit, DefaultMaxRoundLimit)
	setDefault(&d.TimeWarning, DefaultTimeWarning)
	setDefault(&d.ResultsFor, DefaultResultsFor)
	setDefault(&d.SendRate, DefaultSendRate)
	setDefault(&d.RateFactor, DefaultRateFactor)
	setDefault(&d.RateBurst, d.SendRate/2)
	setDefault(&d.BacklogCredit, DefaultBacklogCredit)
	d.BacklogCredit = max(0, d.BacklogCredit)
	d.Limits.SetDefaults()
	setDefault(&d.ControlRate, DefaultControlRate)
	setDefault(&d.ControlBurst, DefaultControlBurst)
	setDefault(&d.SignalRate, DefaultSignalRate)
	setDefault(&d.SignalBurst, DefaultSignalBurst)
	setDefault(&d.SignalBytes, DefaultSignalBytes)
	setDefault(&d.SignalBytesBurst, DefaultSignalBytesBurst)
	setDefault(&d.SignalCandidates, DefaultSignalCandidates)
	setDefault(&d.RecipientRate, DefaultRecipientRate)
	setDefault(&d.RecipientBurst, DefaultRecipientBurst)
	setDefault(&d.RecipientBytes, DefaultRecipientBytes)
	setDefault(&d.RecipientBytesBurst, DefaultRecipientBytesBurst)
	setDefault(&d.BacklogBytes, DefaultBacklogBytes)
	setDefault(&d.SnapshotEvery, DefaultSnapshotEvery)
	setDefault(&d.KickBan, DefaultKickBan)
	setDefault(&d.AbuseLimit, DefaultAbuseLimit)
	setDefault(&d.AbuseDecay, DefaultAbuseDecay)
	setDefault(&d.InviteBase, DefaultInviteBase)
	setDefault(&d.Restamp.Settle, DefaultRestampSettle)
	d.Events = d.Events.withDefaults()
	d.Hits = d.Hits.withDefaults()
	d.Entities = d.Entities.withDefaults()
	return d
}

func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// MotionLimits is c's motion rule set (Limits) with zero fields set to
// motion's defaults: what the room checks states by.
func (c *Config) MotionLimits() motion.Limits {
	l := c.Limits
	l.SetDefaults()
	return l
}

// Validate reports the first field out of range, or the first pair of
// fields that contradict each other, naming both values; defaults are
// applied first.
func (c *Config) Validate() error {
	d := c.withDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case d.MaxPlayers < 1 || d.MaxPlayers > MaxSlots:
		return bad("MaxPlayers %d outside 1..%d", d.MaxPlayers, MaxSlots)
	case d.MinPlayers < 1 || d.MinPlayers > d.MaxPlayers:
		return bad("MinPlayers %d outside 1..MaxPlayers (%d)", d.MinPlayers, d.MaxPlayers)
	case d.SeatHold < 0 || d.EmptyHold < 0 || d.HandshakeTimeout < 0 || d.Countdown < 0 || d.ResultsFor < 0:
		return bad("negative duration (SeatHold %v, EmptyHold %v, HandshakeTimeout %v, Countdown %v, ResultsFor %v)",
			d.SeatHold, d.EmptyHold, d.HandshakeTimeout, d.Countdown, d.ResultsFor)
	case d.MinRoundLimit > d.MaxRoundLimit:
		return bad("MinRoundLimit %v above MaxRoundLimit %v", d.MinRoundLimit, d.MaxRoundLimit)
	case d.RoundLimit < d.MinRoundLimit || d.RoundLimit > d.MaxRoundLimit:
		return bad("RoundLimit %v outside MinRoundLimit %v .. MaxRoundLimit %v", d.RoundLimit, d.MinRoundLimit, d.MaxRoundLimit)
	case d.TimeWarning < 0 || d.TimeWarning >= d.MinRoundLimit:
		return bad("TimeWarning %v not below MinRoundLimit %v", d.TimeWarning, d.MinRoundLimit)
	case d.SendRate <= 0:
		return bad("SendRate %v not positive", d.SendRate)
	case d.RateFactor < 1:
		return bad("RateFactor %v below 1 would refuse the send rate itself", d.RateFactor)
	case d.RateBurst < 1:
		return bad("RateBurst %v below 1", d.RateBurst)
	case d.TopSpeed <= 0 || d.SpeedFactor < 1 || d.MoveSlack < 0:
		return bad("TopSpeed %v, SpeedFactor %v, MoveSlack %v: need positive, at least 1, not negative",
			d.TopSpeed, d.SpeedFactor, d.MoveSlack)
	case d.TopSpeed2D <= 0 || d.MoveSlack2D < 0:
		return bad("TopSpeed2D %v, MoveSlack2D %v: need positive, not negative", d.TopSpeed2D, d.MoveSlack2D)
	case d.WorldBounds < 0 || d.WorldBounds2D < 0:
		return bad("negative WorldBounds %v or WorldBounds2D %v", d.WorldBounds, d.WorldBounds2D)
	case d.StampGapAllowance < 0 || d.TeleportEvery < 0:
		return bad("negative StampGapAllowance %v or TeleportEvery %v", d.StampGapAllowance, d.TeleportEvery)
	case d.TeleportsPerMinute < 1 || d.MoveSlackRefill <= 0:
		return bad("TeleportsPerMinute %v below 1 or MoveSlackRefill %v not positive", d.TeleportsPerMinute, d.MoveSlackRefill)
	case d.ControlRate <= 0 || d.ControlBurst < 1:
		return bad("ControlRate %v must be positive and ControlBurst %v at least 1", d.ControlRate, d.ControlBurst)
	case d.SignalCandidates < 1:
		return bad("SignalCandidates %d below 1", d.SignalCandidates)
	case d.SignalRate <= 0 || d.SignalBurst < 1 || d.SignalBytes <= 0 || d.SignalBytesBurst < protocol.MaxSignalData:
		return bad("SignalRate %v, SignalBurst %v, SignalBytes %v, SignalBytesBurst %v: need positive, at least 1, positive, at least %d",
			d.SignalRate, d.SignalBurst, d.SignalBytes, d.SignalBytesBurst, protocol.MaxSignalData)
	case d.RecipientRate <= 0 || d.RecipientBurst < 1 || d.RecipientBytes <= 0 || d.RecipientBytesBurst < 1 || d.BacklogBytes < 1:
		return bad("RecipientRate %v, RecipientBurst %v, RecipientBytes %v, RecipientBytesBurst %v, BacklogBytes %d: need positive, at least 1",
			d.RecipientRate, d.RecipientBurst, d.RecipientBytes, d.RecipientBytesBurst, d.BacklogBytes)
	case d.SnapshotEvery < 0 || d.KickBan < 0:
		return bad("negative SnapshotEvery %v or KickBan %v", d.SnapshotEvery, d.KickBan)
	case len(d.InviteBase) > MaxInviteBase:
		return bad("InviteBase is %d bytes, at most %d", len(d.InviteBase), MaxInviteBase)
	case d.AbuseLimit <= 0 || d.AbuseDecay < 0:
		return bad("AbuseLimit %v must be positive and AbuseDecay %v not negative", d.AbuseLimit, d.AbuseDecay)
	}
	if err := d.Events.validate(); err != nil {
		return fmt.Errorf("%w: Events: %w", ErrInvalidConfig, err)
	}
	if err := d.Hits.validate(); err != nil {
		return fmt.Errorf("%w: Hits: %w", ErrInvalidConfig, err)
	}
	if err := d.Entities.validate(); err != nil {
		return fmt.Errorf("%w: Entities: %w", ErrInvalidConfig, err)
	}
	if err := d.Restamp.Validate(); err != nil {
		return fmt.Errorf("%w: Restamp: %w", ErrInvalidConfig, err)
	}
	if err := d.InputDelay.Validate(); err != nil {
		return fmt.Errorf("%w: InputDelay: %w", ErrInvalidConfig, err)
	}
	return nil
}
