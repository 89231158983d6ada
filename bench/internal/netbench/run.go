package netbench

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/clock"
	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/sender"
	"github.com/nearzero/nearzero/netcode/simnet"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/room"
)

// Variant makes estimators perfect for the ablation rows (-ablate). The
// zero Variant is the real thing.
type Variant struct {
	// Name is the row's variant column; empty for the real thing.
	Name string
	// ExactRTT feeds every re-stamp estimator (the server's, through the
	// pings' RTTUS, and each client's direct one) the true base round trip
	// instead of the measured one.
	ExactRTT bool
	// TrueSenderClock maps sender stamps exactly: a direct state's sample
	// time becomes the receiver's clock reading at the true sample time,
	// and a relayed state carries the server clock's reading at it (in
	// place of the server's re-stamp estimate).
	TrueSenderClock bool
	// TrueReceiverClock maps the server clock onto the receiver's exactly
	// (in place of clock.Sync) on the server path.
	TrueReceiverClock bool
	// PollAtSample polls the sender at the frame that sampled, as if the
	// engine could not tell it when the state leaves: the sample-to-send
	// delay then counts as network delay (the cost SendLead removes).
	PollAtSample bool
	// KnownInput gives every received state a velocity that carries it
	// exactly onto the truth one data age later (and no acceleration or
	// turn): what perfect knowledge of the next inputs would give. Not for
	// Rounds or Contact scenarios.
	KnownInput bool
	// InputDelay is the input-delay scheme (not an ablation: a different
	// game): every player's own entity shows its inputs InputDelay late, so
	// the shared timeline (what every player, the owner too, should see at
	// t) is the simulation at t - InputDelay, and a state sampled at t
	// belongs at t + InputDelay on it: the receivers, who know the room's
	// delay, add it to the mapped sample time (the helper is
	// netcode/inputdelay). Rows judge the drawings against that timeline;
	// the cost, the owner's own input lag, is not in them. Not for Rounds
	// or Contact scenarios, nor with another variant.
	InputDelay time.Duration
}

// Ablations are the variants -ablate adds, each making one estimator
// perfect, and then all of them.
var Ablations = []Variant{
	{Name: "exact-rtt", ExactRTT: true},
	{Name: "true-sender-clock", TrueSenderClock: true},
	{Name: "true-receiver-clock", TrueReceiverClock: true},
	{Name: "perfect-timing", ExactRTT: true, TrueSenderClock: true, TrueReceiverClock: true},
	{Name: "poll-at-sample", PollAtSample: true},
	{Name: "known-input", KnownInput: true},
	{Name: "perfect-timing+input", ExactRTT: true, TrueSenderClock: true, TrueReceiverClock: true, KnownInput: true},
}

// Tuning overrides the netcode configurations a run uses; zero fields are
// the packages' defaults. The bench uses it to try settings before they
// become defaults.
type Tuning struct {
	// Auto configures the predictor drawing either kind (Auto is always
	// set): the default, as client/netroom's default profile.
	Auto predict.Config
	// Fixed uses the fixed profiles instead: Vehicle and Character
	// configure the predictor drawing each kind. Defaults: predict's,
	// except for characters PredictionCap 150 ms and SmoothingTau 50 ms
	// (characterCap, characterTau).
	Fixed              bool
	Vehicle, Character predict.Config
	// Sender configures every sender.
	Sender sender.Config
	// Restamp configures the clients' direct re-stamp estimators and the
	// room's.
	Restamp clock.RestampConfig
	// Sync configures the clients' clock sync.
	Sync clock.SyncConfig
}

// Predictor settings for erratic movers. docs/architecture.md §4 asks for a
// short cap for characters. The short smoothing is the bench's finding: an
// unannounced turn is corrected by the error-decay smoothing, and the drawn
// character lags by about the time constant; at 50 ms the correction still
// moves less than JumpThreshold a frame (see the README's tuning notes).
const (
	characterCap = 150 * time.Millisecond
	characterTau = 50 * time.Millisecond
)

// Options control a run.
type Options struct {
	// Seed drives every random choice. Same seed, same numbers.
	Seed uint64
	// Duration is the measured length of each run. Default DefaultDuration,
	// or QuickDuration with Quick.
	Duration time.Duration
	// Quick selects the short CI runs.
	Quick bool
	// Variant makes estimators perfect (ablations).
	Variant Variant
	// Tuning overrides netcode settings.
	Tuning Tuning
	// Inputs replays recorded inputs instead of the scripted drivers, for
	// each client ("a", "b") that has events in it; the other keeps its
	// scripted driver.
	Inputs *Recording
	// Record, when not nil, receives the bots' input changes; one run at a
	// time (RunTable refuses it for more than one job).
	Record *Recording
	// Trace keeps per-frame series in the Result for -trace.
	Trace bool
}

func (o Options) duration() time.Duration {
	switch {
	case o.Duration > 0:
		return o.Duration
	case o.Quick:
		return QuickDuration
	}
	return DefaultDuration
}

// Row is one line of the table: how one client drew the other player's
// entity with one method over one run. The README defines every column.
type Row struct {
	Scenario string `json:"scenario"`
	Entity   string `json:"entity"`
	Method   string `json:"method"`
	Variant  string `json:"variant,omitempty"`
	Seed     uint64 `json:"seed"`
	Seeds    int    `json:"seeds,omitempty"` // runs averaged (AverageRows), 0 for one
	Frames   int    `json:"frames"`

	Mean float64 `json:"mean_m"`
	P50  float64 `json:"p50_m"`
	P95  float64 `json:"p95_m"`
	P99  float64 `json:"p99_m"`
	Max  float64 `json:"max_m"`

	AlongP50 float64 `json:"along_p50_m"`
	AlongP95 float64 `json:"along_p95_m"`
	AlongMax float64 `json:"along_max_m"`
	SideP50  float64 `json:"side_p50_m"`
	SideP95  float64 `json:"side_p95_m"`
	SideMax  float64 `json:"side_max_m"`
	Bias     float64 `json:"bias_m"`
	Wobble   float64 `json:"wobble_m"`

	ReversalsPerMin float64 `json:"reversals_per_min"`
	JumpsPerMin     float64 `json:"jumps_per_min"`
	PopsPerMin      float64 `json:"pops_per_min"`
	// PopEvents are pop events per minute above each of PopSizes (0.1,
	// 0.2, 0.3, 0.5 m), pop frames within PopEventGap merged into one.
	PopEvents [numPopSizes]float64 `json:"pop_events_per_min"`
	// PopRelPerMin are pop events per minute whose departure exceeds half
	// the frame's true travel (PopRelFraction, at least PopRelFloor).
	PopRelPerMin float64 `json:"pop_rel_per_min"`
	OffPathP95   float64 `json:"off_path_p95_m"`
	OffPathMax   float64 `json:"off_path_max_m"`
	PastCapShare float64 `json:"past_cap_share"`
	SlideMSPerS  float64 `json:"timing_slide_ms_per_s"`
	PathGapMS    float64 `json:"path_gap_ms"`
	DirectShare  float64 `json:"direct_share"`
	MeanAgeMS    float64 `json:"mean_age_ms"`

	SplitTiming    *float64 `json:"split_timing_m,omitempty"`
	SplitPredictor *float64 `json:"split_predictor_m,omitempty"`
	SplitStale     *float64 `json:"split_stale_m,omitempty"`
	SplitSmoothing *float64 `json:"split_smoothing_m,omitempty"`

	SimSeconds  float64 `json:"sim_seconds"`
	WallSeconds float64 `json:"wall_seconds"`
}

// Trace is the per-frame record of one client drawing the other, for
// -trace.
type Trace struct {
	Scenario, Entity, Variant string
	// T is the true time of each nearzero frame (s).
	T []float64
	// Along and Side are per method (in Methods order), each frame.
	Along, Side [][]float64
	// TimingMS, AgeMS, Correction and Path are nearzero's per frame.
	TimingMS, AgeMS, Correction []float64
	Path                        []uint8
	// Speed is the true speed each frame (m/s).
	Speed []float64
}

// Result is the outcome of one run.
type Result struct {
	Rows   []Row
	Traces []Trace
	// Stats are counters a test checks: nothing should be rejected.
	Stats RunStats
}

// RunStats count what happened in a run.
type RunStats struct {
	// StatesSent counts states the clients sent (each once, whatever the path).
	StatesSent int
	// RoomErrors counts Error messages the room sent (rejected states or requests).
	RoomErrors int
	// Rounds counts rounds that reached go.
	Rounds int
	// Contacts counts collisions between a bot and the other as drawn.
	Contacts int
	// Snaps counts predictor snaps.
	Snaps int
}

// world is one run: a scheduler, a room and two clients.
type world struct {
	s      *simnet.Scheduler
	sc     Scenario
	opt    Options
	room   *room.Room
	srvClk simnet.Clock
	c      [2]*client

	measureFrom, end time.Duration
	tickArmed        bool
	tickAt           time.Duration
	stats            RunStats
	bufs             [][]byte // free payload buffers (see buf)
}

// buf returns an empty payload buffer. Links own a payload until they
// deliver it, and every receiver here is done with it when its handler
// returns (the room copies what it keeps), so handlers give it back with
// free: a run then allocates almost no payloads.
func (w *world) buf() []byte {
	if n := len(w.bufs); n > 0 {
		b := w.bufs[n-1]
		w.bufs = w.bufs[:n-1]
		return b[:0]
	}
	return make([]byte, 0, 64)
}

// free gives back a delivered payload.
func (w *world) free(b []byte) {
	if cap(b) >= 64 && len(w.bufs) < 1024 {
		w.bufs = append(w.bufs, b)
	}
}

// Run runs one scenario with opt and returns its rows (one per client
// and method).
func Run(sc Scenario, opt Options) (*Result, error) {
	start := time.Now()
	sched := simnet.NewScheduler(opt.Seed)
	sc = engineTiming(sc, sched.Rand("engine-timing"), sched)
	w := &world{s: sched, sc: sc, opt: opt, srvClk: sc.ServerClock}
	w.measureFrom = Warmup
	if sc.Rounds {
		w.measureFrom = 0
	}
	w.end = Warmup + opt.duration()
	rcfg := &room.Config{Restamp: opt.Tuning.Restamp, Limits: motion.Limits{TopSpeed: 30}}
	if sc.Rounds {
		rcfg.Countdown, rcfg.RoundLimit, rcfg.ResultsFor = 3*time.Second, 30*time.Second, 4*time.Second
		rcfg.HandshakeTimeout = 5 * time.Second
	}
	r, err := room.New("BENCH2", rcfg, nil, w.srvNow())
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", sc.Name, err)
	}
	w.room = r
	for i, spec := range []ClientSpec{sc.A, sc.B} {
		c, err := newClient(w, i, spec)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", sc.Name, err)
		}
		w.c[i] = c
	}
	w.c[0].remote, w.c[1].remote = w.c[1], w.c[0]
	if sc.Direct {
		w.c[0].direct = simnet.NewLink(w.s, sc.AB.link("ab", false), w.c[1].onDirect)
		w.c[1].direct = simnet.NewLink(w.s, sc.BA.link("ba", false), w.c[0].onDirect)
	}
	for _, c := range w.c {
		c.start()
	}
	w.s.RunUntil(w.end)
	wall := time.Since(start).Seconds()

	res := &Result{Stats: w.stats}
	minutes := (w.end - w.measureFrom).Minutes()
	for _, c := range w.c {
		entity := c.remote.entityName()
		nz := &c.series[0]
		for mi, m := range Methods {
			row := Row{Scenario: sc.Name, Entity: entity, Method: m, Variant: opt.Variant.Name, Seed: opt.Seed}
			c.series[mi].stats(&row, minutes)
			row.SlideMSPerS = nz.slideRate()
			row.PathGapMS = c.pathGapMS()
			if len(nz.path) > 0 {
				var direct, age float64
				for i, p := range nz.path {
					if predict.Path(p) == predict.PathDirect {
						direct++
					}
					age += nz.age[i]
				}
				row.DirectShare = direct / float64(len(nz.path))
				row.MeanAgeMS = age / float64(len(nz.path)) * 1000
			}
			row.SimSeconds = w.end.Seconds()
			row.WallSeconds = wall
			res.Rows = append(res.Rows, row)
		}
		if opt.Trace {
			tr := c.trace(entity)
			tr.Variant = opt.Variant.Name
			res.Traces = append(res.Traces, tr)
		}
	}
	return res, nil
}

// srvNow returns the server clock now.
func (w *world) srvNow() time.Duration { return w.srvClk.Read(w.s.Now()) }

// serverRecv handles a frame that reached the server from client c.
func (w *world) serverRecv(c *client, p []byte) {
	defer w.free(p)
	now := w.srvNow()
	if wire.KindOf(p) == wire.KindControl {
		if m, err := protocol.Decode(p); err == nil {
			if _, ok := m.(*protocol.Join); ok {
				// The server's connection handler seats the player.
				if _, err := w.room.Join(now, c.peer, room.Member{User: "bench-" + c.name, Name: c.name}); err != nil {
					w.stats.RoomErrors++
				}
				w.arm()
				return
			}
		}
	}
	w.room.HandleFrame(now, c.peer, p)
	w.arm()
}

// arm schedules the room's next timed step.
func (w *world) arm() {
	at, ok := w.room.Next()
	if !ok {
		return
	}
	// A microsecond late, so the server clock has surely reached at.
	tt := w.srvClk.TrueTime(at) + time.Microsecond
	if w.tickArmed && w.tickAt <= tt {
		return
	}
	w.tickArmed, w.tickAt = true, tt
	w.s.At(tt, func() {
		if !w.tickArmed || w.tickAt != tt {
			return
		}
		w.tickArmed = false
		w.room.Tick(w.srvNow())
		w.arm()
	})
}

// peer is the room's view of a client: what it sends goes down the
// client's server link.
type peer struct {
	c *client
}

// Send implements room.Peer.
func (p *peer) Send(frame []byte, reliable bool) {
	if reliable {
		if m, err := protocol.Decode(frame); err == nil {
			if _, ok := m.(*protocol.Error); ok {
				p.c.w.stats.RoomErrors++
			}
		}
	}
	p.c.down.Send(append(p.c.w.buf(), frame...))
}

// Close implements room.Peer.
func (p *peer) Close(protocol.Code, string) { p.c.closed = true }
