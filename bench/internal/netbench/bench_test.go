package netbench

import (
	"testing"
)

// BenchmarkRun runs whole scenarios (2-minute runs plus the warm-up) and
// reports simulated seconds per second of the benchmark's own time: the
// bench's speed goal is 1000 per scenario.
func BenchmarkRun(b *testing.B) {
	for _, name := range []string{"direct-50", "server-only", "round-start"} {
		sc, err := Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var sim float64
			for b.Loop() {
				res, err := Run(sc, Options{Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				sim += res.Rows[0].SimSeconds
			}
			b.ReportMetric(sim/b.Elapsed().Seconds(), "sim-s/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
