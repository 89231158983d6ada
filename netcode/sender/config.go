package sender

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/wire"
)

// Defaults of Config. The Godot inspector shows the same numbers.
const (
	// DefaultRate is the default send rate in states per second.
	DefaultRate = 60.0
	// MaxRate bounds Rate: beyond it the server's rate check (about 1.5x
	// the send rate) and every receiver's buffer would be swamped.
	MaxRate = 1000.0
	// DefaultFields are the optional parts sent by default.
	DefaultFields = wire.HasAcc | wire.HasTurn
	// DefaultAccSmoothing is the low-pass time constant of the derived
	// acceleration.
	DefaultAccSmoothing = 50 * time.Millisecond
	// DefaultTurnSmoothing is the low-pass time constant of the derived
	// turn rate.
	DefaultTurnSmoothing = 50 * time.Millisecond
	// DefaultMinTurnSpeed is the speed across the up axis (m/s) below
	// which a 3D entity's heading, and so its turn rate, is undefined.
	DefaultMinTurnSpeed = 0.5
	// DefaultMinTurnSpeed2D is the same for a 2D entity, in px/s.
	DefaultMinTurnSpeed2D = 20.0
	// DefaultImpulseAcc is the rate of velocity change (m/s²) above which a
	// 3D entity's change is an impulse: 5 g, beyond hard braking, sharp
	// turns and gravity, below any collision or instant turn at a frame.
	DefaultImpulseAcc = 50.0
	// DefaultImpulseAcc2D is the same for a 2D entity, in px/s²: twice
	// Godot's default 2D gravity of 980 px/s².
	DefaultImpulseAcc2D = 2000.0
)

// FieldsNone is the Config.Fields value that sends no optional part: only
// position, velocity and orientation (the smallest state, 30 bytes in 3D).
// It exists because a zero Fields means DefaultFields. SetExtras still adds
// wire.HasExtras.
const FieldsNone wire.Fields = 1 << 7

// optionalFields are the wire.Fields a sender may send.
const optionalFields = wire.HasAcc | wire.HasTurn | wire.HasExtras

// ErrConfig indicates an invalid Config; the wrapping error names the fields.
var ErrConfig = errors.New("sender: invalid config")

// Config holds the sender's settings. The zero value of every field means
// its default, so Config{} (3D) and Config{Dim2D: true} are complete. To
// turn smoothing "off", set its time constant to 1ns rather than 0.
type Config struct {
	// Dim2D selects a 2D entity: it turns about +Z, Z components are not
	// sent, and MinTurnSpeed is in px/s. Default false (3D, turns about +Y).
	Dim2D bool
	// Rate is the number of states sent per second. Default 60; must be
	// positive and at most MaxRate (1000).
	Rate float64
	// Fields are the optional parts to send: any of wire.HasAcc,
	// wire.HasTurn and wire.HasExtras, or FieldsNone. Default
	// wire.HasAcc|wire.HasTurn. wire.HasExtras is added once SetExtras is
	// called.
	Fields wire.Fields
	// AccSmoothing is the time constant of the first-order low-pass on the
	// derived acceleration. Longer means less noise and more lag (the
	// filter lags a changing acceleration by about this much). Default 50 ms.
	AccSmoothing time.Duration
	// TurnSmoothing is the time constant of the low-pass on the derived
	// turn rate. Default 50 ms.
	TurnSmoothing time.Duration
	// MinTurnSpeed is the speed across the up axis below which the heading
	// is undefined and the turn rate is sent as zero (m/s in 3D, px/s in
	// 2D). Default 0.5 m/s in 3D, 20 px/s in 2D.
	MinTurnSpeed float64
	// ImpulseAcc is the rate of velocity change between two samples above
	// which the change is an impulse (a collision, an instant turn or
	// stop): the new velocity is sent, but the change does not feed the
	// derived acceleration and turn rate, which keep their values (a
	// spike low-passed into them would bend every receiver's prediction
	// for a filter time). In m/s² (px/s² in 2D). Default 50 m/s² in 3D,
	// 2000 px/s² in 2D.
	ImpulseAcc float64
}

// DefaultConfig returns the defaults for a 3D or a 2D entity, every field
// filled in.
func DefaultConfig(dim2D bool) Config { return Config{Dim2D: dim2D}.withDefaults() }

// withDefaults returns a copy of c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Fields == 0 {
		c.Fields = DefaultFields
	}
	if c.AccSmoothing == 0 {
		c.AccSmoothing = DefaultAccSmoothing
	}
	if c.TurnSmoothing == 0 {
		c.TurnSmoothing = DefaultTurnSmoothing
	}
	if c.MinTurnSpeed == 0 {
		c.MinTurnSpeed = DefaultMinTurnSpeed
		if c.Dim2D {
			c.MinTurnSpeed = DefaultMinTurnSpeed2D
		}
	}
	if c.ImpulseAcc == 0 {
		c.ImpulseAcc = DefaultImpulseAcc
		if c.Dim2D {
			c.ImpulseAcc = DefaultImpulseAcc2D
		}
	}
	return c
}

// Validate reports whether c, with its defaults filled in, is usable. The
// error wraps ErrConfig and names the offending field and value.
func (c Config) Validate() error {
	c = c.withDefaults()
	if !(c.Rate > 0 && c.Rate <= MaxRate) {
		return fmt.Errorf("%w: Rate is %v, must be in (0, %v]", ErrConfig, c.Rate, MaxRate)
	}
	if c.Fields != FieldsNone && c.Fields&^optionalFields != 0 {
		return fmt.Errorf("%w: Fields is %#x, must combine wire.HasAcc, wire.HasTurn and wire.HasExtras, or be FieldsNone",
			ErrConfig, uint8(c.Fields))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"AccSmoothing", c.AccSmoothing},
		{"TurnSmoothing", c.TurnSmoothing},
	} {
		if d.v < 0 {
			return fmt.Errorf("%w: %s is %v, must be positive", ErrConfig, d.name, d.v)
		}
	}
	if !(c.MinTurnSpeed > 0) || math.IsInf(c.MinTurnSpeed, 0) {
		return fmt.Errorf("%w: MinTurnSpeed is %v, must be positive and finite", ErrConfig, c.MinTurnSpeed)
	}
	if !(c.ImpulseAcc > 0) {
		return fmt.Errorf("%w: ImpulseAcc is %v, must be positive (+Inf turns impulses off)", ErrConfig, c.ImpulseAcc)
	}
	return nil
}

// sentFields returns the wire fields a Config sends before SetExtras.
func (c Config) sentFields() wire.Fields {
	if c.Fields == FieldsNone {
		return 0
	}
	return c.Fields
}
