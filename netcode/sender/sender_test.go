package sender

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

func TestConfigDefaults(t *testing.T) {
	c3, c2 := DefaultConfig(false), DefaultConfig(true)
	assert.Equal(t, Config{
		Rate: 60, Fields: wire.HasAcc | wire.HasTurn,
		AccSmoothing: 50 * time.Millisecond, TurnSmoothing: 50 * time.Millisecond, MinTurnSpeed: 0.5,
		ImpulseAcc: 50,
	}, c3)
	assert.True(t, c2.Dim2D)
	assert.Equal(t, 20.0, c2.MinTurnSpeed)
	assert.Equal(t, 2000.0, c2.ImpulseAcc)
	s := newSender(t, Config{})
	assert.Equal(t, c3, s.Config())
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		bad  string // a word the error names; "" when valid
	}{
		{"zero is the default", Config{}, ""},
		{"2d default", Config{Dim2D: true}, ""},
		{"fastest rate", Config{Rate: MaxRate}, ""},
		{"slow rate", Config{Rate: 0.5}, ""},
		{"no optional field", Config{Fields: FieldsNone}, ""},
		{"extras only", Config{Fields: wire.HasExtras}, ""},
		{"smoothing off", Config{AccSmoothing: 1, TurnSmoothing: 1}, ""},
		{"negative rate", Config{Rate: -60}, "Rate"},
		{"rate too high", Config{Rate: 1001}, "Rate"},
		{"NaN rate", Config{Rate: math.NaN()}, "Rate"},
		{"infinite rate", Config{Rate: math.Inf(1)}, "Rate"},
		{"unknown field bit", Config{Fields: 1}, "Fields"},
		{"FieldsNone with another", Config{Fields: FieldsNone | wire.HasAcc}, "Fields"},
		{"negative acc smoothing", Config{AccSmoothing: -time.Millisecond}, "AccSmoothing"},
		{"negative turn smoothing", Config{TurnSmoothing: -time.Millisecond}, "TurnSmoothing"},
		{"negative min turn speed", Config{MinTurnSpeed: -1}, "MinTurnSpeed"},
		{"NaN min turn speed", Config{MinTurnSpeed: math.NaN()}, "MinTurnSpeed"},
		{"infinite min turn speed", Config{MinTurnSpeed: math.Inf(1)}, "MinTurnSpeed"},
		{"impulses off", Config{ImpulseAcc: math.Inf(1)}, ""},
		{"negative impulse acc", Config{ImpulseAcc: -1}, "ImpulseAcc"},
		{"NaN impulse acc", Config{ImpulseAcc: math.NaN()}, "ImpulseAcc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			_, newErr := New(tc.cfg)
			if tc.bad == "" {
				assert.NoError(t, err)
				assert.NoError(t, newErr)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrConfig)
			assert.Contains(t, err.Error(), tc.bad)
			assert.ErrorIs(t, newErr, ErrConfig)
		})
	}
}

func TestStampsAreSampleTimes(t *testing.T) {
	s := newSender(t, Config{})
	var sampled []time.Duration
	var got []sent
	for i, ft := range frames(144, time.Second, ms(1), newRand(t, 20)) {
		s.Sample(ft, geom.Vec3{X: float64(i)}, geom.Identity)
		sampled = append(sampled, ft)
		// Polls come late and at their own times.
		if st, ok := pollOnce(t, s, ft+ms(3.3)); ok {
			got = append(got, st)
			assert.Equal(t, wire.StampOf(ft), st.st.Stamp, "the stamp of the newest sample")
			assert.NotEqual(t, wire.StampOf(st.now), st.st.Stamp, "not the send time")
		}
	}
	require.NotEmpty(t, got)
}

func TestSeqIncrementsAndWraps(t *testing.T) {
	s := newSender(t, Config{Rate: MaxRate})
	step := period(MaxRate)
	var prev wire.Seq
	wrapped := false
	for i := range 70000 {
		now := origin + time.Duration(i)*step
		s.Sample(now, geom.Vec3{}, geom.Identity)
		st, ok := pollOnce(t, s, now)
		require.True(t, ok, "frame %d", i)
		if i == 0 {
			assert.Zero(t, st.st.Seq)
		} else {
			require.Equal(t, prev+1, st.st.Seq, "frame %d", i)
			require.True(t, st.st.Seq.Newer(prev))
		}
		wrapped = wrapped || (prev == math.MaxUint16 && st.st.Seq == 0)
		prev = st.st.Seq
	}
	assert.True(t, wrapped)
}

func TestTeleport(t *testing.T) {
	jump := geom.Vec3{X: 500, Z: 300}
	// walk moves at 5 m/s along X, and is 500 m further on from 1 s.
	walk := func(ft time.Duration) geom.Vec3 {
		p := geom.Vec3{X: 5 * sec(ft-origin)}
		if ft-origin >= time.Second {
			p = p.Add(jump)
		}
		return p
	}
	for _, tc := range []struct {
		name       string
		sampleHz   float64
		pollEvery  int  // poll every n-th frame
		withVel    bool // velocity given: the teleport state keeps it
		heartbeats bool // the teleport state is also resent
	}{
		{"sample and poll each 144 Hz frame", 144, 1, false, false},
		// Frame 144 (the jump) is not polled: its flag moves on.
		{"polls sparser than samples", 144, 5, false, false},
		{"velocity given", 144, 1, true, false},
		{"30 Hz samples, 60 Hz polls", 60, 1, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSender(t, Config{})
			var got []sent
			jumped := false
			for i, ft := range frames(tc.sampleHz, 2*time.Second, 0, nil) {
				if !tc.heartbeats || i%2 == 0 { // with heartbeats, odd frames bring no sample
					jump := ft-origin >= time.Second && !jumped
					if jump {
						s.Teleport() // the game moved the entity, then the frame ends
						jumped = true
					}
					if tc.withVel {
						s.SampleWithVelocity(ft, walk(ft), geom.Identity, geom.Vec3{X: 5})
					} else {
						s.Sample(ft, walk(ft), geom.Identity)
					}
					if jump {
						st, _ := s.Latest()
						assert.Equal(t, wire.FlagTeleport, st.Flags)
						if tc.withVel {
							assert.Equal(t, 5.0, st.Vel.X, "a given velocity survives the teleport")
						} else {
							assert.Zero(t, st.Vel, "derivation restarts: one position is no velocity")
						}
						assert.Zero(t, st.Acc)
					}
				}
				if i%tc.pollEvery == 0 {
					if st, ok := pollOnce(t, s, ft); ok {
						got = append(got, st)
					}
				}
			}
			var flagged []sent
			stamps := map[wire.Stamp]bool{}
			for _, st := range got {
				if st.st.Flags&wire.FlagTeleport != 0 {
					flagged = append(flagged, st)
					stamps[st.st.Stamp] = true
				}
				assert.Less(t, st.st.Vel.Len(), 6.0, "the jump never shows as velocity")
			}
			require.NotEmpty(t, flagged)
			assert.Len(t, stamps, 1, "one sample carries the flag")
			if !tc.heartbeats {
				assert.Len(t, flagged, 1)
			} else {
				assert.Len(t, flagged, 2, "the flagged sample and its heartbeat")
			}
			// The first state sent from the jump on carries the flag,
			// whether or not it is the jump's own sample.
			var first sent
			for _, st := range got {
				if stampTime(&st.st, st.now) >= origin+time.Second {
					first = st
					break
				}
			}
			assert.Equal(t, first.st.Stamp, flagged[0].st.Stamp)
			assert.Greater(t, first.st.Pos.X, 500.0)
		})
	}
}

func TestBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name    string
		at      time.Duration // after the good sample at origin
		pos     geom.Vec3
		rot     geom.Quat
		vel     *geom.Vec3
		invalid bool // else stale
	}{
		{"NaN position", ms(10), geom.Vec3{X: nan}, geom.Identity, nil, true},
		{"infinite position", ms(10), geom.Vec3{Y: -inf}, geom.Identity, nil, true},
		{"position beyond float32", ms(10), geom.Vec3{Z: 1e39}, geom.Identity, nil, true},
		{"NaN rotation", ms(10), geom.Vec3{}, geom.Quat{W: nan}, nil, true},
		{"zero quaternion", ms(10), geom.Vec3{}, geom.Quat{}, nil, true},
		{"infinite velocity", ms(10), geom.Vec3{}, geom.Identity, &geom.Vec3{X: inf}, true},
		{"same frame time", 0, geom.Vec3{X: 1}, geom.Identity, nil, false},
		{"earlier frame time", -ms(5), geom.Vec3{X: 1}, geom.Identity, nil, false},
		{"inside the same 10 µs stamp", 3 * time.Microsecond, geom.Vec3{X: 1}, geom.Identity, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSender(t, Config{})
			s.Sample(origin, geom.Vec3{X: 2}, geom.Identity)
			want, ok := s.Latest()
			require.True(t, ok)
			if tc.vel != nil {
				s.SampleWithVelocity(origin+tc.at, tc.pos, tc.rot, *tc.vel)
			} else {
				s.Sample(origin+tc.at, tc.pos, tc.rot)
			}
			got, _ := s.Latest()
			assert.Equal(t, want, got, "the sample is dropped")
			st := s.Stats()
			assert.Equal(t, uint64(1), st.Samples)
			if tc.invalid {
				assert.Equal(t, uint64(1), st.Invalid)
			} else {
				assert.Equal(t, uint64(1), st.Stale)
			}
			// Sending carries on with the newest good sample.
			for i := range 3 {
				sent, ok := pollOnce(t, s, origin+ms(20)*time.Duration(i+1))
				require.True(t, ok)
				assert.Equal(t, wire.StampOf(origin), sent.st.Stamp)
			}
			// And the next good sample derives from the last good one.
			s.Sample(origin+ms(100), geom.Vec3{X: 3}, geom.Identity)
			got, _ = s.Latest()
			assert.InDelta(t, 10, got.Vel.X, 0.01, "1 m in 100 ms")
		})
	}
}

func TestClamp(t *testing.T) {
	t.Run("given velocity keeps its direction", func(t *testing.T) {
		s := newSender(t, Config{})
		s.SampleWithVelocity(origin, geom.Vec3{}, geom.Identity, geom.Vec3{X: 1e6, Y: -5e5})
		st, ok := pollOnce(t, s, origin)
		require.True(t, ok)
		assert.Equal(t, geom.Vec3{X: 65504, Y: -32752}, st.st.Vel)
		assert.Equal(t, uint64(1), s.Stats().Clamped)
	})
	// Impulse detection would keep such changes out of the acceleration
	// and turn rate; these cases test the clamp behind it.
	t.Run("derived velocity and acceleration", func(t *testing.T) {
		s := newSender(t, Config{ImpulseAcc: math.Inf(1)})
		s.Sample(origin, geom.Vec3{}, geom.Identity)
		s.Sample(origin+ms(1), geom.Vec3{Z: 1e3}, geom.Identity) // 1e6 m/s
		s.Sample(origin+ms(2), geom.Vec3{Z: -1e3}, geom.Identity)
		_, ok, err := poll(s, origin+ms(2), 0, nil)
		require.NoError(t, err, "clamped values encode")
		require.True(t, ok)
		st, _ := s.Latest()
		assert.Equal(t, -65504.0, st.Vel.Z)
		assert.Equal(t, -65504.0, st.Acc.Z)
		assert.Equal(t, uint64(2), s.Stats().Clamped)
	})
	t.Run("turn rate", func(t *testing.T) {
		s := newSender(t, Config{TurnSmoothing: 1, ImpulseAcc: math.Inf(1)})
		v := geom.Vec3{X: 10}
		for i := range 4 {
			s.SampleWithVelocity(origin+time.Duration(i)*20*time.Microsecond, geom.Vec3{}, geom.Identity, v)
			v = v.RotateAbout(geom.Up3D, 3) // 150000 rad/s
		}
		st, _ := s.Latest()
		assert.Equal(t, 65504.0, math.Abs(st.Turn))
		_, _, err := poll(s, origin+time.Second, 0, nil)
		assert.NoError(t, err)
	})
}

func TestFieldsExtrasAndFlags(t *testing.T) {
	for _, d := range dims {
		t.Run(d.name, func(t *testing.T) {
			size := func(cfg Config, extras bool, flags wire.Flags) (int, wire.State) {
				t.Helper()
				cfg.Dim2D = d.dim2D
				s := newSender(t, cfg)
				if extras {
					s.SetExtras(7, 0x81)
				}
				s.SetGameFlags(flags)
				fwd, _, up := axes(d.dim2D)
				drive(t, s, circle(up, geom.Vec3{}, fwd, 10*unit(d.dim2D), 1), frames(144, 200*time.Millisecond, 0, nil), false, false)
				b, ok, err := poll(s, origin+time.Second, 9, make([]byte, 0, 64))
				require.NoError(t, err)
				require.True(t, ok)
				var st wire.State
				require.NoError(t, wire.DecodeState(b, &st))
				return len(b), st
			}
			min, max := wire.MinState3DSize, wire.MaxState3DSize
			if d.dim2D {
				min, max = wire.MinState2DSize, wire.MaxState2DSize
			}

			n, st := size(Config{Fields: FieldsNone}, false, 0)
			assert.Equal(t, min, n, "FieldsNone")
			assert.Zero(t, st.Acc)
			assert.Zero(t, st.Turn)
			assert.NotZero(t, st.Vel)

			n, st = size(Config{}, false, 0)
			assert.Equal(t, max-2, n, "default: acceleration and turn rate")
			assert.NotZero(t, st.Acc)
			assert.NotZero(t, st.Turn)
			assert.Equal(t, uint8(9), st.Slot)
			assert.Equal(t, d.dim2D, st.Dim2D)

			n, st = size(Config{}, true, wire.FlagGame1|wire.FlagTeleport)
			assert.Equal(t, max, n, "SetExtras adds them")
			assert.Equal(t, uint8(7), st.Anim)
			assert.Equal(t, uint8(0x81), st.Input)
			assert.Equal(t, wire.FlagGame1, st.Flags, "SetGameFlags cannot set the teleport flag")

			n, st = size(Config{Fields: FieldsNone}, true, wire.FlagGame0)
			assert.Equal(t, min+2, n, "extras on the smallest state")
			assert.Equal(t, wire.FlagGame0, st.Flags)
		})
	}
}

func TestReset(t *testing.T) {
	s := newSender(t, Config{})
	s.SetExtras(1, 2)
	s.SetGameFlags(wire.FlagGame0)
	got := drive(t, s, parabola(geom.Vec3{}, geom.Vec3{X: 3}, geom.Vec3{}), frames(144, 100*time.Millisecond, 0, nil), false, false)
	require.NotEmpty(t, got)
	lastSeq := got[len(got)-1].st.Seq
	stats := s.Stats()

	s.Reset()
	assert.Equal(t, time.Duration(math.MaxInt64), s.NextDue())
	_, ok := s.Latest()
	assert.False(t, ok)
	_, ok = pollOnce(t, s, origin+time.Second)
	assert.False(t, ok, "nothing before a new sample")
	assert.Equal(t, stats, s.Stats(), "stats are kept")

	at := origin + 2*time.Second
	s.Sample(at, geom.Vec3{X: 100}, geom.Identity)
	first, ok := pollOnce(t, s, at)
	require.True(t, ok)
	assert.Equal(t, lastSeq+1, first.st.Seq, "Seq carries on")
	assert.Equal(t, wire.FlagTeleport, first.st.Flags, "flagged; game flags forgotten")
	assert.Equal(t, DefaultFields, first.st.Fields, "extras forgotten")
	assert.Zero(t, first.st.Vel, "derivation restarted")

	s.Sample(at+ms(17), geom.Vec3{X: 100.17}, geom.Identity)
	next, ok := pollOnce(t, s, at+ms(17))
	require.True(t, ok)
	assert.Zero(t, next.st.Flags)
	assert.InDelta(t, 10, next.st.Vel.X, 0.01)
}

// A state that fails to encode still used its send slot and Seq: the
// encoder, not PollState, finds the fault.
func TestUnencodableStateUsesItsSlot(t *testing.T) {
	// Valid samples cannot fail to encode, so reach in to make one.
	s := newSender(t, Config{})
	s.Sample(origin, geom.Vec3{}, geom.Identity)
	s.cur.rot = geom.Quat{}
	seq := s.seq
	st, ok := s.PollState(origin, 0)
	require.True(t, ok)
	_, err := wire.AppendState(nil, &st)
	assert.True(t, errors.Is(err, wire.ErrZeroRotation), "%v", err)
	assert.Equal(t, seq+1, s.seq, "the Seq is used: PollState handed the state out")
	assert.Greater(t, s.NextDue(), origin, "the send slot is used")
}

func TestCarry(t *testing.T) {
	st := wire.State{Fields: wire.HasAcc | wire.HasTurn, Stamp: wire.StampOf(time.Second),
		Pos: geom.Vec3{X: 1}, Vel: geom.Vec3{X: 10, Z: -2}, Acc: geom.Vec3{Z: 4},
		Rot: geom.Identity, Turn: 2}
	c := st
	require.True(t, Carry(&c, ms(5)+3*time.Microsecond), "rounded down to whole stamp units")
	assert.Equal(t, wire.StampOf(time.Second+ms(5)), c.Stamp)
	h := 0.005
	assertVecNear(t, geom.Vec3{X: 1 + 10*h, Z: -2*h + 4*h*h/2}, c.Pos, 1e-9, "p + v h + a h²/2")
	assertVecNear(t, geom.Vec3{X: 10, Z: -2 + 4*h}, c.Vel, 1e-9, "v + a h")
	want := geom.AxisAngle(geom.Up3D, 2*h)
	assert.InDelta(t, 1, math.Abs(want.Dot(c.Rot)), 1e-12, "turned by turn h about +Y")

	same := st
	assert.False(t, Carry(&same, 9*time.Microsecond), "under a stamp unit: nothing to carry")
	assert.False(t, Carry(&same, -ms(1)))
	assert.Equal(t, st, same)
	far := st
	far.Pos.X, far.Vel.X = math.MaxFloat32, 1e36
	assert.False(t, Carry(&far, ms(5)), "out of float32 range")
	assert.Equal(t, math.MaxFloat32, far.Pos.X)
}

func TestRestartDoesNotTeleport(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reset    func(*Sender)
		teleport bool
	}{
		{"Reset", (*Sender).Reset, true},
		{"Restart", (*Sender).Restart, false},
	} {
		s, err := New(Config{})
		require.NoError(t, err)
		s.Sample(0, geom.Vec3{}, geom.Identity)
		b0, ok, err := poll(s, 0, 1, nil)
		require.True(t, ok)
		require.NoError(t, err)
		var st0 wire.State
		require.NoError(t, wire.DecodeState(b0, &st0))
		tc.reset(s)
		s.Sample(time.Second, geom.Vec3{X: 1}, geom.Identity)
		b, ok, err := poll(s, time.Second, 1, nil)
		require.True(t, ok, tc.name)
		require.NoError(t, err)
		var st wire.State
		require.NoError(t, wire.DecodeState(b, &st))
		assert.Equal(t, tc.teleport, st.Flags&wire.FlagTeleport != 0, tc.name)
		assert.True(t, st.Seq.Newer(st0.Seq), "%s: the sequence carries on", tc.name)
	}
}
