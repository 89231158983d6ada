package predict

import (
	"fmt"
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Pose is where and how to draw a remote entity at one moment.
type Pose struct {
	// Valid is false until the first sample; every other field is then zero
	// (Rot is geom.Identity, Visibility is Hidden).
	Valid bool
	// Pos is the position to draw: Raw plus the smoothing offset.
	Pos geom.Vec3
	// Rot is the orientation to draw, smoothed like Pos.
	Rot geom.Quat
	// Vel is the predicted velocity (unsmoothed); zero once stopped past
	// Config.CoastUntil.
	Vel geom.Vec3
	// Raw is the prediction before smoothing; the bench splits the error by
	// source with it.
	Raw geom.Vec3
	// Visibility is Visible, Ghost or Hidden, by time since the last arrival.
	Visibility Visibility
	// Collidable is true only when Visible and past the contact-trust
	// window: false while Ghost or Hidden, or inside that window.
	Collidable bool
	// Snapped reports that this call cleared the smoothing offset: a
	// teleport flag, or an offset beyond Config.TeleportDistance.
	Snapped bool
	// PastCap reports an age beyond Config.PredictionCap: coasting, or
	// stopped past Config.CoastUntil.
	PastCap bool
	// Age is now minus the newest sample time on the drawn path; negative
	// when that sample is stamped ahead of now.
	Age time.Duration
	// SinceArrival is now minus the last arrival on any path.
	SinceArrival time.Duration
	// Correction is the length of the smoothing offset still being faded out.
	Correction float64
	// Path is the path drawn from.
	Path Path
	// Anim and Input are the extras of the newest sample on the drawn path.
	Anim, Input uint8
	// Flags are the flags of the newest sample on the drawn path.
	Flags wire.Flags
}

// Predictor predicts one remote entity. It is not safe for concurrent use;
// Add and PoseAt never allocate.
type Predictor struct {
	cfg Config    // read-only after New, defaults filled in
	up  geom.Vec3 // the turn axis: geom.Up3D or geom.Up2D

	paths       [numPaths]ring
	jitter      [numPaths]time.Duration // per path, computed by Jitter
	jitterStale [numPaths]bool          // a sample was added since

	hasArrival    bool
	lastArrival   time.Duration // on any path
	lastArrivalOn [numPaths]time.Duration
	// untrustedUntil is the end of the contact-trust window.
	untrustedUntil time.Duration

	// Changes since the last PoseAt, which decide whether it corrects.
	epoch      uint64 // incremented by every PoseAt; see entry.gen
	dirty      [numPaths]bool
	teleport   [numPaths]bool // a new newest sample carried FlagTeleport
	reappeared bool           // first arrival after Hidden: start afresh

	hasPath bool
	path    Path // the path drawn by the last PoseAt
	// anchor is a copy of the drawn path's newest sample as of the last
	// PoseAt: it stands for the previous prediction when a burst of
	// arrivals (after a main-thread hitch) has pushed every older sample
	// out of the buffer. Set whenever hasPath is.
	anchor entry

	hasNow  bool
	lastNow time.Duration
	offPos  geom.Vec3 // drawn minus raw position
	offRot  geom.Quat // drawn = offRot * raw rotation

	auto *autoState // Config.Auto's shadows and scores (auto.go); nil unless Auto
	// velOnly makes extrapolate ignore acceleration and turn rate (an Auto
	// model; see auto.go); drewVelOnly is the model of the last PoseAt.
	velOnly, drewVelOnly bool
}

// New returns a predictor for cfg (zero fields take their defaults). It
// allocates both paths' buffers.
func New(cfg Config) (*Predictor, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("predict.New: %w", err)
	}
	p := &Predictor{cfg: cfg, up: geom.Up3D, offRot: geom.Identity}
	if cfg.Auto {
		p.auto = &autoState{}
	}
	if cfg.Dim2D {
		p.up = geom.Up2D
	}
	for i := range p.paths {
		p.paths[i] = newRing(cfg.BufferLen)
	}
	return p, nil
}

// Config returns the predictor's configuration with defaults filled in.
func (p *Predictor) Config() Config { return p.cfg }

// Reset forgets every sample and all state, as if just made by New.
func (p *Predictor) Reset() {
	paths := p.paths
	for i := range paths {
		paths[i].reset()
	}
	auto := p.auto
	if auto != nil {
		*auto = autoState{}
	}
	*p = Predictor{cfg: p.cfg, up: p.up, paths: paths, offRot: geom.Identity, auto: auto}
}

// Add stores a sample that arrived on path at arrival (receiver clock). It
// returns false, and changes nothing, for an unknown path, a sample with NaN
// or infinite numbers, a duplicate (same Seq or same Time on that path) and
// a sample older than a full buffer. An out-of-order sample inside the
// buffer is inserted in time order. Only accepted samples count as arrivals.
func (p *Predictor) Add(path Path, s Sample, arrival time.Duration) bool {
	if path >= numPaths || !s.finite() {
		return false
	}
	s.Rot = s.Rot.Normalized()
	r := &p.paths[path]
	newest := r.newest()
	isNewest := newest == nil || s.Time > newest.Time
	e := entry{Sample: s, arrival: arrival, gen: p.epoch, accRest: restAcc(s.Acc, s.Vel, p.up, s.Turn)}
	if !r.insert(&e) {
		return false
	}
	p.dirty[path] = true
	if isNewest && s.Flags&wire.FlagTeleport != 0 {
		p.teleport[path] = true
	}
	p.jitterStale[path] = true
	if p.auto != nil && isNewest {
		p.autoLabel(&s)
	}

	switch {
	case !p.hasArrival:
		p.untrustedUntil = arrival + p.cfg.ContactTrust
	case arrival-p.lastArrival >= p.cfg.HideAfter:
		// Back from Hidden: it appears again, and nothing on screen needs
		// a smooth join.
		p.untrustedUntil = max(p.untrustedUntil, arrival+p.cfg.ContactTrust)
		p.reappeared = true
	}
	if !p.hasArrival || arrival > p.lastArrival {
		p.lastArrival = arrival
	}
	p.hasArrival = true
	p.lastArrivalOn[path] = max(p.lastArrivalOn[path], arrival)
	return true
}

// PoseAt returns the pose to draw at now (receiver clock). Call it once per
// rendered frame with non-decreasing now: the smoothing offset decays by the
// time since the previous call (an earlier now decays nothing). It never
// allocates.
func (p *Predictor) PoseAt(now time.Duration) Pose {
	if p.paths[PathServer].n == 0 && p.paths[PathDirect].n == 0 {
		return Pose{Rot: geom.Identity, Visibility: Hidden, Path: p.path}
	}
	tau, vmax := p.cfg.SmoothingTau, p.cfg.MaxCorrectionSpeed
	if p.auto != nil {
		p.warm()
		var capped bool
		if _, tau, capped, p.velOnly = p.autoTarget(); !capped {
			vmax = 0
		}
	}
	var dt time.Duration
	if p.hasNow && now > p.lastNow {
		dt = now - p.lastNow
	}
	if p.auto == nil {
		p.fade(dt, tau, vmax)
	}
	if !p.hasNow || now > p.lastNow {
		p.lastNow, p.hasNow = now, true
	}

	prevPath, hadPath := p.path, p.hasPath
	path := p.choosePath(now)
	lag := p.autoLag(now)
	est, _ := p.estimate(path, now-lag, math.MaxUint64, nil)
	est.age = now - est.newest.Time
	if p.auto != nil {
		p.autoFrame(now, dt, est.age, path, prevPath, hadPath && (p.dirty[path] || path != prevPath),
			!hadPath || p.reappeared, p.teleport[path])
	}

	if p.auto != nil && hadPath && !p.reappeared && p.velOnly != p.drewVelOnly {
		// Auto switched model: keep drawing where the old one would have,
		// as for new data (the data change below then compares like with
		// like, both with the new model).
		cur := p.velOnly
		p.velOnly = p.drewVelOnly
		was, ok1 := p.estimate(prevPath, now-lag, p.epoch, &p.anchor)
		p.velOnly = cur
		is, ok2 := p.estimate(prevPath, now-lag, p.epoch, &p.anchor)
		if ok1 && ok2 {
			p.offPos = p.offPos.Add(was.pos.Sub(is.pos))
		}
	}
	p.drewVelOnly = p.velOnly

	snapped := false
	switch {
	case !hadPath || p.reappeared:
		p.offPos, p.offRot = geom.Vec3{}, geom.Identity
	case p.dirty[path] || path != prevPath:
		// The prediction changed: keep drawing where the previous one
		// would have drawn, and fade the difference out.
		old, ok := p.estimate(prevPath, now-lag, p.epoch, &p.anchor)
		if !ok {
			break
		}
		corr := old.pos.Sub(est.pos)
		if corr.Len() > p.cfg.Width {
			p.untrustedUntil = max(p.untrustedUntil, now+p.cfg.ContactTrust)
		}
		off := p.offPos.Add(corr)
		if p.teleport[path] || off.Len() > p.cfg.TeleportDistance {
			p.offPos, p.offRot = geom.Vec3{}, geom.Identity
			snapped = true
			break
		}
		p.offPos = off
		p.offRot = p.offRot.Mul(old.rot).Mul(conj(est.rot)).Normalized()
	}
	if p.auto != nil {
		// Auto fades a correction from the frame it arrives in: the state
		// came during the frame's time, and with a short time constant
		// drawing the old prediction one more frame is a frame of error.
		p.fade(dt, tau, vmax)
	}
	p.dirty, p.teleport, p.reappeared = [numPaths]bool{}, [numPaths]bool{}, false
	p.path, p.hasPath = path, true
	p.anchor = *est.newest
	p.epoch++

	since := now - p.lastArrival
	vis := Visible
	switch {
	case since >= p.cfg.HideAfter:
		vis = Hidden
	case since >= p.cfg.GhostAfter:
		vis = Ghost
	}
	return Pose{
		Valid:        true,
		Pos:          est.pos.Add(p.offPos),
		Rot:          p.offRot.Mul(est.rot).Normalized(),
		Vel:          est.vel,
		Raw:          est.pos,
		Visibility:   vis,
		Collidable:   vis == Visible && now >= p.untrustedUntil,
		Snapped:      snapped,
		PastCap:      est.pastCap,
		Age:          est.age,
		SinceArrival: since,
		Correction:   p.offPos.Len(),
		Path:         path,
		Anim:         est.newest.Anim,
		Input:        est.newest.Input,
		Flags:        est.newest.Flags,
	}
}

// Jitter returns the standard deviation of arrival - sample time over the
// buffer of the path the last PoseAt drew from (the server path before
// any): a debug figure, computed when asked (a pass over the buffer at
// every frame was 8% of an Auto frame in the engine), and kept until a
// sample arrives on that path.
func (p *Predictor) Jitter() time.Duration {
	path := p.path
	if p.jitterStale[path] {
		p.jitter[path], p.jitterStale[path] = p.paths[path].jitter(), false
	}
	return p.jitter[path]
}

// fade decays the smoothing offset by dt with time constant tau, moving the
// drawn entity at most vmax·dt (when vmax > 0).
func (p *Predictor) fade(dt, tau time.Duration, vmax float64) {
	if dt <= 0 {
		return
	}
	k := math.Exp(-float64(dt) / float64(tau))
	if vmax > 0 {
		// The fade may move the drawn entity at most vmax·dt this frame.
		if l := p.offPos.Len(); l*(1-k) > vmax*dt.Seconds() {
			k = 1 - vmax*dt.Seconds()/l
		}
	}
	p.offPos = p.offPos.Scale(k)
	if p.offRot != geom.Identity {
		p.offRot = geom.Identity.Slerp(p.offRot, k)
	}
}

// choosePath returns the path to draw from at now: the one with the newest
// data, switching only when the other is ahead by more than PathMargin, or
// ahead at all once the drawn path has been silent for DirectOutage.
func (p *Predictor) choosePath(now time.Duration) Path {
	if !p.hasPath {
		s, d := p.paths[PathServer].newest(), p.paths[PathDirect].newest()
		if d == nil || (s != nil && s.Time > d.Time) {
			return PathServer
		}
		return PathDirect
	}
	cur := p.path
	other := 1 - cur
	c, o := p.paths[cur].newest(), p.paths[other].newest()
	switch {
	case o == nil:
		return cur
	case c == nil:
		return other
	}
	lead := o.Time - c.Time
	if lead > p.cfg.PathMargin || (lead > 0 && now-p.lastArrivalOn[cur] >= p.cfg.DirectOutage) {
		return other
	}
	return cur
}

// estimate is the raw prediction of one path at one moment.
type estimate struct {
	kin
	newest  *entry        // the newest sample it used
	age     time.Duration // now - newest.Time
	pastCap bool
	// modelFree: the motion model played no part (interpolated, held, or
	// extrapolated without acceleration and turn rate), so the full and
	// the velocity-only model agree (Auto steps one estimate for both).
	modelFree bool
	// gen is the newest gen of the samples it used (entry.gen): below the
	// epoch, the prediction before the latest arrivals was this same one.
	gen uint64
}

// estimate predicts path at now from the samples with gen < below (every
// sample for math.MaxUint64). When there are none it uses fallback, if not
// nil; ok is false when it has nothing to go on.
func (p *Predictor) estimate(path Path, now time.Duration, below uint64, fallback *entry) (est estimate, ok bool) {
	r := &p.paths[path]
	var lo, hi *entry // the samples around now: lo.Time <= now < hi.Time
	for i := r.n - 1; i >= 0; i-- {
		e := r.at(i)
		if e.gen >= below {
			continue
		}
		if est.newest == nil {
			est.newest = e
		}
		if e.Time <= now {
			lo = e
			break
		}
		hi = e
	}
	if est.newest == nil {
		if fallback == nil {
			return est, false
		}
		est.newest = fallback
		if fallback.Time <= now {
			lo = fallback
		} else {
			hi = fallback
		}
	}
	est.age = now - est.newest.Time
	if lo != nil {
		est.gen = lo.gen
	}
	if hi != nil {
		est.gen = max(est.gen, hi.gen)
	}
	switch {
	case hi == nil:
		est.kin, est.pastCap = p.extrapolate(lo, now-lo.Time)
		est.modelFree = lo.accRest == (geom.Vec3{}) && lo.Turn == 0
	case lo == nil:
		// now is before every sample (stamped ahead by a clock error):
		// hold the oldest rather than run the model backwards.
		est.kin, est.modelFree = kin{pos: hi.Pos, vel: hi.Vel, rot: hi.Rot}, true
	default:
		h := hi.Time - lo.Time
		est.kin = hermite(lo, hi, h.Seconds(), float64(now-lo.Time)/float64(h))
		est.modelFree = true
	}
	return est, true
}

// estimatePos is estimate's position alone, with its modelFree and gen
// (Auto's shadows; the same arithmetic, so the same position).
func (p *Predictor) estimatePos(path Path, now time.Duration, below uint64, fallback *entry) (pos geom.Vec3, modelFree bool, gen uint64, ok bool) {
	lo, hi, newest, gen := p.around(path, now, below, fallback)
	switch {
	case newest == nil:
		return pos, false, gen, false
	case hi == nil:
		modelFree = lo.accRest == (geom.Vec3{}) && lo.Turn == 0
		return p.extrapolatePos(lo, now-lo.Time), modelFree, gen, true
	case lo == nil:
		return hi.Pos, true, gen, true
	default:
		h := hi.Time - lo.Time
		return hermitePos(lo, hi, h.Seconds(), float64(now-lo.Time)/float64(h)), true, gen, true
	}
}

// around returns the samples of path around now with gen < below (lo.Time
// <= now < hi.Time; either may be nil), the newest of them and the newest
// gen of lo and hi, as estimate finds them (a copy: estimate pays no extra
// call). When there are none it uses fallback, if not nil; newest is nil
// when it has nothing to go on.
func (p *Predictor) around(path Path, now time.Duration, below uint64, fallback *entry) (lo, hi, newest *entry, gen uint64) {
	r := &p.paths[path]
	for i := r.n - 1; i >= 0; i-- {
		e := r.at(i)
		if e.gen >= below {
			continue
		}
		if newest == nil {
			newest = e
		}
		if e.Time <= now {
			lo = e
			break
		}
		hi = e
	}
	if newest == nil {
		if fallback == nil {
			return nil, nil, nil, 0
		}
		newest = fallback
		if fallback.Time <= now {
			lo = fallback
		} else {
			hi = fallback
		}
	}
	if lo != nil {
		gen = lo.gen
	}
	if hi != nil {
		gen = max(gen, hi.gen)
	}
	return lo, hi, newest, gen
}

// extrapolate carries e forward by age (>= 0): the full model up to the
// cap, then constant speed and turn rate up to CoastUntil, then still.
func (p *Predictor) extrapolate(e *entry, age time.Duration) (kin, bool) {
	capAge := p.cfg.PredictionCap
	acc, turn := e.accRest, e.Turn
	if p.velOnly {
		acc, turn = geom.Vec3{}, 0
	}
	if age <= capAge {
		return advance(e.Pos, e.Vel, acc, e.Rot, turn, p.up, age.Seconds()), false
	}
	k := advance(e.Pos, e.Vel, acc, e.Rot, turn, p.up, capAge.Seconds())
	coast := min(age, p.cfg.CoastUntil) - capAge
	k = advance(k.pos, k.vel, geom.Vec3{}, k.rot, turn, p.up, coast.Seconds())
	if age > p.cfg.CoastUntil {
		k.vel = geom.Vec3{}
	}
	return k, true
}

// extrapolatePos is extrapolate's position alone (the same arithmetic, so
// the same value; past the cap it runs extrapolate).
func (p *Predictor) extrapolatePos(e *entry, age time.Duration) geom.Vec3 {
	if age > p.cfg.PredictionCap {
		k, _ := p.extrapolate(e, age)
		return k.pos
	}
	acc, turn := e.accRest, e.Turn
	if p.velOnly {
		acc, turn = geom.Vec3{}, 0
	}
	return advancePos(e.Pos, e.Vel, acc, turn, p.up, age.Seconds())
}

// conj returns the inverse of the unit quaternion q.
func conj(q geom.Quat) geom.Quat { return geom.Quat{X: -q.X, Y: -q.Y, Z: -q.Z, W: q.W} }
