// Package sender is the owning side of a networked entity: it turns the
// entity's physics frames into the states its owner sends (docs/architecture.md
// §2, steps 1-2). The Godot node NetPredictor runs it on the owning
// player's machine and the bench runs it for its simulated players, so both
// send exactly the same states.
//
// Each physics frame the caller passes the entity's pose with the frame's
// own time (Sample, or SampleWithVelocity when the engine knows the
// velocity); whenever it likes (every frame is fine) it calls PollState,
// which says whether a state is due and hands it out as a wire.State value
// stamped with its sample's time, for the one stage that encodes it
// (client/core's send queue, which also carries it forward to the socket
// write: the send lead; wire.AppendState encodes it). Time is always an
// argument: a time.Duration on the sender's clock since an arbitrary
// origin.
//
// # Derivation
//
// The receivers' motion model (netcode/predict) is a coordinated turn about
// the up axis (+Y in 3D, +Z in 2D): velocity, acceleration with its
// centripetal part removed, and turn rate. The sender measures them:
//
//   - Velocity, when not given, is the backward difference of the last two
//     positions. A central difference would need the next frame, so would
//     add a whole frame of latency; the backward difference is exact for
//     the middle of the last frame, half a frame before the stamp (3.5 ms at
//     144 Hz, 8.3 ms at 60 Hz, 17 ms at 30 fps). The sender carries it to
//     the stamp with the smoothed acceleration, which leaves only a
//     second-order error (the acceleration's error times half a frame).
//   - Acceleration is the difference of successive velocity measurements
//     over the time between them, low-passed with time constant
//     Config.AccSmoothing (so it lags a changing acceleration by about
//     that). The filter turns with the heading at the smoothed turn rate,
//     so the centripetal acceleration of a steady turn has no phase lag
//     and a receiver that removes turn × velocity is left with the true
//     along-track and vertical parts. It includes the centripetal part, as
//     predict expects.
//   - Turn rate is the signed angle between successive velocity headings
//     about the up axis over the time between them (atan2 of their cross
//     and dot products: no wrapping at ±π; exact on a circle whatever the
//     frame times), low-passed with Config.TurnSmoothing. It is zero, and
//     its filter restarts from zero, while the velocity low-passed with
//     the same time constant is slower than Config.MinTurnSpeed across the
//     up axis: a standing entity that jitters by a millimetre (0.2 m/s of
//     derived velocity at 144 Hz, in random directions) has no heading.
//     A single measurement that slow holds the turn rate.
//   - The filters weigh a new value by 1-exp(-dt/τ), so they respond the
//     same at any frame rate, and start from zero after New, Teleport and
//     Reset.
//   - A velocity change faster than Config.ImpulseAcc (50 m/s², 5 g, by
//     default) is an impulse: an instant turn or stop, a collision. The new
//     velocity is sent at once, but the change does not feed the two
//     filters, which keep their values: low-passed, a spike of hundreds of
//     m/s² would bend every receiver's prediction for a filter time (the
//     bench saw big jumps on every turn of an erratic character).
//
// # Bad input
//
//   - A sample whose time is not after the newest one's (repeated or
//     out-of-order frame times, or one inside the same 10 µs stamp) is
//     dropped and counted in Stats.Stale: the first sample for a frame time
//     wins. A clock that jumps back must be followed by Reset.
//   - A sample with a NaN or infinite number, a position beyond float32
//     range or a zero quaternion is dropped and counted in Stats.Invalid.
//     No error comes back: one bad frame should not stop an entity from
//     sending, and the sender goes on heartbeating the newest good sample.
//   - Velocity and acceleration beyond the half-float range (±65504) are
//     scaled down, keeping their direction, and the turn rate is clamped;
//     Stats.Clamped counts such samples. So every accepted sample's state
//     encodes: wire.AppendState does not return wire.ErrRange for it.
//
// # Invariants
//
//   - No goroutines and no wall clock; a Sender is not safe for concurrent
//     use.
//   - Sample and PollState never allocate.
//   - PollState sends at most one state per call and nothing before the
//     first sample. Sends are due at a fixed phase (the first sample's
//     time, then previous due + 1/Rate), and the poll nearest each due time
//     sends it (at most half the gap since the previous poll, and half an
//     interval, early). So the long-run count is Rate per second whenever
//     polls come at least that often; after a stall the phase restarts at
//     the late poll, with no burst.
//   - A state's stamp is its sample's frame time, never the send time.
//   - Seq increases by one per state sent, wraps at 65536, and carries on
//     across Reset.
//   - Each sample is sent once, except heartbeats: when a send is due and
//     nothing newer exists, the newest sample is sent again (new Seq, same
//     stamp), so the entity sends at the rate even when it samples slower.
//   - wire.FlagTeleport is on exactly one sample (and its heartbeats): the
//     first one sent after Teleport or Reset.
package sender
