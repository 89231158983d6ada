package netbench

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/inputdelay"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/simnet"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Contact physics: vehicles as discs in the ground plane.
const (
	contactDist        = 2.2 // m between centres
	contactRestitution = 0.3
)

// client is one simulated player: a main thread with frames, a bot it
// drives, the game's sending side (client/netroom's Local), the client
// core (client/core: the server path's clock sync, stamp mapping and send
// queue, and the direct link's pings and re-stamping), the game's drawing
// side for the other player (client/netroom's Remote), the baselines, and
// the metrics. Only the sockets are simulated.
type client struct {
	w      *world
	idx    int
	name   string // "a" or "b"
	spec   ClientSpec
	clk    simnet.Clock
	frames *simnet.Frames
	bot    *bot
	loc    *entity.Local    // the sending side, as a NetPredictor's
	srv    *core.ServerPath // the server path
	dpeer  *core.Peer       // the direct link to the other player
	rem    *entity.Remote   // the drawing side, as a NetPredictor's
	// ref are reference predictors, one per path, fed the truth at the
	// path's nominal age each frame: the error split's predictor piece.
	ref         [2]*predict.Predictor
	refSeq      wire.Seq
	interp      interpBuf
	adapt       adaptiveInterp
	arrInterp   arrivalInterp
	newest0     newestState
	lerp        lerpState
	rSend       *rand.Rand
	dirs        [13]geom.Vec3
	moves       [int(popLookback/popLagStep) + 1]geom.Vec3
	prevRenderT time.Duration
	trail       [int(offPathWindow/offPathStep) + 1]geom.Vec3

	up, down, direct *simnet.Link
	peer             *peer
	remote           *client

	joined, closed bool
	slot           int
	remoteSlot     int
	buf            []byte // the writer's reused buffer
	decoded        []core.RemoteState
	directOpen     bool

	lastSampleTrue time.Duration
	// sentTrue maps a sent Seq to the true time of its sample (the
	// oracle the split and the ablations read); 1<<16 entries.
	sentTrue []time.Duration

	// newest mirrors the Remote's newest sample per path.
	newest [2]struct {
		ok  bool
		t   time.Duration
		seq wire.Seq
	}
	// seen remembers recent mapped times per path and Seq for the path gap.
	seen   [2][1024]seenEntry
	gapSum float64
	gapN   int
	// baseSeen dedups samples for the baselines (they take the first copy).
	baseSeen [1024]uint32

	// pending holds states mapped by the network side for the main
	// thread; flushFn (posted once per frame with work) hands them over.
	pending []pendingState
	flushFn func()

	series [numMethods]series
	speed  []float64 // true speed per recorded frame, for traces

	// round flow
	phase                protocol.Phase
	readySent, startSent bool
	goRound              int
	goAt                 time.Duration // server time of go for the round waiting to start
	waitGo               bool
	// direct-link reporting (client/core: netroom's watch)
	watch     core.DirectWatch
	nomDirect time.Duration // base latency of the remote's direct link to us
}

type pendingState struct {
	path    predict.Path
	s       predict.Sample
	arrival time.Duration
}

type seenEntry struct {
	seq uint32 // Seq+1; 0 = empty
	t   time.Duration
}

func newClient(w *world, idx int, spec ClientSpec) (*client, error) {
	name := string(rune('a' + idx))
	c := &client{w: w, idx: idx, name: name, spec: spec, clk: spec.Clock, buf: make([]byte, 0, wire.MaxStateSize),
		rSend: w.s.Rand(name + "/send-delay")}
	c.peer = &peer{c: c}
	c.flushFn = c.flush
	var err error
	scfg := w.opt.Tuning.Sender
	scfg.Dim2D = w.sc.Dim2D
	if c.loc, err = entity.NewLocal(scfg); err != nil {
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	// The game client's defaults: its send queue and send lead.
	if c.srv, err = core.NewServerPath(&w.opt.Tuning.Sync, serverlink.DefaultSendQueue, serverlink.DefaultSendLead); err != nil {
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	if c.dpeer, err = core.NewPeer(&w.opt.Tuning.Restamp, 0); err != nil {
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	// The predictor is configured for what the other player drives.
	other := w.sc.B
	if idx == 1 {
		other = w.sc.A
	}
	pcfg := w.opt.Tuning.Auto
	pcfg.Auto = true
	if w.opt.Tuning.Fixed {
		pcfg = w.opt.Tuning.Vehicle
		if other.Bot == Character {
			pcfg = w.opt.Tuning.Character
			if pcfg.PredictionCap == 0 {
				pcfg.PredictionCap = characterCap
			}
			if pcfg.SmoothingTau == 0 {
				pcfg.SmoothingTau = characterTau
			}
		}
	}
	// Dim2D before New: New fills in the 2D defaults (pixels) from it.
	pcfg.Dim2D = w.sc.Dim2D
	if c.rem, err = entity.NewRemote(pcfg); err != nil {
		return nil, fmt.Errorf("client %s: %w", name, err)
	}
	rcfg := pcfg
	rcfg.BufferLen = 2 // the reference only ever extrapolates its newest sample
	rcfg.Auto, rcfg.MaxCorrectionSpeed = false, 0
	for i := range c.ref {
		if c.ref[i], err = predict.New(rcfg); err != nil {
			return nil, fmt.Errorf("client %s: %w", name, err)
		}
	}
	c.sentTrue = make([]time.Duration, 1<<16)
	frames := int(w.end/cmp.Or(spec.Frames.Period, simnet.DefaultFramePeriod)) + 16
	for i := range c.series {
		c.series[i].grow(frames, i == 0)
	}
	if idx == 0 {
		c.nomDirect = w.sc.BA.Latency
	} else {
		c.nomDirect = w.sc.AB.Latency
	}

	c.bot = c.newBot()
	c.up = simnet.NewLink(w.s, spec.Up.link(name+"/up", true), func(p []byte) { w.serverRecv(c, p) })
	c.down = simnet.NewLink(w.s, spec.Down.link(name+"/down", true), c.onServer)
	return c, nil
}

// newBot places and drives this client's bot as the scenario says.
func (c *client) newBot() *bot {
	sc := c.w.sc
	r := c.w.s.Rand(c.name + "/driver")
	sign := 1.0 - 2*float64(c.idx) // a: +1, b: -1
	var drv driver
	var room *arena
	pos, psi := geom.Vec3{X: 10 * float64(c.idx)}, 0.0
	switch {
	case sc.Contact:
		drv = &contactDriver{r: r, lane: 1.5 * sign, radius: 60, period: 8, phase: math.Pi * float64(c.idx),
			other: c.drawnOther}
		pos, psi = geom.Vec3{X: 60 + 1.5*sign}, math.Pi
	case c.spec.Smooth && c.spec.Bot == Character:
		drv = &characterDriver{r: r, arena: 40}
	case c.spec.Smooth:
		drv = &vehicleDriver{r: r, arena: 120}
	case c.spec.Bot == Character:
		room = characterArena()
		drv = &keyCharacterDriver{r: r, room: room, noJump: sc.Dim2D}
	default:
		room = vehicleArena()
		drv = &keyVehicleDriver{r: r, room: room}
	}
	if sc.Rounds {
		pos, psi = spawnPoint(c.idx)
	}
	if c.w.opt.Inputs != nil {
		// A client the recording has no events for keeps its scripted
		// driver (a recording of one vehicle drives player A only).
		if ev := c.w.opt.Inputs.forClient(c.name); len(ev) > 0 {
			drv = &replayDriver{events: ev}
		}
	}
	b := newBot(c.spec.Bot, drv, pos, psi)
	// Inputs are read at the owner's frames, except when the known-input
	// ablation looks into the truth's future (which frames not yet run
	// would change).
	b.frameInput = !c.w.opt.Variant.KnownInput
	if room != nil {
		b.ph, b.room = arcadePhysics, room
	}
	b.hold = sc.Rounds
	if c.w.opt.Record != nil {
		b.rec, b.who = &c.w.opt.Record.Events, c.name
	}
	return b
}

func spawnPoint(idx int) (geom.Vec3, float64) {
	return geom.Vec3{X: -3 + 6*float64(idx)}, 0
}

// pxPerM is the scale of the 2D rows: the ground plane's X and Z (m)
// become the screen's X and Y (px).
const pxPerM = 32.0

// to2D maps a 3D ground-plane state onto a 2D entity's: X, Z (m) to X, Y
// (px), the yaw about +Y to an angle about +Z (the mapping mirrors, so
// turns change sign). Height is dropped: 2D rows run no jumps.
func to2D(k Kin) Kin {
	f := func(v geom.Vec3) geom.Vec3 { return geom.Vec3{X: v.X * pxPerM, Y: v.Z * pxPerM} }
	yaw := 2 * math.Atan2(k.Rot.Y, k.Rot.W)
	return Kin{Pos: f(k.Pos), Vel: f(k.Vel), Acc: f(k.Acc), Rot: geom.Angle2D(-yaw), Turn: -k.Turn}
}

// from2D maps a 2D position or velocity back onto the 3D ground plane (m).
func from2D(v geom.Vec3) geom.Vec3 { return geom.Vec3{X: v.X / pxPerM, Z: v.Y / pxPerM} }

// drawnOther returns where this client draws the other player now.
func (c *client) drawnOther() (geom.Vec3, bool) {
	p := c.rem.Pose()
	return p.Pos, p.Valid && !c.rem.Hidden()
}

func (c *client) entityName() string {
	if c.w.sc.A.Bot == c.w.sc.B.Bot {
		return c.spec.Bot.String() + "-" + c.name
	}
	return c.spec.Bot.String()
}

// local returns this client's clock now.
func (c *client) local() time.Duration { return c.clk.Read(c.w.s.Now()) }

func (c *client) start() {
	s := c.w.s
	c.frames = simnet.NewFrames(s, c.spec.Frames, c.onFrame)
	c.up.Send(protocol.MustMarshal(&protocol.Join{Code: "BENCH2"}))
	if c.direct != nil {
		// The link comes up (client/direct: the data channel opens); the
		// main thread pings from its next frame, as Mesh.Tick does.
		s.At(20*time.Millisecond+time.Duration(c.idx)*7*time.Millisecond, func() {
			c.dpeer.Open(c.local())
			c.directOpen = true
		})
		if c.w.sc.ReportDirect {
			s.Every(100*time.Millisecond, c.watchdog)
		}
	}
}

// ---- network: the client's network goroutines (serverlink.Conn's reader,
// client/direct's data channel callbacks) handle pings and pongs at once
// and stamp arrivals, through client/core; states reach the predictor at
// the next frame (Frames.Post), as a busy main thread sees them.

func (c *client) onServer(p []byte) {
	defer c.w.free(p)
	local := c.local()
	if wire.KindOf(p) == wire.KindControl {
		m, err := protocol.Decode(p)
		if err != nil {
			return
		}
		switch m := m.(type) {
		case *protocol.Joined:
			c.slot, c.joined = m.Slot, true
			c.schedulePing()
			if c.w.sc.Rounds {
				c.onRoom(&m.Room)
			}
		case *protocol.Pong:
			// The client's network goroutine takes pongs at once, with
			// their arrival time, and answers the room's probe on the
			// link states take (as serverlink.Conn does).
			c.srv.Pong(m, local)
			if e, ok := core.Echo(m); ok {
				c.up.Send(protocol.MustMarshal(&e))
			}
		case *protocol.RoomState:
			if c.w.sc.Rounds {
				c.onRoom(m)
			}
		}
		return
	}
	// Nothing is mapped before the clock is synced (client/core drops it).
	c.decoded, _ = c.srv.DecodeStates(c.decoded[:0], p, local)
	for i := range c.decoded {
		if rs := &c.decoded[i]; int(rs.State.Slot) != c.slot {
			c.recvServer(rs)
		}
	}
}

// recvServer delivers a relayed state, mapped from the server clock onto
// ours by the core; the oracle variants replace a clock with the truth.
func (c *client) recvServer(rs *core.RemoteState) {
	v := c.w.opt.Variant
	mapped := rs.Local
	if v.TrueSenderClock || v.TrueReceiverClock {
		srv, _, _ := c.srv.Map(rs.State.Stamp, rs.Arrival)
		if v.TrueSenderClock {
			srv = c.w.srvClk.Read(c.remote.sentTrue[rs.State.Seq])
			mapped = c.srv.LocalTime(srv)
		}
		if v.TrueReceiverClock {
			mapped = c.clk.Read(c.w.srvClk.TrueTime(srv))
		}
	}
	c.deliver(predict.PathServer, &rs.State, mapped, rs.Arrival)
}

func (c *client) onDirect(p []byte) {
	defer c.w.free(p)
	local := c.local()
	if len(p) == 0 {
		return
	}
	// As client/direct's Mesh: pings answered at once, pongs and states
	// taken at once by the network side, through client/core.
	switch core.KindOf(p) {
	case core.KindPing:
		c.direct.Send(c.dpeer.AppendPong(c.w.buf(), p))
		return
	case core.KindPong:
		if c.w.opt.Variant.ExactRTT {
			c.dpeer.ObserveRTT(c.w.sc.AB.Latency+c.w.sc.BA.Latency, local)
		} else {
			c.dpeer.Pong(p, local)
		}
		return
	case core.KindGarbage:
		return
	}
	var rs core.RemoteState
	if c.dpeer.State(p, local, &rs) != nil {
		return
	}
	st := &rs.State
	c.remoteSlot = int(st.Slot)
	if c.w.sc.ReportDirect && c.joined && c.watch.Arrived(c.remoteSlot, local) {
		c.up.Send(protocol.MustMarshal(&protocol.DirectLink{Slot: c.remoteSlot, Up: true}))
	}
	mapped := rs.Local
	if c.w.opt.Variant.TrueSenderClock {
		mapped = c.clk.Read(c.remote.sentTrue[st.Seq])
	}
	c.deliver(predict.PathDirect, st, mapped, local)
}

// directPing pings the other player on the direct link when the core
// says one is due (the main thread's frame: Mesh.Tick from NetRoom).
func (c *client) directPing(local time.Duration) {
	if c.directOpen && c.dpeer.PingDue(local) {
		c.direct.Send(c.dpeer.AppendPing(c.w.buf(), local))
	}
}

// watchdog reports the direct link down after directDownAfter of silence
// (netroom checks at every Update; the bench every 100 ms).
func (c *client) watchdog() {
	if c.watch.Down(c.remoteSlot, c.local(), directDownAfter) {
		c.up.Send(protocol.MustMarshal(&protocol.DirectLink{Slot: c.remoteSlot, Up: false}))
	}
}

func (c *client) schedulePing() {
	next := c.clk.TrueTime(c.srv.NextPing())
	c.w.s.At(next, c.ping)
}

// ping is serverlink.Conn's writer sending a clock-sync ping when due.
func (c *client) ping() {
	local := c.local()
	if local < c.srv.NextPing() {
		c.schedulePing() // a pong moved the schedule
		return
	}
	m := c.srv.Ping(local)
	if c.w.opt.Variant.ExactRTT {
		m.RTTUS = protocol.US(c.spec.Up.Latency + c.spec.Down.Latency)
	}
	c.up.Send(protocol.MustMarshal(&m))
	c.schedulePing()
}

// deliver books a mapped state and hands it to the main thread.
func (c *client) deliver(path predict.Path, st *wire.State, mapped, arrival time.Duration) {
	seq := st.Seq
	e := &c.seen[path][uint16(seq)%1024]
	*e = seenEntry{seq: uint32(seq) + 1, t: mapped}
	if o := &c.seen[1-path][uint16(seq)%1024]; o.seq == uint32(seq)+1 {
		gap := e.t - o.t
		if path == predict.PathDirect {
			gap = -gap
		}
		c.gapSum += gap.Seconds() * 1000
		c.gapN++
	}
	if len(c.pending) == 0 {
		c.frames.Post(c.flushFn)
	}
	// With an input delay the sample belongs that far ahead on the shared
	// timeline: the room agreed on it, so the receiver adds it (a sender
	// stamping ahead would be taken for a clock offset by the re-stamping).
	smp := predict.SampleOf(st, inputdelay.Place(mapped, c.w.opt.Variant.InputDelay))
	if c.w.opt.Variant.KnownInput {
		// Oracle: a velocity that lands on the truth one data age later
		// (the age it will be drawn at, about: now, plus half a frame).
		at := c.remote.sentTrue[st.Seq]
		age := c.w.s.Now() - at + 8*time.Millisecond
		if age > 0 {
			k0, k1 := c.remote.bot.at(at), c.remote.bot.at(at+age)
			smp.Vel = k1.Pos.Sub(k0.Pos).Scale(1 / age.Seconds())
			if c.w.sc.Dim2D {
				smp.Vel = to2D(Kin{Vel: smp.Vel}).Vel
			}
			smp.Acc, smp.Turn = geom.Vec3{}, 0
		}
	}
	c.pending = append(c.pending, pendingState{path: path, s: smp, arrival: arrival})
}

// flush runs on the main thread at the start of a frame: the Remote and
// the baselines take the states that arrived since the last one.
func (c *client) flush() {
	for i := range c.pending {
		ps := &c.pending[i]
		c.add(ps.path, ps.s, ps.arrival)
	}
	c.pending = c.pending[:0]
}

// add runs on the main thread: the Remote (the game's drawing side) and
// the baselines take the sample.
func (c *client) add(path predict.Path, s predict.Sample, arrival time.Duration) {
	if c.rem.AddSample(path, s, arrival) {
		if n := &c.newest[path]; !n.ok || s.Time > n.t {
			n.ok, n.t, n.seq = true, s.Time, s.Seq
		}
	}
	if e := &c.baseSeen[uint16(s.Seq)%1024]; *e != uint32(s.Seq)+1 {
		*e = uint32(s.Seq) + 1
		sn := snap{t: s.Time, pos: s.Pos, vel: s.Vel}
		if c.w.sc.Dim2D {
			sn.pos, sn.vel = from2D(s.Pos), from2D(s.Vel)
		}
		c.interp.add(sn)
		c.adapt.add(sn, c.local())
		c.arrInterp.add(sn, c.local())
		c.newest0.add(sn)
		c.lerp.add(s.Seq, sn.pos)
	}
}

func (c *client) pathGapMS() float64 {
	if c.gapN == 0 {
		return 0
	}
	return c.gapSum / float64(c.gapN)
}

// ---- the main thread

func (c *client) onFrame(f simnet.Frame) {
	t := f.Start
	local := c.clk.Read(t)
	c.bot.advance(t)
	if c.waitGo && c.srv.Synced() && c.srv.ServerTime(local) >= c.goAt {
		// Go, at the first frame the synced clock passes it, as a game does.
		c.waitGo, c.bot.hold = false, false
	}
	c.bot.tickFrame()
	if c.srv.Synced() {
		c.render(t, local)
	}
	if c.direct != nil {
		c.directPing(local)
	}
	if c.w.sc.Contact {
		c.contact()
	}
	// The sample is the state once this frame's input acts (one physics
	// step on), as an engine samples after its physics tick.
	ts := t
	if c.bot.frameInput {
		c.bot.advance(c.bot.t + botStep)
		ts = c.bot.t
	}
	k := c.bot.at(ts)
	if c.w.sc.Dim2D {
		k = to2D(k)
	}
	c.loc.Sample(c.clk.Read(ts), k.Pos, k.Rot, k.Vel, true)
	c.lastSampleTrue = ts
	if !c.joined || c.closed {
		return
	}
	var delay time.Duration
	if c.spec.SendDelay != nil {
		delay = max(0, c.spec.SendDelay.Sample(c.rSend))
	}
	if delay == 0 || c.w.opt.Variant.PollAtSample {
		// The sender is polled at the frame; the state leaves after the
		// delay, which the sender does not know.
		out, ok := c.poll(local, t)
		if !ok {
			return
		}
		c.w.s.After(delay, func() { c.send(out) })
		return
	}
	// The engine polls the sender when it flushes its sockets, delay after
	// the frame: the sender knows how old its sample is.
	c.w.s.After(delay, func() {
		if out, ok := c.poll(c.local(), c.w.s.Now()); ok {
			c.send(out)
		}
	})
}

// poll polls the sending side at local (true time now) and, when a state
// is due, hands it to the core's send queue and writes it at once, as the
// game's writer does (client/core: one encoding, the one carry from the
// sample to the write). It returns a copy of the bytes written and books
// the true time of the state's stamp.
func (c *client) poll(local, now time.Duration) ([]byte, bool) {
	// As NetPredictor.Sample: Local says whether a state is due (it polls
	// no earlier than its newest sample's stamp, and an entity at rest
	// sends at RestKeepAlive).
	sp, ok := c.loc.PollAt(local, c.slot)
	if !ok {
		return nil, false
	}
	st := *sp
	out := c.srv.Out()
	out.Push(&st, core.SampledAt(&st, local))
	c.buf = out.AppendBatch(c.buf[:0], local)
	var sent wire.State
	if len(c.buf) == 0 || wire.DecodeState(c.buf, &sent) != nil {
		return nil, false
	}
	at := c.lastSampleTrue
	if sent.Stamp != st.Stamp {
		at = now // carried forward to the write (the send lead)
	}
	c.sentTrue[st.Seq] = at
	c.w.stats.StatesSent++
	return append(c.w.buf(), c.buf...), true
}

// send puts a state on the server link and the direct link.
func (c *client) send(out []byte) {
	if c.direct != nil {
		c.direct.Send(append(c.w.buf(), out...))
	}
	c.up.Send(out)
}

// render draws the other player with every method and records the frame.
func (c *client) render(t, local time.Duration) {
	// As NetPredictor's _process: one Frame per rendered frame.
	pose, ch := c.rem.Frame(local)
	if ch&entity.ChangeSnapped != 0 {
		c.w.stats.Snaps++
	}
	ipos, iok, dry := c.interp.draw(local)
	apos, aok, adry := c.adapt.draw(local)
	rpos, rok, rdry := c.arrInterp.draw(local)
	lpos, lok := c.lerp.draw()
	if !pose.Valid || c.rem.Hidden() || !iok || !aok || !rok || !lok || !c.newest0.has ||
		t < c.w.measureFrom {
		return
	}
	rb := shownBot{c.remote.bot, c.w.opt.Variant.InputDelay}
	truth := rb.at(t)
	f := frameIn{t: t.Seconds(), truth: truth, dirs: c.dirs[:0], trail: c.trail[:0]}
	for i := range len(c.dirs) {
		back := time.Duration(float64(i) * reversalLookback / float64(len(c.dirs)-1) * float64(time.Second))
		v := rb.at(t - back).Vel
		if hs := math.Hypot(v.X, v.Z); hs > reversalMinSpeed {
			f.dirs = append(f.dirs, geom.Vec3{X: v.X / hs, Z: v.Z / hs})
		}
	}
	f.moves = c.moves[:0]
	if dtf := t - c.prevRenderT; c.prevRenderT > 0 && dtf < 250*time.Millisecond {
		for i := range len(c.moves) {
			at := t - time.Duration(float64(i)*popLagStep*float64(time.Second))
			f.moves = append(f.moves, rb.at(at).Pos.Sub(rb.at(at-dtf).Pos))
		}
	}
	c.prevRenderT = t
	for i := range len(c.trail) {
		f.trail = append(f.trail, rb.at(t-time.Duration(float64(i)*offPathStep*float64(time.Second))).Pos)
	}
	if since, ok := rb.sinceTeleport(t); ok && since.Seconds() < teleportGraceS {
		// Nobody can draw a teleport before its state arrives: the frames
		// around it are not judged (a snap that never came would be).
		return
	}

	if c.w.sc.Dim2D {
		pose.Pos, pose.Raw, pose.Vel = from2D(pose.Pos), from2D(pose.Raw), from2D(pose.Vel)
	}
	// nearzero, with its error split.
	nz := f
	nz.drawn, nz.pastCap = pose.Pos, pose.PastCap
	nz.hasSplit = true
	nz.age, nz.path, nz.corr = pose.Age.Seconds(), uint8(pose.Path), pose.Correction
	if n := c.newest[pose.Path]; n.ok {
		trueAge := t - c.remote.sentTrue[n.seq] - c.w.opt.Variant.InputDelay
		nz.timingS = (pose.Age - trueAge).Seconds()
	}
	nom := c.nomDirect
	if pose.Path == predict.PathServer {
		nom = c.remote.spec.Up.Latency + c.spec.Down.Latency
	}
	// The reference's newest sample is always the one just added (times
	// only grow on each path), so its Raw is the extrapolation of the
	// truth at the nominal age, smoothing aside.
	kn := rb.at(t - nom)
	if c.w.sc.Dim2D {
		kn = to2D(kn)
	}
	c.refSeq++
	rp := c.ref[pose.Path]
	rp.Add(pose.Path, predict.Sample{Time: c.clk.Read(t - nom), Seq: c.refSeq, Pos: kn.Pos, Vel: kn.Vel, Acc: kn.Acc,
		Rot: kn.Rot, Turn: kn.Turn}, local)
	ref := rp.PoseAt(local)
	if c.w.sc.Dim2D {
		ref.Raw = from2D(ref.Raw)
	}
	timing := pose.Vel.Scale(nz.timingS)
	nz.pieces[pieceTiming] = timing
	nz.pieces[piecePredictor] = ref.Raw.Sub(truth.Pos)
	nz.pieces[pieceStale] = pose.Raw.Sub(timing).Sub(ref.Raw)
	nz.pieces[pieceSmoothing] = pose.Pos.Sub(pose.Raw)
	c.series[mNearzero].add(&nz)

	for m, d := range [...]struct {
		pos  geom.Vec3
		past bool
	}{
		mSnap:           {c.newest0.s.pos, false},
		mExtrapolateV:   {c.newest0.extrapolate(local), local-c.newest0.s.t > extrapolateCap},
		mInterpAdaptive: {apos, adry},
		mInterp100:      {ipos, dry},
		mInterpArrival:  {rpos, rdry},
		mLerp:           {lpos, false},
	} {
		if m == mNearzero {
			continue
		}
		b := f
		b.drawn, b.pastCap = d.pos, d.past
		c.series[m].add(&b)
	}
	if c.w.opt.Trace {
		c.speed = append(c.speed, truth.Vel.Len())
	}
}

// shownBot is a bot on the shared timeline: its simulation delay late
// (Variant.InputDelay; the bot itself when 0).
type shownBot struct {
	b     *bot
	delay time.Duration
}

func (s shownBot) at(t time.Duration) Kin { return s.b.at(t - s.delay) }

func (s shownBot) sinceTeleport(t time.Duration) (time.Duration, bool) {
	return s.b.sinceTeleport(t - s.delay)
}

// contact bumps this client's vehicle off the other as drawn, when the
// drawn one may be collided with.
func (c *client) contact() {
	p := c.rem.Pose()
	if !p.Valid || p.Visibility != predict.Visible || !p.Collidable {
		return
	}
	own := c.bot.kin()
	d := own.Pos.Sub(p.Pos)
	d.Y = 0
	dist := d.Len()
	if dist >= contactDist || dist < 1e-6 {
		return
	}
	n := d.Scale(1 / dist)
	rel := own.Vel.Sub(p.Vel).Dot(n)
	if rel >= 0 {
		return // already separating
	}
	c.bot.impulse(n.Scale(-(1 + contactRestitution) / 2 * rel))
	c.w.stats.Contacts++
}

// ---- the round flow (Scenario.Rounds)

func (c *client) onRoom(m *protocol.RoomState) {
	prev := c.phase
	c.phase = m.Phase
	send := func(msg protocol.Message) { c.up.Send(protocol.MustMarshal(msg)) }
	switch m.Phase {
	case protocol.PhaseLobby:
		if prev != protocol.PhaseLobby || !c.readySent {
			send(&protocol.Loading{Progress: 1})
			send(&protocol.Ready{Ready: true})
			c.readySent = true
		}
		if m.Host == c.slot && !c.startSent && len(m.Players) == 2 {
			all := true
			for _, p := range m.Players {
				all = all && p.Connected && p.Loaded >= 1 && p.Ready
			}
			if all {
				send(&protocol.Start{})
				c.startSent = true
			}
		}
	case protocol.PhaseHandshake:
		c.readySent, c.startSent = false, false
		if prev != protocol.PhaseHandshake {
			c.frames.Post(func() {
				c.bot.advance(c.w.s.Now())
				pos, psi := spawnPoint(c.idx)
				c.bot.spawn(pos, psi)
				c.loc.Teleport()
				send(&protocol.InPosition{})
			})
		}
	case protocol.PhaseCountdown, protocol.PhasePlaying:
		if m.GoUS != 0 && c.goRound != m.Round {
			c.goRound = m.Round
			c.goAt, c.waitGo = protocol.DurationUS(m.GoUS), true
			if c.idx == 0 {
				c.w.stats.Rounds++
			}
		}
	case protocol.PhaseResults:
		c.bot.hold, c.waitGo = true, false
	}
}

// trace returns this client's per-frame record of the other player.
func (c *client) trace(entity string) Trace {
	tr := Trace{Scenario: c.w.sc.Name, Entity: entity, T: c.series[0].t,
		TimingMS: scaled(c.series[0].timing, 1000), AgeMS: scaled(c.series[0].age, 1000),
		Correction: c.series[0].corr, Path: c.series[0].path, Speed: c.speed}
	for i := range Methods {
		tr.Along = append(tr.Along, c.series[i].along)
		tr.Side = append(tr.Side, c.series[i].side)
	}
	return tr
}

func scaled(xs []float64, k float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * k
	}
	return out
}
