package wire

import "testing"

// BenchmarkStateEncodeDecode measures one state encoded and decoded again:
// the per-state cost on the send and receive paths together.
func BenchmarkStateEncodeDecode(b *testing.B) {
	s := full3D()
	buf := make([]byte, 0, MaxStateSize)
	var out State
	b.ReportAllocs()
	b.SetBytes(int64(s.Size()))
	b.ReportMetric(float64(s.Size()), "B/state")
	for b.Loop() {
		enc, err := AppendState(buf[:0], &s)
		if err != nil {
			b.Fatal(err)
		}
		if err := DecodeState(enc, &out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStateEncode(b *testing.B) {
	s := full3D()
	buf := make([]byte, 0, MaxStateSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := AppendState(buf[:0], &s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStateDecode(b *testing.B) {
	s := full3D()
	enc, err := AppendState(nil, &s)
	if err != nil {
		b.Fatal(err)
	}
	var out State
	b.ReportAllocs()
	for b.Loop() {
		if err := DecodeState(enc, &out); err != nil {
			b.Fatal(err)
		}
	}
}
