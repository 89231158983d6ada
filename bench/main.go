// Command bench runs nearzero's netcode bench: two simulated players and a
// real room server on one simulated clock, over simulated links, each
// drawing the other with netcode/predict and with two baselines, against
// the truth. It prints one row per scenario, entity and method.
//
//	go run ./bench                    the full table (2-minute runs)
//	go run ./bench -quick             the short CI table
//	go run ./bench -json              one JSON object per row
//	go run ./bench -ablate            extra rows with one estimator made perfect at a time
//	go run ./bench -trace DIR         per-frame CSV and PNG plots
//	go run ./bench -scenario direct-50 -seed 7
//	go run ./bench -holdout           the table on the hold-out seeds, averaged
//	go run ./bench -auto-params 'TailWeight=0.5'   Auto with changed constants
//
// See bench/README.md for what each column means.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/nearzero/nearzero/bench/internal/netbench"
	"github.com/nearzero/nearzero/netcode/predict"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		slog.Error("bench failed", "err", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "short runs for CI ("+netbench.QuickDuration.String()+" measured each)")
	asJSON := fs.Bool("json", false, "print one JSON object per row instead of the table")
	ablate := fs.Bool("ablate", false, "add rows with one estimator made perfect at a time")
	traceDir := fs.String("trace", "", "write per-frame CSV traces and PNG plots into this directory")
	scenario := fs.String("scenario", "", "run only this scenario (comma-separated names allowed)")
	seed := fs.Uint64("seed", netbench.TuneSeed, "random seed; same seed, same numbers (settings were tuned on seeds 1-3)")
	seeds := fs.String("seeds", "", "run on each of these comma-separated seeds and average the rows (overrides -seed)")
	holdout := fs.Bool("holdout", false, fmt.Sprintf("the hold-out table: -seeds %s, never used for tuning",
		joinSeeds(netbench.HoldoutSeeds)))
	dur := fs.Duration("duration", 0, "measured length of each run (default "+netbench.DefaultDuration.String()+")")
	inputs := fs.String("inputs", "", "replay recorded bot inputs from this CSV file")
	record := fs.String("record", "", "record the bots' inputs to this CSV file (needs a single -scenario)")
	list := fs.Bool("list", false, "list the scenarios and exit")
	inputDelay := fs.Duration("input-delay", 0, "the input-delay scheme: own inputs shown this late, states placed this far ahead (rows named input-delay-D)")
	autoParams := fs.String("auto-params", "", `change Auto's constants (predict.AutoParams), "Field=value;Field=v1,v2...": rows named auto-params`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *list {
		for _, s := range netbench.Scenarios() {
			fmt.Fprintf(stdout, "%-14s %s\n", s.Name, s.Doc)
		}
		return nil
	}

	if *holdout {
		*seeds = joinSeeds(netbench.HoldoutSeeds)
	}
	var seedList []uint64
	for _, f := range strings.Split(*seeds, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return fmt.Errorf("-seeds: %w", err)
		}
		seedList = append(seedList, v)
	}
	o := netbench.TableOptions{Options: netbench.Options{Seed: *seed, Duration: *dur, Quick: *quick,
		Trace: *traceDir != ""}, Ablate: *ablate}
	if *inputDelay > 0 {
		if *ablate {
			return errors.New("-input-delay does not combine with -ablate")
		}
		o.Variant = netbench.Variant{Name: "input-delay-" + inputDelay.String(), InputDelay: *inputDelay}
	}
	if *autoParams != "" {
		if *ablate || *inputDelay > 0 {
			return errors.New("-auto-params does not combine with -ablate or -input-delay")
		}
		par, err := netbench.ParseAutoParams(predict.DefaultAutoParams(), *autoParams)
		if err != nil {
			return err
		}
		o.Tuning.Auto.AutoParams = &par
		o.Variant = netbench.Variant{Name: "auto-params"}
	}
	if *scenario != "" {
		for _, name := range strings.Split(*scenario, ",") {
			sc, err := netbench.Lookup(strings.TrimSpace(name))
			if err != nil {
				return err
			}
			o.Scenarios = append(o.Scenarios, sc)
		}
	}
	if *inputs != "" {
		f, err := os.Open(*inputs)
		if err != nil {
			return fmt.Errorf("inputs: %w", err)
		}
		rec, err := netbench.ReadRecording(f)
		f.Close()
		if err != nil {
			return err
		}
		o.Inputs = rec
	}
	if *record != "" {
		if len(o.Scenarios) != 1 || *ablate {
			return errors.New("-record needs exactly one -scenario and no -ablate")
		}
		o.Record = &netbench.Recording{}
	}

	var progress func(done, total int)
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		var bar *progressbar.ProgressBar
		progress = func(done, total int) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr),
					progressbar.OptionSetDescription("bench"), progressbar.OptionShowCount(),
					progressbar.OptionClearOnFinish())
			}
			_ = bar.Set(done)
		}
		progress(0, len(o.Jobs()))
	}

	start := time.Now()
	var rows []netbench.Row
	var traces []netbench.Trace
	if len(seedList) > 0 {
		if o.Trace || o.Record != nil {
			return errors.New("-seeds and -holdout take no -trace or -record")
		}
		var runs [][]netbench.Row
		for _, sd := range seedList {
			o.Seed = sd
			r, _, err := netbench.RunTable(o, progress)
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
		var err error
		if rows, err = netbench.AverageRows(runs); err != nil {
			return err
		}
	} else {
		var err error
		if rows, traces, err = netbench.RunTable(o, progress); err != nil {
			return err
		}
	}
	wall := time.Since(start)

	if *traceDir != "" {
		if err := netbench.WriteTraces(*traceDir, traces); err != nil {
			return err
		}
	}
	if o.Record != nil {
		f, err := os.Create(*record)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		if err := netbench.WriteRecording(f, o.Record); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	if *asJSON {
		return netbench.WriteJSON(stdout, rows)
	}
	if err := netbench.WriteText(stdout, rows); err != nil {
		return err
	}
	var sim float64
	runs := 0
	for i, r := range rows {
		if i == 0 || r.Scenario != rows[i-1].Scenario || r.Variant != rows[i-1].Variant {
			k := float64(max(r.Seeds, 1))
			sim += r.SimSeconds * k
			runs += int(k)
		}
	}
	fmt.Fprintf(stdout, "\n%d runs, %.0f simulated seconds in %.2f s wall (%.0fx real time overall)\n",
		runs, sim, wall.Seconds(), sim/wall.Seconds())
	return nil
}

// joinSeeds writes seeds as a -seeds value.
func joinSeeds(seeds []uint64) string {
	var b strings.Builder
	for i, s := range seeds {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(s, 10))
	}
	return b.String()
}
