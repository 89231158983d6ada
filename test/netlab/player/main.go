// Command player is the network lab's headless player (test/netlab): a
// client/netroom Room, as a NetRoom drives it, that creates or joins a
// room, sends a 60 Hz mover and draws the other player's, recording what
// it saw into a JSON file (Result) for the lab to judge.
//
// The mover is a known path of the wall clock (Path): every namespace of
// the lab shares the machine's clock, so the viewer knows where the other
// player truly was at each drawn frame.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pion/ice/v4"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/lagsim"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/test/netlab"
)

// step is the frame period: 60 frames a second, as an engine draws.
const step = time.Second / 60

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "player:", err)
		os.Exit(1)
	}
}

// clk is the player's clock: the monotonic time since origin, whose wall
// time the result records so the lab can put every player on one clock.
type clk struct{ origin time.Time }

func (c clk) Now() time.Duration { return time.Since(c.origin) }

// rec records what crosses the Room's two transports.
type rec struct {
	recv []netlab.Recv
}

// recLink is the server link, recording each state it hands the Room.
type recLink struct {
	*serverlink.Conn
	r *rec
}

func (l *recLink) PollStates(dst []serverlink.RemoteState) []serverlink.RemoteState {
	n := len(dst)
	dst = l.Conn.PollStates(dst)
	for _, s := range dst[n:] {
		l.r.recv = append(l.r.recv, netlab.Recv{Slot: int(s.State.Slot), Entity: int(s.State.Entity), Seq: int(s.State.Seq), Path: netlab.Server,
			Local: s.Local, Arrival: s.Arrival})
	}
	return dst
}

// recMesh is the direct links, recording each state they hand the Room.
type recMesh struct {
	*direct.Mesh
	r *rec
}

func (m *recMesh) Poll(dst []direct.State) []direct.State {
	n := len(dst)
	dst = m.Mesh.Poll(dst)
	for _, s := range dst[n:] {
		m.r.recv = append(m.r.recv, netlab.Recv{Slot: int(s.State.Slot), Entity: int(s.State.Entity), Seq: int(s.State.Seq), Path: netlab.Direct,
			Local: s.Local, Arrival: s.Arrival})
	}
	return dst
}

func parseLag(s string) (lagsim.Config, error) {
	var c lagsim.Config
	if s == "" {
		return c, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return c, fmt.Errorf("-lag %q: want LATENCY,JITTER,LOSS", s)
	}
	var err error
	if c.Latency, err = time.ParseDuration(parts[0]); err != nil {
		return c, fmt.Errorf("-lag latency: %w", err)
	}
	if c.Jitter, err = time.ParseDuration(parts[1]); err != nil {
		return c, fmt.Errorf("-lag jitter: %w", err)
	}
	if c.Loss, err = strconv.ParseFloat(parts[2], 64); err != nil {
		return c, fmt.Errorf("-lag loss: %w", err)
	}
	return c, c.Validate()
}

func run() error {
	server := flag.String("server", "", "room server address, host:port")
	join := flag.String("join", "", "room code to join; empty: create a room and print \"code CODE\"")
	seed := flag.Uint64("seed", 1, "seed of the movers' paths (the same for both players)")
	epoch := flag.Int64("epoch", 0, "Unix time in nanoseconds the movers' paths start from (the same for both players)")
	measure := flag.Duration("run", 8*time.Second, "how long to record once the other player is drawn")
	tail := flag.Duration("tail", 1500*time.Millisecond, "how long to go on sending after recording, for the other player's record")
	wait := flag.Duration("wait", 20*time.Second, "how long to wait for the room and the other player")
	noDirect := flag.Bool("no-direct", false, "no direct links: every state by the server")
	noDatagrams := flag.Bool("no-datagrams", false, "no datagram path to the server: states to and from it by the WebSocket alone")
	lagFlag := flag.String("lag", "", "lag simulator on the server link: LATENCY,JITTER,LOSS (e.g. 30ms,20ms,0.02)")
	out := flag.String("out", "", "results file (JSON)")
	verbose := flag.Bool("v", false, "log the Room's lines to stderr")
	fixed := flag.Bool("fixed", false, "draw with the predictor's fixed defaults, not its self-tuning (Auto): fewer moving parts when comparing networks")
	relink := flag.Bool("relink", false, "close the direct link a second after it comes up, over and over, to time many link-ups (the creator closes it)")
	noRelay := flag.Bool("no-relay", false, "gather no relay candidates (an experiment: does the pair link without TURN?)")
	flag.Parse()
	lag, err := parseLag(*lagFlag)
	if err != nil {
		return err
	}
	if *server == "" || *out == "" {
		return errors.New("-server and -out are required")
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	c := clk{origin: time.Now()}
	r := &rec{}
	res := netlab.Result{OriginUnixNS: c.origin.UnixNano(), Joined: *join != ""}
	cfg := netroom.Config{
		Server:         *server,
		Options:        serverlink.Options{Name: "lab", Clock: c, Lag: lag, Seed: *seed, Log: log, NoDatagrams: *noDatagrams},
		NoDirect:       *noDirect,
		DirectLagApart: true, // the lag simulator, when on, is the server link's alone
		Dial: func(ctx context.Context, url string, o *serverlink.Options) (netroom.ServerLink, error) {
			cl, err := serverlink.Dial(ctx, url, o)
			if err != nil {
				return nil, err
			}
			return &recLink{Conn: cl, r: r}, nil
		},
		NewDirect: func(dc direct.Config) (direct.Links, error) {
			m, err := direct.New(dc)
			if err != nil {
				return nil, err
			}
			return &recMesh{Mesh: m, r: r}, nil
		},
	}
	if *relink {
		cfg.Direct.RetryAfter = 50 * time.Millisecond
		// The relinks are deliberate: the answerer takes an offer each
		// time (its default budget answers one per 5 s after 3).
		cfg.Direct.OfferRate, cfg.Direct.OfferBurst = 10, 10
	}
	if *noRelay {
		cfg.Direct.ICEOptions = []ice.AgentOption{ice.WithCandidateTypes([]ice.CandidateType{
			ice.CandidateTypeHost, ice.CandidateTypeServerReflexive, ice.CandidateTypePeerReflexive})}
	}
	room, err := netroom.New(cfg)
	if err != nil {
		return err
	}
	defer func() {
		room.Close()
		room.Wait(5 * time.Second)
	}()
	local, err := entity.NewLocal(sender.Config{})
	if err != nil {
		return err
	}

	var (
		remote   *entity.Remote
		peer     = -1
		phys     entity.FrameClock
		frame    uint64
		t0       = time.Now()
		started  = time.Duration(-1) // the recording's start (local clock)
		printed  bool
		deadline = c.Now() + *wait
	)
	if *join == "" {
		err = room.Create()
	} else {
		err = room.Join(*join)
	}
	if err != nil {
		return err
	}
	for {
		now := phys.At(frame, c.Now(), step)
		frame++
		for _, e := range room.Update(c.Now()) {
			switch e.Kind {
			case netroom.EventSpawn:
				if remote == nil {
					remote, err = entity.NewRemote(predict.Config{Auto: !*fixed})
					if err != nil {
						return err
					}
					if err := room.Bind(e.Slot, remote); err != nil {
						return err
					}
					peer = e.Slot
					res.Spawn = c.Now()
				}
			case netroom.EventError:
				log.Warn("room error", "code", e.Code, "text", e.Text, "detail", e.Detail)
			}
		}
		room.Route()
		if room.InRoom() && !printed && *join == "" {
			fmt.Printf("code %s\n", room.Code())
			printed = true
		}
		slot := room.Slot()
		if room.InRoom() && room.Synced() && slot >= 0 {
			if _, ok := room.ServerTime(now); ok {
				unix := res.OriginUnixNS + int64(now)
				local.Sample(now, netlab.At(*seed, slot, *epoch, unix), geom.Identity, geom.Vec3{}, false)
				if s, ok := local.Poll(slot); ok {
					if err := room.SendState(s); err == nil && started >= 0 && !res.Done {
						res.Sent = append(res.Sent, netlab.Sent{Seq: int(s.Seq), Sample: s.Stamp.Near(now),
							DirectOpen: linkOpen(room, peer)})
					}
				}
			}
		}
		drawNow := c.Now()
		if remote != nil && room.Synced() {
			pose, _ := remote.Frame(drawNow)
			if started < 0 && pose.Valid {
				started = drawNow
				res.Start = started
				res.Slot, res.Peer = slot, peer
			}
			if started >= 0 && !res.Done {
				f := netlab.Frame{T: drawNow - started, DirectUp: room.DirectUp(peer), Datagram: room.ServerDatagramUp()}
				if pose.Valid {
					truth := netlab.At(*seed, peer, *epoch, res.OriginUnixNS+int64(drawNow))
					f.Valid, f.Path, f.Age, f.Lag = true, pathOf(pose.Path), pose.Age, remote.RenderLag()
					f.Err = pose.Pos.Sub(truth).Len()
				}
				if ls, ok := room.DirectLinkStats(peer); ok && ls.Open {
					if res.PairLocal == "" {
						res.PairLocal, res.PairRemote, res.LinkUp = ls.Local, ls.Remote, ls.Since
					}
					if n := len(res.LinkUps); n == 0 || res.LinkUps[n-1].Since != ls.Since {
						res.LinkUps = append(res.LinkUps, netlab.LinkUp{Since: ls.Since, Took: ls.Took, Pair: ls.Local + "/" + ls.Remote})
					}
					f.Link = true
					if *relink && *join == "" && drawNow-ls.Since > time.Second {
						if k, ok := room.Direct().(interface{ Kill(int) }); ok {
							k.Kill(peer)
						}
					}
				}
				res.Frames = append(res.Frames, f)
				if drawNow-started >= *measure {
					res.Done = true
					if ls, ok := room.DirectLinkStats(peer); ok {
						res.Link = &ls
					}
					res.Stats = room.Stats()
				}
			}
			if res.Done && drawNow-started >= *measure+*tail {
				break
			}
		}
		if started < 0 && c.Now() > deadline {
			return fmt.Errorf("no other player drawn within %v (in room %v, synced %v)", *wait, room.InRoom(), room.Synced())
		}
		// Frames on a fixed 60 Hz schedule, as an engine runs them.
		time.Sleep(time.Until(t0.Add(time.Duration(frame) * step)))
	}
	res.Recv = r.recv
	b, err := json.Marshal(&res)
	if err != nil {
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}

func linkOpen(room *netroom.Room, peer int) bool {
	ls, ok := room.DirectLinkStats(peer)
	return ok && ls.Open
}

func pathOf(p predict.Path) netlab.PathKind {
	if p == predict.PathDirect {
		return netlab.Direct
	}
	return netlab.Server
}
