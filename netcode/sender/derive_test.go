package sender

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/wire"
)

// settle is how long the tests let the filters (50 ms) settle: e^-20.
const settle = time.Second

// inputs are the ways a game feeds the sender.
var inputs = []struct {
	name         string
	withVel, f32 bool
}{
	{"positions", false, false},
	{"float32 positions", false, true},
	{"given velocity", true, false},
}

func TestConstantVelocity(t *testing.T) {
	for _, d := range dims {
		for _, in := range inputs {
			t.Run(d.name+"/"+in.name, func(t *testing.T) {
				fwd, side, _ := axes(d.dim2D)
				u := unit(d.dim2D)
				v := fwd.Scale(12 * u).Add(side.Scale(-5 * u))
				m := parabola(geom.Vec3{X: 150 * u, Y: 20 * u}, v, geom.Vec3{})
				s := newSender(t, Config{Dim2D: d.dim2D})
				rng := newRand(t, 1)
				got := drive(t, s, m, frames(144, 3*time.Second, ms(1.5), rng), in.withVel, in.f32)
				require.NotEmpty(t, got)
				// Float32 positions near 150 m carry 8 µm of noise: the
				// difference of differences amplifies it by 144² before
				// the filter.
				accTol, velTol, turnTol := 1e-9*u, 1e-9*u, 1e-9
				if in.f32 {
					accTol, velTol, turnTol = 0.1*u, 0.01*u, 0.01
				}
				for i, st := range got {
					if st.now-origin < settle/4 {
						continue
					}
					what := fmt.Sprintf("state %d at %v", i, st.now-origin)
					assertVecNear(t, v, st.st.Vel, velTol+0.01*u, what+" vel") // half-float step at 13 m/s: 1/128
					assertVecNear(t, geom.Vec3{}, st.st.Acc, accTol, what+" acc")
					assert.InDelta(t, 0, st.st.Turn, turnTol, what+" turn")
				}
			})
		}
	}
}

func TestConstantAcceleration(t *testing.T) {
	for _, d := range dims {
		fwd, side, up := axes(d.dim2D)
		u := unit(d.dim2D)
		cases := []struct {
			name   string
			v0, a  geom.Vec3
			only3D bool
		}{
			// Acceleration along the velocity keeps the heading.
			{"braking", fwd.Scale(25 * u).Add(side.Scale(10 * u)), fwd.Scale(-6 * u).Add(side.Scale(-2.4 * u)), false},
			{"speeding up", fwd.Scale(-3 * u), fwd.Scale(-4 * u), false},
			{"falling", fwd.Scale(8 * u), up.Scale(-9.8), true},
		}
		for _, tc := range cases {
			if tc.only3D && d.dim2D {
				continue
			}
			for _, in := range inputs {
				if in.f32 {
					continue // exact maths only; float32 noise is TestConstantVelocity's
				}
				t.Run(d.name+"/"+tc.name+"/"+in.name, func(t *testing.T) {
					m := parabola(geom.Vec3{Y: 3}, tc.v0, tc.a)
					s := newSender(t, Config{Dim2D: d.dim2D})
					got := drive(t, s, m, frames(144, 2*time.Second, ms(1.5), newRand(t, 2)), in.withVel, false)
					checked := 0
					for i, st := range got {
						ft := stampTime(&st.st, st.now)
						if ft-origin < settle {
							continue
						}
						_, vel, _ := m(ft)
						what := fmt.Sprintf("state %d at %v", i, ft-origin)
						// Half floats: 1/64 m/s² at 6-10, 1/64 m/s at 16-32.
						assertVecNear(t, tc.a, st.st.Acc, 0.02*u, what+" acc")
						// Without the half-frame carry the error would be
						// |a|·3.5 ms = 0.02-0.03 m/s.
						assertVecNear(t, vel, st.st.Vel, 0.015*u, what+" vel at the stamp")
						assert.InDelta(t, 0, st.st.Turn, 1e-6, what+" turn")
						checked++
					}
					require.Greater(t, checked, 50)
				})
			}
		}
	}
}

// TestCircle drives a constant-speed circle and checks the turn rate, the
// acceleration left after removing the centripetal part, and that predict's
// motion model, fed the states as sent, lands on the true circle.
func TestCircle(t *testing.T) {
	const (
		speed  = 10.0 // m/s
		radius = 5.0  // m: 2 rad/s, a tight turn
		ahead  = 100 * time.Millisecond
	)
	for _, d := range dims {
		for _, dir := range []float64{1, -1} {
			for _, jitter := range []time.Duration{0, ms(2)} {
				for _, in := range inputs {
					name := fmt.Sprintf("%s/turn %+.0f/jitter %v/%s", d.name, dir, jitter, in.name)
					t.Run(name, func(t *testing.T) {
						fwd, _, up := axes(d.dim2D)
						u := unit(d.dim2D)
						turn := dir * speed / radius
						m := circle(up, geom.Vec3{X: 30 * u, Y: 4 * u}, fwd, speed*u, turn)
						s := newSender(t, Config{Dim2D: d.dim2D})
						p, err := predict.New(predict.Config{Dim2D: d.dim2D})
						require.NoError(t, err)
						got := drive(t, s, m, frames(144, 3*time.Second, jitter, newRand(t, 3)), in.withVel, in.f32)

						var worstTurn, worstRest, worstPos float64
						for _, st := range got {
							ft := stampTime(&st.st, st.now)
							if ft-origin < settle {
								continue
							}
							worstTurn = max(worstTurn, math.Abs(st.st.Turn-turn))
							rest := st.st.Acc.Sub(up.Cross(st.st.Vel).Scale(st.st.Turn))
							worstRest = max(worstRest, rest.Len())

							// The receiver's view: the decoded state, on the
							// sender's clock, predicted ahead.
							p.Reset()
							require.True(t, p.Add(predict.PathDirect, predict.SampleOf(&st.st, ft), st.now))
							pose := p.PoseAt(ft + ahead)
							want, _, _ := m(ft + ahead)
							worstPos = max(worstPos, pose.Pos.Sub(want).Len())
						}
						t.Logf("worst: turn %.2e rad/s, rest acc %.2e, position %v ahead %.2e", worstTurn, worstRest, ahead, worstPos)
						// Half-float steps: 1/512 rad/s at 2 rad/s, 1/64 m/s²
						// at 16-32 m/s². Without turning the acceleration
						// filter with the heading, the rest would be 2 m/s²
						// and the position 11 mm off.
						assert.Less(t, worstTurn, 0.005, "turn rate v/r = %v", turn)
						assert.Less(t, worstRest, 0.1*u, "acceleration left after removing the centripetal 20 m/s²")
						assert.Less(t, worstPos, 0.005*u, "predicted position %v ahead", ahead)
					})
				}
			}
		}
	}
}

// TestHeadingWrap crosses the ±π heading (velocity along -X) after the
// filters settle: the turn rate must not jump.
func TestHeadingWrap(t *testing.T) {
	for _, d := range dims {
		for _, dir := range []float64{1, -1} {
			t.Run(fmt.Sprintf("%s/turn %+.0f", d.name, dir), func(t *testing.T) {
				fwd, _, up := axes(d.dim2D)
				u := unit(d.dim2D)
				turn := dir * 1.5
				cross := 1200 * time.Millisecond
				// Start so the heading reaches -X (±π) at cross.
				start := fwd.Scale(-1).RotateAbout(up, -turn*sec(cross))
				m := circle(up, geom.Vec3{}, start, 8*u, turn)
				s := newSender(t, Config{Dim2D: d.dim2D})
				got := drive(t, s, m, frames(144, 2*time.Second, 0, nil), false, false)
				n := 0
				for _, st := range got {
					ft := stampTime(&st.st, st.now) - origin
					if ft < cross-ms(100) || ft > cross+ms(100) {
						continue
					}
					assert.InDelta(t, turn, st.st.Turn, 0.01*math.Abs(turn), "at %v", ft)
					n++
				}
				require.Greater(t, n, 8)
			})
		}
	}
}

func TestSignedAngle(t *testing.T) {
	deg := math.Pi / 180
	for _, d := range dims {
		fwd, _, up := axes(d.dim2D)
		at := func(a float64) geom.Vec3 { return fwd.RotateAbout(up, a) }
		for _, tc := range []struct {
			name string
			a, b geom.Vec3
			want float64
		}{
			{"same", at(0.3), at(0.3).Scale(2), 0},
			{"left", at(0.1), at(0.4), 0.3},
			{"right", at(0.4), at(0.1), -0.3},
			{"across +π", at(179 * deg), at(-179 * deg), 2 * deg},
			{"across -π", at(-179 * deg), at(179 * deg), -2 * deg},
			{"vertical part ignored", at(0.2).Add(up.Scale(5)), at(0.5).Add(up.Scale(-3)), 0.3},
		} {
			if d.dim2D && tc.name == "vertical part ignored" {
				continue
			}
			t.Run(d.name+"/"+tc.name, func(t *testing.T) {
				assert.InDelta(t, tc.want, signedAngle(tc.a, tc.b, up), 1e-12)
			})
		}
	}
}

func TestMinTurnSpeed(t *testing.T) {
	for _, d := range dims {
		fwd, side, up := axes(d.dim2D)
		cfg := DefaultConfig(d.dim2D)
		slow := cfg.MinTurnSpeed * 0.8
		t.Run(d.name+"/slow circle", func(t *testing.T) {
			s := newSender(t, cfg)
			got := drive(t, s, circle(up, geom.Vec3{}, fwd, slow, 2), frames(144, time.Second, 0, nil), false, false)
			require.NotEmpty(t, got)
			for _, st := range got {
				assert.Zero(t, st.st.Turn)
			}
		})
		t.Run(d.name+"/standing with position noise", func(t *testing.T) {
			s := newSender(t, cfg)
			rng := newRand(t, 4)
			var got []sent
			for _, ft := range frames(144, time.Second, 0, nil) {
				// A millimetre of noise at 144 Hz is 0.3 m/s of derived
				// velocity with a random heading.
				n := fwd.Scale(rng.NormFloat64() * 1e-3).Add(side.Scale(rng.NormFloat64() * 1e-3))
				s.Sample(ft, n, geom.Identity)
				if st, ok := pollOnce(t, s, ft); ok {
					got = append(got, st)
				}
			}
			for _, st := range got {
				assert.Zero(t, st.st.Turn)
			}
		})
		t.Run(d.name+"/speeding up into a turn", func(t *testing.T) {
			// The heading turns at 1.5 rad/s all along while the speed
			// ramps up from zero: the turn rate is zero below the
			// threshold, never overshoots, and settles after it.
			s := newSender(t, Config{Dim2D: d.dim2D})
			const turn = 1.5
			var (
				pos   geom.Vec3
				prev  = origin
				speed float64
			)
			for _, ft := range frames(144, 2*time.Second, 0, nil) {
				dt := sec(ft - prev)
				prev = ft
				speed = cfg.MinTurnSpeed * sec(ft-origin) // one threshold per second
				heading := fwd.RotateAbout(up, turn*sec(ft-origin))
				pos = pos.Add(heading.Scale(speed * dt))
				s.Sample(ft, pos, geom.Identity)
				st, ok := pollOnce(t, s, ft)
				if !ok {
					continue
				}
				if speed < 0.9*cfg.MinTurnSpeed {
					assert.Zero(t, st.st.Turn, "at %v", ft-origin)
				}
				assert.LessOrEqual(t, st.st.Turn, turn*1.01, "at %v", ft-origin)
				assert.GreaterOrEqual(t, st.st.Turn, 0.0, "at %v", ft-origin)
			}
			last, ok := s.Latest()
			require.True(t, ok)
			assert.InDelta(t, turn, last.Turn, 0.02*turn, "settled after a second above the threshold")
		})
	}
}

// TestSmoothingTradeOff checks that the smoothing constants do what their
// docs say: a longer one gives less noise.
func TestSmoothingTradeOff(t *testing.T) {
	noise := func(tau time.Duration) float64 {
		t.Helper()
		s := newSender(t, Config{AccSmoothing: tau})
		rng := newRand(t, 5)
		var sum float64
		n := 0
		for i, ft := range frames(144, 2*time.Second, 0, nil) {
			pos := geom.Vec3{X: 10 * sec(ft-origin)}.Add(geom.Vec3{X: rng.NormFloat64() * 1e-4})
			s.Sample(ft, pos, geom.Identity)
			if i > 144 {
				st, _ := s.Latest()
				sum += st.Acc.Dot(st.Acc)
				n++
			}
		}
		return math.Sqrt(sum / float64(n))
	}
	short, long := noise(10*time.Millisecond), noise(200*time.Millisecond)
	t.Logf("acceleration noise: %.3f m/s² at 10 ms, %.3f at 200 ms", short, long)
	assert.Less(t, long, short/2)
}

// TestLatestMatchesWire round-trips a turning, accelerating state
// through the wire: what Latest reports is what a receiver decodes.
func TestLatestMatchesWire(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, _, up := axes(d.dim2D)
			s := newSender(t, Config{Dim2D: d.dim2D})
			drive(t, s, circle(up, geom.Vec3{Z: 2}, fwd, 9*unit(d.dim2D), 1), frames(144, time.Second, 0, nil), false, false)
			want, ok := s.Latest()
			require.True(t, ok)
			b, ok, err := poll(s, origin+2*time.Second, 0, nil)
			require.NoError(t, err)
			require.True(t, ok)
			var got wire.State
			require.NoError(t, wire.DecodeState(b, &got))
			assert.Equal(t, want.Stamp, got.Stamp)
			assert.Equal(t, want.Seq, got.Seq)
			assert.Equal(t, want.Fields, got.Fields)
			assertVecNear(t, want.Pos, got.Pos, 1e-5*unit(d.dim2D), "pos")
			assertVecNear(t, want.Vel, got.Vel, 0.01*unit(d.dim2D), "vel")
			assertVecNear(t, want.Acc, got.Acc, 0.01*unit(d.dim2D), "acc")
			assert.InDelta(t, want.Turn, got.Turn, 1e-3)
			if d.dim2D {
				assert.Zero(t, want.Pos.Z)
				assert.Zero(t, want.Vel.Z)
				assert.Zero(t, want.Acc.Z)
			}
		})
	}
}

// TestImpulse checks that an instant change of velocity (a character's
// instant turn or reversal, a collision) is sent at once but does not
// feed the derived acceleration and turn rate: a receiver extrapolating
// the states that follow it stays on the new straight line.
func TestImpulse(t *testing.T) {
	for _, d := range dims {
		for _, in := range inputs {
			for _, tc := range []struct {
				name string
				turn float64 // rad, instant
			}{
				{"quarter turn", math.Pi / 2},
				{"reversal", math.Pi},
				{"30 degrees", math.Pi / 6},
			} {
				t.Run(d.name+"/"+in.name+"/"+tc.name, func(t *testing.T) {
					fwd, _, up := axes(d.dim2D)
					u := unit(d.dim2D)
					turnAt := origin + time.Second
					v0 := fwd.Scale(6 * u)
					v1 := v0.RotateAbout(up, tc.turn)
					p1 := v0.Scale(sec(turnAt - origin))
					m := func(ft time.Duration) (geom.Vec3, geom.Vec3, geom.Quat) {
						if ft < turnAt {
							return v0.Scale(sec(ft - origin)), v0, geom.Identity
						}
						return p1.Add(v1.Scale(sec(ft - turnAt))), v1, geom.AxisAngle(up, tc.turn)
					}
					times := frames(60, 2*time.Second, 0, nil)
					check := func(cfg Config) (maxAcc, maxTurn, maxMiss float64) {
						s := newSender(t, cfg)
						for _, st := range drive(t, s, m, times, in.withVel, in.f32) {
							at := stampTime(&st.st, st.now)
							if at <= turnAt {
								continue
							}
							maxAcc = max(maxAcc, st.st.Acc.Len())
							maxTurn = max(maxTurn, math.Abs(st.st.Turn))
							// Where a receiver would draw it 100 ms later.
							p, err := predict.New(predict.Config{Dim2D: d.dim2D})
							require.NoError(t, err)
							require.True(t, p.Add(predict.PathDirect, predict.SampleOf(&st.st, at), at))
							want, _, _ := m(at + 100*time.Millisecond)
							maxMiss = max(maxMiss, p.PoseAt(at+100*time.Millisecond).Pos.Sub(want).Len())
						}
						return maxAcc, maxTurn, maxMiss
					}
					acc, turn, miss := check(Config{Dim2D: d.dim2D})
					t.Logf("after the turn: |acc| <= %.3g, |turn| <= %.3g, miss at 100 ms <= %.3g", acc, turn, miss)
					assert.LessOrEqual(t, acc, 0.5*u, "acceleration after an impulse")
					assert.LessOrEqual(t, turn, 0.05, "turn rate after an impulse")
					// Positions give the new velocity a frame late: the
					// state of that frame still misses by its half-turned
					// velocity times 100 ms.
					tol := 0.05 * u
					if !in.withVel {
						tol = 6 * u * 0.1 * 2 * math.Sin(tc.turn/4)
					}
					assert.LessOrEqual(t, miss, tol+0.02*u, "extrapolated 100 ms")

					// Without impulse detection the spike is low-passed
					// into both: the test can tell the difference.
					accOff, _, _ := check(Config{Dim2D: d.dim2D, ImpulseAcc: math.Inf(1)})
					assert.Greater(t, accOff, 20*u)
				})
			}
		}
	}
}
