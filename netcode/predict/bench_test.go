package predict

import (
	"testing"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// benchRot is computed once so the benchmarks do not time its sincos.
var benchRot = geom.AxisAngle(geom.Up3D, 0.4)

// benchSample is the i-th sample (60 Hz) of a turning, accelerating 3D
// entity: the costliest model.
func benchSample(i int) Sample {
	return Sample{
		Time: time.Duration(i) * time.Second / 60, Seq: seqOf(i),
		Pos: geom.Vec3{X: float64(i) * 0.3, Y: 1}, Vel: geom.Vec3{X: 18, Y: 0.5, Z: 2},
		Acc: geom.Vec3{X: 3, Y: -1, Z: 9}, Rot: benchRot, Turn: 0.6,
	}
}

// BenchmarkPoseAt measures one frame with no new data: extrapolation up to
// the cap plus the decay of a live smoothing offset.
func BenchmarkPoseAt(b *testing.B) {
	p := newPredictor(b, Config{})
	for i := range 40 {
		p.Add(PathDirect, benchSample(i), benchSample(i).Time+30*time.Millisecond)
	}
	last := benchSample(39).Time
	p.PoseAt(last + 30*time.Millisecond)
	s := benchSample(40)
	s.Pos.Z += 0.5 // a correction for the offset to fade
	p.Add(PathDirect, s, s.Time+30*time.Millisecond)
	start := s.Time + 30*time.Millisecond
	p.PoseAt(start)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Ages sweep up to the cap whatever b.N is.
		p.PoseAt(start + time.Duration(i%1000)*(DefaultPredictionCap-30*time.Millisecond)/1000)
		i++
	}
}

// BenchmarkPoseAtAfterAdd measures the frame after an arrival: the old and
// new predictions and the correction.
func BenchmarkPoseAtAfterAdd(b *testing.B) {
	p := newPredictor(b, Config{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := benchSample(i)
		p.Add(PathDirect, s, s.Time+30*time.Millisecond)
		p.PoseAt(s.Time + 35*time.Millisecond)
		i++
	}
}

// BenchmarkAdd measures storing an in-order sample into a full buffer.
func BenchmarkAdd(b *testing.B) {
	p := newPredictor(b, Config{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := benchSample(i)
		p.Add(Path(i&1), s, s.Time+30*time.Millisecond)
		i++
	}
}

// BenchmarkPoseAtAfterAddAuto is BenchmarkPoseAtAfterAdd with Config.Auto
// every shadow drawing steps too, and the arrival scores them.
func BenchmarkPoseAtAfterAddAuto(b *testing.B) {
	p := newPredictor(b, Config{Auto: true})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := benchSample(i)
		p.Add(PathDirect, s, s.Time+30*time.Millisecond)
		p.PoseAt(s.Time + 35*time.Millisecond)
		i++
	}
}
