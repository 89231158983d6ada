package godottest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The porting example: one small game of the project's own, coin rush
// (godot_project/examples/port/), written on Godot's multiplayer stack
// (godot_stack/) and on nearzero (nearzero/). Everything in main.gd above
// its "# --- Network" line is the game and is the same in both; the rest,
// player.gd and the scenes are what each stack needs.

// portDir is the example, relative to this package.
const portDir = "../../godot_project/examples/port"

// portFiles are the files of each version, in the order the table lists them.
var portFiles = []string{"main.gd", "player.gd", "main.tscn", "player.tscn", "coin.tscn"}

// networkMarker starts the network part of main.gd.
const networkMarker = "# --- Network"

// codeLines returns the lines of a file that count: for a script, those
// neither blank nor comments; for a scene, those not blank.
func codeLines(name, text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		s := strings.TrimSpace(l)
		if s == "" || (strings.HasSuffix(name, ".gd") && strings.HasPrefix(s, "#")) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// onlyIn returns how many lines of a and of b a shortest line diff
// removes and adds (the lines not in their longest common subsequence).
func onlyIn(a, b []string) (inA, inB int) {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	return len(a) - lcs[0][0], len(b) - lcs[0][0]
}

// portVersion is one version's files, read.
type portVersion map[string]string

func readPort(t *testing.T, version string) portVersion {
	t.Helper()
	v := portVersion{}
	for _, f := range portFiles {
		b, err := os.ReadFile(filepath.Join(portDir, version, f))
		require.NoError(t, err)
		v[f] = string(b)
	}
	return v
}

// split returns main.gd's game part (the lines before the network marker
// and after the header comment) and its network part.
func (v portVersion) split(t *testing.T) (game, network string) {
	t.Helper()
	main := v["main.gd"]
	at := strings.Index(main, networkMarker)
	require.GreaterOrEqual(t, at, 0, "main.gd has a %q line", networkMarker)
	start := strings.Index(main, "extends ")
	require.GreaterOrEqual(t, start, 0)
	return main[start:at], main[at:]
}

// portTable is the README's table of line counts, made from the files.
func portTable(t *testing.T) string {
	g, n := readPort(t, "godot_stack"), readPort(t, "nearzero")
	gGame, gNet := g.split(t)
	nGame, nNet := n.split(t)
	count := func(name, text string) int { return len(codeLines(name, text)) }
	var b strings.Builder
	row := func(what string, a, c int) { fmt.Fprintf(&b, "| %s | %d | %d |\n", what, a, c) }
	b.WriteString("| lines (scripts: no blanks or comments; scenes: no blanks) | Godot's stack | nearzero |\n|---|---|---|\n")
	row("`main.gd`, the game (the same file text in both)", count("main.gd", gGame), count("main.gd", nGame))
	row("`main.gd`, the network part", count("main.gd", gNet), count("main.gd", nNet))
	row("`player.gd`", count("player.gd", g["player.gd"]), count("player.gd", n["player.gd"]))
	row("`main.tscn`", count("main.tscn", g["main.tscn"]), count("main.tscn", n["main.tscn"]))
	row("`player.tscn`", count("player.tscn", g["player.tscn"]), count("player.tscn", n["player.tscn"]))
	row("`coin.tscn`", count("coin.tscn", g["coin.tscn"]), count("coin.tscn", n["coin.tscn"]))
	totG, totN, diffG, diffN := 0, 0, 0, 0
	for _, f := range portFiles {
		// A path into the version's own folder is the same line in both.
		a := codeLines(f, strings.ReplaceAll(g[f], "/port/godot_stack/", "/port/VERSION/"))
		c := codeLines(f, strings.ReplaceAll(n[f], "/port/nearzero/", "/port/VERSION/"))
		totG, totN = totG+len(a), totN+len(c)
		dg, dn := onlyIn(a, c)
		diffG, diffN = diffG+dg, diffN+dn
	}
	row("all five files", totG, totN)
	row("lines only in this version (a line diff of the two)", diffG, diffN)
	return b.String()
}

// TestPortExampleLines prints the line counts of the two versions of the
// porting example, checks that their game parts are the same text, and
// that the addon README shows these counts (it needs no Godot).
func TestPortExampleLines(t *testing.T) {
	g, n := readPort(t, "godot_stack"), readPort(t, "nearzero")
	gGame, _ := g.split(t)
	nGame, _ := n.split(t)
	assert.Equal(t, gGame, nGame, "the game part of main.gd is the same in both versions: only the network differs")
	table := portTable(t)
	t.Logf("the porting example's lines:\n%s", table)
	readme, err := os.ReadFile("../../godot_project/addons/nearzero/README.md")
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(readme), table),
		"the addon README's Porting example shows other counts; put this table there:\n%s", table)
}

// portLog is what one coin rush process printed about its game.
type portLog struct {
	coins []string // "id=1 at=(758.0, 79.0)", in order
	taken []string // "id=3 by=Ann", in order
	over  string   // "winner=Ann scores=Ann:8,Bob:4"
}

var portLine = regexp.MustCompile(`(?m)^PORT_(COIN|TAKEN|OVER) (.*)$`)

func readPortLog(out string) portLog {
	var l portLog
	for _, m := range portLine.FindAllStringSubmatch(out, -1) {
		switch m[1] {
		case "COIN":
			l.coins = append(l.coins, m[2])
		case "TAKEN":
			l.taken = append(l.taken, m[2])
		case "OVER":
			l.over = m[2]
		}
	}
	return l
}

// scoreSum adds the scores of an over line ("winner=Ann scores=Ann:8,Bob:4").
func scoreSum(t *testing.T, over string) int {
	_, scores, ok := strings.Cut(over, "scores=")
	require.True(t, ok, over)
	sum := 0
	for _, s := range strings.Split(scores, ",") {
		_, n, _ := strings.Cut(s, ":")
		v, err := strconv.Atoi(n)
		require.NoError(t, err, over)
		sum += v
	}
	return sum
}

// portCoins is the number of coins in a game of coin rush (COINS in main.gd).
const portCoins = 12

// playPort plays one version of coin rush: a host (Ann) and a joiner (Bob),
// both bots, on port; it returns both outputs once both have quit.
func playPort(t *testing.T, ctx context.Context, g *godot, version string, port int) (host, join *racer) {
	scene := "res://examples/port/" + version + "/main.tscn"
	run := func(name string, args ...string) *racer {
		r := &racer{name: version + " " + name, out: &lockedBuffer{}, done: make(chan struct{})}
		all := append([]string{"--headless", "--path", g.project, "--max-fps", "60", scene, "--",
			"--port-bot", "--port-name=" + name, fmt.Sprintf("--port-port=%d", port)}, args...)
		return g.start(t, ctx, r, all)
	}
	host = run("Ann", "--port-host")
	// The host is ready when it shows its lobby (ENet) or its room code (nearzero).
	ready := regexp.MustCompile(`PORT_ROOM code=([A-Z0-9]+)|PORT_LOBBY players=Ann`)
	var m []string
	for deadline := time.Now().Add(90 * time.Second); m == nil; time.Sleep(200 * time.Millisecond) {
		m = ready.FindStringSubmatch(host.out.String())
		require.True(t, time.Now().Before(deadline), "%s: the host did not open its lobby:\n%s", version, tail(host.out.String(), 30))
	}
	join = run("Bob", "--port-join=127.0.0.1", "--port-code="+m[1])
	waitAll(t, 2*time.Minute, host, join) // a game lasts about 10 s
	return host, join
}

// TestGodotPortExample plays both versions of the porting example, each
// with two headless Godot processes whose bots walk to the nearest coin:
// Godot's stack over ENet (the host is the ENet server), nearzero with the
// host running the room server in the game (NetRoom.host_local). In each,
// both processes must finish the game and agree on every coin spawned, who
// took each (the host decides), the scores and the winner, with no error
// or warning printed; and both versions spawn the same coins (one seed).
func TestGodotPortExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	g := setupRacer(t, ctx) // builds the addon, copies and imports the project (skips without GODOT)
	port := freePort(t)     // TCP port for nearzero's server, port+1 (UDP) for ENet
	coinsOf := map[string][]string{}
	for _, c := range []struct {
		version string
		port    int
	}{{"godot_stack", port + 1}, {"nearzero", port}} {
		host, join := playPort(t, ctx, g, c.version, c.port)
		logs := map[string]portLog{}
		for _, r := range []*racer{host, join} {
			out := r.out.String()
			t.Logf("%s:\n%s", r.name, tail(out, 6))
			assert.NoError(t, r.err, "%s exits cleanly:\n%s", r.name, tail(out, 30))
			assert.NotContains(t, out, "ERROR", "%s printed an error", r.name)
			assert.NotContains(t, out, "WARNING", "%s printed a warning", r.name)
			logs[r.name] = readPortLog(out)
		}
		h, j := logs[host.name], logs[join.name]
		require.NotEmpty(t, h.over, "%s: the host finished the game:\n%s", c.version, tail(host.out.String(), 30))
		assert.Len(t, h.coins, portCoins, "%s: every coin was spawned", c.version)
		assert.Len(t, h.taken, portCoins, "%s: every coin was taken", c.version)
		assert.Equal(t, portCoins, scoreSum(t, h.over), "%s: the scores add up to the coins", c.version)
		assert.Equal(t, h.coins, j.coins, "%s: both processes spawned the same coins", c.version)
		assert.Equal(t, h.taken, j.taken, "%s: both agree who took each coin, in order", c.version)
		assert.Equal(t, h.over, j.over, "%s: both agree on the scores and the winner", c.version)
		t.Logf("%s: %d coins; game over: %s", c.version, len(h.coins), h.over)
		coinsOf[c.version] = h.coins
	}
	assert.Equal(t, coinsOf["godot_stack"], coinsOf["nearzero"], "both versions play the same game (the same coins)")
}
