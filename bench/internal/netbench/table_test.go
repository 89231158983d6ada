package netbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testSeed is the seed of the guard-rail table; a failure names it.
const testSeed = 1

var quick struct {
	once  sync.Once
	rows  []Row
	stats map[string]RunStats
	err   error
}

// quickTable runs the quick table once for every test that needs it.
func quickTable(t *testing.T) []Row {
	t.Helper()
	quick.once.Do(func() {
		quick.stats = map[string]RunStats{}
		var wg sync.WaitGroup
		scs := Scenarios()
		results := make([]*Result, len(scs))
		errs := make([]error, len(scs))
		for i, sc := range scs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = Run(sc, Options{Seed: testSeed, Quick: true})
			}()
		}
		wg.Wait()
		for i, r := range results {
			if errs[i] != nil {
				quick.err = errs[i]
				return
			}
			quick.rows = append(quick.rows, r.Rows...)
			quick.stats[scs[i].Name] = r.Stats
		}
	})
	require.NoError(t, quick.err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d; rerun with: go run ./bench -quick -seed %d", testSeed, testSeed)
		}
	})
	return quick.rows
}

// find returns the row of scenario, entity and method.
func find(t *testing.T, rows []Row, scenario, entity, method string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Scenario == scenario && r.Entity == entity && r.Method == method && r.Variant == "" {
			return r
		}
	}
	require.Failf(t, "row missing", "%s/%s/%s", scenario, entity, method)
	return Row{}
}

// TestGoals checks loose forms of the goals on the quick table.
// The full table (go run ./bench) is the measurement, with the goal column;
// these are its guard rails.
func TestGoals(t *testing.T) {
	rows := quickTable(t)
	v50 := find(t, rows, "direct-50", "vehicle", MethodNearzero)
	i50 := find(t, rows, "direct-50", "vehicle", MethodInterp100)
	assert.LessOrEqual(t, v50.AlongP95, 0.3, "direct-50 vehicle along-track p95")
	assert.LessOrEqual(t, v50.JumpsPerMin, 12.0, "direct-50 vehicle big jumps (a wall hit seen late may snap)")
	assert.GreaterOrEqual(t, i50.P95/v50.P95, 5.0, "interp100 / nearzero p95 for a vehicle")
	for _, sc := range []string{"direct-50", "harsh-50", "direct-150"} {
		for _, ent := range []string{"vehicle", "character"} {
			nz := find(t, rows, sc, ent, MethodNearzero)
			sn := find(t, rows, sc, ent, MethodSnap)
			assert.Less(t, nz.Mean, sn.Mean, "%s/%s: mean under snap's", sc, ent)
		}
	}
}

// TestGuardRails asserts loose bounds over the whole quick table, so a
// regression anywhere fails CI.
func TestGuardRails(t *testing.T) {
	rows := quickTable(t)
	lossy := map[string]bool{"loss-1pct": true, "burst-loss": true, "harsh-50": true, "harsh-150": true}
	for _, r := range rows {
		name := fmt.Sprintf("%s/%s/%s", r.Scenario, r.Entity, r.Method)
		assert.Greater(t, r.Frames, 500, "%s: frames judged", name)
		assert.LessOrEqual(t, r.P50, r.P95, name)
		assert.LessOrEqual(t, r.P95, r.P99, name)
		assert.LessOrEqual(t, r.P99, r.Max, name)
		if r.Method == MethodNearzero {
			sn := find(t, rows, r.Scenario, r.Entity, MethodSnap)
			assert.Less(t, r.Mean, sn.Mean, "%s: nearzero's mean beats snap's", name)
			if strings.HasPrefix(r.Entity, "vehicle") {
				ip := find(t, rows, r.Scenario, r.Entity, MethodInterp100)
				assert.Less(t, r.P95, ip.P95, "%s: a vehicle extrapolated beats interp100", name)
			}
			require.NotNil(t, r.SplitTiming, name)
			require.NotNil(t, r.SplitSmoothing, name)
		} else {
			assert.Nil(t, r.SplitTiming, "%s: the split is nearzero's", name)
		}
		if r.Method == MethodInterp100 || r.Method == MethodInterpAdaptive {
			assert.Less(t, r.OffPathP95, 0.05, "%s: interpolation stays on the true path", name)
			if !lossy[r.Scenario] && r.Scenario != "asymmetric" {
				// Rare: a late copy filling a hole behind the render time,
				// a slide along a wall seen between samples.
				assert.LessOrEqual(t, r.ReversalsPerMin, 15.0, "%s: interpolation hardly reverses", name)
			}
		}
	}
	for name, st := range quick.stats {
		if !lossy[name] {
			// With loss, the reliable server leg delivers a retransmitted
			// stretch of states at once and the room's rate check refuses
			// some, as it should.
			assert.Zero(t, st.RoomErrors, "%s: the room refused nothing", name)
		}
		assert.Greater(t, st.StatesSent, 1000, name)
	}
	assert.GreaterOrEqual(t, quick.stats["round-start"].Rounds, 1, "a round started")
	assert.Positive(t, quick.stats["contact"].Contacts, "the vehicles touched")
}

// TestAsymmetryIsTiming shows with an ablation that the asymmetric row's
// error is the sender-clock estimate, which no ping can correct.
func TestAsymmetryIsTiming(t *testing.T) {
	sc, err := Lookup("asymmetric")
	require.NoError(t, err)
	real, err := Run(sc, Options{Seed: testSeed, Duration: 10 * time.Second})
	require.NoError(t, err)
	oracle, err := Run(sc, Options{Seed: testSeed, Duration: 10 * time.Second, Variant: Ablations[1]})
	require.NoError(t, err)
	require.Equal(t, "true-sender-clock", oracle.Rows[0].Variant)
	rv := find(t, real.Rows, "asymmetric", "vehicle", MethodNearzero)
	var ov Row
	for _, r := range oracle.Rows {
		if r.Entity == "vehicle" && r.Method == MethodNearzero {
			ov = r
		}
	}
	t.Logf("vehicle along p50 %.3f m, with the true sender clock %.3f m", rv.AlongP50, ov.AlongP50)
	assert.Greater(t, rv.AlongP50, 0.2, "20 ms of asymmetry is 0.4 m at 20 m/s")
	assert.Less(t, ov.AlongP50, rv.AlongP50/3, "the true sender clock removes most of it")
	assert.Greater(t, *rv.SplitTiming, 3**ov.SplitTiming)
}

// TestInputDelayDrawsFromTheFuture checks the input-delay scheme: with a
// 100 ms delay at 50 ms one way, the character's states arrive ahead of
// the shared timeline, so nearzero interpolates them instead of guessing
// the next reversal, and its error falls well below the real run's.
func TestInputDelayDrawsFromTheFuture(t *testing.T) {
	sc, err := Lookup("direct-50")
	require.NoError(t, err)
	real, err := Run(sc, Options{Seed: testSeed, Duration: 10 * time.Second})
	require.NoError(t, err)
	delayed, err := Run(sc, Options{Seed: testSeed, Duration: 10 * time.Second,
		Variant: Variant{Name: "input-delay-100ms", InputDelay: 100 * time.Millisecond}})
	require.NoError(t, err)
	rc := find(t, real.Rows, "direct-50", "character", MethodNearzero)
	var dc Row
	for _, r := range delayed.Rows {
		if r.Entity == "character" && r.Method == MethodNearzero {
			dc = r
		}
	}
	t.Logf("character p95 %.3f m, with a 100 ms input delay %.3f m (data age %.0f ms)", rc.P95, dc.P95, dc.MeanAgeMS)
	assert.Negative(t, dc.MeanAgeMS, "the data is ahead of the shared timeline")
	assert.Less(t, dc.P95, rc.P95/4)
}

func TestSameSeedSameNumbers(t *testing.T) {
	sc, err := Lookup("wifi-stalls")
	require.NoError(t, err)
	run := func(seed uint64) []Row {
		res, err := Run(sc, Options{Seed: seed, Duration: 10 * time.Second})
		require.NoError(t, err)
		for i := range res.Rows {
			res.Rows[i].WallSeconds = 0
		}
		return res.Rows
	}
	a, b := run(3), run(3)
	assert.Equal(t, a, b, "same seed, same numbers")
	c := run(4)
	assert.NotEqual(t, a[0].AlongP95, c[0].AlongP95, "another seed, other numbers")
}

func TestRunTableOrderAndParallelism(t *testing.T) {
	scs := []Scenario{must(Lookup("direct-20")), must(Lookup("server-only"))}
	o := TableOptions{Options: Options{Seed: 2, Duration: 5 * time.Second}, Scenarios: scs, Ablate: true}
	var calls []int
	one, _, err := RunTable(TableOptions{Options: o.Options, Scenarios: scs, Ablate: true, Workers: 1},
		func(done, total int) { calls = append(calls, done*100+total) })
	require.NoError(t, err)
	many, _, err := RunTable(o, nil)
	require.NoError(t, err)
	require.Len(t, one, len(scs)*(1+len(Ablations))*2*len(Methods))
	n := len(scs) * (1 + len(Ablations))
	require.Len(t, calls, n)
	assert.Equal(t, 100+n, calls[0])
	assert.Equal(t, n*100+n, calls[n-1])
	for i := range one {
		one[i].WallSeconds, many[i].WallSeconds = 0, 0
	}
	assert.Equal(t, one, many, "parallelism does not change the numbers")
	assert.Equal(t, "direct-20", one[0].Scenario)
	assert.Equal(t, "", one[0].Variant)
	assert.Equal(t, Ablations[0].Name, one[2*len(Methods)].Variant)
}

func TestRunTableRecordNeedsOneRun(t *testing.T) {
	scs := []Scenario{must(Lookup("direct-20")), must(Lookup("server-only"))}
	o := TableOptions{Options: Options{Seed: 2, Duration: time.Second, Record: &Recording{}}, Scenarios: scs}
	_, _, err := RunTable(o, nil)
	assert.ErrorContains(t, err, "exactly one run")
	assert.Empty(t, o.Record.Events, "nothing ran")

	o.Scenarios = scs[:1]
	_, _, err = RunTable(o, nil)
	require.NoError(t, err)
	assert.NotEmpty(t, o.Record.Events)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestOutput(t *testing.T) {
	sc := must(Lookup("direct-20"))
	res, err := Run(sc, Options{Seed: 1, Duration: 3 * time.Second, Trace: true})
	require.NoError(t, err)

	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, res.Rows))
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	require.Len(t, lines, len(res.Rows))
	for _, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		for _, k := range []string{"scenario", "method", "mean_m", "p50_m", "p95_m", "p99_m", "max_m", "along_p50_m",
			"along_p95_m", "along_max_m", "side_p95_m", "bias_m", "wobble_m", "reversals_per_min", "jumps_per_min",
			"pops_per_min", "pop_events_per_min", "pop_rel_per_min", "off_path_p95_m", "past_cap_share", "sim_seconds", "wall_seconds"} {
			assert.Contains(t, m, k)
		}
	}

	var txt bytes.Buffer
	require.NoError(t, WriteText(&txt, res.Rows))
	assert.Contains(t, txt.String(), "pop>.5")
	assert.Equal(t, len(res.Rows)+2, strings.Count(txt.String(), "\n"))

	dir := t.TempDir()
	require.NoError(t, WriteTraces(dir, res.Traces))
	for _, tr := range res.Traces {
		for _, suffix := range []string{".csv", ".png", "-methods.png"} {
			st, err := os.Stat(filepath.Join(dir, tr.Scenario+"-"+tr.Entity+suffix))
			require.NoError(t, err)
			assert.Greater(t, st.Size(), int64(1000))
		}
	}
	csv, err := os.ReadFile(filepath.Join(dir, "direct-20-vehicle.csv"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(csv), "t_s,speed_mps,along_nearzero_m"))
	assert.Equal(t, len(res.Traces[1].T)+1, strings.Count(string(csv), "\n"))
}

func TestRecordAndReplay(t *testing.T) {
	sc := must(Lookup("direct-50"))
	rec := &Recording{}
	first, err := Run(sc, Options{Seed: 5, Duration: 5 * time.Second, Record: rec})
	require.NoError(t, err)
	require.NotEmpty(t, rec.Events)

	var buf bytes.Buffer
	require.NoError(t, WriteRecording(&buf, rec))
	back, err := ReadRecording(&buf)
	require.NoError(t, err)
	require.Equal(t, rec.Events, back.Events, "the CSV round trip is exact")

	// The replay drives the same bots, and with the same seed the network
	// and the frames are the same too: the run is identical.
	again, err := Run(sc, Options{Seed: 5, Duration: 5 * time.Second, Inputs: back})
	require.NoError(t, err)
	for i := range first.Rows {
		first.Rows[i].WallSeconds, again.Rows[i].WallSeconds = 0, 0
	}
	assert.Equal(t, first.Rows, again.Rows, "replaying the recorded inputs gives the same run")

	_, err = ReadRecording(strings.NewReader("t_s,client,throttle,brake,steer,heading_rad,jump\n1,c,0,0,0,0,0\n"))
	assert.ErrorIs(t, err, ErrRecording)
	assert.ErrorContains(t, err, "line 2:", "the header is line 1")
	_, err = ReadRecording(strings.NewReader("1,a,NaN,0,0,0,0\n"))
	assert.ErrorIs(t, err, ErrRecording)
	assert.ErrorContains(t, err, "line 1,", "no header: the first row is line 1")
}

func TestAverageRows(t *testing.T) {
	a := []Row{{Scenario: "s", Entity: "e", Method: MethodNearzero, Frames: 10, Mean: 1, P95: 2}}
	b := []Row{{Scenario: "s", Entity: "e", Method: MethodNearzero, Frames: 30, Mean: 3, P95: 4}}
	avg, err := AverageRows([][]Row{a, b})
	require.NoError(t, err)
	require.Len(t, avg, 1)
	assert.Equal(t, 40, avg[0].Frames)
	assert.Equal(t, 2, avg[0].Seeds)
	assert.InDelta(t, 2, avg[0].Mean, 1e-12)
	assert.InDelta(t, 3, avg[0].P95, 1e-12)
	b[0].Method = MethodSnap
	_, err = AverageRows([][]Row{a, b})
	assert.Error(t, err, "rows of different tables")
}

// TestGoalColumn: the goal column checks issue 31's character goals and
// issue 21's vehicle goal on the rows they name and nowhere else, against
// fixed limits and the row's own baselines.
func TestGoalColumn(t *testing.T) {
	row := func(sc, ent, method string, mean, p95, p99 float64, pops ...float64) Row {
		r := Row{Scenario: sc, Entity: ent, Method: method, Variant: "-", Mean: mean, P95: p95, P99: p99}
		copy(r.PopEvents[:], pops)
		return r
	}
	rows := []Row{
		row("direct-50", "character", MethodNearzero, 0.1, 0.44, 0.6, 4, 0, 1.2, 0), // pops > 0.3 m over 1/min
		row("direct-50", "character", MethodSnap, 0.3, 0.5, 0.5),
		row("direct-100", "character", MethodNearzero, 0.4, 0.77, 1.2, 3, 0, 4), // mean over half snap's and over snap's, p99 over 1.5x
		row("direct-100", "character", MethodSnap, 0.35, 0.6, 0.7),
		row("harsh-150", "vehicle", MethodNearzero, 0.2, 0.32, 0.5, 0, 9),
		row("harsh-150", "vehicle", MethodExtrapolateV, 0.2, 0.33, 0.5, 0, 10),
		row("direct-50", "vehicle", MethodNearzero, 0.1, 9, 9),                    // no goal on this row
		row("server-only", "character", MethodNearzero, 0.2, 0.7, 0.9, 150, 0, 5), // met: 0.1 m pops count for nothing
		row("server-only", "character", MethodSnap, 0.5, 0.7, 0.8),
	}
	g := Goals(rows)
	require.Len(t, g, 4)
	assert.Equal(t, "pop>.3<=1", g[0].Misses())
	assert.Equal(t, "mean<=snap/2,p99<=1.5snap,mean<=snap", g[2].Misses())
	assert.True(t, g[4].Met(), g[4].Misses())
	assert.Len(t, g[4].Checks, 2)
	_, ok := g[6]
	assert.False(t, ok, "direct-50 vehicle has no goal")
	assert.True(t, g[7].Met(), g[7].Misses())
	assert.Len(t, g[7].Checks, 3)
}
