package sender

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// dims names both dimensions for table tests.
var dims = []struct {
	name  string
	dim2D bool
}{{"3d", false}, {"2d", true}}

// origin is an arbitrary clock origin, so no test leans on time zero.
const origin = 7 * time.Second

// ms returns n milliseconds.
func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// sec returns d in seconds.
func sec(d time.Duration) float64 { return d.Seconds() }

// period returns the time between frames at hz per second.
func period(hz float64) time.Duration { return time.Duration(math.Round(float64(time.Second) / hz)) }

// axes returns the forward, side and up directions of a dimension's
// movement plane; a positive turn rotates fwd towards side.
func axes(dim2D bool) (fwd, side, up geom.Vec3) {
	up = geom.Up3D
	if dim2D {
		up = geom.Up2D
	}
	fwd = geom.Vec3{X: 1}
	return fwd, up.Cross(fwd), up
}

// unit returns the distance unit of a dimension: 1 m in 3D, 40 px in 2D.
func unit(dim2D bool) float64 {
	if dim2D {
		return 40
	}
	return 1
}

// newSender returns a sender for cfg or fails the test.
func newSender(t testing.TB, cfg Config) *Sender {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	return s
}

// newRand returns a seeded generator and logs the seed if the test fails.
func newRand(t *testing.T, seed uint64) *rand.Rand {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// frames returns frame times from origin for dur at hz per second, each
// moved by up to ±jitter (uniform; jitter must stay below half a period so
// the times stay in order). rng may be nil when jitter is zero.
func frames(hz float64, dur, jitter time.Duration, rng *rand.Rand) []time.Duration {
	n := int(math.Round(sec(dur) * hz))
	out := make([]time.Duration, n)
	for i := range out {
		t := origin + time.Duration(math.Round(float64(i)*float64(time.Second)/hz))
		if jitter > 0 && i > 0 {
			t += time.Duration((rng.Float64()*2 - 1) * float64(jitter))
		}
		out[i] = t
	}
	return out
}

// motion is a true trajectory: position, velocity and orientation at t.
type motion func(t time.Duration) (pos, vel geom.Vec3, rot geom.Quat)

// circle returns a constant-speed circle about up through start at origin,
// heading along dir (unit, across up) at speed, turning at rate turn
// (rad/s, signed as a right-handed turn about up; non-zero).
func circle(up, start, dir geom.Vec3, speed, turn float64) motion {
	centre := start.Add(up.Cross(dir).Scale(speed / turn))
	r0 := start.Sub(centre)
	return func(t time.Duration) (geom.Vec3, geom.Vec3, geom.Quat) {
		th := turn * sec(t-origin)
		r := r0.RotateAbout(up, th)
		return centre.Add(r), up.Cross(r).Scale(turn), geom.AxisAngle(up, th)
	}
}

// parabola returns motion from p0 with velocity v0 at origin and constant
// acceleration a.
func parabola(p0, v0, a geom.Vec3) motion {
	return func(t time.Duration) (geom.Vec3, geom.Vec3, geom.Quat) {
		s := sec(t - origin)
		return p0.Add(v0.Scale(s)).Add(a.Scale(s * s / 2)), v0.Add(a.Scale(s)), geom.Identity
	}
}

// round32 rounds each component to float32, as Godot's positions are.
func round32(v geom.Vec3) geom.Vec3 {
	return geom.Vec3{X: float64(float32(v.X)), Y: float64(float32(v.Y)), Z: float64(float32(v.Z))}
}

// poll is PollState with the state encoded, as an owner that writes the
// bytes itself would do it: it appends the state to dst when one is due.
func poll(s *Sender, now time.Duration, slot uint8, dst []byte) ([]byte, bool, error) {
	st, ok := s.PollState(now, slot)
	if !ok {
		return dst, false, nil
	}
	out, err := wire.AppendState(dst, &st)
	if err != nil {
		return dst, false, err
	}
	return out, true, nil
}

// sent is one state poll sent, decoded, with the Poll time.
type sent struct {
	now time.Duration
	st  wire.State
	raw []byte
}

// pollOnce polls s at now and decodes what it sent.
func pollOnce(t testing.TB, s *Sender, now time.Duration) (sent, bool) {
	t.Helper()
	b, ok, err := poll(s, now, 3, nil)
	require.NoError(t, err)
	if !ok {
		require.Empty(t, b)
		return sent{}, false
	}
	out := sent{now: now, raw: b}
	require.NoError(t, wire.DecodeState(b, &out.st))
	return out, true
}

// drive is the physics loop: at each frame it samples m (velocity given
// when withVel, positions rounded to float32 when f32) and polls.
func drive(t testing.TB, s *Sender, m motion, times []time.Duration, withVel, f32 bool) []sent {
	t.Helper()
	var out []sent
	for _, ft := range times {
		pos, vel, rot := m(ft)
		if f32 {
			pos = round32(pos)
		}
		if withVel {
			s.SampleWithVelocity(ft, pos, rot, vel)
		} else {
			s.Sample(ft, pos, rot)
		}
		if st, ok := pollOnce(t, s, ft); ok {
			out = append(out, st)
		}
	}
	return out
}

// stampTime maps a state's stamp back onto the sender's clock near ref.
func stampTime(st *wire.State, ref time.Duration) time.Duration { return st.Stamp.Near(ref) }

// assertVecNear checks that got lies within tol of want.
func assertVecNear(t testing.TB, want, got geom.Vec3, tol float64, what string) bool {
	t.Helper()
	return assert.LessOrEqual(t, got.Sub(want).Len(), tol, "%s: want %v, got %v", what, want, got)
}
