package godottest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The racer tests start headless instances of the demo's main scene
// (godot_project/racer/main.tscn) with its command-line flags: a host that
// runs the room server inside the game (NetRoom.host_local) and bots that
// join it by code.

// setupRacer builds the addon, copies and imports the project once per test.
func setupRacer(t *testing.T, ctx context.Context) *godot {
	bin := os.Getenv("GODOT")
	if bin == "" {
		t.Skip("skipped: GODOT is not set. This test drives a real Godot: set GODOT to a Godot 4.4+ " +
			"binary (an editor build, for --import) to run it, e.g. GODOT=$(which godot) go test ./test/godot/ -v")
	}
	godotVersion(t, ctx, bin)
	root := buildAddon(t, ctx)
	g := &godot{t: t, bin: bin, project: filepath.Join(t.TempDir(), "project")}
	require.NoError(t, copyProject(filepath.Join(root, "godot_project"), g.project))
	g.env = isolatedEnv(t)
	g.importProject(ctx)
	return g
}

// freePort returns a TCP port free now whose next port is free too (the
// ENet port of Godot mode is the room server's port + 1).
func freePort(t *testing.T) int {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if port < 65000 {
			if u, err := net.ListenPacket("udp", fmt.Sprintf("0.0.0.0:%d", port+1)); err == nil {
				u.Close()
				return port
			}
		}
	}
	t.Fatal("no free port pair")
	return 0
}

// racer is one running instance of the racer.
type racer struct {
	name string
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error
}

func (g *godot) startRacer(t *testing.T, ctx context.Context, name string, args ...string) *racer {
	r := &racer{name: name, out: &lockedBuffer{}, done: make(chan struct{})}
	all := append([]string{"--headless", "--path", g.project, "--max-fps", "60", "res://racer/main.tscn", "--",
		"--nz-name=" + name, "--nz-bot"}, args...)
	return g.start(t, ctx, r, all) // ball_test.go
}

// event is one NZ_EVENT line: NZ_EVENT <name> <event> <json>.
type event struct {
	Name string
	Data map[string]any
}

func (r *racer) events() []event {
	var evs []event
	sc := bufio.NewScanner(strings.NewReader(r.out.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "NZ_EVENT ")
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, " ", 3)
		if len(parts) < 3 {
			continue
		}
		e := event{Name: parts[1]}
		_ = json.Unmarshal([]byte(parts[2]), &e.Data)
		evs = append(evs, e)
	}
	return evs
}

// waitCode waits for the host's room code in dir/code.txt.
func waitCode(t *testing.T, ctx context.Context, dir string, host *racer) string {
	return waitFile(t, ctx, filepath.Join(dir, "code.txt"), 90*time.Second, host.done, host.out)
}

// waitAll waits for every racer to exit, up to limit.
func waitAll(t *testing.T, limit time.Duration, rs ...*racer) {
	deadline := time.After(limit)
	for _, r := range rs {
		select {
		case <-r.done:
		case <-deadline:
			for _, r := range rs {
				t.Logf("%s output:\n%s", r.name, tail(r.out.String(), 30))
			}
			t.Fatalf("the racers did not finish within %v", limit)
		}
	}
}

// TestRacerRound plays a whole round headless: a host running the room
// server in the game and two bots joining it by code, one lap, and checks
// that every instance went through every phase and got the results of all.
func TestRacerRound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	g := setupRacer(t, ctx)
	port := freePort(t)
	dir := t.TempDir()
	host := g.startRacer(t, ctx, "Host", "--nz-server=local", fmt.Sprintf("--nz-port=%d", port), "--nz-create",
		"--nz-players=3", "--nz-laps=1", "--nz-limit=60", "--nz-rounds=1", "--nz-out="+dir)
	code := waitCode(t, ctx, dir, host)
	t.Logf("host created room %s on port %d", code, port)
	server := fmt.Sprintf("--nz-server=127.0.0.1:%d", port)
	// BotA presses the reset key 5 s after GO: back to its last checkpoint,
	// ghosted until clear of the others.
	a := g.startRacer(t, ctx, "BotA", server, "--nz-join="+code, "--nz-rounds=1", "--nz-reset-at=5")
	b := g.startRacer(t, ctx, "BotB", server, "--nz-join="+code, "--nz-rounds=1")
	waitAll(t, 4*time.Minute, host, a, b)

	for _, r := range []*racer{host, a, b} {
		evs := r.events()
		seen := map[string]bool{}
		var results map[string]any
		for _, e := range evs {
			key := e.Name
			if e.Name == "phase" {
				key = "phase:" + fmt.Sprint(e.Data["phase"])
			}
			seen[key] = true
			if e.Name == "results" {
				results = e.Data
			}
		}
		for _, want := range []string{"joined", "track_loaded", "ready", "phase:handshake", "in_position",
			"phase:countdown", "go", "phase:playing", "phase:results", "results"} {
			assert.True(t, seen[want], "%s reached %s:\n%s", r.name, want, tail(r.out.String(), 40))
		}
		assert.True(t, seen["finished"] || seen["out_of_time"], "%s finished or ran out of time", r.name)
		assert.NoError(t, r.err, "%s exits cleanly", r.name)
		require.NotNil(t, results, "%s got results", r.name)
		players, _ := results["players"].([]any)
		names := []string{}
		for _, p := range players {
			pm, _ := p.(map[string]any)
			names = append(names, fmt.Sprint(pm["name"]))
		}
		slices.Sort(names)
		assert.Equal(t, []string{"BotA", "BotB", "Host"}, names, "%s: results for every player", r.name)
		t.Logf("%s: %d events, results %v", r.name, len(evs), players)
	}
	assert.Contains(t, host.out.String(), "NZ_EVENT Host start ", "the host started the round")
	assert.Contains(t, a.out.String(), `NZ_EVENT BotA reset {"checkpoint"`, "BotA's reset key")
	assert.Contains(t, a.out.String(), "NZ_EVENT BotA ghost_cleared", "BotA is solid again once clear")
}

// A measurement: the same two-car race in both netcodes through the same
// simulated lag, comparing where each instance draws the other car with
// where that car truly was at that moment (both logs on the system clock).
type measureCase struct {
	mode  string // nearzero or enet
	lagMS float64
}

// TestRacerMeasure prints the drawn-position error of both netcodes at 50
// and 100 ms of one-way lag between the two players. It bounds nothing
// tightly (the machine may be busy) but checks that both modes drew the
// other car and that nearzero draws it closer than Godot's snap on arrival.
func TestRacerMeasure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	g := setupRacer(t, ctx)
	cases := []measureCase{{"nearzero", 50}, {"enet", 50}, {"nearzero", 100}, {"enet", 100}}
	if only := os.Getenv("NZ_MEASURE_ONLY"); only != "" {
		cases = slices.DeleteFunc(cases, func(c measureCase) bool {
			return !strings.Contains(only, fmt.Sprintf("%s-%g", c.mode, c.lagMS))
		})
	}
	type row struct {
		c                   measureCase
		who                 string
		n                   int
		mean, p50, p95, max float64
		age                 float64 // mean age of the newest state drawn (nearzero), ms
	}
	var rows []row
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s_%gms", c.mode, c.lagMS), func(t *testing.T) {
			port := freePort(t)
			dir := t.TempDir()
			common := []string{"--nz-poslog", "--nz-nocollide", "--nz-out=" + dir, "--nz-rounds=1",
				fmt.Sprintf("--nz-lag-ms=%g", c.lagMS)}
			host := g.startRacer(t, ctx, "Host", append([]string{"--nz-server=local", fmt.Sprintf("--nz-port=%d", port),
				"--nz-create", "--nz-players=2", "--nz-laps=1", "--nz-limit=60", "--nz-mode=" + c.mode}, common...)...)
			code := waitCode(t, ctx, dir, host)
			join := g.startRacer(t, ctx, "Joiner", append([]string{fmt.Sprintf("--nz-server=127.0.0.1:%d", port),
				"--nz-join=" + code}, common...)...)
			waitAll(t, 4*time.Minute, host, join)
			for _, pair := range [][2]string{{"Host", "Joiner"}, {"Joiner", "Host"}} {
				errs, age := drawnErrors(t, filepath.Join(dir, "pos-"+pair[0]+".txt"), filepath.Join(dir, "pos-"+pair[1]+".txt"))
				require.NotEmpty(t, errs, "%s drew %s (%s):\nhost:\n%s\njoiner:\n%s", pair[0], pair[1], c.mode,
					tail(host.out.String(), 30), tail(join.out.String(), 30))
				p50, p95, mx := percentiles(errs)
				mean := 0.0
				for _, e := range errs {
					mean += e
				}
				mean /= float64(len(errs))
				rows = append(rows, row{c, pair[0] + " draws " + pair[1], len(errs), mean, p50, p95, mx, age})
			}
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| netcode | one-way lag | instance | frames | mean | p50 | p95 | max | newest state age |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		name := "nearzero (NetPredictor)"
		if r.c.mode == "enet" {
			name = "Godot ENet + MultiplayerSynchronizer"
		}
		age := "-"
		if r.c.mode == "nearzero" {
			age = fmt.Sprintf("%.0f ms", r.age)
		}
		fmt.Fprintf(&b, "| %s | %g ms | %s | %d | %.2f m | %.2f m | %.2f m | %.2f m | %s |\n",
			name, r.c.lagMS, r.who, r.n, r.mean, r.p50, r.p95, r.max, age)
	}
	t.Log(b.String())
	mean := map[measureCase]float64{}
	for _, r := range rows {
		mean[r.c] += r.mean / 2
	}
	for _, lag := range []float64{50, 100} {
		nz, okN := mean[measureCase{"nearzero", lag}]
		en, okE := mean[measureCase{"enet", lag}]
		if okN && okE {
			assert.Less(t, nz, en, "at %g ms nearzero draws the other car closer than Godot's snap on arrival", lag)
		}
	}
}

// sample is one logged position at a system-clock time (seconds).
type sample struct {
	t       float64
	x, y, z float64
	age     float64 // drawn samples in nearzero mode: NetPredictor.debug_age_ms
}

// drawnErrors compares the "D" lines of viewer's log (where it drew the
// other car) with the "T" lines of owner's log (where the car truly was),
// interpolated at the same system-clock time. The first second after go
// is left out (cars start from rest on the grid, known to both).
func drawnErrors(t *testing.T, viewerPath, ownerPath string) (errs []float64, meanAge float64) {
	truth := readSamples(t, ownerPath, "T")
	drawn := readSamples(t, viewerPath, "D")
	if len(truth) < 2 || len(drawn) == 0 {
		return nil, 0
	}
	sort.Slice(truth, func(i, j int) bool { return truth[i].t < truth[j].t })
	start := truth[0].t + 1.0
	end := truth[len(truth)-1].t
	for _, d := range drawn {
		if d.t < start || d.t > end {
			continue
		}
		i := sort.Search(len(truth), func(i int) bool { return truth[i].t >= d.t })
		if i == 0 || i >= len(truth) {
			continue
		}
		a, b := truth[i-1], truth[i]
		if b.t-a.t > 0.1 {
			continue // a gap in the owner's log (not driving)
		}
		f := (d.t - a.t) / (b.t - a.t)
		x, y, z := a.x+(b.x-a.x)*f, a.y+(b.y-a.y)*f, a.z+(b.z-a.z)*f
		errs = append(errs, math.Sqrt(sq(d.x-x)+sq(d.y-y)+sq(d.z-z)))
		meanAge += d.age
	}
	if len(errs) > 0 {
		meanAge /= float64(len(errs))
	}
	return errs, meanAge
}

func readSamples(t *testing.T, path, kind string) []sample {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != kind {
			continue
		}
		if kind == "D" {
			fields = fields[1:] // the slot
		}
		if len(fields) < 5 {
			continue
		}
		var v [5]float64
		for i := range min(5, len(fields)-1) {
			v[i], _ = strconv.ParseFloat(fields[i+1], 64)
		}
		out = append(out, sample{v[0], v[1], v[2], v[3], v[4]})
	}
	return out
}
