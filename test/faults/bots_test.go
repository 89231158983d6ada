package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Players of every scenario.
const (
	rooms    = 4
	perRoom  = 3
	sendRate = 30 // states per second per player
	// gap is a silence of room-mates' states that counts as a disruption.
	gap = time.Second
)

// botSync warms the clock sync up quickly.
var botSync = clock.SyncConfig{WarmupInterval: 50 * time.Millisecond, SyncedAfter: 4}

// stamped is an event and when it happened, since the scenario began.
type stamped struct {
	kind serverlink.EventKind
	err  error
	at   time.Duration
}

// play is the players of one scenario.
type play struct {
	t      *testing.T
	c      *cluster
	epoch  time.Time
	stop   chan struct{}
	wg     sync.WaitGroup
	groups []*group
	log    *slog.Logger
}

func (p *play) since() time.Duration { return time.Since(p.epoch) }

func (p *play) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// sleep waits d or until the players stop; false when they stopped.
func (p *play) sleep(d time.Duration) bool {
	select {
	case <-p.stop:
		return false
	case <-time.After(d):
		return true
	}
}

// group is the players of one room; when the room is lost, they make a
// new one together.
type group struct {
	idx      int
	mu       sync.Mutex // guards the fields below
	cond     *sync.Cond
	code     string // the room the group plays in now
	first    string // the room it started in
	creating bool
	reformed int
	bots     []*bot
}

// next says what a member that lost room lost does: join code, or create
// a room for the group (create true).
func (g *group) next(p *play, lost string) (code string, create bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !p.stopped() {
		if g.code != lost {
			return g.code, false
		}
		if !g.creating {
			g.creating = true
			return "", true
		}
		g.cond.Wait()
	}
	return "", false
}

// created ends a create: code is the new room, or "" if it failed.
func (g *group) created(code string) {
	g.mu.Lock()
	if code != "" {
		g.code = code
		g.reformed++
	}
	g.creating = false
	g.mu.Unlock()
	g.cond.Broadcast()
}

// bot is one player.
type bot struct {
	p     *play
	g     *group
	name  string
	urls  []string // the node it dials first, then the others in turn
	dials int

	mu        sync.Mutex // guards the fields below
	c         *serverlink.Conn
	code      string
	user      string
	dead      bool // the client gave up (EventDisconnected)
	reforming bool
	arrivals  []time.Duration // ticks that brought room-mates' states
	events    []stamped
	errs      []*protocol.Error
	results   []*protocol.Results
}

func (b *bot) client() *serverlink.Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.c
}

// dial connects to the next URL in turn.
func (b *bot) dial(ctx context.Context) (*serverlink.Conn, error) {
	u := b.urls[b.dials%len(b.urls)]
	b.dials++
	c, err := serverlink.Dial(ctx, u, &serverlink.Options{Name: b.name, Sync: botSync, Log: b.p.log})
	if err != nil {
		return nil, fmt.Errorf("%s dials %s: %w", b.name, u, err)
	}
	b.mu.Lock()
	b.c, b.user, b.dead = c, c.User(), false
	b.mu.Unlock()
	return c, nil
}

// startPlayers dials every player and plays every room to a running
// round: room i is created by its first player, who dialled node i, and
// joined by the others, who dialled the next nodes.
func startPlayers(t *testing.T, c *cluster) *play {
	t.Helper()
	p := &play{t: t, c: c, epoch: time.Now(), stop: make(chan struct{}),
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if os.Getenv("NEARZERO_FAULTS_CLIENT_LOG") != "" {
		p.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	t.Cleanup(p.close)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for gi := range rooms {
		g := &group{idx: gi}
		g.cond = sync.NewCond(&g.mu)
		for j := range perRoom {
			b := &bot{p: p, g: g, name: fmt.Sprintf("r%dp%d", gi, j)}
			for k := range nodes {
				b.urls = append(b.urls, c.nodes[(gi+j+k)%nodes].url)
			}
			_, err := b.dial(ctx)
			require.NoError(t, err)
			g.bots = append(g.bots, b)
		}
		host := g.bots[0].client()
		j, err := host.Create(ctx, nil)
		require.NoError(t, err, "create room %d", gi)
		g.code, g.first = j.Code, j.Code
		for _, b := range g.bots {
			if b != g.bots[0] {
				_, err := b.client().Join(ctx, j.Code)
				require.NoError(t, err, "%s joins %s", b.name, j.Code)
			}
			b.code = j.Code
		}
		for _, b := range g.bots {
			require.NoError(t, b.client().Send(&protocol.Loading{Progress: 1}))
			require.NoError(t, b.client().Send(&protocol.Ready{Ready: true}))
		}
		g.waitRoom(t, "all ready", func(s protocol.RoomState) bool {
			n := 0
			for _, pl := range s.Players {
				if pl.Ready && pl.Loaded >= 1 {
					n++
				}
			}
			return n == perRoom
		})
		require.NoError(t, host.Send(&protocol.Start{}))
		g.waitRoom(t, "handshake", func(s protocol.RoomState) bool { return s.Phase == protocol.PhaseHandshake })
		for _, b := range g.bots {
			require.NoError(t, b.client().Send(&protocol.InPosition{}))
		}
		g.waitRoom(t, "playing", func(s protocol.RoomState) bool { return s.Phase == protocol.PhasePlaying })
		p.groups = append(p.groups, g)
	}
	for _, g := range p.groups {
		for _, b := range g.bots {
			p.wg.Add(1)
			go b.run()
		}
	}
	p.waitPlaying("every player playing before the fault")
	return p
}

// waitRoom waits until the host's view of the room satisfies ok.
func (g *group) waitRoom(t *testing.T, what string, ok func(protocol.RoomState) bool) {
	t.Helper()
	require.Eventually(t, func() bool { return ok(g.bots[0].client().Room()) }, waitFor, 10*time.Millisecond,
		"room %d: %s", g.idx, what)
}

func (p *play) bots() []*bot {
	var out []*bot
	for _, g := range p.groups {
		out = append(out, g.bots...)
	}
	return out
}

func (p *play) close() {
	select {
	case <-p.stop:
		return
	default:
	}
	close(p.stop)
	for _, g := range p.groups {
		g.cond.Broadcast()
	}
	p.wg.Wait()
	var wg sync.WaitGroup
	for _, b := range p.bots() {
		if c := b.client(); c != nil {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = c.Close(ctx)
			})
		}
	}
	wg.Wait()
}

// run plays: a state every tick, and what arrives recorded.
func (b *bot) run() {
	defer b.p.wg.Done()
	tick := time.NewTicker(time.Second / sendRate)
	defer tick.Stop()
	var states []serverlink.RemoteState
	var evs []serverlink.Event
	seq := 0
	for {
		select {
		case <-b.p.stop:
			return
		case <-tick.C:
		}
		c := b.client()
		b.mu.Lock()
		busy := b.reforming
		b.mu.Unlock()
		if !busy {
			seq++
			ph := float64(seq) / sendRate * 0.5
			st := &wire.State{Seq: wire.Seq(seq), Stamp: wire.StampOf(c.Now()),
				Pos: geom.Vec3{X: 5 * math.Cos(ph), Z: 5 * math.Sin(ph)},
				Vel: geom.Vec3{X: -2.5 * math.Sin(ph), Z: 2.5 * math.Cos(ph)}, Rot: geom.Quat{W: 1}}
			_ = c.SendState(st)
		}
		states = c.PollStates(states[:0])
		evs = c.PollEvents(evs[:0])
		now := b.p.since()
		slot := c.Slot()
		mates := 0
		for _, rs := range states {
			if int(rs.State.Slot) != slot {
				mates++
			}
		}
		reform := false
		b.mu.Lock()
		if mates > 0 {
			b.arrivals = append(b.arrivals, now)
		}
		for _, e := range evs {
			switch e.Kind {
			case serverlink.EventReconnecting, serverlink.EventReconnected:
				b.events = append(b.events, stamped{kind: e.Kind, err: e.Err, at: now})
			case serverlink.EventRoomLost:
				b.events = append(b.events, stamped{kind: e.Kind, err: e.Err, at: now})
				reform = true
			case serverlink.EventDisconnected:
				b.events = append(b.events, stamped{kind: e.Kind, err: e.Err, at: now})
				b.dead, reform = true, true
			case serverlink.EventMessage:
				switch m := e.Msg.(type) {
				case *protocol.Error:
					b.errs = append(b.errs, m)
				case *protocol.Results:
					b.results = append(b.results, m)
				}
			}
		}
		if reform && !b.reforming && !b.p.stopped() {
			b.reforming = true
			b.p.wg.Add(1)
			go b.reform(b.code)
		}
		b.mu.Unlock()
	}
}

// reform gets the player into its group's room again after it lost room
// lost (or its connection for good).
func (b *bot) reform(lost string) {
	defer b.p.wg.Done()
	defer func() {
		b.mu.Lock()
		b.reforming = false
		b.mu.Unlock()
	}()
	for try := 0; !b.p.stopped(); try++ {
		if try > 0 && !b.p.sleep(250*time.Millisecond) {
			return
		}
		b.mu.Lock()
		c, dead := b.c, b.dead
		b.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		if dead {
			old := c
			var err error
			if c, err = b.dial(ctx); err != nil {
				cancel()
				continue
			}
			go func() { _ = old.Close(context.Background()) }()
		}
		code, create := b.g.next(b.p, lost)
		if create {
			j, err := c.Create(ctx, nil)
			cancel()
			if err != nil {
				b.g.created("")
				continue
			}
			b.g.created(j.Code)
			b.setCode(j.Code)
			return
		}
		if code == "" { // stopped
			cancel()
			return
		}
		_, err := c.Join(ctx, code)
		cancel()
		if err == nil {
			b.setCode(code)
			return
		}
		if protocol.CodeOf(err) == protocol.CodeRoomNotFound {
			lost = code // the new room is gone too
		}
		if errors.Is(err, serverlink.ErrClosed) {
			b.mu.Lock()
			b.dead = true
			b.mu.Unlock()
		}
	}
}

func (b *bot) setCode(code string) {
	b.mu.Lock()
	b.code = code
	b.mu.Unlock()
}

// playing reports whether the player is in a room and its room-mates'
// states arrived in the last half second.
func (b *bot) playing(now time.Duration) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reforming || b.dead || b.c == nil || len(b.arrivals) == 0 {
		return false
	}
	return now-b.arrivals[len(b.arrivals)-1] < 500*time.Millisecond
}

// waitPlaying waits until every player is playing; false (and an error)
// when the bound passes.
func (p *play) waitPlaying(what string) bool {
	p.t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		all := true
		now := p.since()
		for _, b := range p.bots() {
			if !b.playing(now) {
				all = false
				break
			}
		}
		if all {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	var stuck []string
	now := p.since()
	for _, b := range p.bots() {
		if !b.playing(now) {
			stuck = append(stuck, b.name)
		}
	}
	p.t.Errorf("%s: not playing after %v: %v", what, waitFor, stuck)
	return false
}

// noticed returns when, after t0, the player's client first reported the
// connection lost (reconnecting, room lost or disconnected).
func (b *bot) noticed(t0 time.Duration) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.events {
		if e.at >= t0 && e.kind != serverlink.EventReconnected {
			return e.at - t0, true
		}
	}
	return 0, false
}

// recovery says how the fault at t0 touched the player, looking at what
// it saw up to now: affected (a reconnect, a lost room, a disconnect, or
// a gap in its room-mates' states), and when it was back to playing
// (states arriving again after the last disruption), if it is.
func (b *bot) recovery(t0, now time.Duration) (affected bool, back time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var lastEv time.Duration
	for _, e := range b.events {
		if e.at >= t0 {
			affected = true
			lastEv = max(lastEv, e.at)
		}
	}
	prev := t0
	var gapEnd time.Duration
	firstAfterEv := time.Duration(-1)
	for _, a := range b.arrivals {
		if a < t0 {
			prev = a
			continue
		}
		if a-prev > gap {
			affected, gapEnd = true, a
		}
		if a > lastEv && firstAfterEv < 0 {
			firstAfterEv = a
		}
		prev = a
	}
	if now-prev > gap { // silent at the end: not back
		return true, 0, false
	}
	if !affected {
		return false, 0, true
	}
	if firstAfterEv < 0 {
		return true, 0, false
	}
	return true, max(gapEnd, firstAfterEv) - t0, true
}
