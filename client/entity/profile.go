package entity

import (
	"time"

	"github.com/nearzero/nearzero/netcode/predict"
)

// Profile is a preset of the two prediction settings that depend most on
// how an entity moves (docs/architecture.md §4: short prediction for erratic
// movers, longer for vehicles).
type Profile int

// Profiles. The numbers are the NetPredictor inspector's enum values.
const (
	// ProfileVehicle: PredictionCap 300 ms, SmoothingTau 150 ms (the
	// predict defaults): momentum makes long extrapolation pay.
	ProfileVehicle Profile = 0
	// ProfileCharacter: PredictionCap 150 ms, SmoothingTau 50 ms: a
	// character changes direction at once, so extrapolating far overshoots,
	// and a quick fade keeps it close to its true path (found by the bench).
	ProfileCharacter Profile = 1
	// ProfileCustom: the two settings as set.
	ProfileCustom Profile = 2
	// ProfileAuto: predict.Config.Auto: the predictor learns, per entity
	// and link, how far behind the present to draw, how fast to fade
	// corrections and whether to bound their speed, from the states it
	// receives (the bench's default; PredictionCap and SmoothingTau keep
	// their predict defaults as the starting point). The default profile.
	ProfileAuto Profile = 3
)

// DefaultProfile is the profile of a new NetPredictor.
const DefaultProfile = ProfileAuto

// Character preset values.
const (
	CharacterPredictionCap = 150 * time.Millisecond
	CharacterSmoothingTau  = 50 * time.Millisecond
)

// String returns "vehicle", "character", "custom", "auto" or "invalid".
func (p Profile) String() string {
	switch p {
	case ProfileAuto:
		return "auto"
	case ProfileVehicle:
		return "vehicle"
	case ProfileCharacter:
		return "character"
	case ProfileCustom:
		return "custom"
	}
	return "invalid"
}

// Preset returns the profile's prediction cap and smoothing time
// constant; ok is false for ProfileCustom, ProfileAuto (which learns them)
// and invalid values, which have none.
func (p Profile) Preset() (predictionCap, smoothingTau time.Duration, ok bool) {
	switch p {
	case ProfileVehicle:
		return predict.DefaultPredictionCap, predict.DefaultSmoothingTau, true
	case ProfileCharacter:
		return CharacterPredictionCap, CharacterSmoothingTau, true
	}
	return 0, 0, false
}

// Apply returns c set up for the profile: a preset's cap and smoothing time
// constant with Auto off, Auto on for ProfileAuto (the rest of c kept), and
// c with Auto off for ProfileCustom and invalid values.
func (p Profile) Apply(c predict.Config) predict.Config {
	c.Auto = p == ProfileAuto
	if capd, tau, ok := p.Preset(); ok {
		c.PredictionCap, c.SmoothingTau = capd, tau
	}
	return c
}

// ProfileOf returns the profile whose preset is exactly (predictionCap,
// smoothingTau), or ProfileCustom. It never returns ProfileAuto, which is
// no pair of values: a predict.Config with Auto set is ProfileAuto.
func ProfileOf(predictionCap, smoothingTau time.Duration) Profile {
	for _, p := range []Profile{ProfileVehicle, ProfileCharacter} {
		if c, t, _ := p.Preset(); c == predictionCap && t == smoothingTau {
			return p
		}
	}
	return ProfileCustom
}
