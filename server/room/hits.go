package room

import (
	"fmt"
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Defaults of HitRules.
const (
	DefaultMaxRewind     = 500 * time.Millisecond
	DefaultFutureSlack   = 50 * time.Millisecond
	DefaultHitTolerance  = 1.0  // m
	DefaultHitTolerance2 = 32.0 // px
	DefaultDamage        = 25
	DefaultHealth        = 100
	DefaultHitRate       = 10.0
	DefaultHitBurst      = 20.0
	DefaultFireSlack     = 50 * time.Millisecond
	// DefaultHitRange is a rifle's reach in a level, not a sniper's across
	// a map (set Range for those); DefaultHitRange2D is a couple of
	// screens.
	DefaultHitRange   = 300.0  // m
	DefaultHitRange2D = 6000.0 // px
	// HitHistory is how many relayed states the room keeps per shooter
	// and target (about a second at 60 Hz): enough for the
	// predictor to rebuild what was drawn MaxRewind ago.
	HitHistory = 64
	// shooterFrame is the frame time the rebuild assumes.
	shooterFrame = time.Second / 60
)

// HitRules turn on hits the server decides (protocol.Hit) and tune them.
// Off by default: then the room keeps no history and answers a Hit with
// CodeBadRequest. The zero value of every other field means its default.
type HitRules struct {
	// On turns hits on: the room keeps, for every player, the last
	// HitHistory states it relayed to them from each other player and when.
	On bool
	// MaxRewind is how far into the past the server looks to judge a
	// shot: the shot's age when its Hit arrives (server clock now minus
	// the fire time; older is refused) plus the delay the target's states
	// took to reach the shooter (cut to fit). Default 500 ms.
	MaxRewind time.Duration
	// FutureSlack is how far ahead of the server clock a fire time may be
	// (clock-sync error). Default 50 ms.
	FutureSlack time.Duration
	// FireSlack bounds how old a fire time may be on arrival beyond the
	// delay the server measured to the shooter: half its measured round
	// trip (the smallest recent probe, roundtrip.go) plus the probes'
	// jitter plus FireSlack (clock-sync error, the frame between firing and
	// sending). Before the first measurement the round trip counts as
	// 100 ms; for a client that answers no probe, as 0. An older fire time
	// is refused: without this rule a shooter on a 1 ms link set its fire
	// time back 490 ms and hit where the target was then. Default 50 ms.
	FireSlack time.Duration
	// Tolerance is the largest distance between the reported hit point
	// and the reconstructed drawn position, in metres (3D). Default 1.
	Tolerance float64
	// Tolerance2D is Tolerance for 2D games, in pixels. Default 32.
	Tolerance2D float64
	// Range is how far in metres (3D) the shooter's own entity may be from
	// where it drew the target, plus how far the speed limit lets the
	// shooter move between the fire time and the report (a fire time
	// within what FireSlack allows). A hit from farther, or from a shooter
	// whose entity has no position, is refused. Default 300 m; negative
	// means no range rule. Weapon ranges differ by orders of magnitude
	// between games (a brawler's 3 m, a sniper's 1 km): set it to the
	// longest of yours. Without it an exact hit from 10 km was accepted.
	Range float64
	// Range2D is Range for 2D games, in pixels. Default 6000; negative
	// means no range rule.
	Range2D float64
	// Damage is what one accepted hit takes off; Health a player's full
	// health. Defaults 25 and 100.
	Damage, Health int
	// HitRate is how many hits one player may report per second, and
	// HitBurst how many at once. Defaults 10 and 20.
	HitRate, HitBurst float64
	// Predict configures the predictor the room rebuilds drawn positions
	// with: the shooter's NetPredictor settings (zero: predict's defaults
	// for the room's dimension).
	Predict predict.Config
}

func (h HitRules) withDefaults() HitRules {
	setDefault(&h.MaxRewind, DefaultMaxRewind)
	setDefault(&h.FutureSlack, DefaultFutureSlack)
	setDefault(&h.FireSlack, DefaultFireSlack)
	setDefault(&h.Range, DefaultHitRange)
	setDefault(&h.Range2D, DefaultHitRange2D)
	setDefault(&h.Tolerance, DefaultHitTolerance)
	setDefault(&h.Tolerance2D, DefaultHitTolerance2)
	setDefault(&h.Damage, DefaultDamage)
	setDefault(&h.Health, DefaultHealth)
	setDefault(&h.HitRate, DefaultHitRate)
	setDefault(&h.HitBurst, DefaultHitBurst)
	return h
}

func (h HitRules) validate() error {
	switch {
	case h.MaxRewind <= 0 || h.FutureSlack < 0 || h.FireSlack < 0:
		return fmt.Errorf("MaxRewind %v must be positive, FutureSlack %v and FireSlack %v not negative", h.MaxRewind, h.FutureSlack, h.FireSlack)
	case h.Tolerance <= 0 || h.Tolerance2D <= 0:
		return fmt.Errorf("Tolerance %v and Tolerance2D %v must be positive", h.Tolerance, h.Tolerance2D)
	case math.IsNaN(h.Range) || math.IsNaN(h.Range2D):
		return fmt.Errorf("Range %v or Range2D %v is not a number", h.Range, h.Range2D)
	case h.Damage < 1 || h.Health < 1:
		return fmt.Errorf("Damage %d and Health %d must be at least 1", h.Damage, h.Health)
	case h.HitRate <= 0 || h.HitBurst < 1:
		return fmt.Errorf("HitRate %v must be positive and HitBurst %v at least 1", h.HitRate, h.HitBurst)
	}
	if err := h.Predict.Validate(); err != nil {
		return fmt.Errorf("Predict: %w", err)
	}
	return nil
}

// seen is one relayed state as a recipient got it: the sample on the
// server clock, when the server sent it, and half the round trip the
// recipient claimed then. The delivery time is decided per hit (drawnAt):
// the claim is trusted only as far as the hit report allows.
type seen struct {
	s    predict.Sample
	sent time.Duration
	half time.Duration // claimed one-way delay; 0 on a direct link
}

// seenRing is the last HitHistory states relayed to one player from one
// other, oldest first from head.
type seenRing struct {
	buf     [HitHistory]seen
	head, n int
	dim2D   bool
}

func (g *seenRing) push(e seen) {
	if g.n == len(g.buf) {
		g.head = (g.head + 1) % len(g.buf)
		g.n--
	}
	g.buf[(g.head+g.n)%len(g.buf)] = e
	g.n++
}

func (g *seenRing) at(i int) *seen { return &g.buf[(g.head+i)%len(g.buf)] }

// hitSeat is one player's hit bookkeeping, inside eventBudget.
type hitSeat struct {
	seen   [MaxSlots]*seenRing // what was relayed to this player, by sender slot
	health int                 // 0 until the first hit: full
	kills  int
	deaths int
	bucket bucket
	filled bool
}

// noteRelayed records a state relayed to o from slot from, sampled at at
// on the server clock, sent now. Called from the relay path when hits are
// on; it allocates only the first time a pair is seen.
func (r *Room) noteRelayed(now time.Duration, o *seat, from int, st *wire.State, at time.Duration) {
	g := o.ev.hit.seen[from]
	if g == nil {
		g = new(seenRing)
		o.ev.hit.seen[from] = g
	}
	g.dim2D = st.Dim2D
	// Trusted as of now, not as of o's last ping: a player that stops
	// answering probes loses its claim once the grace runs out.
	rtt, _ := o.rt.trusted(now)
	g.push(seen{s: predict.SampleOf(st, at), sent: now, half: rtt / 2})
}

// noteDirect records a state o got from slot from on their direct link
// (the server does not relay it): o had it about when the server did, so
// its delivery is taken as now. The direct path is usually the faster, so
// this errs toward an older drawn position by the sender's one-way time.
func (r *Room) noteDirect(now time.Duration, o *seat, from int, st *wire.State, at time.Duration) {
	g := o.ev.hit.seen[from]
	if g == nil {
		g = new(seenRing)
		o.ev.hit.seen[from] = g
	}
	g.dim2D = st.Dim2D
	g.push(seen{s: predict.SampleOf(st, at), sent: now})
}

// forgetSlot drops what every player was sent from slot (a new occupant).
func (r *Room) forgetSlot(slot int) {
	for _, o := range r.seats {
		if o != nil {
			o.ev.hit.seen[slot] = nil
		}
	}
}

// hit judges one reported hit. A refusal goes back to the shooter alone
// as a HitResult with Reason; an accepted hit is applied and broadcast.
func (r *Room) hit(now time.Duration, s *seat, m *protocol.Hit) *protocol.Error {
	h := &r.cfg.Hits
	if !h.On {
		return protocol.Errorf(protocol.CodeBadRequest, "this room has no server-decided hits")
	}
	t := r.seatAt(m.Target)
	if t == nil || t == s {
		return protocol.Errorf(protocol.CodeBadRequest, "no other player in slot %d", m.Target)
	}
	hs := &s.ev.hit
	if !hs.filled {
		hs.bucket, hs.filled = ratelimit.Full(now, h.HitBurst), true
	}
	if !hs.bucket.Take(now, h.HitRate, h.HitBurst) {
		r.rejectControl(now, s, RejectControlRate, protocol.Errorf(protocol.CodeRateLimited,
			"hit refused: more than %.0f hits per second (burst %.0f)", h.HitRate, h.HitBurst))
		return nil
	}
	res := &protocol.HitResult{From: s.slot, Target: m.Target, MissBy: -1, Kills: hs.kills, Deaths: t.ev.hit.deaths,
		Health: t.ev.hit.healthOr(h.Health)}
	fire := protocol.DurationUS(m.FireUS)
	res.RewindUS = protocol.US(now - fire)
	point := geom.Vec3{X: m.Point[0], Y: m.Point[1], Z: m.Point[2]}
	oldest := r.believableAge(now, s)
	drawn, why := r.drawnAt(s, m.Target, fire, now, oldest)
	tol, rng, top := h.Tolerance, h.Range, r.cfg.TopSpeed
	if g := hs.seen[m.Target]; g != nil && g.dim2D {
		tol, rng, top = h.Tolerance2D, h.Range2D, r.cfg.TopSpeed2D
	}
	if why == "" && rng > 0 {
		// The shooter moved since it fired for as long as the shot is
		// old, which drawnAt bounded by the measured delay.
		why = r.outOfRange(s, drawn, rng, r.cfg.SpeedFactor*top*min(max(0, now-fire), oldest).Seconds())
	}
	if why == "" {
		res.MissBy = point.Sub(drawn).Len()
		if res.MissBy > tol {
			why = fmt.Sprintf("the target was drawn %.2f away from the hit point (tolerance %.2f)", res.MissBy, tol)
		}
	}
	if why != "" {
		res.Reason = why
		r.send(s.peer, res)
		return nil
	}
	th := &t.ev.hit
	th.health = th.healthOr(h.Health) - h.Damage
	res.Accepted, res.Damage = true, h.Damage
	if th.health <= 0 {
		res.Killed = true
		th.deaths++
		hs.kills++
		th.health = h.Health // respawned at once: the game moves it
	}
	res.Health, res.Kills, res.Deaths = th.health, hs.kills, th.deaths
	r.broadcast(res)
	return nil
}

// believableAge is the oldest fire time, as an age on arrival at now,
// the room believes of shooter s: the one-way delay it measured (half the
// round trip, plus the jitter) and FireSlack, never more than MaxRewind.
func (r *Room) believableAge(now time.Duration, s *seat) time.Duration {
	rtt, jitter := s.rt.bound(now)
	return min(r.cfg.Hits.MaxRewind, rtt/2+jitter+r.cfg.Hits.FireSlack)
}

// shiftCap is the most delivery delay a hit whose report arrived rewind
// after its fire time may count. The server saw the report take rewind to
// arrive, and a shooter's clock sync splits its round trip evenly (its
// fire time reads half a round trip ahead of its own clock), so an honest
// shooter's half round trip is at most rewind. Fire age plus delivery
// delay, how far into the past the rebuild looks, stays within MaxRewind:
// an honest shooter 150 ms away each way needs about 300 ms of it.
func (h *HitRules) shiftCap(rewind time.Duration) time.Duration {
	return max(0, min(rewind, h.MaxRewind-rewind))
}

// outOfRange returns why shooter s could not have hit a target drawn at
// drawn ("" when it could): its own entity's last accepted position must
// lie within rng of it, plus moved, how far it may have gone since firing.
func (r *Room) outOfRange(s *seat, drawn geom.Vec3, rng, moved float64) string {
	if !s.mo.OK {
		return "the server has no position of yours to measure the hit range from"
	}
	if d := s.mo.Pos.Sub(drawn).Len(); d > rng+moved {
		return fmt.Sprintf("the target was %.1f away, beyond the hit range %.1f", d, rng)
	}
	return ""
}

func (h *hitSeat) healthOr(full int) int {
	if h.health == 0 {
		return full
	}
	return h.health
}

// drawnAt rebuilds where shooter s drew the player in slot target at fire
// (server clock): the room's predictor fed the states relayed to s from
// that player, each at its delivery time, then asked for fire. It returns
// why it cannot ("" when it can): a fire time more than oldest before now
// (believableAge) is not believed.
//
// The delivery time is the send time plus the one-way delay the shooter
// claimed (half its Ping.RTTUS, cut to the round trip the room measured,
// roundtrip.go), but at most shiftCap(now - fire): a
// claimed round trip of 1 s would otherwise make every state "arrive"
// 500 ms late and let the shooter hit where the target was long ago.
func (r *Room) drawnAt(s *seat, target int, fire, now, oldest time.Duration) (geom.Vec3, string) {
	h := &r.cfg.Hits
	rewind := now - fire
	switch {
	case rewind > h.MaxRewind:
		return geom.Vec3{}, fmt.Sprintf("shot fired %v ago, more than the %v the server rewinds", rewind.Round(time.Millisecond), h.MaxRewind)
	case rewind > oldest:
		rtt, _ := s.rt.bound(now)
		return geom.Vec3{}, fmt.Sprintf("shot fired %v ago, older than the delay the server measured to you allows (%v; round trip %v)",
			rewind.Round(time.Millisecond), oldest.Round(time.Millisecond), rtt.Round(time.Millisecond))
	case rewind < -h.FutureSlack:
		return geom.Vec3{}, fmt.Sprintf("shot fired %v in the future", (-rewind).Round(time.Millisecond))
	}
	shift := h.shiftCap(rewind)
	deliver := func(e *seen) time.Duration { return e.sent + min(e.half, shift) }
	g := s.ev.hit.seen[target]
	if g == nil || g.n == 0 || deliver(g.at(0)) > fire {
		return geom.Vec3{}, "the server has no record of what you were drawing then"
	}
	cfg := h.Predict
	cfg.Dim2D = g.dim2D
	if r.hitPred == nil || r.hitPred.Config().Dim2D != g.dim2D {
		p, err := predict.New(cfg)
		if err != nil {
			return geom.Vec3{}, "internal: " + err.Error()
		}
		r.hitPred = p
	}
	p := r.hitPred
	p.Reset()
	// Replay the shooter's frames (60 Hz from the first delivery): states
	// delivered by a frame join the buffer, then the frame draws, so the
	// smoothing sees corrections when the shooter's screen did.
	i := 0
	add := func(until time.Duration) {
		for ; i < g.n && deliver(g.at(i)) <= until; i++ {
			p.Add(predict.PathServer, g.at(i).s, deliver(g.at(i)))
		}
	}
	for t := deliver(g.at(0)); t < fire; t += shooterFrame {
		add(t)
		p.PoseAt(t)
	}
	add(fire)
	pose := p.PoseAt(fire)
	if !pose.Valid || pose.Visibility == predict.Hidden {
		return geom.Vec3{}, "the target was not drawn then"
	}
	return pose.Pos, ""
}
