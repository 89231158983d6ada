// Package predict is the remote-entity predictor: given the states a remote
// player's entity sent, it says where to draw that entity now.
//
// A Predictor keeps a short buffer of samples per path (the server relay and
// the direct link) and, each rendered frame, PoseAt(now) returns the pose to
// draw. Time is always an argument: a time.Duration on the receiver's clock.
// Callers map sender stamps onto that clock (netcode/clock) before Add.
//
// # Model
//
//   - Extrapolate to the present: the newest sample is carried forward by its
//     age. Velocity turns about the up axis at the turn rate (a coordinated
//     turn, in closed form); the centripetal part of the sender's
//     acceleration (turn × velocity) is removed, and the rest turns with the
//     heading. Straight motion is p0 + v t + a t²/2.
//   - Inside the buffer (now before the newest sample): cubic Hermite on
//     position, slerp on rotation. There is no interpolation delay.
//   - Past Config.PredictionCap the acceleration is dropped and the entity
//     coasts at constant speed and turn rate; past Config.CoastUntil it stops.
//   - Ghost after Config.GhostAfter and Hidden after Config.HideAfter without
//     an arrival, measured by arrival time.
//   - Error-decay smoothing: a change of prediction becomes an offset that
//     fades with time constant Config.SmoothingTau; an offset beyond
//     Config.TeleportDistance, or a sample flagged wire.FlagTeleport, snaps.
//   - Contact trust: not collidable for Config.ContactTrust after appearing
//     or after a correction larger than Config.Width.
//   - Path choice: draw from the path with the newest data, with the
//     Config.PathMargin hysteresis and the Config.DirectOutage rule.
//   - Config.MaxCorrectionSpeed bounds how fast a correction moves the drawn
//     entity, so a large one glides instead of popping.
//   - Config.Auto learns, per entity, how far behind the present to draw
//     (a render lag from 0, full extrapolation, to 160 ms, an interpolation
//     buffer), the smoothing time constant, whether corrections are bounded
//     and whether to use acceleration and turn rate. A tuner beside the
//     drawing keeps a bank of shadow drawings, one per setting, stepped
//     frame by frame through the same step as the real drawing, and every
//     arrival scores each against where the entity truly was at the
//     sample's time (a state newer than every frame drawn, placed ahead by
//     a room's input delay, once a frame passes its time). Which shadow
//     draws follows a stated rule. A mover
//     whose velocity jumps often (instant turns: a character on a
//     keyboard; AutoParams.ErraticRate) follows the erratic rule: the
//     lowest mean error among the shadows whose running 99th percentile
//     of the error is within AutoParams.TailFactor of snap-on-arrival's
//     (the newest state drawn as it is) and whose pops over 0.3 m stay
//     under AutoParams.PopRate a minute, their capped corrections gliding
//     faster (0.25 m a frame). Any other mover (a car) gets the lowest
//     sum of the mean error, a cost per pop (Config.AutoPopCost, less for
//     a faster mover, so a car keeps tracking), the error's running 95th
//     percentile and its 99th (weighed less for fast movers). The best
//     shadow's settings are used once clearly better, the lag slid there
//     at 0.1 s/s. With Auto a correction fades from the frame it arrives
//     in. See auto_tuner.go; the constants are AutoParams.
//
// 3D entities turn about +Y (geom.Up3D), 2D entities about +Z (geom.Up2D);
// both dimensions share one implementation.
//
// # Invariants
//
//   - No goroutines and no wall clock; a Predictor is not safe for
//     concurrent use (one owner: the render loop that calls PoseAt).
//   - Add and PoseAt never allocate: the buffers are allocated in New.
//   - Each path's buffer is sorted by sample time, holds no two samples with
//     the same Seq or the same time, and holds at most Config.BufferLen.
//   - Without a new sample or a path switch, the smoothing offset only
//     shrinks.
//   - Every sample in a buffer is finite; Add refuses NaN and infinities, so
//     PoseAt never returns them.
package predict
