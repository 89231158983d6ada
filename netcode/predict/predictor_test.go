package predict

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

func TestPoseBeforeAnySample(t *testing.T) {
	p := newPredictor(t, Config{})
	pose := p.PoseAt(ms(100))
	assert.False(t, pose.Valid)
	assert.Equal(t, Hidden, pose.Visibility)
	assert.False(t, pose.Collidable)
	assert.Equal(t, geom.Identity, pose.Rot)
}

// Rule 1: extrapolate the newest sample by its age.
func TestExtrapolateToPresent(t *testing.T) {
	for _, d := range dims {
		fwd, side, up := axes(d.dim2D)
		u := unit(d.dim2D)
		for _, tc := range []struct {
			name     string
			vel, acc geom.Vec3
			age      time.Duration
		}{
			{"constant velocity", fwd.Scale(10 * u), geom.Vec3{}, ms(50)},
			{"braking", fwd.Scale(10 * u), fwd.Scale(-6 * u), ms(120)},
			{"sideways acceleration", fwd.Scale(8 * u), side.Scale(3 * u), ms(300)},
			{"falling (3d) or drifting (2d)", fwd.Scale(2 * u), up.Scale(-9.8).Add(side.Scale(u)), ms(200)},
		} {
			t.Run(d.name+"/"+tc.name, func(t *testing.T) {
				p := newPredictor(t, Config{Dim2D: d.dim2D})
				p0 := geom.Vec3{X: 5 * u, Y: 1}
				s := moving(ms(1000), 1, p0, tc.vel)
				s.Acc = tc.acc
				require.True(t, p.Add(PathDirect, s, ms(1030)))
				pose := p.PoseAt(ms(1000) + tc.age)
				require.True(t, pose.Valid)
				tt := tc.age.Seconds()
				want := p0.Add(tc.vel.Scale(tt)).Add(tc.acc.Scale(tt * tt / 2))
				assertVecNear(t, want, pose.Raw, 1e-9*u, "raw")
				assertVecNear(t, want, pose.Pos, 1e-9*u, "drawn (nothing to smooth)")
				assertVecNear(t, tc.vel.Add(tc.acc.Scale(tt)), pose.Vel, 1e-9*u, "vel")
				assert.Equal(t, tc.age, pose.Age)
				assert.False(t, pose.PastCap)
				assert.Equal(t, PathDirect, pose.Path)
			})
		}
	}
}

// Rule 1: a constant-speed circle with the matching turn rate stays on it,
// through the whole predictor, up to the cap and while coasting.
func TestPredictorCircle(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				fwd, _, up := axes(d.dim2D)
				u := unit(d.dim2D)
				speed := rapid.Float64Range(1, 30).Draw(rt, "speed") * u
				turn := rapid.Float64Range(-3, 3).Filter(func(f float64) bool { return math.Abs(f) > 0.05 }).Draw(rt, "turn")
				age := time.Duration(rapid.Int64Range(0, int64(time.Second)).Draw(rt, "age"))
				p, err := New(Config{Dim2D: d.dim2D})
				require.NoError(rt, err)
				v0 := fwd.Scale(speed)
				s := moving(0, 1, geom.Vec3{}, v0)
				s.Turn, s.Acc = turn, up.Cross(v0).Scale(turn)
				require.True(rt, p.Add(PathServer, s, ms(20)))
				pose := p.PoseAt(age)
				centre := up.Cross(v0).Scale(1 / turn)
				radius := speed / math.Abs(turn)
				assert.InDelta(rt, radius, pose.Raw.Sub(centre).Len(), 1e-9*radius)
				assert.InDelta(rt, speed, pose.Vel.Len(), 1e-9*speed)
				assertQuatNear(rt, geom.AxisAngle(up, turn*age.Seconds()), pose.Rot, 1e-9, "orientation")
			})
		})
	}
}

// Rule 2: inside the buffer, Hermite on position and slerp on rotation.
func TestInterpolateInsideBuffer(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, _, up := axes(d.dim2D)
			u := unit(d.dim2D)
			v := fwd.Scale(10 * u)
			a := moving(ms(100), 1, geom.Vec3{}, v)
			b := moving(ms(200), 2, v.Scale(0.1), v)
			b.Rot = geom.AxisAngle(up, 0.6)
			p := newPredictor(t, Config{Dim2D: d.dim2D})
			require.True(t, p.Add(PathDirect, a, ms(110)))
			require.True(t, p.Add(PathDirect, b, ms(210)))
			// A sender clock ahead of ours puts now between the samples.
			pose := p.PoseAt(ms(150))
			assertVecNear(t, v.Scale(0.05), pose.Raw, 1e-12*u, "pos")
			assertVecNear(t, v, pose.Vel, 1e-12*u, "vel")
			assertQuatNear(t, geom.AxisAngle(up, 0.3), pose.Rot, 1e-12, "rot")
			assert.Equal(t, ms(-50), pose.Age)
			assert.False(t, pose.PastCap)

			// Before every sample: hold the oldest, never run backwards.
			q := newPredictor(t, Config{Dim2D: d.dim2D})
			require.True(t, q.Add(PathDirect, b, ms(210)))
			assertVecNear(t, b.Pos, q.PoseAt(ms(180)).Raw, 0, "held")
		})
	}
}

// Rule 3: past the cap, coast at constant speed and turn rate from the
// capped state; past CoastUntil, stop.
func TestCapAndCoast(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, _, up := axes(d.dim2D)
			u := unit(d.dim2D)
			cfg := DefaultConfig(d.dim2D)
			const turn = 0.7
			v0 := fwd.Scale(10 * u)
			s := moving(0, 1, geom.Vec3{}, v0)
			s.Turn = turn
			s.Acc = fwd.Scale(4 * u).Add(up.Cross(v0).Scale(turn)) // speeding up in a turn

			capK := advance(s.Pos, s.Vel, fwd.Scale(4*u), s.Rot, turn, up, cfg.PredictionCap.Seconds())
			for _, tc := range []struct {
				name    string
				age     time.Duration
				pastCap bool
				want    kin
			}{
				{"at the cap", cfg.PredictionCap, false, capK},
				{"coasting", ms(700), true,
					advance(capK.pos, capK.vel, geom.Vec3{}, capK.rot, turn, up, (ms(700) - cfg.PredictionCap).Seconds())},
				{"stopped", ms(1500), true,
					advance(capK.pos, capK.vel, geom.Vec3{}, capK.rot, turn, up, (cfg.CoastUntil - cfg.PredictionCap).Seconds())},
			} {
				t.Run(tc.name, func(t *testing.T) {
					p := newPredictor(t, cfg)
					require.True(t, p.Add(PathDirect, s, ms(10)))
					pose := p.PoseAt(tc.age)
					assert.Equal(t, tc.pastCap, pose.PastCap)
					assertVecNear(t, tc.want.pos, pose.Raw, 1e-9*u, "pos")
					assertQuatNear(t, tc.want.rot, pose.Rot, 1e-12, "rot")
					switch {
					case tc.age > cfg.CoastUntil:
						assert.Equal(t, geom.Vec3{}, pose.Vel, "stopped")
						later := p.PoseAt(tc.age + time.Second)
						assert.Equal(t, pose.Raw, later.Raw, "frozen")
					case tc.pastCap:
						assert.InDelta(t, capK.vel.Len(), pose.Vel.Len(), 1e-9*u, "constant speed")
					}
				})
			}
		})
	}
}

// Rule 4: Ghost and Hidden by arrival time, whatever the sample times say.
func TestVisibility(t *testing.T) {
	cfg := DefaultConfig(false)
	for _, tc := range []struct {
		name       string
		sampleTime time.Duration
		arrival    time.Duration
		now        time.Duration
		want       Visibility
	}{
		{"fresh", ms(990), ms(1000), ms(1100), Visible},
		{"old stamp, fresh arrival", ms(-5000), ms(1000), ms(1100), Visible},
		{"fresh stamp, old arrival", ms(1000), ms(1000), ms(1000) + cfg.GhostAfter, Ghost},
		{"just before ghost", ms(990), ms(1000), ms(1000) + cfg.GhostAfter - 1, Visible},
		{"ghost", ms(990), ms(1000), ms(1000) + cfg.HideAfter - 1, Ghost},
		{"hidden", ms(990), ms(1000), ms(1000) + cfg.HideAfter, Hidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPredictor(t, cfg)
			require.True(t, p.Add(PathServer, moving(tc.sampleTime, 1, geom.Vec3{}, geom.Vec3{}), tc.arrival))
			pose := p.PoseAt(tc.now)
			assert.Equal(t, tc.want, pose.Visibility)
			assert.Equal(t, tc.now-tc.arrival, pose.SinceArrival)
			if tc.want != Visible {
				assert.False(t, pose.Collidable)
			}
		})
	}

	t.Run("visible again on the next arrival", func(t *testing.T) {
		p := newPredictor(t, cfg)
		require.True(t, p.Add(PathServer, moving(0, 1, geom.Vec3{}, geom.Vec3{}), ms(10)))
		require.Equal(t, Hidden, p.PoseAt(ms(3000)).Visibility)
		require.True(t, p.Add(PathDirect, moving(ms(2990), 2, geom.Vec3{}, geom.Vec3{}), ms(3005)))
		assert.Equal(t, Visible, p.PoseAt(ms(3010)).Visibility)
	})
}

// Rule 5: a new sample that moves the prediction does not move the drawn
// pose; the difference fades with exp(-dt/tau).
func TestSmoothingNoJump(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, side, up := axes(d.dim2D)
			u := unit(d.dim2D)
			cfg := DefaultConfig(d.dim2D)
			p := newPredictor(t, cfg)
			require.True(t, p.Add(PathDirect, moving(0, 1, geom.Vec3{}, fwd.Scale(10*u)), ms(30)))
			before := p.PoseAt(ms(100))

			// The entity actually veered: a new sample says so.
			s := moving(ms(50), 2, fwd.Scale(0.5*u).Add(side.Scale(0.2*u)), fwd.Scale(10*u).Add(side.Scale(2*u)))
			s.Rot = geom.AxisAngle(up, 0.3)
			require.True(t, p.Add(PathDirect, s, ms(95)))
			after := p.PoseAt(ms(100))
			assertVecNear(t, before.Pos, after.Pos, 1e-12*u, "drawn position jumped")
			assertQuatNear(t, before.Rot, after.Rot, 1e-12, "drawn rotation jumped")
			require.Greater(t, after.Correction, 0.1*u, "the raw prediction moved")
			assert.InDelta(t, after.Pos.Sub(after.Raw).Len(), after.Correction, 1e-12*u)
			assert.False(t, after.Snapped)

			fade := p.PoseAt(ms(100) + cfg.SmoothingTau)
			assert.InDelta(t, after.Correction*math.Exp(-1), fade.Correction, 1e-9*u, "exp decay")
			gone := p.PoseAt(ms(100) + 20*cfg.SmoothingTau)
			assert.Less(t, gone.Correction, 1e-6*u)
			raw := p.PoseAt(ms(100) + 20*cfg.SmoothingTau)
			assert.Less(t, quatDist(rawRot(p, raw), raw.Rot), 1e-6, "rotation offset decays too")
		})
	}
}

// rawRot returns the unsmoothed rotation behind pose by asking a fresh
// predictor with the same samples.
func rawRot(p *Predictor, pose Pose) geom.Quat {
	q, _ := New(p.cfg)
	r := &p.paths[pose.Path]
	for i := 0; i < r.n; i++ {
		e := r.at(i)
		q.Add(pose.Path, e.Sample, e.arrival)
	}
	return q.PoseAt(p.lastNow).Rot
}

// Rule 5: with no new data the offset never grows, whatever the frame times.
func TestSmoothingOffsetNeverGrows(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				fwd, side, _ := axes(d.dim2D)
				u := unit(d.dim2D)
				p, err := New(Config{Dim2D: d.dim2D})
				require.NoError(rt, err)
				now := time.Duration(0)
				seq := 0
				prev := math.Inf(1)
				for range rapid.IntRange(5, 60).Draw(rt, "steps") {
					now += time.Duration(rapid.Int64Range(0, int64(ms(40))).Draw(rt, "dt"))
					if rapid.Bool().Draw(rt, "add") {
						seq++
						pos := fwd.Scale(rapid.Float64Range(-2, 2).Draw(rt, "x") * u).Add(side.Scale(rapid.Float64Range(-2, 2).Draw(rt, "y") * u))
						vel := fwd.Scale(rapid.Float64Range(-10, 10).Draw(rt, "vx") * u)
						lag := time.Duration(rapid.Int64Range(0, int64(ms(80))).Draw(rt, "lag"))
						p.Add(PathDirect, moving(now-lag, seq, pos, vel), now)
						prev = math.Inf(1)
					}
					pose := p.PoseAt(now)
					assert.LessOrEqual(rt, pose.Correction, prev*(1+1e-12))
					prev = pose.Correction
				}
			})
		})
	}
}

// Rule 6: snap on a correction beyond TeleportDistance or a teleport flag.
func TestSnap(t *testing.T) {
	for _, d := range dims {
		fwd, side, _ := axes(d.dim2D)
		cfg := DefaultConfig(d.dim2D)
		small, big := side.Scale(cfg.TeleportDistance*0.5), side.Scale(cfg.TeleportDistance*1.5)
		for _, tc := range []struct {
			name       string
			jump       geom.Vec3
			flags      wire.Flags
			snapped    bool
			canCollide bool
		}{
			{"small correction fades", small, 0, false, false},
			{"large correction snaps", big, 0, true, false},
			{"teleport flag snaps", side.Scale(cfg.Width * 0.1), wire.FlagTeleport, true, true},
			{"game flags do not snap", side.Scale(cfg.Width * 0.1), wire.FlagGame0 | wire.FlagGame1, false, true},
		} {
			t.Run(d.name+"/"+tc.name, func(t *testing.T) {
				p := newPredictor(t, cfg)
				v := fwd.Scale(5 * unit(d.dim2D))
				require.True(t, p.Add(PathDirect, moving(0, 1, geom.Vec3{}, v), ms(20)))
				require.True(t, p.PoseAt(ms(440)).Collidable, "trusted before the correction")
				s := moving(ms(430), 2, v.Scale(0.43).Add(tc.jump), v)
				s.Flags = tc.flags
				require.True(t, p.Add(PathDirect, s, ms(450)))
				pose := p.PoseAt(ms(450))
				assert.Equal(t, tc.snapped, pose.Snapped)
				if tc.snapped {
					assert.Equal(t, pose.Raw, pose.Pos)
					assert.Zero(t, pose.Correction)
				} else {
					assert.InDelta(t, tc.jump.Len(), pose.Correction, 1e-9*tc.jump.Len())
				}
				assert.Equal(t, tc.canCollide, pose.Collidable, "a correction beyond Width is not trusted")
				assert.Equal(t, tc.flags, pose.Flags)
				assert.False(t, p.PoseAt(ms(460)).Snapped, "a snap is reported once")
			})
		}
	}
}

// Rule 7: not collidable after appearing, reappearing after Hidden, or a
// correction larger than Width.
func TestContactTrust(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, side, _ := axes(d.dim2D)
			cfg := DefaultConfig(d.dim2D)
			v := fwd.Scale(3 * unit(d.dim2D))
			p := newPredictor(t, cfg)
			seq := 0
			add := func(at time.Duration, off geom.Vec3) {
				t.Helper()
				seq++
				require.True(t, p.Add(PathServer, moving(at, seq, v.Scale(at.Seconds()).Add(off), v), at+ms(20)))
			}
			add(ms(1000), geom.Vec3{}) // appears, arriving at 1020 ms
			assert.False(t, p.PoseAt(ms(1020)).Collidable, "just appeared")
			assert.False(t, p.PoseAt(ms(1020)+cfg.ContactTrust-1).Collidable, "still inside the window")
			assert.True(t, p.PoseAt(ms(1020)+cfg.ContactTrust).Collidable, "trusted")

			add(ms(1400), side.Scale(cfg.Width*0.5)) // arrives 1420
			assert.True(t, p.PoseAt(ms(1425)).Collidable, "a correction under Width keeps trust")

			add(ms(1430), side.Scale(cfg.Width*2)) // arrives 1450, total jump 1.5 widths
			assert.False(t, p.PoseAt(ms(1455)).Collidable, "a correction over Width")
			add(ms(1800), side.Scale(cfg.Width*2))
			assert.False(t, p.PoseAt(ms(1455)+cfg.ContactTrust-1).Collidable)
			assert.True(t, p.PoseAt(ms(1455)+cfg.ContactTrust).Collidable)

			// Silence until Hidden, then a far-away return: no smoothing
			// across the gap, and a fresh trust window.
			gone := ms(1820) + cfg.HideAfter
			require.Equal(t, Hidden, p.PoseAt(gone).Visibility)
			add(gone+ms(100), side.Scale(cfg.Width*3))
			back := p.PoseAt(gone + ms(120))
			assert.Equal(t, Visible, back.Visibility)
			assert.Equal(t, back.Raw, back.Pos, "reappears where it is")
			assert.False(t, back.Collidable, "reappeared")
			assert.True(t, p.PoseAt(gone+ms(120)+cfg.ContactTrust).Collidable)
		})
	}
}

// Rule 8: path choice with hysteresis and the outage rule; switches are
// smoothed.
func TestPathChoice(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, side, _ := axes(d.dim2D)
			u := unit(d.dim2D)
			cfg := DefaultConfig(d.dim2D)
			// The truth: a straight line. The server copy of each sample is
			// slightly off (as after quantisation) so a switch is visible.
			v := fwd.Scale(10 * u)
			at := func(path Path, i int, sampled, arrival time.Duration, p *Predictor) bool {
				pos := v.Scale(sampled.Seconds())
				if path == PathServer {
					pos = pos.Add(side.Scale(0.05 * u))
				}
				return p.Add(path, moving(sampled, i, pos, v), arrival)
			}

			t.Run("starts on the newest", func(t *testing.T) {
				p := newPredictor(t, cfg)
				at(PathServer, 1, ms(100), ms(150), p)
				at(PathDirect, 1, ms(90), ms(120), p)
				assert.Equal(t, PathServer, p.PoseAt(ms(150)).Path)
			})

			t.Run("hysteresis", func(t *testing.T) {
				p := newPredictor(t, cfg)
				at(PathDirect, 1, ms(100), ms(120), p)
				require.Equal(t, PathDirect, p.PoseAt(ms(120)).Path)
				at(PathServer, 2, ms(100)+cfg.PathMargin, ms(125), p)
				assert.Equal(t, PathDirect, p.PoseAt(ms(125)).Path, "ahead by exactly the margin")
				at(PathServer, 3, ms(101)+cfg.PathMargin, ms(126), p)
				assert.Equal(t, PathServer, p.PoseAt(ms(126)).Path, "ahead by more")
			})

			t.Run("no flapping on equal data", func(t *testing.T) {
				const seed = 1
				rng := rand.New(rand.NewPCG(seed, 2))
				p := newPredictor(t, cfg)
				switches, frames, last := 0, 0, PathServer
				record := func(pose Pose) {
					if frames > 0 && pose.Path != last {
						switches++
					}
					last = pose.Path
					frames++
				}
				for i := 1; i < 300; i++ {
					sampled := ms(float64(i) * 1000 / 60)
					// Both paths carry every sample; which lands first
					// changes from sample to sample.
					first, second := PathDirect, PathServer
					if rng.IntN(2) == 0 {
						first, second = second, first
					}
					at(first, i, sampled, sampled+ms(20+rng.Float64()*10), p)
					record(p.PoseAt(sampled + ms(25)))
					at(second, i, sampled, sampled+ms(30+rng.Float64()*10), p)
					record(p.PoseAt(sampled + ms(35)))
				}
				assert.Zero(t, switches, "seed %d", seed)
			})

			t.Run("direct outage", func(t *testing.T) {
				p := newPredictor(t, cfg)
				// Direct runs 20 ms behind, the server 60 ms.
				for i := 1; i <= 10; i++ {
					s := ms(float64(i) * 16)
					at(PathDirect, i, s, s+ms(20), p)
					at(PathServer, i, s, s+ms(60), p)
				}
				lastDirect := ms(160)
				pose := p.PoseAt(lastDirect + ms(60))
				require.Equal(t, PathDirect, pose.Path)
				// The direct link goes quiet; the server keeps relaying
				// copies, still older than the last direct sample.
				now := lastDirect + ms(20) + cfg.DirectOutage
				assert.Equal(t, PathDirect, p.PoseAt(now).Path, "server copy not newer yet: stay on the last direct update")
				before := p.PoseAt(now + ms(1))
				// One server copy newer than the last direct sample, by far
				// less than the margin: switch at once.
				at(PathServer, 11, lastDirect+ms(1), now+ms(1), p)
				after := p.PoseAt(now + ms(1))
				assert.Equal(t, PathServer, after.Path)
				assertVecNear(t, before.Pos, after.Pos, 1e-12*u, "the switch is smoothed")
				assert.Greater(t, after.Correction, 0.0)
			})

			t.Run("no outage, server slightly newer: stay", func(t *testing.T) {
				p := newPredictor(t, cfg)
				at(PathDirect, 1, ms(100), ms(120), p)
				p.PoseAt(ms(120))
				at(PathServer, 2, ms(110), ms(130), p)
				assert.Equal(t, PathDirect, p.PoseAt(ms(130)).Path)
			})
		})
	}
}

// Rule 8: duplicates and samples older than the buffer are refused;
// out-of-order samples inside it are inserted in order.
func TestAdd(t *testing.T) {
	cfg := Config{BufferLen: 4}
	fill := func(t *testing.T) *Predictor {
		t.Helper()
		p := newPredictor(t, cfg)
		for i := 1; i <= 4; i++ {
			require.True(t, p.Add(PathDirect, moving(ms(float64(i)*10), i*2, geom.Vec3{}, geom.Vec3{}), ms(100)))
		}
		return p
	}
	nan := moving(ms(55), 100, geom.Vec3{X: math.NaN()}, geom.Vec3{})
	inf := moving(ms(55), 100, geom.Vec3{}, geom.Vec3{})
	inf.Turn = math.Inf(1)
	for _, tc := range []struct {
		name  string
		path  Path
		s     Sample
		ok    bool
		times []float64 // the buffer afterwards, ms
	}{
		{"newest", PathDirect, moving(ms(50), 10, geom.Vec3{}, geom.Vec3{}), true, []float64{20, 30, 40, 50}},
		{"out of order", PathDirect, moving(ms(25), 5, geom.Vec3{}, geom.Vec3{}), true, []float64{20, 25, 30, 40}},
		{"duplicate seq", PathDirect, moving(ms(45), 8, geom.Vec3{}, geom.Vec3{}), false, []float64{10, 20, 30, 40}},
		{"duplicate time", PathDirect, moving(ms(30), 99, geom.Vec3{}, geom.Vec3{}), false, []float64{10, 20, 30, 40}},
		{"older than the buffer", PathDirect, moving(ms(5), 1, geom.Vec3{}, geom.Vec3{}), false, []float64{10, 20, 30, 40}},
		{"NaN", PathDirect, nan, false, []float64{10, 20, 30, 40}},
		{"infinite turn", PathDirect, inf, false, []float64{10, 20, 30, 40}},
		{"unknown path", Path(7), moving(ms(50), 10, geom.Vec3{}, geom.Vec3{}), false, []float64{10, 20, 30, 40}},
		{"same seq on the other path", PathServer, moving(ms(40), 8, geom.Vec3{}, geom.Vec3{}), true, []float64{10, 20, 30, 40}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fill(t)
			assert.Equal(t, tc.ok, p.Add(tc.path, tc.s, ms(100)))
			r := &p.paths[PathDirect]
			got := make([]float64, r.n)
			for i := range got {
				got[i] = float64(r.at(i).Time) / float64(time.Millisecond)
			}
			assert.Equal(t, tc.times, got)
		})
	}

	t.Run("wrapping ring stays sorted", func(t *testing.T) {
		const seed = 7
		rng := rand.New(rand.NewPCG(seed, 7))
		p := newPredictor(t, Config{BufferLen: 8})
		for i := range 500 {
			// Mostly in order, sometimes late by a few samples.
			at := ms(float64(i)*16 - float64(rng.IntN(4))*16)
			p.Add(PathServer, moving(at, i, geom.Vec3{}, geom.Vec3{}), ms(float64(i)*16))
			r := &p.paths[PathServer]
			for j := 1; j < r.n; j++ {
				require.Less(t, r.at(j-1).Time, r.at(j).Time, "step %d, seed %d", i, seed)
			}
		}
	})
}

// Rule 9: jitter is the standard deviation of arrival - sample time.
func TestJitter(t *testing.T) {
	p := newPredictor(t, Config{})
	delays := []float64{10, 20, 30, 40, 25, 15}
	var sum float64
	for i, d := range delays {
		require.True(t, p.Add(PathDirect, moving(ms(float64(i)*16), i, geom.Vec3{}, geom.Vec3{}), ms(float64(i)*16+d)))
		sum += d
	}
	mean := sum / float64(len(delays))
	var sq float64
	for _, d := range delays {
		sq += (d - mean) * (d - mean)
	}
	want := math.Sqrt(sq/float64(len(delays))) * float64(time.Millisecond)
	p.PoseAt(ms(100))
	assert.InDelta(t, want, float64(p.Jitter()), 1)
	// Kept until a sample arrives on the drawn path, then recomputed.
	require.True(t, p.Add(PathDirect, moving(ms(6*16), 6, geom.Vec3{}, geom.Vec3{}), ms(6*16+10+200)))
	assert.Greater(t, p.Jitter(), time.Duration(want)+20*time.Millisecond, "a late arrival widens the spread")
	one := newPredictorWith(t, moving(0, 1, geom.Vec3{}, geom.Vec3{}))
	one.PoseAt(ms(10))
	assert.Zero(t, one.Jitter(), "one sample has no spread")
}

func newPredictorWith(t *testing.T, s Sample) *Predictor {
	t.Helper()
	p := newPredictor(t, Config{})
	require.True(t, p.Add(PathDirect, s, s.Time+ms(20)))
	return p
}

// After a main-thread hitch a burst of arrivals can push every sample the
// previous prediction used out of the buffer: the drawn pose must still
// not jump.
func TestHitchBurstNoJump(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			fwd, side, _ := axes(d.dim2D)
			u := unit(d.dim2D)
			cfg := Config{Dim2D: d.dim2D, BufferLen: 8}
			p := newPredictor(t, cfg)
			v := fwd.Scale(6 * u)
			require.True(t, p.Add(PathDirect, moving(0, 1, geom.Vec3{}, v), ms(20)))
			p.PoseAt(ms(100))
			before := p.PoseAt(ms(300))
			// 20 samples land in one frame, on a path bent sideways.
			for i := 2; i < 22; i++ {
				at := ms(float64(i) * 10)
				require.True(t, p.Add(PathDirect, moving(at, i, v.Scale(at.Seconds()).Add(side.Scale(0.1*u)), v), ms(300)))
			}
			after := p.PoseAt(ms(300))
			assertVecNear(t, before.Pos, after.Pos, 1e-9*u, "drawn")
			assert.InDelta(t, 0.1*u, after.Correction, 1e-9*u)
		})
	}
}

func TestReset(t *testing.T) {
	p := newPredictor(t, Config{})
	require.True(t, p.Add(PathDirect, moving(0, 1, geom.Vec3{}, geom.Vec3{X: 1}), ms(20)))
	require.True(t, p.PoseAt(ms(30)).Valid)
	p.Reset()
	assert.False(t, p.PoseAt(ms(40)).Valid)
	assert.True(t, p.Add(PathDirect, moving(0, 1, geom.Vec3{}, geom.Vec3{X: 1}), ms(50)), "the same sample is new again")
	pose := p.PoseAt(ms(60))
	assert.True(t, pose.Valid)
	assert.False(t, pose.Collidable, "appears afresh")
	assert.Equal(t, DefaultConfig(false), p.Config())
}

func TestNoAllocations(t *testing.T) {
	p := newPredictor(t, Config{})
	i := 0
	add := func() {
		i++
		at := ms(float64(i) * 16)
		s := moving(at, i, geom.Vec3{X: float64(i)}, geom.Vec3{X: 60, Z: 1})
		s.Turn, s.Acc = 0.5, geom.Vec3{X: 1, Z: 30}
		p.Add(Path(i%2), s, at+ms(30))
	}
	assert.Zero(t, testing.AllocsPerRun(200, add), "Add")
	assert.Zero(t, testing.AllocsPerRun(200, func() {
		add()
		p.PoseAt(ms(float64(i)*16 + 35))
	}), "PoseAt")
}
