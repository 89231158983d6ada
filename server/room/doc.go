// Package room is the room server's logic as a library: seats, host,
// reconnects, the round flow, checks and the state relay. It is a state
// machine stepped by (now, message): no goroutines, no timers, no sockets.
// The server wraps each Room in a mutex and a timer; the bench drives a real
// Room on simulated time with in-memory peers. Both run the same relay path.
//
// # Driving a room
//
// Time is a time.Duration since an arbitrary origin (the server clock), and
// must not go back between calls.
//
//	r, err := room.New("ABCDEF", nil, nil, now)  // nil config: defaults; nil hooks: none
//	p := &room.MemPeer{}                          // or any Peer
//	slot, err := r.Join(now, p, room.Member{User: "u1", Name: "Ann"})
//	r.HandleFrame(now, p, frame)                  // one binary message, exactly as a client sends it
//	if at, ok := r.Next(); ok { /* call r.Tick(at) then */ }
//	for _, f := range p.Take() { /* f.Data, f.Reliable */ }
//	r.Disconnect(now, p)                          // connection lost: the seat is held for SeatHold
//	r.Leave(now, p)                               // the player gave the seat up
//
// A frame is either a batch of state frames back to back (wire.AppendState)
// or one control frame (protocol.Marshal). What the room sends a peer comes
// out of Peer.Send with reliable=true for control frames (Joined, Room,
// Pong, Notice, Results, Error, Signal, Left) and reliable=false for
// relayed states. room.Messages and room.States decode what a MemPeer got.
//
// Room states (RoomState) go out at most once per SnapshotEvery (100 ms):
// changes within the window are merged into one sent at its end, so the
// caller must tick at Next; phase changes go out at once. Signals are
// relayed within a budget per sender and recipient (SignalRate,
// SignalBytes); a sender that keeps exceeding it is closed with
// CodeRateLimited, never the recipient. Events, chat and synced properties
// share one budget per recipient (RecipientRate, RecipientBytes; inbox.go),
// split evenly among its senders, and are refused toward a Backlogged peer
// past BacklogBytes: the same way, the sender pays.
//
// Time sync: a peer sends protocol.Ping{TUS: its clock, RTTUS: its best
// round trip}; the room answers protocol.Pong{TUS, ServerUS: now, Probe} at
// once and feeds RTTUS to that player's re-stamp estimator and to hits, but
// never more than the round trip the room measured itself (roundtrip.go):
// the client answers each Probe at once with protocol.Echo through its send
// queue, and the smallest of the last 8 answers, plus their jitter (or an
// eighth) and 20 ms, caps the claim at each measurement. Until the first,
// no claim above 100 ms is used; a peer that answers no probe for 2 s is
// trusted as if measured at 0; one whose claims are cut 3 times in a row
// is flagged (RoundTripFlags) and trusted no further than the measurement.
// A hit's fire time may be no older than half the measured round trip,
// plus the jitter and HitRules.FireSlack (hits.go).
//
// # Relay
//
// Each state goes through one path (relay.go), which does not allocate:
// rate limit (SendRate x RateFactor, RateBurst), decode, sequence must be
// newer, of the dimension (2D or 3D) of the host's first state, world
// bounds (Config.WorldBounds, off by default), speed and move
// checks (netcode/motion, the rule set clients also run on their direct
// peers' states; Config.TopSpeed...; the stamp allowance is one bucket per player
// refilled by real time, so are the move slack and the teleport budget per
// track, and the last accepted position outlives a reconnect or a leave
// and rejoin), re-stamp onto the server
// clock with the player's clock.Restamper, keep a copy (LastState), then
// send to every other connected player, except pairs that both reported a
// direct link (protocol.DirectLink; one reported down with Reason
// protocol.DirectCheat, a peer whose direct states failed the reporter's
// motion checks, is logged and counted, DirectReportMetrics). The relayed frame carries the sender's
// slot and wire.StampOf(the sample time on the server clock). A refused
// frame is counted (Metrics.Rejected), answered with an Error at most every
// 250 ms, and adds to an abuse score that disconnects the player past
// AbuseLimit (close code by reason: RateLimited, Implausible, BadFrame).
//
// The rate limit and the motion checks take a state's time as its arrival
// while the server keeps up. While it says it is behind (Hooks.Behind),
// they take the time the player sent it, as the room measured the player's
// clock from its pings and stamps (a connection first read through a
// backlog measured against the server's delay then), no earlier than its
// arrival less the server's delay or the room's evidence of a backlog
// (how late its players' messages came lately, their lower median), at most
// Config.BacklogCredit (timeline.go): a backlog read at once is not a
// flood nor a teleport. A reconnect keeps the measure of the player's
// clock when the new connection's stamps agree with it, so that its first
// states are judged on the timeline of the position and rate budget the
// seat kept, not as if they had waited the server's whole delay. A state refused on time while the room's evidence
// shows it behind, itself late, counts as RejectLate: no Error, no abuse
// score. Nobody is kicked for the server's delays.
//
// # Entities
//
// A state names its entity (wire.State.Entity; entities.go). Entity 0 is
// the player's own and takes the path above. A player's extra entities
// (1..127: a trailer, a projectile) each get a track of their own (rate,
// sequence, motion checks), re-stamped with the player's one clock and
// relayed like entity 0 (hits stay on entity 0); at most
// EntityLimits.MaxPerPlayer live per player, created by protocol.Spawn or
// by a first state, dropped by protocol.Despawn or with the seat. Spawns
// are relayed, kept and replayed to late joiners, and a freed seat's are
// despawned for everyone. No extra entity's or shared object's state
// passes before the player's entity 0 has an accepted position (the spawn
// radius is measured from it). Shared objects (128..255: a ball) have one owner
// at a time, decided by the room on protocol.Claim (first claim, free or
// abandoned object, the host, or nearer within ClaimRadius after
// ClaimHold, once the claimant's entity has been in the room for
// ClaimAfterSpawn, and, when set, of an object it appeared within
// SpawnClearance of only after it has been that far from it) and announced with protocol.Owner; only the owner's states
// pass, checked on the object's own track across owners, renumbered so
// receivers see one sequence, and sent to everyone but the sender. An
// owner that disconnects or leaves hands its objects to the connected host
// (else nobody). Extra entities and shared objects share one state budget
// per player (EntityLimits.StateShare).
//
// # Round flow
//
//	lobby      players report Loading (1 = loaded) and Ready; the host may
//	           change Settings (clears ready) and Start once every connected
//	           player is loaded and ready and MinPlayers are connected.
//	handshake  the connected players become the round's participants; each
//	           reports InPosition. When every connected participant has, or
//	           after HandshakeTimeout, the countdown begins.
//	countdown  go is at RoomState.GoUS on the server clock (Countdown later).
//	playing    participants report Finish. The round ends when every
//	           participant finished or is gone (left, or the seat hold ran
//	           out), or at the time limit (warned TimeWarning before).
//	results    handed to Hooks.Results, then sent; DNF for everyone who did
//	           not finish. After ResultsFor, back to the lobby.
//
// A restart Vote from every connected player (playing or results) starts a
// new handshake at once; mid-round, the old round ends with Aborted results.
// A draining room (Drain) starts no round and accepts no restart.
//
// # Seats and host
//
// A seat belongs to a user id. Disconnect holds it for SeatHold; a Join by
// the same user within the hold gets the same slot back (Joined.Reconnected),
// and a Join while another connection of that user sits there replaces it
// (the old peer is closed with CodeSessionReplaced). The host is the player
// present longest (first in, held seats included), re-elected at once when
// the host's seat is freed. Outside a round the host may Kick a player
// (connected or held): closed with CodeKicked, and refused on rejoining for
// KickBan, as is a new seat from its address (Member.Addr; not the host's
// own) or network (Member.Net; on the host's own, identities made after
// the kick, Member.NewAt). No two seats hold names that look alike
// (protocol.NameKey). An empty room closes, and so does one whose
// seats are all only held (nobody connected) for EmptyHold (5 s), shorter
// than the seat hold, so abandoned rooms do not pile up. A round that
// loses its last seat still ends with its results.
//
// # Invariants
//
//   - No goroutines, no timers, no wall clock: everything happens inside a
//     call, at the time passed in.
//   - Peer and Hooks functions are called synchronously and must not block
//     or call back into the Room.
//   - Every input is handled without panicking; a bad frame costs only its
//     sender (an error, then a disconnect if repeated).
//   - The relay path does not allocate; peers must copy a frame to keep it.
package room
