package godottest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The character of TestGodotCharacter: a WASD player's runner, as the
// bench's character (bench/netbench/bot.go, keyCharacterDriver) without
// jumps. It holds one of eight directions, or stands (charStopShare of
// the holds), for 0.2 to 0.7 s, and changes at once.
const (
	charSeed      = 21
	charSpeed     = 6.0  // m/s
	charStopShare = 0.15 // of the holds
	charBox       = 10.0 // m from the centre beyond which it runs back
	// charPathFor is how long the path is (s): longer than any run.
	charPathFor = 300.0
	// charWarmup is left out of the figures: the clocks settle and Auto
	// learns the mover (autoMinLabels arrivals, then its window).
	charWarmup = 5.0
)

// charCase is one network condition: the one-way delay between the two
// players on every path (the server's and the direct link).
type charCase struct{ oneWayMS float64 }

// charRun is one run of a case: the watcher's NetPredictor profile ("auto"
// or "character") and the room's input delay (ms, fixed; 0: none).
type charRun struct {
	profile string
	delayMS float64
}

// charRuns are the runs of every case: Auto (whose run also gives snap on
// arrival and an interpolation buffer, from the same states), the
// CHARACTER preset, and Auto with input delays of 50 and 100 ms.
var charRuns = []charRun{{"auto", 0}, {"character", 0}, {"auto", 50}, {"auto", 100}}

// charPath is the mover's path: knots (s from the start, x, z in m),
// straight between them.
type charPath struct{ t, x, z []float64 }

// newCharPath draws the path from seed.
func newCharPath(seed uint64) charPath {
	r := rand.New(rand.NewPCG(seed, 0x6e7a))
	var p charPath
	var t, x, z float64
	heading := 0 // of eight, 45° apart
	p.add(t, x, z)
	for t < charPathFor {
		hold := 0.2 + 0.5*r.Float64()
		speed := charSpeed
		if r.Float64() < charStopShare {
			speed = 0
		} else {
			heading = (heading + 1 + r.IntN(7)) % 8
		}
		if math.Abs(x) > charBox || math.Abs(z) > charBox {
			// Back toward the centre, on the nearest of the eight.
			a := math.Atan2(-z, -x)
			heading = (int(math.Round(a/(math.Pi/4))) + 8) % 8
			speed = charSpeed
		}
		a := float64(heading) * math.Pi / 4
		x += speed * math.Cos(a) * hold
		z += speed * math.Sin(a) * hold
		t += hold
		p.add(t, x, z)
	}
	return p
}

func (p *charPath) add(t, x, z float64) {
	p.t, p.x, p.z = append(p.t, t), append(p.x, x), append(p.z, z)
}

// at returns the position at s seconds from the start (the mover stands
// at the ends before and after).
func (p *charPath) at(s float64) [3]float64 {
	n := len(p.t) - 1
	switch {
	case s <= p.t[0]:
		return [3]float64{p.x[0], 1, p.z[0]}
	case s >= p.t[n]:
		return [3]float64{p.x[n], 1, p.z[n]}
	}
	i, _ := slices.BinarySearch(p.t, s) // p.t[i-1] < s <= p.t[i]
	f := (s - p.t[i-1]) / (p.t[i] - p.t[i-1])
	return [3]float64{p.x[i-1] + (p.x[i]-p.x[i-1])*f, 1, p.z[i-1] + (p.z[i]-p.z[i-1])*f}
}

func (p *charPath) write(path string) error {
	var b strings.Builder
	for i := range p.t {
		fmt.Fprintf(&b, "%.6f %.6f %.6f\n", p.t[i], p.x[i], p.z[i])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write the character path: %w", err)
	}
	return nil
}

// The pop definitions of the bench (bench/netbench/metrics.go): a frame
// whose drawn move departs by more than a size from every true move of the
// same span in time over the last popLookbackS (drawing late is not
// popping); pop frames of one size closer than popEventGapS to the start
// of the size's last event are one event.
const (
	popLookbackS = 0.5
	popLagStepS  = 0.01
	popEventGapS = 0.1
	frameGapS    = 0.25 // a longer gap between drawn frames breaks the move
)

var charPopSizes = [...]float64{0.1, 0.3, 0.5}

// drawnFigures are one method's figures over the measured frames.
type drawnFigures struct {
	frames              int
	mean, p95, p99, max float64
	popsPerMin          [len(charPopSizes)]float64
	seconds             float64
}

// figuresOf measures one drawing (pos: drawn positions at times ts,
// seconds from the path's start) against the path.
func figuresOf(path *charPath, ts []float64, pos [][3]float64) drawnFigures {
	var f drawnFigures
	errs := make([]float64, 0, len(ts))
	var events [len(charPopSizes)]int
	var start [len(charPopSizes)]float64
	for i, t := range ts {
		tr := path.at(t)
		errs = append(errs, dist(pos[i], tr))
		if i == 0 || t-ts[i-1] >= frameGapS {
			continue
		}
		dd := sub(pos[i], pos[i-1])
		near := math.Inf(1)
		for lag := 0.0; lag <= popLookbackS+1e-9; lag += popLagStepS {
			m := sub(path.at(t-lag), path.at(ts[i-1]-lag))
			near = min(near, dist(dd, m))
		}
		for k, size := range charPopSizes {
			if near <= size {
				continue
			}
			if events[k] == 0 || t-start[k] >= popEventGapS {
				events[k]++
				start[k] = t
			}
		}
	}
	f.frames = len(errs)
	if f.frames == 0 {
		return f
	}
	f.seconds = ts[len(ts)-1] - ts[0]
	slices.Sort(errs)
	sum := 0.0
	for _, e := range errs {
		sum += e
	}
	f.mean = sum / float64(len(errs))
	f.p95, f.p99, f.max = nearestRank(errs, 0.95), nearestRank(errs, 0.99), errs[len(errs)-1]
	for k := range events {
		f.popsPerMin[k] = float64(events[k]) / (f.seconds / 60)
	}
	return f
}

// nearestRank returns the q-quantile of sorted xs, as the bench takes it.
func nearestRank(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(len(xs)-1, i))]
}

func sub(a, b [3]float64) [3]float64 { return [3]float64{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

func dist(a, b [3]float64) float64 { return math.Sqrt(sq(a[0]-b[0]) + sq(a[1]-b[1]) + sq(a[2]-b[2])) }

// TestGodotCharacter runs a character between two Godot processes, 50,
// 75 and 100 ms one way on every path (NetRoom's lag simulator, half on
// each player's side, which covers the direct links too), and prints where
// the watcher draws it against where it was, one row per drawing: snap on
// arrival (the newest state received, what Godot's MultiplayerSynchronizer
// draws) and an interpolation buffer (the newest state's age plus a send
// interval and 5 ms behind) from the states of Auto's run; NetPredictor
// with the CHARACTER preset; Auto (the default); and Auto with the room's
// input delay (NetRoom.input_delay_mode) at 50 and 100 ms, judged against
// the shared timeline (where the mover was the delay before, which is
// where its owner draws it too: the owner's drawing is measured as well).
// Every row prints the drawn data's age, the input delay in force and the
// age without it, so a reader sees the lag was applied.
//
// It asserts only what must hold on a busy machine: data flowed, Auto's
// mean error is below snap's, the room's input delay was in force where
// asked, and the owner drew its own entity where it was that long before.
// The goals (issue 31, at 100 ms one way: Auto's mean <= 0.30 m, p99 <=
// 1.0 m and pops > 0.3 m <= 5 a minute; with 50 ms of input delay mean <=
// 0.15 m and max <= 0.75 m; with 100 ms mean <= 0.05 m and max <= 0.30 m)
// are printed, met or missed by how much. NZ_CHAR_SECONDS sets the
// measured seconds per run (default 40), NZ_CHAR_CASES the one-way delays
// (default "50,75,100"), NZ_CHAR_RUNS the runs (default
// "auto,character,delay50,delay100").
func TestGodotCharacter(t *testing.T) {
	bin := os.Getenv("GODOT")
	if bin == "" {
		t.Skip("skipped: GODOT is not set (a Godot 4.4+ editor build; see TestGodotIntegration)")
	}
	seconds := 40.0
	if s := os.Getenv("NZ_CHAR_SECONDS"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, "NZ_CHAR_SECONDS")
		seconds = v
	}
	cases := []charCase{{50}, {75}, {100}}
	if s := os.Getenv("NZ_CHAR_CASES"); s != "" {
		cases = nil
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			require.NoError(t, err, "NZ_CHAR_CASES")
			cases = append(cases, charCase{v})
		}
	}
	runs := charRuns
	if s := os.Getenv("NZ_CHAR_RUNS"); s != "" {
		runs = nil
		for _, r := range charRuns {
			if slices.Contains(strings.Split(s, ","), r.name()) {
				runs = append(runs, r)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(cases)*len(runs))*(time.Duration(seconds)*time.Second+3*time.Minute))
	defer cancel()
	version := godotVersion(t, ctx, bin)
	root := buildAddon(t, ctx)
	g := &godot{t: t, bin: bin, project: filepath.Join(t.TempDir(), "project")}
	require.NoError(t, copyProject(filepath.Join(root, "godot_project"), g.project))
	g.env = isolatedEnv(t)
	g.importProject(ctx)

	path := newCharPath(charSeed)
	pathFile := filepath.Join(t.TempDir(), "path.txt")
	require.NoError(t, path.write(pathFile))

	var rows []charRow
	for _, c := range cases {
		for _, run := range runs {
			t.Run(fmt.Sprintf("one_way_%gms/%s", c.oneWayMS, run.name()), func(t *testing.T) {
				rows = append(rows, g.measureCharacter(t, ctx, c, run, &path, pathFile, charWarmup+seconds, seconds)...)
			})
		}
	}
	t.Log(charTable(version, seconds, rows))
}

// charRow is one drawing's figures in one run.
type charRow struct {
	c       charCase
	method  string
	fig     drawnFigures
	rtt     float64
	direct  float64 // share of the frames drawn from the direct path
	ageMS   float64 // the drawn data's mean age (on the shared timeline: network age less the delay)
	delayMS float64 // the mean input delay in force
	lagMS   float64 // the mean render lag Auto drew with (NetPredictor.debug_render_lag_ms)
	goal    string  // the goal to print for the row, if any
}

// name is the run's name in NZ_CHAR_RUNS.
func (r charRun) name() string {
	if r.delayMS > 0 {
		return fmt.Sprintf("delay%g", r.delayMS)
	}
	return r.profile
}

// measureCharacter runs one case and run and returns its rows.
func (g *godot) measureCharacter(t *testing.T, ctx context.Context, c charCase, run charRun, path *charPath,
	pathFile string, recordS, seconds float64) []charRow {
	tr := g.runCharacter(t, ctx, c, run, pathFile, recordS)
	var ts, shifted []float64
	var nz, snap, interp [][3]float64
	var age, direct, states, delay, lag float64
	// The warm-up from when both the watcher drew and the mover ran.
	from := max(tr.Track[0][0], tr.t0) + charWarmup
	for _, r := range tr.Track {
		if len(r) < 14 || r[0] < from {
			continue
		}
		d := r[10] / 1000
		ts = append(ts, r[0]-tr.t0)
		// With an input delay the shared timeline is the simulation that
		// long before: the owner draws it there, and so should we.
		shifted = append(shifted, r[0]-tr.t0-d)
		nz = append(nz, [3]float64{r[1], r[2], r[3]})
		snap = append(snap, [3]float64{r[4], r[5], r[6]})
		interp = append(interp, [3]float64{r[11], r[12], r[13]})
		age += r[7]
		states = max(states, r[8])
		direct += r[9]
		delay += r[10]
		if len(r) > 14 {
			lag += r[14]
		}
	}
	require.Greater(t, len(ts), int(10*seconds), "the watcher drew the mover at 10 fps or more after the warm-up")
	require.Greater(t, states, 30*seconds, "states arrived (at least 30 a second)")
	n := float64(len(ts))
	row := charRow{c: c, rtt: tr.RTT, direct: direct / n, ageMS: age / n, delayMS: delay / n, lagMS: lag / n}
	var rows []charRow
	switch {
	case run.delayMS > 0:
		assert.InDelta(t, run.delayMS, row.delayMS, 1, "the room's input delay was in force")
		row.method = fmt.Sprintf("Auto, input delay %g ms", run.delayMS)
		row.fig = figuresOf(path, shifted, nz)
		rows = append(rows, row)
		// The owner's own drawing, D late: Me/Visual against the path D
		// before (the root, the body, runs on time).
		var ots []float64
		var opos [][3]float64
		var odelay float64
		for _, r := range tr.Own {
			if len(r) < 6 || r[0] < from {
				continue
			}
			ots = append(ots, r[0]-tr.t0-r[5]/1000)
			opos = append(opos, [3]float64{r[1], 1, r[2]})
			odelay += r[5]
		}
		require.Greater(t, len(ots), int(10*seconds), "the mover drew itself")
		own := charRow{c: c, method: fmt.Sprintf("(its owner's own drawing, %g ms late)", run.delayMS),
			fig: figuresOf(path, ots, opos), rtt: tr.RTT, delayMS: odelay / float64(len(ots))}
		assert.Less(t, own.fig.mean, 0.05, "the owner draws its own entity where it was the delay before")
		rows = append(rows, own)
	case run.profile == "character":
		row.method, row.fig = "CHARACTER preset", figuresOf(path, ts, nz)
		rows = append(rows, row)
	default:
		fs, fi := figuresOf(path, ts, snap), figuresOf(path, ts, interp)
		row.method, row.fig = "Auto (the default)", figuresOf(path, ts, nz)
		// Only the mean: snap's error is at most the speed times the age
		// while the engine runs smoothly, and an extrapolation overshoots
		// an instant turn by up to as much again, so the tails are a goal
		// (printed), not an invariant.
		assert.Less(t, row.fig.mean, fs.mean, "at %g ms one way Auto's mean is below snap's", c.oneWayMS)
		s, i := row, row
		s.method, s.fig, s.direct, s.lagMS = "snap on arrival (MultiplayerSynchronizer)", fs, 0, 0
		i.method, i.fig, i.direct, i.lagMS = "interpolation, newest age + 22 ms", fi, 0, 0
		rows = append(rows, s, i, row)
	}
	return rows
}

// charTable writes the rows as a table, then the goals.
func charTable(version string, seconds float64, rows []charRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nGodot %s, character at %g m/s in 8 directions, stops %.0f%% (seed %d), %g s measured per run after %g s:\n",
		version, charSpeed, charStopShare*100, charSeed, seconds, charWarmup)
	b.WriteString("| one way | drawing | frames | mean | p95 | p99 | max | pops/min > 0.1 m | > 0.3 m | > 0.5 m | data age | input delay | age without it | notes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		f := r.fig
		note := fmt.Sprintf("server RTT %.0f ms, %.0f%% of frames from the direct path, drawn %.0f ms behind now (render lag)",
			r.rtt, 100*r.direct, r.lagMS)
		age := fmt.Sprintf("%.0f ms", r.ageMS)
		if strings.HasPrefix(r.method, "(") {
			note, age = "", "-"
		}
		fmt.Fprintf(&b, "| %g ms | %s | %d | %.3f m | %.3f m | %.3f m | %.3f m | %.1f | %.1f | %.1f | %s | %.0f ms | %.0f ms | %s |\n",
			r.c.oneWayMS, r.method, f.frames, f.mean, f.p95, f.p99, f.max, f.popsPerMin[0], f.popsPerMin[1], f.popsPerMin[2],
			age, r.delayMS, r.ageMS+r.delayMS, note)
	}
	for _, r := range rows {
		if r.c.oneWayMS != 100 {
			continue
		}
		f := r.fig
		switch r.method {
		case "Auto (the default)":
			fmt.Fprintf(&b, "\ngoal at 100 ms one way, Auto: mean %.3f m <= 0.30 (%s), p99 %.3f m <= 1.0 (%s), pops > 0.3 m %.1f/min <= 5 (%s)",
				f.mean, metOrBy(f.mean, 0.30), f.p99, metOrBy(f.p99, 1.0), f.popsPerMin[1], metOrBy(f.popsPerMin[1], 5))
		case "Auto, input delay 50 ms":
			fmt.Fprintf(&b, "\ngoal at 100 ms one way, input delay 50 ms: mean %.3f m <= 0.15 (%s), max %.3f m <= 0.75 (%s)",
				f.mean, metOrBy(f.mean, 0.15), f.max, metOrBy(f.max, 0.75))
		case "Auto, input delay 100 ms":
			fmt.Fprintf(&b, "\ngoal at 100 ms one way, input delay 100 ms: mean %.3f m <= 0.05 (%s), max %.3f m <= 0.30 (%s)",
				f.mean, metOrBy(f.mean, 0.05), f.max, metOrBy(f.max, 0.30))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// metOrBy says whether got is at or below goal, or by how much it is above.
func metOrBy(got, goal float64) string {
	if got <= goal {
		return "met"
	}
	if goal > 0 {
		return fmt.Sprintf("missed by %.0f%%", 100*(got-goal)/goal)
	}
	return "missed"
}

// charTrack is what the watcher of one run wrote (char_peer.gd), with the
// mover's start time and its own drawing.
type charTrack struct {
	RTT   float64     `json:"rtt_ms"`
	Track [][]float64 `json:"track"`
	Own   [][]float64 `json:"own"`
	t0    float64
}

// runCharacter runs a room server, the mover and the watcher of one case
// and run and returns the watcher's track and the mover's own drawing.
func (g *godot) runCharacter(t *testing.T, ctx context.Context, c charCase, run charRun, pathFile string, recordS float64) charTrack {
	url := startServer(t)
	dir := t.TempDir()
	args := func(role string, extra ...string) []string {
		return append([]string{"--max-fps", "60", "res://tests/char_peer.tscn", "--",
			"--nz-server=" + url, "--nz-role=" + role, "--nz-out=" + dir,
			// Half the one-way delay on each player's side: a state crosses
			// the mover's out line and the watcher's in line, on the
			// server's path and on the direct link alike.
			fmt.Sprintf("--nz-lag-ms=%g", c.oneWayMS/2), "--nz-jitter-ms=0"}, extra...)
	}
	moverCtx, stopMover := context.WithTimeout(ctx, time.Duration(recordS+120)*time.Second)
	defer stopMover()
	mover := exec.CommandContext(moverCtx, g.bin, append([]string{"--headless", "--path", g.project},
		args("mover", "--nz-path="+pathFile, fmt.Sprintf("--nz-input-delay-ms=%g", run.delayMS))...)...)
	mover.Env = g.env
	mover.WaitDelay = 10 * time.Second
	var moverOut lockedBuffer
	mover.Stdout, mover.Stderr = &moverOut, &moverOut
	require.NoError(t, mover.Start())
	moverDone := make(chan struct{})
	var moverErr error
	go func() { moverErr = mover.Wait(); close(moverDone) }()
	defer func() { stopMover(); <-moverDone }()

	code := waitFile(t, ctx, filepath.Join(dir, "code.txt"), time.Minute, moverDone, &moverOut)
	out, err := g.run(ctx, time.Duration(recordS+90)*time.Second, args("watcher", "--nz-code="+code,
		fmt.Sprintf("--nz-seconds=%g", recordS), "--nz-profile="+run.profile)...)
	require.NoError(t, err, "watcher:\n%s\nmover:\n%s", tail(out, 40), tail(moverOut.String(), 40))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644))
	select {
	case <-moverDone:
		assert.NoError(t, moverErr, "mover exits cleanly:\n%s", tail(moverOut.String(), 40))
	case <-time.After(30 * time.Second):
		t.Errorf("the mover did not stop within 30 s:\n%s", tail(moverOut.String(), 40))
	}
	var tr charTrack
	b, err := os.ReadFile(filepath.Join(dir, "track.json"))
	require.NoError(t, err, "watcher:\n%s", tail(out, 40))
	require.NoError(t, json.Unmarshal(b, &tr))
	if b, err := os.ReadFile(filepath.Join(dir, "own.json")); err == nil {
		var own charTrack
		require.NoError(t, json.Unmarshal(b, &own))
		tr.Own = own.Own
	} else {
		t.Logf("the mover wrote no own.json: %v", err)
	}
	t0, err := os.ReadFile(filepath.Join(dir, "t0.txt"))
	require.NoError(t, err, "mover:\n%s", tail(moverOut.String(), 40))
	tr.t0, err = strconv.ParseFloat(strings.TrimSpace(string(t0)), 64)
	require.NoError(t, err)
	require.NotEmpty(t, tr.Track, "the watcher drew the mover")
	return tr
}

// TestCharacterFigures checks TestGodotCharacter's path and figures
// without Godot: the path runs at the speed in eight directions and stands
// about charStopShare of the time; a drawing late by 100 ms has error but
// no pops; one frame 0.4 m off is one event above 0.1 and 0.3 m, none
// above 0.5 m.
func TestCharacterFigures(t *testing.T) {
	p := newCharPath(charSeed)
	var still, all float64
	for i := 1; i < len(p.t); i++ {
		dt := p.t[i] - p.t[i-1]
		v := math.Hypot(p.x[i]-p.x[i-1], p.z[i]-p.z[i-1]) / dt
		require.True(t, v < 1e-9 || math.Abs(v-charSpeed) < 1e-6, "segment %d runs at %v m/s", i, v)
		if v < 1e-9 {
			still += dt
		}
		all += dt
		require.Less(t, math.Max(math.Abs(p.x[i]), math.Abs(p.z[i])), charBox+0.7*charSpeed+1e-9, "stays near the box")
	}
	assert.InDelta(t, charStopShare, still/all, 0.05, "share of the time standing")

	var ts []float64
	var late, popped [][3]float64
	for i := range 60 * 60 {
		s := 10 + float64(i)/60
		ts = append(ts, s)
		late = append(late, p.at(s-0.1))
		q := p.at(s)
		if i == 1000 {
			q[0] += 0.4
		}
		popped = append(popped, q)
	}
	f := figuresOf(&p, ts, late)
	assert.Greater(t, f.mean, 0.1, "100 ms late at 6 m/s is about 0.5 m off when running")
	assert.Equal(t, [3]float64{}, f.popsPerMin, "drawing late is not popping")
	f = figuresOf(&p, ts, popped)
	perMin := 60 / f.seconds
	assert.InDelta(t, 0.0, f.mean, 0.4/3600+1e-9)
	assert.InDeltaSlice(t, []float64{perMin, perMin, 0}, f.popsPerMin[:], 1e-9, "one event of 0.4 m (two frames)")
	assert.InDelta(t, 0.4, f.max, 1e-9)
}
