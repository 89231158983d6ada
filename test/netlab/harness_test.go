package netlab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bins are the programs the lab runs, built once per test binary.
var bins struct {
	once           sync.Once
	dir            string
	server, player string
	err            error
}

// build builds the room server and the player into a directory of their
// own (removed by TestMain).
func build(t *testing.T) (server, player string) {
	t.Helper()
	bins.once.Do(func() {
		bins.dir, bins.err = os.MkdirTemp("", "netlab-bin-")
		if bins.err != nil {
			return
		}
		bins.server = filepath.Join(bins.dir, "nearzero-server")
		bins.player = filepath.Join(bins.dir, "player")
		for _, b := range []struct{ out, pkg string }{
			{bins.server, "github.com/nearzero/nearzero/server/cmd/nearzero-server"},
			{bins.player, "github.com/nearzero/nearzero/test/netlab/player"},
		} {
			out, err := exec.Command("go", "build", "-o", b.out, b.pkg).CombinedOutput()
			if err != nil {
				bins.err = fmt.Errorf("go build %s: %w: %s", b.pkg, err, out)
				return
			}
		}
	})
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	return bins.server, bins.player
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bins.dir != "" {
		_ = os.RemoveAll(bins.dir)
	}
	os.Exit(code)
}

// unavailable says why this process cannot build a lab, or "".
func unavailable() string {
	if os.Geteuid() != 0 {
		return "not root"
	}
	for _, tool := range []string{"ip", "nft", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " is not installed"
		}
	}
	f, err := openTUN(fmt.Sprintf("nzk%d", os.Getpid()%1000000))
	if err != nil {
		return "no TUN device: " + err.Error()
	}
	_ = f.Close()
	probe := fmt.Sprintf("%s%d-probe", namePrefix, os.Getpid())
	if err := run("ip", "netns", "add", probe); err != nil {
		return "cannot make a network namespace: " + err.Error()
	}
	_ = run("ip", "netns", "del", probe)
	if err := run("nft", "--check", "-f", "/dev/null"); err != nil {
		return "nft does not work: " + err.Error()
	}
	return ""
}

var skipOnce struct {
	once   sync.Once
	reason string
}

// needLab skips the test, with one line saying why, where no lab can be
// made.
func needLab(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("netlab: skipped in -short mode (the lab runs real networks for a minute or more)")
	}
	skipOnce.once.Do(func() { skipOnce.reason = unavailable() })
	if skipOnce.reason != "" {
		t.Skip("netlab: needs root, ip, nft and /dev/net/tun to build network namespaces: " + skipOnce.reason)
	}
}

// Case is one lab run: two players, their networks, the server's flags.
type Case struct {
	Name string
	// A and B are the players' networks (ignored with LAN).
	A, B Side
	// LAN puts both players on one LAN segment behind one NAT, with the
	// server's UDP (STUN, TURN) unreachable.
	LAN bool
	// Server are the room server's flags beyond its address and database.
	Server []string
	// NoDirect turns the players' direct links off.
	NoDirect bool
	// Lag is the players' lag simulator on the server link
	// (LATENCY,JITTER,LOSS).
	Lag string
	// Run is how long each player records. Default 8 s.
	Run time.Duration
	// Seed seeds the movers and the impairment. Default 1.
	Seed uint64
	// Player are extra flags of both players.
	Player []string
	// CutUDP, when set, drops every UDP packet at player A's router that
	// long after player B started (Lab.BlockUDP); Outcome.CutUnixNS says
	// when it happened.
	CutUDP time.Duration
}

// Outcome is what a case's two players recorded.
type Outcome struct {
	Case    Case
	Results [2]*Result // [creator, joiner]
	Wall    time.Duration
	// CutUnixNS is when player A's UDP was cut (Case.CutUDP), in Unix
	// nanoseconds; 0 when it was not.
	CutUnixNS int64
	// Late is how late the test process's 5 ms timers fired while the
	// players ran (p99): how far the machine held back the lab's time.
	Late time.Duration
}

// timerLateness measures how late a 5 ms timer fires, until stop is
// called; stop returns the p99 (and may be called again).
func timerLateness() (stop func() time.Duration) {
	const tick = 5 * time.Millisecond
	quit, done := make(chan struct{}), make(chan struct{})
	var late []time.Duration
	go func() {
		defer close(done)
		for {
			start := time.Now()
			select {
			case <-quit:
				return
			case <-time.After(tick):
			}
			late = append(late, time.Since(start)-tick)
		}
	}()
	var once sync.Once
	return func() time.Duration {
		once.Do(func() {
			close(quit)
			<-done
			slices.Sort(late)
		})
		return quantile(late, 0.99)
	}
}

// runCase builds the case's lab, runs the server and two players in it,
// and returns what the players recorded. The lab is removed when the
// test ends, failed or not.
func runCase(t *testing.T, c Case) *Outcome {
	t.Helper()
	if c.Run == 0 {
		c.Run = 8 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	serverBin, playerBin := build(t)
	dir := t.TempDir()
	lab, err := New(dir)
	if err != nil {
		t.Fatalf("netlab: %v", err)
	}
	t.Cleanup(lab.Close)
	if c.LAN {
		err = lab.AddLAN(2, c.Seed)
	} else {
		_, err = lab.AddNATed(c.A, c.Seed*100)
		if err == nil {
			_, err = lab.AddNATed(c.B, c.Seed*100+50)
		}
	}
	if err != nil {
		t.Fatalf("netlab: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.Run+90*time.Second)
	t.Cleanup(cancel)
	start := time.Now()

	// -overload-after -1s: a loaded test machine must not refuse the lab's rooms.
	srvArgs := append([]string{"-addr", fmt.Sprintf("0.0.0.0:%d", ServerPort), "-db", ":memory:", "-log-level", "info",
		"-overload-after", "-1s"}, c.Server...)
	srv, err := lab.Start(ctx, "server", lab.Pub, serverBin, srvArgs...)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the server to be ready", func() bool {
		select {
		case <-srv.Done():
			t.Fatalf("the server ended: %v\n%s", srv.Wait(), srv.Log())
		default:
		}
		return strings.Contains(srv.Log(), "nearzero-server ready")
	})

	addr := fmt.Sprintf("%s:%d", ServerIP, ServerPort)
	epoch := strconv.FormatInt(time.Now().UnixNano(), 10)
	pargs := func(out string) []string {
		a := []string{"-server", addr, "-out", out, "-seed", strconv.FormatUint(c.Seed, 10), "-epoch", epoch, "-run", c.Run.String(), "-v"}
		if c.NoDirect {
			a = append(a, "-no-direct")
		}
		if c.Lag != "" {
			a = append(a, "-lag", c.Lag)
		}
		return append(a, c.Player...)
	}
	outs := [2]string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")}
	stopLate := timerLateness()
	defer stopLate() // on a failed start; a second call is harmless
	pa, err := lab.Start(ctx, "player-a", lab.Players[0], playerBin, pargs(outs[0])...)
	if err != nil {
		t.Fatal(err)
	}
	var code string
	select {
	case line := <-pa.Stdout:
		code, _ = strings.CutPrefix(line, "code ")
	case <-pa.Done():
		t.Fatalf("player a ended before making a room: %v\n%s", pa.Wait(), pa.Log())
	case <-time.After(60 * time.Second):
		t.Fatalf("player a made no room within 60 s\n%s", pa.Log())
	}
	pb, err := lab.Start(ctx, "player-b", lab.Players[1], playerBin, append(pargs(outs[1]), "-join", code)...)
	if err != nil {
		t.Fatal(err)
	}
	var cut atomic.Int64
	if c.CutUDP > 0 {
		timer := time.AfterFunc(c.CutUDP, func() {
			if err := lab.BlockUDP(0); err != nil {
				t.Errorf("netlab: %v", err)
				return
			}
			cut.Store(time.Now().UnixNano())
		})
		defer timer.Stop()
	}
	for _, p := range []*Proc{pa, pb} {
		if err := p.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s\nserver:\n%s", p.Name, err, p.Log(), srv.Log())
		}
	}
	o := &Outcome{Case: c, Wall: time.Since(start), CutUnixNS: cut.Load(), Late: stopLate()}
	for i, f := range outs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o.Results[i] = &Result{}
		if err := json.Unmarshal(b, o.Results[i]); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if keep := os.Getenv("NETLAB_KEEP"); keep != "" {
		name := strings.NewReplacer(" ", "_", "/", "_", "%", "pct", ",", "").Replace(c.Name) + fmt.Sprintf("-seed%d", c.Seed)
		for i, f := range outs {
			if b, err := os.ReadFile(f); err == nil {
				_ = os.WriteFile(filepath.Join(keep, fmt.Sprintf("%s-%c.json", name, 'a'+i)), b, 0o644)
			}
		}
	}
	if os.Getenv("NETLAB_LOGS") != "" {
		for _, p := range []*Proc{srv, pa, pb} {
			t.Logf("%s:\n%s", p.Name, p.Log())
		}
	}
	return o
}

// waitFor polls cond until it holds, failing the test after limit: a
// bound on a hang, not a timing assertion.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("netlab: waited %v for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// View is one player's figures of the other: how it drew it and what
// reached it.
type View struct {
	// TimeToDirect is the time from the other player's spawn (when the
	// link's first attempt starts) to the direct link's coming up (its
	// states are taken from then on); negative when it never did.
	TimeToDirect time.Duration
	// FirstDirect is the time from the first drawn frame to the first one
	// drawn from the direct path (the other player's first states may
	// come a while after its spawn: its clock sync); negative when none
	// was.
	FirstDirect time.Duration
	// Pair is the direct link's candidate types, "local/remote"; "" when
	// it never opened.
	Pair string
	// DirectFrames is the share of frames drawn from the direct path.
	DirectFrames float64
	// Delivery is the share of the other player's states that reached
	// this one: over the direct link (of those sent while it was open),
	// by the server (of those sent while the link was not open), and by
	// either path (of all).
	DeliveryDirect, DeliveryServer, DeliveryAny float64
	// DirectSent counts the states the delivery over the direct link is
	// of.
	DirectSent int
	// Age and Err are the drawn frames' state age and drawn error after
	// the first warm-up second, sorted.
	Age []time.Duration
	Err []float64
	// Bias is the median error of the sample times re-stamped onto this
	// player's clock, per path (mapped minus true; negative: early), and
	// BiasN how many states each median is of (0: none).
	Bias  [2]time.Duration
	BiasN [2]int
}

// warmUp is how much of the start of a recording the age and error
// figures skip: the predictor's first states (no history yet).
const warmUp = time.Second

// tailCut is how much of the end of the sender's recording the delivery
// figures skip: states still in flight when the receiver stopped.
const tailCut = 500 * time.Millisecond

// view computes what viewer saw of sender.
func view(viewer, sender *Result) View {
	v := View{TimeToDirect: -1, FirstDirect: -1}
	if viewer.PairLocal != "" {
		v.Pair = viewer.PairLocal + "/" + viewer.PairRemote
		v.TimeToDirect = viewer.LinkUp - viewer.Spawn
	}
	direct := 0
	for _, f := range viewer.Frames {
		if !f.Valid {
			continue
		}
		if f.Path == Direct {
			direct++
			if v.FirstDirect < 0 {
				v.FirstDirect = f.T
			}
		}
		if f.T >= warmUp {
			v.Age = append(v.Age, f.Age)
			v.Err = append(v.Err, f.Err)
		}
	}
	if len(viewer.Frames) > 0 {
		v.DirectFrames = float64(direct) / float64(len(viewer.Frames))
	}
	slices.Sort(v.Age)
	slices.Sort(v.Err)

	got := [2]map[int]Recv{{}, {}}
	for _, r := range viewer.Recv {
		if r.Slot == sender.Slot && r.Entity == 0 {
			if _, dup := got[r.Path][r.Seq]; !dup {
				got[r.Path][r.Seq] = r
			}
		}
	}
	var end time.Duration
	if n := len(sender.Sent); n > 0 {
		end = sender.Sent[n-1].Sample - tailCut
	}
	var nd, gd, ns, gs, na, ga int
	var openedAt time.Duration = -1
	for _, s := range sender.Sent {
		if s.Sample > end {
			break
		}
		_, onD := got[Direct][s.Seq]
		_, onS := got[Server][s.Seq]
		na++
		if onD || onS {
			ga++
		}
		if s.DirectOpen {
			if openedAt < 0 {
				openedAt = s.Sample
			}
			// The link's first second: states before its first round
			// trip are dropped on purpose (the server carries them).
			if s.Sample-openedAt >= time.Second {
				nd++
				if onD {
					gd++
				}
			}
		} else {
			ns++
			if onS {
				gs++
			}
		}
	}
	ratio := func(g, n int) float64 {
		if n == 0 {
			return -1
		}
		return float64(g) / float64(n)
	}
	v.DeliveryDirect, v.DeliveryServer, v.DeliveryAny = ratio(gd, nd), ratio(gs, ns), ratio(ga, na)
	v.DirectSent = nd

	// The sample times: the sender's clock to the viewer's, exactly (one
	// machine, one clock).
	shift := time.Duration(sender.OriginUnixNS - viewer.OriginUnixNS)
	sample := map[int]time.Duration{}
	for _, s := range sender.Sent {
		sample[s.Seq] = s.Sample + shift
	}
	for p := range 2 {
		var d []time.Duration
		for _, r := range got[p] {
			truth, ok := sample[r.Seq]
			// Only a settled mapping: two seconds after the first state.
			if ok && r.Arrival-viewer.Start >= 2*time.Second {
				d = append(d, r.Local-truth)
			}
		}
		if len(d) > 0 {
			slices.Sort(d)
			v.Bias[p], v.BiasN[p] = d[len(d)/2], len(d)
		}
	}
	return v
}

// Views returns what each player saw of the other: [creator's, joiner's].
func (o *Outcome) Views() [2]View {
	return [2]View{view(o.Results[0], o.Results[1]), view(o.Results[1], o.Results[0])}
}

// quantile returns the q-quantile of sorted xs (0 when empty).
func quantile[T int64 | float64 | time.Duration](xs []T, q float64) T {
	if len(xs) == 0 {
		return 0
	}
	i := int(q * float64(len(xs)-1))
	return xs[i]
}

// Row is one line of the lab's table: both views together, of one run or
// pooled over several.
type Row struct {
	Case                  string
	Direct                string // "up", "never", "off"
	Pair                  string
	TimeToDirect          []time.Duration // each view's, sorted
	LinkUps               []time.Duration // each link-up's time, sorted, where a run timed several
	DeliveryDirect        float64
	DeliveryServer        float64
	DeliveryAny           float64
	AgeP50, AgeP95, AgeMx time.Duration
	ErrP95, ErrP99        float64
	ErrMax                float64
	Bias                  [2]time.Duration // per path, the worse of the views
}

// RowOf sums an outcome up.
func RowOf(o *Outcome) Row { return mergeRows(o.Case.Name, []*Outcome{o}) }

// mergeRows sums outcomes of one case up as one row named name: their
// frames pooled, their ratios averaged.
func mergeRows(name string, os []*Outcome) Row {
	r := Row{Case: name, Direct: "never"}
	if os[0].Case.NoDirect {
		r.Direct = "off"
	}
	var ages []time.Duration
	var errs []float64
	pairs := []string{}
	var dd, ds, da []float64
	for _, o := range os {
		for i, v := range o.Views() {
			if v.TimeToDirect >= 0 {
				r.TimeToDirect = append(r.TimeToDirect, v.TimeToDirect)
			}
			if v.Pair != "" {
				r.Direct = "up"
				if !slices.Contains(pairs, v.Pair) {
					pairs = append(pairs, v.Pair)
				}
			}
			ages = append(ages, v.Age...)
			errs = append(errs, v.Err...)
			dd, ds, da = append(dd, v.DeliveryDirect), append(ds, v.DeliveryServer), append(da, v.DeliveryAny)
			for p := range 2 {
				if v.BiasN[p] > 0 && absDur(v.Bias[p]) > absDur(r.Bias[p]) {
					r.Bias[p] = v.Bias[p]
				}
			}
			if i == 0 && len(o.Results[0].LinkUps) > 1 {
				r.LinkUps = append(r.LinkUps, linkUpTimes(o.Results[0])...)
			}
		}
	}
	slices.Sort(r.TimeToDirect)
	slices.Sort(r.LinkUps)
	r.Pair = strings.Join(pairs, ", ")
	r.DeliveryDirect, r.DeliveryServer, r.DeliveryAny = meanKnown(dd), meanKnown(ds), meanKnown(da)
	slices.Sort(ages)
	slices.Sort(errs)
	r.AgeP50, r.AgeP95, r.AgeMx = quantile(ages, 0.5), quantile(ages, 0.95), quantile(ages, 1)
	r.ErrP95, r.ErrP99, r.ErrMax = quantile(errs, 0.95), quantile(errs, 0.99), quantile(errs, 1)
	return r
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// meanKnown averages the ratios that are known (not negative); -1 when
// none is.
func meanKnown(xs []float64) float64 {
	s, n := 0.0, 0
	for _, x := range xs {
		if x >= 0 {
			s += x
			n++
		}
	}
	if n == 0 {
		return -1
	}
	return s / float64(n)
}

func pct(x float64) string {
	if x < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*x)
}

// secs formats times in seconds: each of a few, or the median and the
// largest of many.
func secs(ds []time.Duration) string {
	switch {
	case len(ds) == 0:
		return "-"
	case len(ds) > 2:
		return fmt.Sprintf("median %.2f, max %.2f of %d", quantile(ds, 0.5).Seconds(), ds[len(ds)-1].Seconds(), len(ds))
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	return strings.Join(parts, ", ")
}

// Table formats rows as the README's Markdown table.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| case | direct link | candidates | time to direct (s) | delivered direct / server / either | state age p50 / p95 / max (ms) | drawn error p95 / max (cm) | mapping bias direct / server (ms) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		ttd := secs(r.TimeToDirect)
		if len(r.LinkUps) > 0 {
			ttd = secs(r.LinkUps)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s / %s / %s | %d / %d / %d | %.1f / %.1f | %.1f / %.1f |\n",
			r.Case, r.Direct, or(r.Pair, "-"), ttd,
			pct(r.DeliveryDirect), pct(r.DeliveryServer), pct(r.DeliveryAny),
			r.AgeP50.Milliseconds(), r.AgeP95.Milliseconds(), r.AgeMx.Milliseconds(),
			100*r.ErrP95, 100*r.ErrMax,
			float64(r.Bias[Direct].Microseconds())/1000, float64(r.Bias[Server].Microseconds())/1000)
	}
	return b.String()
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
