package predict

import (
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Pose is where and how to draw a remote entity at one moment.
type Pose struct {
	// Valid is false until the first sample; every other field is then zero
	// (Rot is geom.Identity, Visibility is Hidden).
	Valid bool
	// Pos is the position to draw: Raw plus the smoothing offset.
	Pos geom.Vec3
	// Rot is the orientation to draw, smoothed like Pos.
	Rot geom.Quat
	// Vel is the predicted velocity (unsmoothed); zero once stopped past
	// Config.CoastUntil.
	Vel geom.Vec3
	// Raw is the prediction before smoothing; the bench splits the error by
	// source with it.
	Raw geom.Vec3
	// Visibility is Visible, Ghost or Hidden, by time since the last arrival.
	Visibility Visibility
	// Collidable is true only when Visible and past the contact-trust
	// window: false while Ghost or Hidden, or inside that window.
	Collidable bool
	// Snapped reports that this call cleared the smoothing offset: a
	// teleport flag, or an offset beyond Config.TeleportDistance.
	Snapped bool
	// PastCap reports an age beyond Config.PredictionCap: coasting, or
	// stopped past Config.CoastUntil.
	PastCap bool
	// Age is now minus the newest sample time on the drawn path; negative
	// when that sample is stamped ahead of now.
	Age time.Duration
	// SinceArrival is now minus the last arrival on any path.
	SinceArrival time.Duration
	// Correction is the length of the smoothing offset still being faded out.
	Correction float64
	// Path is the path drawn from.
	Path Path
	// Anim and Input are the extras of the newest sample on the drawn path.
	Anim, Input uint8
	// Flags are the flags of the newest sample on the drawn path.
	Flags wire.Flags
}
