package netbench_test

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/bench/internal/netbench"
)

// ExampleRun runs ten seconds of the goal scenario and compares how the
// character's player drew the vehicle with nearzero and with a 100 ms
// interpolation buffer (p95 of the error's length).
func ExampleRun() {
	sc, err := netbench.Lookup("direct-50")
	if err != nil {
		panic(err)
	}
	res, err := netbench.Run(sc, netbench.Options{Seed: 1, Duration: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	p95 := map[string]float64{}
	for _, r := range res.Rows {
		if r.Entity == "vehicle" {
			p95[r.Method] = r.P95
		}
	}
	fmt.Println("rows:", len(res.Rows))
	fmt.Println("nearzero within 30 cm:", p95["nearzero"] <= 0.3)
	fmt.Println("interp100 at least 5x worse:", p95["interp100"] >= 5*p95["nearzero"])
	// Output:
	// rows: 14
	// nearzero within 30 cm: true
	// interp100 at least 5x worse: true
}
