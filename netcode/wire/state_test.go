package wire

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
)

// full3D is a 3D state with every field set.
func full3D() State {
	return State{
		Fields: HasAcc | HasTurn | HasExtras,
		Flags:  FlagTeleport | FlagGame0,
		Slot:   7,
		Seq:    65530,
		Stamp:  StampOf(3*time.Hour + 1234567*time.Microsecond),
		Pos:    geom.Vec3{X: 1234.5678, Y: -0.25, Z: 99999.5},
		Vel:    geom.Vec3{X: 19.75, Y: -3.5, Z: 0.125},
		Acc:    geom.Vec3{X: -9.8125, Y: 2, Z: 0.5},
		Rot:    geom.AxisAngle(geom.Vec3{X: 0.6, Y: 0.8}, 1.1),
		Turn:   0.75,
		Anim:   42,
		Input:  0b1010_0101,
	}
}

func TestStateSizes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dim2D  bool
		fields Fields
		want   int
	}{
		{"3d minimal", false, 0, MinState3DSize},
		{"3d acc", false, HasAcc, 36},
		{"3d every field", false, HasAcc | HasTurn | HasExtras, MaxState3DSize},
		{"2d minimal", true, 0, MinState2DSize},
		{"2d every field", true, HasAcc | HasTurn | HasExtras, MaxState2DSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := State{Dim2D: tc.dim2D, Fields: tc.fields, Rot: geom.Identity}
			b, err := AppendState(nil, &s)
			require.NoError(t, err)
			assert.Len(t, b, tc.want)
			assert.Equal(t, tc.want, s.Size())
		})
	}
	assert.LessOrEqual(t, MaxState3DSize, 40, "the budget is 40 bytes with every field (a player's own entity)")
	assert.LessOrEqual(t, MinState3DSize, 32, "the goal is 32 bytes")
}

func TestStateRoundTrip3D(t *testing.T) {
	in := full3D()
	b, err := AppendState(nil, &in)
	require.NoError(t, err)
	require.Len(t, b, MaxState3DSize)

	var out State
	require.NoError(t, DecodeState(b, &out))
	assert.Equal(t, in.Fields, out.Fields)
	assert.Equal(t, in.Flags, out.Flags)
	assert.Equal(t, in.Slot, out.Slot)
	assert.Equal(t, in.Seq, out.Seq)
	assert.Equal(t, in.Stamp, out.Stamp)
	assert.False(t, out.Dim2D)
	assertVecNear(t, in.Pos, out.Pos, 0.004, "position (float32)")
	// Half floats: 11 significant bits.
	assertVecNear(t, in.Vel, out.Vel, 20.0/1024, "velocity (half)")
	assertVecNear(t, in.Acc, out.Acc, 10.0/1024, "acceleration (half)")
	assert.InDelta(t, in.Turn, out.Turn, 1.0/1024)
	assert.Less(t, in.Rot.AngleTo(out.Rot), 0.25*math.Pi/180)
	assert.Equal(t, in.Anim, out.Anim)
	assert.Equal(t, in.Input, out.Input)
}

func TestStateRoundTrip2D(t *testing.T) {
	in := State{
		Dim2D: true, Fields: HasAcc | HasTurn | HasExtras, Slot: 3, Seq: 9, Stamp: 123456,
		Pos: geom.Vec3{X: 640.5, Y: -360.25}, Vel: geom.Vec3{X: 300, Y: -120},
		Acc: geom.Vec3{X: 10, Y: 980}, Rot: geom.Angle2D(2.5), Turn: -3, Anim: 1, Input: 2,
	}
	b, err := AppendState(nil, &in)
	require.NoError(t, err)
	require.Len(t, b, MaxState2DSize)
	var out State
	require.NoError(t, DecodeState(b, &out))
	assert.True(t, out.Dim2D)
	assertVecNear(t, in.Pos, out.Pos, 1e-4, "position")
	assertVecNear(t, in.Vel, out.Vel, 0.25, "velocity")
	assertVecNear(t, in.Acc, out.Acc, 0.5, "acceleration")
	assert.Zero(t, out.Pos.Z)
	assert.InDelta(t, 2.5, out.Rot.Angle2D(), 2*math.Pi/65536)
	assert.InDelta(t, -3, out.Turn, 1.0/256)
}

func TestAngle2DWraps(t *testing.T) {
	for _, a := range []float64{-math.Pi, -math.Pi + 1e-6, -1, 0, 1, math.Pi - 1e-6, math.Pi, 3 * math.Pi, -7.5} {
		got := decodeAngle(encodeAngle(a))
		assert.InDelta(t, 0, geom.WrapAngle(got-a), 2*math.Pi/65536, "angle %v", a)
	}
}

func TestAbsentFieldsDecodeAsZero(t *testing.T) {
	in := full3D()
	in.Fields = 0
	b, err := AppendState(nil, &in)
	require.NoError(t, err)
	var out State
	require.NoError(t, DecodeState(b, &out))
	assert.Equal(t, geom.Vec3{}, out.Acc)
	assert.Zero(t, out.Turn)
	assert.Zero(t, out.Anim)
	assert.Zero(t, out.Input)
}

func TestAppendStateRejects(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		mod  func(*State)
		want error
	}{
		{"NaN position", func(s *State) { s.Pos.X = nan }, ErrNotFinite},
		{"Inf velocity", func(s *State) { s.Vel.Y = inf }, ErrNotFinite},
		{"NaN acceleration", func(s *State) { s.Acc.Z = nan }, ErrNotFinite},
		{"NaN quaternion", func(s *State) { s.Rot.W = nan }, ErrNotFinite},
		{"Inf turn", func(s *State) { s.Turn = -inf }, ErrNotFinite},
		{"velocity past half range", func(s *State) { s.Vel.X = 70000 }, ErrRange},
		{"turn past half range", func(s *State) { s.Turn = -1e6 }, ErrRange},
		{"position past float32", func(s *State) { s.Pos.Z = 1e39 }, ErrRange},
		{"zero quaternion", func(s *State) { s.Rot = geom.Quat{} }, ErrZeroRotation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := full3D()
			tc.mod(&s)
			prefix := []byte{1, 2, 3}
			b, err := AppendState(prefix, &s)
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, []byte{1, 2, 3}, b, "dst is returned unchanged")
		})
	}
}

func TestDecodeStateRejects(t *testing.T) {
	s := full3D()
	good, err := AppendState(nil, &s)
	require.NoError(t, err)
	nanPos := append([]byte(nil), good...)
	copy(nanPos[8:], []byte{0x00, 0x00, 0xc0, 0x7f}) // float32 NaN
	infVel := append([]byte(nil), good...)
	copy(infVel[20:], []byte{0x00, 0x7c}) // half +Inf
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrKind},
		{"zero header", make([]byte, 40), ErrKind},
		{"control frame", []byte{0xC0, 1, 0, 1}, ErrKind},
		{"header only", good[:1], ErrTruncated},
		{"one byte short", good[:len(good)-1], ErrTruncated},
		{"one byte long", append(append([]byte(nil), good...), 0), ErrTrailing},
		{"NaN position", nanPos, ErrNotFinite},
		{"Inf velocity", infVel, ErrNotFinite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out State
			assert.ErrorIs(t, DecodeState(tc.b, &out), tc.want)
		})
	}
}

func TestPatchState(t *testing.T) {
	s := full3D()
	b, err := AppendState(nil, &s)
	require.NoError(t, err)
	require.NoError(t, PatchState(b, 2, 77))
	var out State
	require.NoError(t, DecodeState(b, &out))
	assert.Equal(t, uint8(2), out.Slot)
	assert.Equal(t, Stamp(77), out.Stamp)
	assert.Equal(t, s.Seq, out.Seq)
	assert.ErrorIs(t, PatchState([]byte{0x40, 1}, 1, 1), ErrTruncated)
	assert.ErrorIs(t, PatchState([]byte{0xC0, 1, 0, 0, 0, 0, 0, 0}, 1, 1), ErrKind)
}

func TestEntityByte(t *testing.T) {
	s := full3D()
	s.Entity = 200
	b, err := AppendState(nil, &s)
	require.NoError(t, err)
	require.Len(t, b, MaxStateSize, "an entity adds one byte at the end")
	assert.Equal(t, len(b), FrameSize(b))
	require.NoError(t, PatchState(b, 5, 99))
	var out State
	require.NoError(t, DecodeState(b, &out))
	assert.Equal(t, uint8(200), out.Entity, "PatchState keeps the entity")
	assert.Equal(t, uint8(5), out.Slot)
	assert.Equal(t, s.Anim, out.Anim, "the extras still sit before the entity byte")
	assert.Equal(t, s.Input, out.Input)
	require.NoError(t, PatchSeq(b, 1234))
	require.NoError(t, DecodeState(b, &out))
	assert.Equal(t, Seq(1234), out.Seq)
	assert.True(t, Shared(out.Entity))
	assert.False(t, Shared(MaxPlayerEntity))

	b[len(b)-1] = 0 // entity 0 has no byte
	assert.ErrorIs(t, DecodeState(b, &out), ErrEntity)
	assert.ErrorIs(t, DecodeState(b[:len(b)-1], &out), ErrTruncated, "the flag announces a byte")

	s.Slot = MaxSlot + 1
	_, err = AppendState(nil, &s)
	assert.ErrorIs(t, err, ErrSlot)
	assert.ErrorIs(t, PatchState(b, MaxSlot+1, 1), ErrSlot)
}

func TestRandomRoundTrips(t *testing.T) {
	const seed = 20261130
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range 20000 {
		in := State{
			Dim2D:  r.IntN(2) == 1,
			Fields: Fields(r.IntN(8)) << 3,
			Flags:  Flags(r.IntN(8)),
			Slot:   uint8(r.IntN(MaxSlot + 1)),
			Entity: uint8(r.Uint32()) * uint8(r.IntN(2)), // half of them 0
			Seq:    Seq(r.Uint32()),
			Stamp:  Stamp(r.Uint32()),
			Pos:    geom.Vec3{X: r.NormFloat64() * 1e4, Y: r.NormFloat64() * 1e4, Z: r.NormFloat64() * 1e4},
			Vel:    geom.Vec3{X: r.NormFloat64() * 30, Y: r.NormFloat64() * 30, Z: r.NormFloat64() * 30},
			Acc:    geom.Vec3{X: r.NormFloat64() * 10, Y: r.NormFloat64() * 10, Z: r.NormFloat64() * 10},
			Rot:    randomQuat(r),
			Turn:   r.NormFloat64(),
			Anim:   uint8(r.Uint32()),
			Input:  uint8(r.Uint32()),
		}
		if in.Dim2D {
			in.Pos.Z, in.Vel.Z, in.Acc.Z = 0, 0, 0
		}
		b, err := AppendState(nil, &in)
		require.NoError(t, err, "seed %d case %d", seed, i)
		var out State
		require.NoError(t, DecodeState(b, &out), "seed %d case %d", seed, i)
		require.Len(t, b, in.Size())
		require.Equal(t, len(b), FrameSize(b))
		require.Equal(t, in.Entity, FrameEntity(b))
		require.Equal(t, in.Seq, out.Seq)
		require.Equal(t, in.Slot, out.Slot)
		require.Equal(t, in.Entity, out.Entity)
		require.Equal(t, in.Fields, out.Fields)
		require.Equal(t, in.Flags, out.Flags)
		require.InDelta(t, in.Pos.X, out.Pos.X, math.Abs(in.Pos.X)*1e-7+1e-9, "seed %d case %d", seed, i)
		require.InDelta(t, in.Vel.Y, out.Vel.Y, math.Abs(in.Vel.Y)/1024+1e-4, "seed %d case %d", seed, i)
	}
}

func assertVecNear(t *testing.T, want, got geom.Vec3, tol float64, what string) {
	t.Helper()
	assert.InDelta(t, want.X, got.X, tol, "%s x", what)
	assert.InDelta(t, want.Y, got.Y, tol, "%s y", what)
	assert.InDelta(t, want.Z, got.Z, tol, "%s z", what)
}

func randomQuat(r *rand.Rand) geom.Quat {
	// Four normal components give a uniformly distributed rotation.
	return geom.Quat{X: r.NormFloat64(), Y: r.NormFloat64(), Z: r.NormFloat64(), W: r.NormFloat64()}.Normalized()
}
