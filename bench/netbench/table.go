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

// WriteText writes the rows as an aligned table for a terminal.
func WriteText(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	head := []string{"scenario", "entity", "method", "variant", "along50", "along95", "alongMax", "side95",
		"bias", "wobble", "rev/min", "jump/min", "pastCap", "slide", "pathGap", "direct", "age",
		"timing", "pred", "stale", "smooth", "sim/wall"}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	units := []string{"", "", "", "", "m", "m", "m", "m", "m", "m", "", "", "%", "ms/s", "ms", "%", "ms",
		"m rms", "m rms", "m rms", "m rms", "x"}
	fmt.Fprintln(tw, strings.Join(units, "\t")+"\t")
	prev := ""
	for _, r := range rows {
		if r.Scenario != prev && prev != "" {
			fmt.Fprintln(tw, strings.Repeat("\t", len(head)))
		}
		prev = r.Scenario
		split := func(p *float64) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprintf("%.3f", *p)
		}
		speed := 0.0
		if r.WallSeconds > 0 {
			speed = r.SimSeconds / r.WallSeconds
		}
		v := r.Variant
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%+.3f\t%.3f\t%.1f\t%.1f\t%.1f\t%.2f\t%+.1f\t%.0f\t%.0f\t%s\t%s\t%s\t%s\t%.0f\t\n",
			r.Scenario, r.Entity, r.Method, v, r.AlongP50, r.AlongP95, r.AlongMax, r.SideP95, r.Bias, r.Wobble,
			r.ReversalsPerMin, r.JumpsPerMin, r.PastCapShare*100, r.SlideMSPerS, r.PathGapMS, r.DirectShare*100,
			r.MeanAgeMS, split(r.SplitTiming), split(r.SplitPredictor), split(r.SplitStale), split(r.SplitSmoothing),
			speed)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}
