package wire

import (
	"encoding/binary"
	"math"

	"github.com/x448/float16"

	"github.com/nearzero/nearzero/netcode/geom"
)

// Kind is the kind of a frame, read from the top two bits of its first byte.
type Kind uint8

// Frame kinds.
const (
	KindInvalid Kind = 0
	KindState3D Kind = 1
	KindState2D Kind = 2
	KindControl Kind = 3
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindState3D:
		return "state3d"
	case KindState2D:
		return "state2d"
	case KindControl:
		return "control"
	default:
		return "invalid"
	}
}

// KindOf returns the kind of frame b, or KindInvalid for an empty slice.
func KindOf(b []byte) Kind {
	if len(b) == 0 {
		return KindInvalid
	}
	return Kind(b[0] >> 6)
}

// Fields says which optional parts a state carries.
type Fields uint8

// Optional parts of a state.
const (
	HasAcc    Fields = 1 << 5 // acceleration
	HasTurn   Fields = 1 << 4 // turn rate
	HasExtras Fields = 1 << 3 // animation state and input bits

	allFields = HasAcc | HasTurn | HasExtras
)

// Flags are per-state flag bits.
type Flags uint8

// State flags.
const (
	// FlagTeleport marks a discontinuous move (respawn, portal): receivers
	// snap instead of smoothing.
	FlagTeleport Flags = 1 << 2
	// FlagGame1 and FlagGame0 are free for the game.
	FlagGame1 Flags = 1 << 1
	FlagGame0 Flags = 1 << 0

	allFlags = FlagTeleport | FlagGame1 | FlagGame0
)

// Sizes of states with the fewest and the most fields.
const (
	MinState3DSize = 30
	MaxState3DSize = 40
	MinState2DSize = 22
	MaxState2DSize = 30
	// MaxStateSize is the largest state of any kind: a 3D state with every
	// field and an entity byte.
	MaxStateSize = MaxState3DSize + 1
)

// Entity ids. A player's own entity (its body) is 0 and costs nothing on
// the wire; any other id adds one byte at the end of the frame, announced
// by the top bit of the slot byte (so slots are 0..MaxSlot).
const (
	// MaxSlot is the largest slot a state can carry.
	MaxSlot = 127
	// MaxPlayerEntity is the largest id of a player's own entities
	// (1..MaxPlayerEntity: a trailer, a projectile, a pet).
	MaxPlayerEntity = 127
	// FirstShared is the first id of a shared object (a ball, a door),
	// FirstShared..255: owned by one player at a time, granted by the
	// server; receivers key it by id alone, whoever sends it.
	FirstShared = 128
	// hasEntity is the slot byte's flag for a trailing entity byte.
	hasEntity = 0x80
)

// Shared reports whether entity id e is a shared object's.
func Shared(e uint8) bool { return e >= FirstShared }

// State is one entity's state as sent by its owner.
//
// For 2D entities Pos, Vel and Acc use X and Y, and Rot is a rotation about
// +Z (see geom.Angle2D).
type State struct {
	Dim2D  bool   // a 2D entity
	Fields Fields // optional parts present; absent ones decode as zero
	Flags  Flags
	Slot   uint8 // the sender's seat in the room, 0..MaxSlot
	Entity uint8 // 0: the player's own entity; see FirstShared
	Seq    Seq
	Stamp  Stamp // sender clock when the state was sampled
	Pos    geom.Vec3
	Vel    geom.Vec3 // m/s (px/s in 2D)
	Acc    geom.Vec3 // m/s², with HasAcc
	Rot    geom.Quat
	Turn   float64 // rad/s about the up axis, with HasTurn
	Anim   uint8   // animation state, with HasExtras
	Input  uint8   // input bits, with HasExtras
}

// Size returns the encoded size of s in bytes.
func (s *State) Size() int {
	n := s.size()
	if s.Entity != 0 {
		n++
	}
	return n
}

// size is the size without the entity byte.
func (s *State) size() int {
	f := s.Fields
	if s.Dim2D {
		n := MinState2DSize
		if f&HasAcc != 0 {
			n += 4
		}
		if f&HasTurn != 0 {
			n += 2
		}
		if f&HasExtras != 0 {
			n += 2
		}
		return n
	}
	n := MinState3DSize
	if f&HasAcc != 0 {
		n += 6
	}
	if f&HasTurn != 0 {
		n += 2
	}
	if f&HasExtras != 0 {
		n += 2
	}
	return n
}

// FrameSize returns the size of the state frame starting at b[0], read
// from its first two bytes, or 0 when b does not start with a state. It
// does not check that b is that long.
func FrameSize(b []byte) int {
	k := KindOf(b)
	if k != KindState3D && k != KindState2D {
		return 0
	}
	s := State{Dim2D: k == KindState2D, Fields: Fields(b[0]) & allFields}
	n := s.size()
	if len(b) > 1 && b[1]&hasEntity != 0 {
		n++
	}
	return n
}

// FrameEntity returns the entity id of a whole encoded state without
// decoding it: the byte at its end when the slot byte announces one, else
// 0. A frame whose byte reads 0 fails DecodeState.
func FrameEntity(b []byte) uint8 {
	if len(b) > 1 && b[1]&hasEntity != 0 {
		return b[len(b)-1]
	}
	return 0
}

// FrameStamp returns the stamp of an encoded state without decoding it;
// false for a frame too short to hold one.
func FrameStamp(b []byte) (Stamp, bool) {
	if len(b) < 8 {
		return 0, false
	}
	return Stamp(binary.LittleEndian.Uint32(b[4:])), true
}

// AppendState appends the encoding of s to dst. It returns ErrNotFinite for
// NaN or infinite values, ErrRange for a value a half float cannot hold and
// ErrZeroRotation for a zero quaternion (3D), ErrSlot for a slot above
// MaxSlot; dst is returned unchanged then.
// Non-unit quaternions are normalised. It does not allocate when dst has room.
func AppendState(dst []byte, s *State) ([]byte, error) {
	// One comparison per value catches NaN, ±Inf and out-of-range alike
	// (every comparison with NaN is false); sort out which on failure only.
	if !(inF32(s.Pos.X) && inF32(s.Pos.Y) && inF32(s.Pos.Z) &&
		inF16(s.Vel.X) && inF16(s.Vel.Y) && inF16(s.Vel.Z) &&
		inF16(s.Acc.X) && inF16(s.Acc.Y) && inF16(s.Acc.Z) && inF16(s.Turn) && s.Rot.Finite()) {
		if !s.Pos.Finite() || !s.Vel.Finite() || !s.Acc.Finite() || !s.Rot.Finite() || !finite(s.Turn) {
			return dst, ErrNotFinite
		}
		return dst, ErrRange
	}
	if s.Slot > MaxSlot {
		return dst, ErrSlot
	}
	f := s.Fields & allFields
	kind := KindState3D
	if s.Dim2D {
		kind = KindState2D
	}
	n := len(dst)
	size := s.Size()
	dst = grow(dst, size)
	b := dst[n : n+size]
	b[0] = byte(kind)<<6 | byte(f) | byte(s.Flags&allFlags)
	b[1] = s.Slot
	if s.Entity != 0 {
		b[1] |= hasEntity
		b[size-1] = s.Entity
	}
	binary.LittleEndian.PutUint16(b[2:], uint16(s.Seq))
	binary.LittleEndian.PutUint32(b[4:], uint32(s.Stamp))
	var i int
	if s.Dim2D {
		putF32(b[8:], s.Pos.X)
		putF32(b[12:], s.Pos.Y)
		putF16(b[16:], s.Vel.X)
		putF16(b[18:], s.Vel.Y)
		binary.LittleEndian.PutUint16(b[20:], encodeAngle(s.Rot.Angle2D()))
		i = 22
		if f&HasAcc != 0 {
			putF16(b[i:], s.Acc.X)
			putF16(b[i+2:], s.Acc.Y)
			i += 4
		}
	} else {
		q, ok := encodeQuat(s.Rot)
		if !ok {
			return dst[:n], ErrZeroRotation
		}
		putF32(b[8:], s.Pos.X)
		putF32(b[12:], s.Pos.Y)
		putF32(b[16:], s.Pos.Z)
		putF16(b[20:], s.Vel.X)
		putF16(b[22:], s.Vel.Y)
		putF16(b[24:], s.Vel.Z)
		binary.LittleEndian.PutUint32(b[26:], q)
		i = 30
		if f&HasAcc != 0 {
			putF16(b[i:], s.Acc.X)
			putF16(b[i+2:], s.Acc.Y)
			putF16(b[i+4:], s.Acc.Z)
			i += 6
		}
	}
	if f&HasTurn != 0 {
		putF16(b[i:], s.Turn)
		i += 2
	}
	if f&HasExtras != 0 {
		b[i] = s.Anim
		b[i+1] = s.Input
	}
	return dst, nil
}

// DecodeState decodes frame b into s. It returns ErrKind when b is not a
// state, ErrTruncated or ErrTrailing when its length does not match its
// header, and ErrNotFinite for NaN or infinite numbers. On error s is left
// in an unspecified state. It never panics and never allocates.
func DecodeState(b []byte, s *State) error {
	k := KindOf(b)
	if k != KindState3D && k != KindState2D {
		return ErrKind
	}
	*s = State{
		Dim2D:  k == KindState2D,
		Fields: Fields(b[0]) & allFields,
		Flags:  Flags(b[0]) & allFlags,
	}
	size := s.size()
	if len(b) > 1 && b[1]&hasEntity != 0 {
		size++
	}
	if len(b) < size {
		return ErrTruncated
	}
	if len(b) > size {
		return ErrTrailing
	}
	s.Slot = b[1] &^ hasEntity
	if b[1]&hasEntity != 0 {
		if s.Entity = b[size-1]; s.Entity == 0 {
			return ErrEntity // 0 has no byte: one encoding per state
		}
	}
	s.Seq = Seq(binary.LittleEndian.Uint16(b[2:]))
	s.Stamp = Stamp(binary.LittleEndian.Uint32(b[4:]))
	var i int
	if s.Dim2D {
		s.Pos = geom.Vec3{X: getF32(b[8:]), Y: getF32(b[12:])}
		s.Vel = geom.Vec3{X: getF16(b[16:]), Y: getF16(b[18:])}
		s.Rot = geom.Angle2D(decodeAngle(binary.LittleEndian.Uint16(b[20:])))
		i = 22
		if s.Fields&HasAcc != 0 {
			s.Acc = geom.Vec3{X: getF16(b[i:]), Y: getF16(b[i+2:])}
			i += 4
		}
	} else {
		s.Pos = geom.Vec3{X: getF32(b[8:]), Y: getF32(b[12:]), Z: getF32(b[16:])}
		s.Vel = geom.Vec3{X: getF16(b[20:]), Y: getF16(b[22:]), Z: getF16(b[24:])}
		s.Rot = decodeQuat(binary.LittleEndian.Uint32(b[26:]))
		i = 30
		if s.Fields&HasAcc != 0 {
			s.Acc = geom.Vec3{X: getF16(b[i:]), Y: getF16(b[i+2:]), Z: getF16(b[i+4:])}
			i += 6
		}
	}
	if s.Fields&HasTurn != 0 {
		s.Turn = getF16(b[i:])
		i += 2
	}
	if s.Fields&HasExtras != 0 {
		s.Anim = b[i]
		s.Input = b[i+1]
	}
	if !s.Pos.Finite() || !s.Vel.Finite() || !s.Acc.Finite() || !finite(s.Turn) {
		return ErrNotFinite
	}
	return nil
}

// PatchState rewrites the slot and stamp of an encoded state in place: the
// server re-stamps relayed states onto its clock this way without a full
// re-encode. The entity byte, if any, stays.
func PatchState(b []byte, slot uint8, stamp Stamp) error {
	if k := KindOf(b); k != KindState3D && k != KindState2D {
		return ErrKind
	}
	if len(b) < 8 {
		return ErrTruncated
	}
	if slot > MaxSlot {
		return ErrSlot
	}
	b[1] = b[1]&hasEntity | slot
	binary.LittleEndian.PutUint32(b[4:], uint32(stamp))
	return nil
}

// PatchSeq rewrites the sequence number of an encoded state in place: the
// server numbers a shared object's states itself, so receivers see one
// sequence across owners.
func PatchSeq(b []byte, seq Seq) error {
	if k := KindOf(b); k != KindState3D && k != KindState2D {
		return ErrKind
	}
	if len(b) < 8 {
		return ErrTruncated
	}
	binary.LittleEndian.PutUint16(b[2:], uint16(seq))
	return nil
}

// grow extends dst by n bytes, reusing its capacity when it can.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	out := make([]byte, len(dst)+n, 2*len(dst)+n)
	copy(out, dst)
	return out
}

// finite reports whether f is neither NaN nor ±Inf: x-x is 0 for every
// finite x and NaN otherwise.
func finite(f float64) bool { return f-f == 0 }

// inF32 reports whether f is finite and fits a float32.
func inF32(f float64) bool { return math.Abs(f) <= math.MaxFloat32 }

// maxF16 is the largest finite half float.
const maxF16 = 65504

// inF16 reports whether f is finite and fits a half float.
func inF16(f float64) bool { return math.Abs(f) <= maxF16 }

func putF32(b []byte, f float64) { binary.LittleEndian.PutUint32(b, math.Float32bits(float32(f))) }

func getF32(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) }

func putF16(b []byte, f float64) {
	binary.LittleEndian.PutUint16(b, float16.Fromfloat32(float32(f)).Bits())
}

func getF16(b []byte) float64 {
	return float64(float16.Frombits(binary.LittleEndian.Uint16(b)).Float32())
}

// encodeAngle maps radians onto 0..65535 covering [-π, π).
func encodeAngle(a float64) uint16 {
	a = geom.WrapAngle(a)
	return uint16(int32(math.Round(a/(2*math.Pi)*65536)) & 0xffff)
}

func decodeAngle(u uint16) float64 { return float64(int16(u)) / 65536 * 2 * math.Pi }
