package faults

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	_ "modernc.org/sqlite"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// outage is how long a NATS fault lasts: two thirds of the TTL, as 10 s
// is of the default 15 s.
const outage = 4 * time.Second

// fault is one scripted fault.
type fault struct {
	name string
	// inject starts the fault on the cluster; target is the node running
	// the most rooms.
	inject func(c *cluster, target int)
	// heal ends it: after outage, or once the players are back to playing
	// (afterPlayers); nil when the fault is for good.
	heal         func(c *cluster, target int)
	afterPlayers bool
}

var faults = []fault{
	{name: "node SIGKILL", inject: func(c *cluster, i int) {
		c.nodes[i].down = true
		c.nodes[i].p.kill()
	}},
	{name: "node SIGTERM (drain)", inject: func(c *cluster, i int) {
		c.nodes[i].down = true
		c.nodes[i].p.signal(syscall.SIGTERM)
	}},
	{name: "node hung (SIGSTOP)", inject: func(c *cluster, i int) {
		c.nodes[i].down = true
		c.nodes[i].p.signal(syscall.SIGSTOP)
	}, heal: func(c *cluster, i int) {
		c.nodes[i].p.signal(syscall.SIGCONT)
		c.nodes[i].down = false
	}, afterPlayers: true},
	{name: "NATS restart", inject: func(c *cluster, _ int) {
		c.nats.kill()
	}, heal: func(c *cluster, _ int) { c.startNATS() }},
	{name: "NATS paused (SIGSTOP)", inject: func(c *cluster, _ int) {
		c.nats.signal(syscall.SIGSTOP)
	}, heal: func(c *cluster, _ int) { c.nats.signal(syscall.SIGCONT) }},
	{name: "node cut from NATS", inject: func(c *cluster, i int) {
		c.nodes[i].nats.cut()
	}, heal: func(c *cluster, i int) { c.nodes[i].nats.allow() }},
}

// outcome is one row of the table.
type outcome struct {
	fault            string
	players          int
	affected         int
	back             []time.Duration // of the affected players back to playing
	notBack          int
	noticed          []time.Duration // fault to the client's first event, of the affected players
	unnoticed        int             // affected players whose client reported nothing
	codes, joinable  int
	split            int
	errors           map[protocol.Code]int // error messages shown to players, by code
	results, stored  int                   // rounds with results seen / of them stored
	interrupted      int                   // rounds a drain interrupted
	interruptedSaved int
	runningKilled    int // rounds running on a killed node (their state died)
}

var (
	tableMu sync.Mutex
	table   []outcome
)

// TestFaults runs every fault on a fresh cluster.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: runs NATS and three nodes per fault")
	}
	for _, f := range faults {
		t.Run(strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(f.name), func(t *testing.T) {
			o := runFault(t, f)
			tableMu.Lock()
			table = append(table, o)
			tableMu.Unlock()
		})
	}
	report(t)
}

func runFault(t *testing.T, f fault) outcome {
	c := startCluster(t)
	p := startPlayers(t, c)
	target := c.busiest()
	o := outcome{fault: f.name, players: len(p.bots())}
	t.Logf("%s: fault on %s (rooms per node: %s)", f.name, c.nodes[target].id, roomsPerNode(c))

	t0 := p.since()
	f.inject(c, target)
	if f.heal != nil && !f.afterPlayers {
		p.sleep(outage)
		f.heal(c, target)
	} else {
		p.sleep(2 * gap) // long enough for a silence to show
	}
	p.waitPlaying("players back to playing")
	if f.heal != nil && f.afterPlayers {
		f.heal(c, target)
	}
	healed := time.Now()

	// Codes: a TTL and a refresh after the fault healed, every room's
	// code must be joinable through every node still running, and land
	// in the room of its players.
	time.Sleep(time.Until(healed.Add(ttl + refresh)))
	o.codes, o.joinable, o.split = probeCodes(t, c, p)
	p.waitPlaying("players playing after the probes")
	now := p.since()
	for _, b := range p.bots() {
		affected, back, ok := b.recovery(t0, now)
		if affected {
			if d, seen := b.noticed(t0); seen {
				o.noticed = append(o.noticed, d)
			} else {
				o.unnoticed++
			}
		}
		switch {
		case !ok:
			o.notBack++
			o.affected++
		case affected:
			o.affected++
			o.back = append(o.back, back)
		}
		b.mu.Lock()
		for _, e := range b.errs {
			if o.errors == nil {
				o.errors = map[protocol.Code]int{}
			}
			o.errors[e.Code]++
		}
		b.mu.Unlock()
	}
	finishRounds(t, p)
	p.close()
	c.stopAll()
	checkStored(t, c, p, target, f, &o)

	assert.Zero(t, o.notBack, "every player back to playing")
	assert.Equal(t, o.codes, o.joinable, "every code joinable through every node")
	assert.Zero(t, o.split, "no two rooms under one code")
	assert.Equal(t, o.results, o.stored, "every round whose results the players saw is stored")
	assert.Equal(t, o.interrupted, o.interruptedSaved, "every round a drain interrupted is stored")
	t.Logf("%s", o.row())
	return o
}

func roomsPerNode(c *cluster) string {
	var parts []string
	for _, n := range c.nodes {
		h, err := n.health()
		if err != nil {
			parts = append(parts, n.id+"=?")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%d", n.id, h.Rooms))
	}
	return strings.Join(parts, " ")
}

// probeCodes joins every group's room through every live node.
func probeCodes(t *testing.T, c *cluster, p *play) (codes, joinable, split int) {
	seen := map[string]int{}
	for _, g := range p.groups {
		g.mu.Lock()
		code := g.code
		g.mu.Unlock()
		codes++
		if prev, dup := seen[code]; dup {
			t.Errorf("rooms %d and %d share code %s", prev, g.idx, code)
			split++
		}
		seen[code] = g.idx
		var users []string
		for _, b := range g.bots {
			b.mu.Lock()
			if b.code == code {
				users = append(users, b.user)
			}
			b.mu.Unlock()
		}
		ok := true
		for _, n := range c.live() {
			in, err := probeJoin(n.url, code)
			// A slow answer on a busy machine is asked again; a room the
			// directory lost (room_not_found) is not.
			for deadline := time.Now().Add(30 * time.Second); err != nil &&
				protocol.CodeOf(err) != protocol.CodeRoomNotFound && time.Now().Before(deadline); {
				time.Sleep(time.Second)
				in, err = probeJoin(n.url, code)
			}
			if err != nil {
				t.Logf("room %d (%s) through %s: %v", g.idx, code, n.id, err)
				ok = false
				continue
			}
			for _, u := range users {
				if !slices.Contains(in, u) {
					t.Errorf("room %d (%s) through %s: a room without its player %s: split brain", g.idx, code, n.id, u)
					split++
					break
				}
			}
		}
		if ok {
			joinable++
		}
	}
	return codes, joinable, split
}

// probeJoin joins code through url and returns the users in the room.
func probeJoin(url, code string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pc, err := serverlink.Dial(ctx, url, &serverlink.Options{Name: "probe", NoReconnect: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = pc.Close(ctx) }()
	j, err := pc.Join(ctx, code)
	if err != nil {
		return nil, err
	}
	var users []string
	for _, pl := range j.Room.Players {
		users = append(users, pl.User)
	}
	_ = pc.Leave(ctx)
	return users, nil
}

// finishRounds ends the rounds still playing: every player finishes, and
// each waits for the results.
func finishRounds(t *testing.T, p *play) {
	var waiting []*bot
	for _, g := range p.groups {
		for _, b := range g.bots {
			c := b.client()
			if c.Room().Phase == protocol.PhasePlaying {
				_ = c.Send(&protocol.Finish{})
				waiting = append(waiting, b)
			}
		}
	}
	deadline := time.Now().Add(waitFor)
	for _, b := range waiting {
		for {
			b.mu.Lock()
			n := len(b.results)
			b.mu.Unlock()
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s saw no results", b.name)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// checkStored reads every node's database: every round whose results the
// players saw must be there, and with a drain, the rounds it interrupted.
func checkStored(t *testing.T, c *cluster, p *play, target int, f fault, o *outcome) {
	type key struct {
		code        string
		round       int
		interrupted bool
	}
	stored := map[key]bool{}
	for _, n := range c.nodes {
		db, err := sql.Open("sqlite", "file:"+n.db+"?mode=ro")
		if err != nil {
			t.Errorf("%s: open database: %v", n.id, err)
			continue
		}
		rows, err := db.Query("SELECT room, round, interrupted FROM rounds")
		if err != nil {
			t.Errorf("%s: read rounds: %v", n.id, err)
			db.Close()
			continue
		}
		for rows.Next() {
			var k key
			if err := rows.Scan(&k.code, &k.round, &k.interrupted); err == nil {
				stored[k] = true
			}
		}
		rows.Close()
		db.Close()
	}
	seen := map[key]bool{}
	for _, b := range p.bots() {
		b.mu.Lock()
		for _, r := range b.results {
			seen[key{code: r.Code, round: r.Round}] = true
		}
		b.mu.Unlock()
	}
	for k := range seen {
		o.results++
		if stored[k] {
			o.stored++
		} else {
			t.Logf("results of room %s round %d not stored", k.code, k.round)
		}
	}
	// The rounds that ran on the target when it failed: the groups whose
	// first room was lost.
	for _, g := range p.groups {
		lost := false
		for _, b := range g.bots {
			b.mu.Lock()
			for _, e := range b.events {
				lost = lost || e.kind == serverlink.EventRoomLost || e.kind == serverlink.EventDisconnected
			}
			b.mu.Unlock()
		}
		if g.code == g.first && !lost {
			continue
		}
		switch f.name {
		case "node SIGTERM (drain)":
			o.interrupted++
			if stored[key{code: g.first, round: 1, interrupted: true}] || stored[key{code: g.first, round: 1}] {
				o.interruptedSaved++
			}
		case "node SIGKILL", "node hung (SIGSTOP)":
			o.runningKilled++
		}
	}
}

func (o *outcome) row() string {
	back := "-"
	if len(o.back) > 0 {
		slices.Sort(o.back)
		back = fmt.Sprintf("%.1f s / %.1f s", o.back[len(o.back)/2].Seconds(), o.back[len(o.back)-1].Seconds())
	}
	if o.notBack > 0 {
		back += fmt.Sprintf(" (%d not back within %v)", o.notBack, waitFor)
	}
	noticed := "-"
	if len(o.noticed) > 0 {
		slices.Sort(o.noticed)
		noticed = fmt.Sprintf("%.1f s / %.1f s", o.noticed[len(o.noticed)/2].Seconds(), o.noticed[len(o.noticed)-1].Seconds())
	}
	if o.unnoticed > 0 {
		noticed += fmt.Sprintf(" (%d never)", o.unnoticed)
	}
	split := "none"
	if o.split > 0 {
		split = fmt.Sprint(o.split)
	}
	lost := fmt.Sprintf("%d of %d", o.results-o.stored, o.results)
	if o.interrupted > 0 {
		lost += fmt.Sprintf("; interrupted stored %d of %d", o.interruptedSaved, o.interrupted)
	}
	if o.runningKilled > 0 {
		lost += fmt.Sprintf("; %d running rounds died with the node", o.runningKilled)
	}
	var errs []string
	for code, n := range o.errors {
		errs = append(errs, fmt.Sprintf("%d %s", n, code))
	}
	slices.Sort(errs)
	shown := "none"
	if len(errs) > 0 {
		shown = strings.Join(errs, ", ")
	}
	return fmt.Sprintf("| %s | %d of %d | %s | %s | %d of %d | %s | %s | %s |", o.fault, o.affected, o.players, noticed, back,
		o.joinable, o.codes, split, lost, shown)
}

// report logs the table and writes it to $NEARZERO_FAULTS_TABLE.
func report(t *testing.T) {
	tableMu.Lock()
	defer tableMu.Unlock()
	var b strings.Builder
	b.WriteString("| fault | players affected | told (reconnecting) after p50 / max | back to playing p50 / max | codes joinable through every node | split brain | results not stored | errors shown |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for i := range table {
		b.WriteString(table[i].row() + "\n")
	}
	t.Logf("fault table:\n%s", b.String())
	if path := os.Getenv("NEARZERO_FAULTS_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Errorf("write the table: %v", err)
		}
	}
}
