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

// TestGodotCharacter runs a character between two Godot processes, 50 and
// 75 ms one way on every path (NetRoom's lag simulator, half on each
// player's side, which covers the direct links too), and prints where the
// watcher draws it against where it was: nearzero's NetPredictor (Auto)
// and snap on arrival (the newest state received, what Godot's
// MultiplayerSynchronizer draws), from the same states in the same run.
// It asserts only what must hold on a busy machine: data flowed, and
// nearzero's mean error is below snap's. The goals (at 75 ms: nearzero's
// p99 and max at or below snap's, pops > 0.3 m at most one a minute) are
// printed, met or missed by how much. NZ_CHAR_SECONDS
// sets the measured seconds per case (default 40).
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
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

	type row struct {
		c         charCase
		method    string
		fig       drawnFigures
		rtt       float64
		direct    float64 // share of nearzero's frames drawn from the direct path
		ageMS     float64 // nearzero's mean newest-state age
		statesMax float64
	}
	var rows []row
	for _, c := range []charCase{{50}, {75}} {
		t.Run(fmt.Sprintf("one_way_%gms", c.oneWayMS), func(t *testing.T) {
			tr := g.runCharacter(t, ctx, c, pathFile, charWarmup+seconds)
			var ts []float64
			var nz, snap [][3]float64
			var age, direct, states float64
			// The warm-up from when both the watcher drew and the mover ran.
			from := max(tr.Track[0][0], tr.t0) + charWarmup
			for _, r := range tr.Track {
				if len(r) < 10 || r[0] < from {
					continue
				}
				ts = append(ts, r[0]-tr.t0)
				nz = append(nz, [3]float64{r[1], r[2], r[3]})
				snap = append(snap, [3]float64{r[4], r[5], r[6]})
				age += r[7]
				states = max(states, r[8])
				direct += r[9]
			}
			require.Greater(t, len(ts), int(10*seconds), "the watcher drew the mover at 10 fps or more after the warm-up")
			require.Greater(t, states, 30*seconds, "states arrived (at least 30 a second)")
			n := float64(len(ts))
			fn, fs := figuresOf(&path, ts, nz), figuresOf(&path, ts, snap)
			rows = append(rows, row{c, "nearzero (Auto)", fn, tr.RTT, direct / n, age / n, states},
				row{c, "snap on arrival", fs, tr.RTT, 0, 0, states})
			// Only the mean: snap's error is at most the speed times the
			// age while the engine runs smoothly, and an extrapolation
			// overshoots an instant turn by up to as much again, so the
			// tails are a goal (printed below), not an invariant.
			assert.Less(t, fn.mean, fs.mean, "at %g ms one way nearzero's mean is below snap's", c.oneWayMS)
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nGodot %s, character at %g m/s in 8 directions, stops %.0f%% (seed %d), %g s measured per case after %g s:\n",
		version, charSpeed, charStopShare*100, charSeed, seconds, charWarmup)
	b.WriteString("| one way | method | frames | mean | p95 | p99 | max | pops/min > 0.1 m | > 0.3 m | > 0.5 m | notes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		note := ""
		if r.method != "snap on arrival" {
			note = fmt.Sprintf("server RTT %.0f ms, newest state %.0f ms old, %.0f%% of frames from the direct path",
				r.rtt, r.ageMS, 100*r.direct)
		}
		f := r.fig
		fmt.Fprintf(&b, "| %g ms | %s | %d | %.3f m | %.3f m | %.3f m | %.3f m | %.1f | %.1f | %.1f | %s |\n",
			r.c.oneWayMS, r.method, f.frames, f.mean, f.p95, f.p99, f.max, f.popsPerMin[0], f.popsPerMin[1], f.popsPerMin[2], note)
	}
	for i := 0; i+1 < len(rows); i += 2 {
		nz, sn := rows[i].fig, rows[i+1].fig
		if rows[i].c.oneWayMS != 75 {
			continue
		}
		fmt.Fprintf(&b, "\ngoals at 75 ms one way: nearzero's p99 %.3f m against snap's %.3f m (%s), max %.3f m against %.3f m (%s), "+
			"pops > 0.3 m %.1f/min against at most 1 (%s)\n", nz.p99, sn.p99, metOrBy(nz.p99, sn.p99), nz.max, sn.max,
			metOrBy(nz.max, sn.max), nz.popsPerMin[1], metOrBy(nz.popsPerMin[1], 1))
	}
	t.Log(b.String())
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

// charTrack is what the watcher of one case wrote (char_peer.gd), with the
// mover's start time.
type charTrack struct {
	RTT   float64     `json:"rtt_ms"`
	Track [][]float64 `json:"track"`
	t0    float64
}

// runCharacter runs a room server, the mover and the watcher of one case
// and returns the watcher's track.
func (g *godot) runCharacter(t *testing.T, ctx context.Context, c charCase, pathFile string, recordS float64) charTrack {
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
		args("mover", "--nz-path="+pathFile)...)...)
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
		fmt.Sprintf("--nz-seconds=%g", recordS))...)
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
