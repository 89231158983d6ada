package sender

import (
	"testing"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// benchRot is computed once so the benchmarks do not time its sincos.
var benchRot = geom.AxisAngle(geom.Up3D, 0.4)

// BenchmarkSample measures one physics frame's sample of a turning entity:
// the whole derivation.
func BenchmarkSample(b *testing.B) {
	s := newSender(b, Config{})
	m := circle(geom.Up3D, geom.Vec3{X: 3, Y: 1}, geom.Vec3{X: 1}, 12, 0.8)
	step := period(144)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t := origin + time.Duration(i)*step
		pos, _, _ := m(t)
		s.Sample(t, pos, benchRot)
		i++
	}
}

// BenchmarkPoll measures a send: a sample and a PollState that is due
// every time, encoded into a reused buffer.
func BenchmarkPoll(b *testing.B) {
	s := newSender(b, Config{Rate: MaxRate})
	s.SetExtras(3, 1)
	step := period(MaxRate)
	buf := make([]byte, 0, wire.MaxStateSize)
	b.ReportAllocs()
	b.SetBytes(wire.MaxState3DSize)
	i := 0
	for b.Loop() {
		t := origin + time.Duration(i)*step
		s.Sample(t, geom.Vec3{X: float64(i) * 0.01, Y: 1}, benchRot)
		out, ok, err := poll(s, t, 2, buf[:0])
		if err != nil || !ok || len(out) != wire.MaxState3DSize {
			b.Fatalf("poll %d: ok %v, err %v, %d bytes", i, ok, err, len(out))
		}
		i++
	}
}
