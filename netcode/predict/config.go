package predict

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Defaults of Config. The Godot inspector shows the same numbers.
const (
	DefaultPredictionCap      = 300 * time.Millisecond
	DefaultCoastUntil         = time.Second
	DefaultGhostAfter         = 500 * time.Millisecond
	DefaultHideAfter          = 2 * time.Second
	DefaultSmoothingTau       = 150 * time.Millisecond
	DefaultTeleportDistance   = 5.0  // m
	DefaultTeleportDistance2D = 200. // px
	DefaultContactTrust       = 400 * time.Millisecond
	DefaultWidth              = 1.0  // m
	DefaultWidth2D            = 32.0 // px
	DefaultPathMargin         = 30 * time.Millisecond
	DefaultDirectOutage       = 100 * time.Millisecond
	DefaultBufferLen          = 32
	// MaxBufferLen bounds BufferLen, so a bad setting cannot allocate a
	// huge buffer.
	MaxBufferLen = 4096
)

// ErrConfig indicates an invalid Config; the wrapping error names the fields.
var ErrConfig = errors.New("predict: invalid config")

// Config holds the predictor's settings. The zero value of every field means
// its default, so Config{} (3D) and Config{Dim2D: true} are complete. To turn
// a duration "off", set it to 1ns rather than 0.
type Config struct {
	// Dim2D selects a 2D entity: it turns about +Z and the distance
	// defaults are in pixels. Default false (3D, turns about +Y, metres).
	Dim2D bool
	// PredictionCap is the age up to which the newest sample is carried
	// forward with velocity, acceleration and turn rate. Default 300 ms;
	// shorter for erratic movers, longer for vehicles.
	PredictionCap time.Duration
	// CoastUntil is the age up to which, past PredictionCap, the entity
	// coasts at constant speed and turn rate; past it, it stops.
	// Default 1 s. Must not be below PredictionCap.
	CoastUntil time.Duration
	// GhostAfter is the time without an arrival (on any path, by arrival
	// time) after which the entity is a Ghost. Default 500 ms.
	GhostAfter time.Duration
	// HideAfter is the time without an arrival after which the entity is
	// Hidden. Default 2 s. Must be above GhostAfter.
	HideAfter time.Duration
	// SmoothingTau is the time constant with which a correction fades out.
	// Default 150 ms.
	SmoothingTau time.Duration
	// TeleportDistance is the smoothing offset beyond which the predictor
	// snaps instead of fading. Default 5 m in 3D, 200 px in 2D.
	TeleportDistance float64
	// ContactTrust is how long the entity is not collidable after it
	// appears, reappears after Hidden, or is corrected by more than Width.
	// Default 400 ms.
	ContactTrust time.Duration
	// Width is the entity's width for the contact-trust rule. Default 1 m
	// in 3D, 32 px in 2D.
	Width float64
	// PathMargin is how much newer the other path's newest sample must be
	// before the drawn path switches to it (hysteresis). Default 30 ms.
	PathMargin time.Duration
	// DirectOutage is the time without an arrival on the drawn path (in
	// practice the direct one) after which it counts as out: the predictor
	// then switches as soon as the other path's data is newer, without
	// waiting for PathMargin. Default 100 ms.
	DirectOutage time.Duration
	// BufferLen is the number of samples kept per path. Default 32, at
	// least 2, at most MaxBufferLen.
	BufferLen int
	// Auto tunes the drawing to the mover and the link, per entity: the
	// predictor learns from every arrival how far behind the present to
	// draw (from full extrapolation to an interpolation buffer), how fast
	// to fade corrections, whether to bound their speed and whether to
	// use acceleration and turn rate, and slides there (see the package
	// doc). PredictionCap and CoastUntil still apply, and SmoothingTau
	// until it has learnt. Default false here (a zero Config); the Godot
	// NetPredictor turns it on by default (its motion profile Auto).
	Auto bool
	// MaxCorrectionSpeed bounds how fast the smoothing moves the drawn
	// entity toward a new prediction (m/s; px/s in 2D), on top of the
	// SmoothingTau decay, so that a large correction glides instead of
	// popping; TeleportDistance still snaps. Default 0: no bound, except
	// with Auto, where it is 5 m/s (160 px/s in 2D).
	MaxCorrectionSpeed float64
	// AutoPopCost is what Auto counts a pop (a frame move of the drawn
	// entity unlike any the entity was seen to make, by more than 9 cm or
	// 2.9 px, see below) against error when it scores its candidate
	// settings: like being this far off at one arrival (m; px in 2D), for
	// an entity whose top speed lately is at most 8 m/s (256 px/s). Above
	// that a pop costs less, by (8 m/s over the top speed) to the power
	// 3.5, and is a larger departure (40% of a frame's travel at the top
	// speed): a 10 cm jump is a frame's travel for a runner, a fraction of
	// one for a car. Larger trades error for fewer pops. Default 0
	// (unused), except with Auto, where it is 20 m (640 px in 2D).
	AutoPopCost float64
	// AutoParams, when not nil, replaces Auto's tuning constants
	// (DefaultAutoParams) for this predictor: for measurement, such as the
	// bench's ablations, not a setting for games. Default nil.
	AutoParams *AutoParams
}

// DefaultConfig returns the defaults for a 3D or a 2D entity, every field
// filled in.
func DefaultConfig(dim2D bool) Config { return Config{Dim2D: dim2D}.withDefaults() }

// withDefaults returns a copy of c with every zero field set to its default.
func (c Config) withDefaults() Config {
	setD := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	setD(&c.PredictionCap, DefaultPredictionCap)
	setD(&c.CoastUntil, DefaultCoastUntil)
	setD(&c.GhostAfter, DefaultGhostAfter)
	setD(&c.HideAfter, DefaultHideAfter)
	setD(&c.SmoothingTau, DefaultSmoothingTau)
	setD(&c.ContactTrust, DefaultContactTrust)
	setD(&c.PathMargin, DefaultPathMargin)
	setD(&c.DirectOutage, DefaultDirectOutage)
	if c.TeleportDistance == 0 {
		c.TeleportDistance = DefaultTeleportDistance
		if c.Dim2D {
			c.TeleportDistance = DefaultTeleportDistance2D
		}
	}
	if c.Width == 0 {
		c.Width = DefaultWidth
		if c.Dim2D {
			c.Width = DefaultWidth2D
		}
	}
	if c.BufferLen == 0 {
		c.BufferLen = DefaultBufferLen
	}
	par := c.autoParams()
	if c.Auto && c.AutoPopCost == 0 {
		c.AutoPopCost = par.PopCost
		if c.Dim2D {
			c.AutoPopCost = par.PopCost2D
		}
	}
	if c.Auto && c.MaxCorrectionSpeed == 0 {
		c.MaxCorrectionSpeed = par.CorrectionSpeed
		if c.Dim2D {
			c.MaxCorrectionSpeed = par.CorrectionSpeed2D
		}
	}
	return c
}

// autoParams returns Auto's constants: AutoParams, or the shipped ones.
func (c *Config) autoParams() *AutoParams {
	if c.AutoParams != nil {
		return c.AutoParams
	}
	return &defaultAutoParams
}

// Validate reports whether c, with its defaults filled in, is usable. The
// error wraps ErrConfig and names both values of a contradiction.
func (c Config) Validate() error {
	c = c.withDefaults()
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"PredictionCap", c.PredictionCap},
		{"CoastUntil", c.CoastUntil},
		{"GhostAfter", c.GhostAfter},
		{"HideAfter", c.HideAfter},
		{"SmoothingTau", c.SmoothingTau},
		{"ContactTrust", c.ContactTrust},
		{"PathMargin", c.PathMargin},
		{"DirectOutage", c.DirectOutage},
	} {
		if d.v < 0 {
			return fmt.Errorf("%w: %s is %v, must be positive", ErrConfig, d.name, d.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"TeleportDistance", c.TeleportDistance},
		{"Width", c.Width},
	} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: %s is %v, must be positive and finite", ErrConfig, f.name, f.v)
		}
	}
	if !(c.AutoPopCost >= 0) || math.IsInf(c.AutoPopCost, 0) {
		return fmt.Errorf("%w: AutoPopCost is %v, must be finite and not negative", ErrConfig, c.AutoPopCost)
	}
	if c.MaxCorrectionSpeed < 0 || math.IsNaN(c.MaxCorrectionSpeed) {
		return fmt.Errorf("%w: MaxCorrectionSpeed is %v, must not be negative", ErrConfig, c.MaxCorrectionSpeed)
	}
	if c.BufferLen < 2 || c.BufferLen > MaxBufferLen {
		return fmt.Errorf("%w: BufferLen is %d, must be in [2, %d]", ErrConfig, c.BufferLen, MaxBufferLen)
	}
	if c.AutoParams != nil {
		if err := c.AutoParams.validate(); err != nil {
			return fmt.Errorf("%w: AutoParams: %w", ErrConfig, err)
		}
	}
	if c.PredictionCap > c.CoastUntil {
		return fmt.Errorf("%w: PredictionCap (%v) must not exceed CoastUntil (%v)",
			ErrConfig, c.PredictionCap, c.CoastUntil)
	}
	if c.GhostAfter >= c.HideAfter {
		return fmt.Errorf("%w: GhostAfter (%v) must be less than HideAfter (%v)",
			ErrConfig, c.GhostAfter, c.HideAfter)
	}
	return nil
}
