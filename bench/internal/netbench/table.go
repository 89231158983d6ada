package netbench

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"
)

// TableOptions choose which runs make a table.
type TableOptions struct {
	Options
	// Scenarios to run, in order; nil means every scenario.
	Scenarios []Scenario
	// Ablate adds a run per Ablations variant after each scenario's.
	Ablate bool
	// Workers is how many runs go in parallel. Default GOMAXPROCS.
	Workers int
}

// Job is one run of a table: a scenario with a variant.
type Job struct {
	Scenario Scenario
	Variant  Variant
}

// Jobs lists the runs a table makes, in table order.
func (o TableOptions) Jobs() []Job {
	scs := o.Scenarios
	if scs == nil {
		scs = Scenarios()
	}
	var jobs []Job
	for _, sc := range scs {
		jobs = append(jobs, Job{Scenario: sc, Variant: o.Variant})
		if o.Ablate {
			for _, v := range Ablations {
				jobs = append(jobs, Job{Scenario: sc, Variant: v})
			}
		}
	}
	return jobs
}

// RunTable runs every job on Workers goroutines and returns the rows in
// table order (and the traces when Trace is set). progress, if not nil,
// is called after each run with the runs done and the total, from one
// goroutine at a time. Each run is a pure function of its scenario,
// variant and seed, so the rows do not depend on the parallelism (except
// wall_seconds). With Record set it refuses more than one job.
func RunTable(o TableOptions, progress func(done, total int)) ([]Row, []Trace, error) {
	jobs := o.Jobs()
	if o.Record != nil && len(jobs) != 1 {
		// Runs in parallel would append to one recording at once.
		return nil, nil, fmt.Errorf("netbench: Record needs exactly one run, not %d", len(jobs))
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]*Result, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				opt := o.Options
				opt.Variant = jobs[i].Variant
				results[i], errs[i] = Run(jobs[i].Scenario, opt)
				mu.Lock()
				done++
				if progress != nil {
					progress(done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	var rows []Row
	var traces []Trace
	for i, r := range results {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		rows = append(rows, r.Rows...)
		traces = append(traces, r.Traces...)
	}
	return rows, traces, nil
}

// AverageRows averages runs of the same table on different seeds (each a
// RunTable result, in the same order): every numeric column is the mean
// over the seeds (percentiles too: a mean of per-run percentiles), frames
// are summed, Seed is the first run's and Seeds the number of runs.
func AverageRows(runs [][]Row) ([]Row, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	out := make([]Row, len(runs[0]))
	for i := range out {
		r := runs[0][i]
		n := float64(len(runs))
		avg := func(get func(*Row) *float64) {
			var sum float64
			for _, run := range runs {
				sum += *get(&run[i])
			}
			*get(&r) = sum / n
		}
		frames := 0
		for _, run := range runs {
			if len(run) != len(out) || run[i].Scenario != r.Scenario || run[i].Entity != r.Entity ||
				run[i].Method != r.Method || run[i].Variant != r.Variant {
				return nil, fmt.Errorf("netbench: AverageRows: runs of different tables")
			}
			frames += run[i].Frames
		}
		for _, f := range []func(*Row) *float64{
			func(x *Row) *float64 { return &x.Mean }, func(x *Row) *float64 { return &x.P50 },
			func(x *Row) *float64 { return &x.P95 }, func(x *Row) *float64 { return &x.P99 },
			func(x *Row) *float64 { return &x.Max }, func(x *Row) *float64 { return &x.AlongP50 },
			func(x *Row) *float64 { return &x.AlongP95 }, func(x *Row) *float64 { return &x.AlongMax },
			func(x *Row) *float64 { return &x.SideP50 }, func(x *Row) *float64 { return &x.SideP95 },
			func(x *Row) *float64 { return &x.SideMax }, func(x *Row) *float64 { return &x.Bias },
			func(x *Row) *float64 { return &x.Wobble }, func(x *Row) *float64 { return &x.ReversalsPerMin },
			func(x *Row) *float64 { return &x.JumpsPerMin }, func(x *Row) *float64 { return &x.PopsPerMin },
			func(x *Row) *float64 { return &x.OffPathP95 }, func(x *Row) *float64 { return &x.OffPathMax },
			func(x *Row) *float64 { return &x.PastCapShare }, func(x *Row) *float64 { return &x.SlideMSPerS },
			func(x *Row) *float64 { return &x.PathGapMS }, func(x *Row) *float64 { return &x.DirectShare },
			func(x *Row) *float64 { return &x.MeanAgeMS }, func(x *Row) *float64 { return &x.WallSeconds },
			func(x *Row) *float64 { return &x.PopRelPerMin }, func(x *Row) *float64 { return &x.PopEvents[0] },
			func(x *Row) *float64 { return &x.PopEvents[1] }, func(x *Row) *float64 { return &x.PopEvents[2] },
			func(x *Row) *float64 { return &x.PopEvents[3] },
		} {
			avg(f)
		}
		for _, sp := range []func(*Row) **float64{
			func(x *Row) **float64 { return &x.SplitTiming }, func(x *Row) **float64 { return &x.SplitPredictor },
			func(x *Row) **float64 { return &x.SplitStale }, func(x *Row) **float64 { return &x.SplitSmoothing },
		} {
			if *sp(&r) == nil {
				continue
			}
			var sum float64
			for _, run := range runs {
				sum += **sp(&run[i])
			}
			v := sum / n
			*sp(&r) = &v
		}
		r.Frames, r.Seeds = frames, len(runs)
		out[i] = r
	}
	return out, nil
}

// WriteJSON writes one JSON object per row, one per line.
func WriteJSON(w io.Writer, rows []Row) error {
	enc := json.NewEncoder(w)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
	}
	return nil
}

// Goal is the goal check of one nearzero row: the goals of issue 21 set
// for its scenario and entity (GoalChecks), each met or not. Rows without
// a goal have none. (The goal of issue 10, p95 at or below the best
// baseline's and pops at or below the fewest of any, was dropped: no
// method meets both for a mover that turns without warning.)
type Goal struct {
	Checks []GoalCheck
}

// GoalCheck is one goal: its name ("p95<=0.45", "pop>.1<=5", "mean<=snap")
// and whether the row meets it.
type GoalCheck struct {
	Name string
	Met  bool
}

// Met reports whether every goal is met.
func (g Goal) Met() bool {
	for _, c := range g.Checks {
		if !c.Met {
			return false
		}
	}
	return true
}

// Misses names the goals not met ("" when all are).
func (g Goal) Misses() string {
	var m []string
	for _, c := range g.Checks {
		if !c.Met {
			m = append(m, c.Name)
		}
	}
	return strings.Join(m, ",")
}

// Goals returns the goal check of every nearzero row of the default
// variant that has goals, by row index. Issue 31's goals for characters
// (set in the engine at 100 ms end to end: half MultiplayerSynchronizer's
// mean error, a 99th percentile of 1.0 m, about 1.5 times its, and few
// pops over 0.3 m), on the rows of that latency and below, and issue 21's
// for the rest:
//
//	character direct-50, direct-100, server-only
//	                      mean <= half snap's, p99 <= 1.5x snap's,
//	                      pop events > 0.3 m <= 5/min (direct-50: <= 1/min)
//	character, direct-50, direct-100, direct-150 and harsh-50: mean <= snap's mean
//	vehicle harsh-150     p95 <= 0.33 m, pop events > 0.2 m <= extrapolate-v's
//
// (Issue 21's character goals, p95 <= 0.45, 0.75 and 1.15 m at 50, 100
// and 150 ms and pop events > 0.1 m <= 5/min, asked for a drawing about a
// data age late, as snap's tail with fewer pops; issue 31 asked for the
// present. Every vehicle row's p95 within 5% of the numbers before a
// change compares two tables, not rows of one.)
func Goals(rows []Row) map[int]Goal {
	type key struct{ sc, ent, v, method string }
	byKey := map[key]Row{}
	for _, r := range rows {
		byKey[key{r.Scenario, r.Entity, r.Variant, r.Method}] = r
	}
	out := map[int]Goal{}
	for i, r := range rows {
		if r.Method != MethodNearzero || (r.Variant != "" && r.Variant != "-") {
			continue
		}
		var g Goal
		check := func(name string, met bool) { g.Checks = append(g.Checks, GoalCheck{name, met}) }
		p95 := func(limit float64) { check(fmt.Sprintf("p95<=%.2f", limit), r.P95 <= limit) }
		pops := func(size int, label string, limit float64) {
			check(fmt.Sprintf("pop>%s<=%g", label, limit), r.PopEvents[size] <= limit)
		}
		baseline := func(method string) (Row, bool) {
			b, ok := byKey[key{r.Scenario, r.Entity, r.Variant, method}]
			return b, ok
		}
		if r.Entity == "character" {
			switch r.Scenario {
			case "direct-50", "direct-100", "server-only":
				if sn, ok := baseline(MethodSnap); ok {
					check("mean<=snap/2", r.Mean <= sn.Mean/2)
					check("p99<=1.5snap", r.P99 <= 1.5*sn.P99)
				}
				limit := 5.0
				if r.Scenario == "direct-50" {
					limit = 1
				}
				pops(2, ".3", limit)
			}
			switch r.Scenario {
			case "direct-50", "direct-100", "direct-150", "harsh-50":
				if sn, ok := baseline(MethodSnap); ok {
					check("mean<=snap", r.Mean <= sn.Mean)
				}
			}
		}
		if r.Entity == "vehicle" && r.Scenario == "harsh-150" {
			p95(0.33)
			if ev, ok := baseline(MethodExtrapolateV); ok {
				check("pop>.2<=extrapolate-v", r.PopEvents[1] <= ev.PopEvents[1])
			}
		}
		if len(g.Checks) > 0 {
			out[i] = g
		}
	}
	return out
}

// WriteText writes the rows as an aligned table for a terminal: the error
// distribution, along-track p95, pop events (> 0.1, 0.3 and 0.5 m, and
// relative to speed), reversals and off-path distance, and
// for nearzero the goals it misses (Goals). -json has every column.
func WriteText(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	head := []string{"scenario", "entity", "method", "variant", "mean", "p50", "p95", "p99", "max", "along95",
		"pop>.1", "pop>.3", "pop>.5", "poprel", "rev/min", "offpath95", "age", "goal"}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	units := []string{"", "", "", "", "m", "m", "m", "m", "m", "m", "/min", "/min", "/min", "/min", "", "m", "ms", "missed"}
	fmt.Fprintln(tw, strings.Join(units, "\t")+"\t")
	goals := Goals(rows)
	prev := ""
	for i, r := range rows {
		if k := r.Scenario + "/" + r.Variant; k != prev && prev != "" {
			fmt.Fprintln(tw, strings.Repeat("\t", len(head)))
		}
		prev = r.Scenario + "/" + r.Variant
		v := r.Variant
		if v == "" {
			v = "-"
		}
		goal := ""
		if g, ok := goals[i]; ok {
			goal = "ok"
			if !g.Met() {
				goal = g.Misses()
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.3f\t%.0f\t%s\t\n",
			r.Scenario, r.Entity, r.Method, v, r.Mean, r.P50, r.P95, r.P99, r.Max, r.AlongP95,
			r.PopEvents[0], r.PopEvents[2], r.PopEvents[3], r.PopRelPerMin, r.ReversalsPerMin, r.OffPathP95, r.MeanAgeMS, goal)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}
