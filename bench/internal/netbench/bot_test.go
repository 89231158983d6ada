package netbench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
)

// fixed is a driver that holds one input.
type fixed Input

func (f fixed) input(time.Duration, Kin) Input { return Input(f) }

func TestVehicle(t *testing.T) {
	t.Run("top speed", func(t *testing.T) {
		b := newBot(Vehicle, fixed{Throttle: 1}, geom.Vec3{}, 0)
		k := b.at(30 * time.Second)
		assert.InDelta(t, 20, k.Vel.Len(), 1, "about 20 m/s flat out")
		assert.InDelta(t, -k.Vel.Len(), k.Vel.Z, 1e-9, "straight ahead is -Z")
	})
	t.Run("brakes to a stop", func(t *testing.T) {
		b := newBot(Vehicle, fixed{Throttle: 1}, geom.Vec3{}, 0)
		b.at(20 * time.Second)
		b.drv = fixed{Brake: 1}
		k := b.at(21 * time.Second)
		assert.Less(t, k.Vel.Len(), 13.0, "9 m/s² of braking")
		k = b.at(25 * time.Second)
		assert.Zero(t, k.Vel.Len())
		assert.Zero(t, k.Acc.Len())
	})
	t.Run("turns within grip", func(t *testing.T) {
		b := newBot(Vehicle, fixed{Throttle: 1, Steer: 1}, geom.Vec3{}, 0)
		k := b.at(20 * time.Second)
		lat := math.Abs(k.Turn) * k.Vel.Len()
		assert.InDelta(t, vehLatAcc, lat, 0.01, "the yaw rate is clipped to the grip")
		assert.Positive(t, k.Turn, "positive steer turns left (counter-clockwise from above)")
		// The velocity turns at the turn rate: check against the history.
		k2 := b.at(20*time.Second + 100*time.Millisecond)
		h1, h2 := yawOf(k.Vel), yawOf(k2.Vel)
		assert.InDelta(t, k.Turn*0.1, geom.WrapAngle(h2-h1), 1e-3)
	})
}

func TestCharacter(t *testing.T) {
	b := newBot(Character, fixed{Throttle: 1, Heading: math.Pi / 2, Jump: true}, geom.Vec3{}, 0)
	top := 0.0
	for at := time.Duration(0); at < 2*time.Second; at += 5 * time.Millisecond {
		top = max(top, b.at(at).Pos.Y)
	}
	assert.InDelta(t, charJumpV*charJumpV/(2*gravity), top, 0.02, "jump apex")
	k := b.at(2 * time.Second)
	assert.InDelta(t, charRunSpeed, math.Hypot(k.Vel.X, k.Vel.Z), 1e-9)
	assert.InDelta(t, -charRunSpeed, k.Vel.X, 1e-9, "a heading of +90° runs toward -X")
	assert.Zero(t, k.Pos.Y, "one jump per press")
}

// TestHistoryMatchesMotion checks that the truth the metrics read between
// steps is consistent: positions advance by the velocity.
func TestHistoryMatchesMotion(t *testing.T) {
	b := newBot(Vehicle, &vehicleDriver{r: rand.New(rand.NewPCG(3, 3)), arena: 120}, geom.Vec3{}, 0)
	for at := time.Second; at < 60*time.Second; at += 777 * time.Microsecond {
		k := b.at(at)
		if k.Vel.Len() < 1 {
			continue
		}
		const dt = time.Millisecond
		k0, k1 := b.at(at-dt), k
		v := k1.Pos.Sub(k0.Pos).Scale(1 / dt.Seconds())
		require.Less(t, v.Sub(k.Vel).Len(), 0.05, "at %v", at)
	}
	// Looking back past the history clamps to its oldest step.
	old := b.at(time.Second)
	assert.True(t, old.Pos.Finite())
}

func TestSpawnAndHold(t *testing.T) {
	b := newBot(Vehicle, fixed{Throttle: 1}, geom.Vec3{}, 0)
	b.at(5 * time.Second)
	b.spawn(geom.Vec3{X: 3}, 0)
	since, ok := b.sinceTeleport(6 * time.Second)
	require.True(t, ok)
	assert.InDelta(t, time.Second, since, float64(botStep))
	k := b.at(6 * time.Second)
	assert.Equal(t, geom.Vec3{X: 3}, k.Pos, "held at the spawn")
	b.hold = false
	k = b.at(7 * time.Second)
	assert.Positive(t, k.Vel.Len())
}

func TestScenarios(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Scenarios() {
		assert.False(t, seen[s.Name], "unique name %s", s.Name)
		seen[s.Name] = true
		assert.NotEmpty(t, s.Doc)
		got, err := Lookup(s.Name)
		require.NoError(t, err)
		assert.Equal(t, s.Name, got.Name)
	}
	for _, want := range []string{"direct-20", "direct-50", "direct-100", "direct-150", "direct-200", "loss-1pct",
		"burst-loss", "harsh-50", "harsh-150", "wifi-stalls", "jitter-tail", "drift-50ppm", "direct-outage",
		"server-only", "asymmetric", "hitches", "slow-30fps", "smooth-50", "round-start", "contact"} {
		assert.True(t, seen[want], want)
	}
	_, err := Lookup("nope")
	assert.ErrorContains(t, err, "direct-50")
}
