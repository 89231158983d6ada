package wire

import (
	"bytes"
	"math"
	"testing"

	"github.com/nearzero/nearzero/netcode/geom"
)

// stateSeeds returns one valid frame of each state kind plus broken ones.
func stateSeeds(f *testing.F) [][]byte {
	f.Helper()
	var seeds [][]byte
	full := full3D()
	for _, s := range []State{
		full,
		{Rot: geom.Identity},
		{Dim2D: true, Fields: HasAcc | HasTurn | HasExtras, Rot: geom.Angle2D(1), Pos: geom.Vec3{X: 3, Y: 4}},
		{Dim2D: true},
	} {
		b, err := AppendState(nil, &s)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b, b[:len(b)-1], append(append([]byte(nil), b...), 0xff))
	}
	nan := append([]byte(nil), seeds[0]...)
	copy(nan[8:], []byte{0, 0, 0xc0, 0x7f})
	seeds = append(seeds, nan, nil, []byte{0x40}, []byte{0xC0, 1, 0, 1}, bytes.Repeat([]byte{0xff}, 64))
	return seeds
}

// FuzzDecodeState: no panic, and any frame that decodes re-encodes to the
// same bytes (the format has no slack bits, so decode∘encode is exact up to
// the quaternion's canonical sign and NaN payloads, which decoding rejects).
func FuzzDecodeState(f *testing.F) {
	for _, s := range stateSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s State
		if err := DecodeState(b, &s); err != nil {
			return
		}
		if s.Size() != len(b) {
			t.Fatalf("decoded %d bytes but Size says %d", len(b), s.Size())
		}
		out, err := AppendState(nil, &s)
		if err != nil {
			t.Fatalf("a decoded state does not re-encode: %v", err)
		}
		var again State
		if err := DecodeState(out, &again); err != nil {
			t.Fatalf("re-encoded frame does not decode: %v", err)
		}
		if again.Seq != s.Seq || again.Stamp != s.Stamp || again.Slot != s.Slot || again.Fields != s.Fields ||
			again.Flags != s.Flags || again.Anim != s.Anim || again.Input != s.Input {
			t.Fatalf("header changed across a round trip: %+v vs %+v", s, again)
		}
		if again.Pos != s.Pos || again.Vel != s.Vel || again.Acc != s.Acc || again.Turn != s.Turn {
			t.Fatalf("numbers changed across a round trip: %+v vs %+v", s, again)
		}
		if e := s.Rot.AngleTo(again.Rot); e > 0.25*math.Pi/180 {
			t.Fatalf("rotation moved by %v rad across a round trip", e)
		}
	})
}

// FuzzDecodeControl: no panic, the body aliases the input, and a frame that
// decodes re-encodes to the same bytes.
func FuzzDecodeControl(f *testing.F) {
	ok, _ := AppendControl(nil, 3, []byte(`{"name":"Ada"}`))
	f.Add(ok)
	f.Add(ok[:3])
	f.Add([]byte{0xC0, 0xff, 0xff, 1})
	f.Add(append([]byte{0xC0, 1, 0, 1}, make([]byte, MaxControlBody+1)...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeControl(b)
		if err != nil {
			return
		}
		out, err := AppendControl(nil, c.Type, c.Body)
		if err != nil {
			t.Fatalf("a decoded control frame does not re-encode: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("round trip changed the frame: % x vs % x", b, out)
		}
	})
}

// FuzzStampNear: Near undoes the wrap for any reference within ±5 hours.
func FuzzStampNear(f *testing.F) {
	f.Add(int64(0), int64(0))
	f.Add(int64(42949672950000000), int64(-3600e9))
	f.Fuzz(func(t *testing.T, truth, skew int64) {
		const limit = int64(5 * 3600e9)
		if truth > 1<<60 || truth < -(1<<60) || skew > limit || skew < -limit {
			return
		}
		tr := quantize(durationOf(truth))
		got := StampOf(tr).Near(tr + durationOf(skew))
		if got != tr {
			t.Fatalf("Near(%v + %v) = %v, want %v", tr, skew, got, tr)
		}
	})
}
