package predict

import (
	"fmt"
	"math"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

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

	auto      *tuner // Config.Auto's tuner (auto_tuner.go); nil unless Auto
	drewModel model  // the motion model of the last PoseAt
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
		p.auto = newTuner(cfg.autoParams())
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
		auto.reset()
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
		p.auto.label(p, &s)
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
	var f frame
	p.frameAt(now, &f)
	if !p.hasNow || now > p.lastNow {
		p.lastNow, p.hasNow = now, true
	}
	set := p.settings(&f)
	path, prevPath := f.path, f.prevPath
	at := now - set.lag
	est, _ := p.estimate(path, at, math.MaxUint64, nil, set.m)
	est.age = now - est.newest.Time
	if p.hasPath && !p.reappeared && set.m != p.drewModel {
		// Auto switched model: keep drawing where the old one would have,
		// as for new data (the data change below then compares like with
		// like, both with the new model).
		was, ok1 := p.shadowEstimate(prevPath, at, p.epoch, &p.anchor, p.drewModel)
		is, ok2 := p.shadowEstimate(prevPath, at, p.epoch, &p.anchor, set.m)
		if ok1 && ok2 {
			p.offPos = p.offPos.Add(was.pos.Sub(is.pos))
		}
	}
	p.drewModel = set.m

	// A change of prediction: keep drawing where the previous one would
	// have drawn, and fade the difference out.
	st := drawStep{drawFrame: &f.drawFrame, est: est.pos}
	var oldRot geom.Quat
	if f.changed && !f.restart {
		if old, ok := p.estimate(prevPath, at, p.epoch, &p.anchor, set.m); ok {
			st.corr, oldRot = old.pos.Sub(est.pos), old.rot
			if st.corr.Len() > p.cfg.Width {
				p.untrustedUntil = max(p.untrustedUntil, now+p.cfg.ContactTrust)
			}
		} else {
			f.changed = false
		}
	}
	snapped := p.smooth(&st, set, oldRot, est.rot)
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

// frame is what PoseAt works out about a frame before drawing it.
type frame struct {
	now            time.Duration
	path, prevPath Path // the path to draw from; the last frame's
	drawFrame
}

// frameAt works out the frame at now into f, changing nothing: the time
// since the last one, the path to draw from, and what changed since.
func (p *Predictor) frameAt(now time.Duration, f *frame) {
	var dt time.Duration
	if p.hasNow && now > p.lastNow {
		dt = now - p.lastNow
	}
	f.now, f.path, f.prevPath = now, p.choosePath(now), p.path
	f.drawFrame = newDrawFrame(&p.cfg, dt, !p.hasPath || p.reappeared,
		p.hasPath && (p.dirty[f.path] || f.path != f.prevPath), p.teleport[f.path])
}

// settings returns the settings to draw frame f with: the Config's, or
// with Auto the tuner's (which steps its shadows through f).
func (p *Predictor) settings(f *frame) settings {
	if p.auto != nil {
		return p.auto.frame(p, f)
	}
	return settings{m: fullModel, tau: p.cfg.SmoothingTau, capped: true}
}

// smooth moves the smoothing offsets through the frame by st.step (the
// position; the orientation alongside, oldRot and estRot being the
// prediction's before and after new data). With Auto a correction fades
// from the frame it arrives in, as every shadow's does: the state came
// during the frame's time, and with a short time constant drawing the old
// prediction one more frame is a frame of error. Without, the offset fades
// first and a correction from the next frame (as the Config's SmoothingTau
// was tuned). It reports a snap.
func (p *Predictor) smooth(st *drawStep, set settings, oldRot, estRot geom.Quat) (snapped bool) {
	fr := st.drawFrame
	k, loss := 1.0, 0.0
	if fr.dt > 0 {
		k, loss = fadeOf(fr.dt, set.tau)
	}
	if p.auto == nil && fr.dt > 0 {
		// The fade alone, then the events alone.
		restart, changed := fr.restart, fr.changed
		fr.restart, fr.changed = false, false
		var applied float64
		p.offPos, _, applied, _, _ = st.step(p.offPos, k, loss, set.capped)
		p.fadeRot(applied)
		if !restart && !changed {
			return false
		}
		fr.restart, fr.changed, fr.dt = restart, changed, 0
	}
	var applied float64
	var n int
	p.offPos, _, applied, n, _ = st.step(p.offPos, k, loss, set.capped)
	snapped = n > 0
	switch {
	case fr.restart || snapped:
		p.offRot = geom.Identity
	case fr.changed:
		p.offRot = p.offRot.Mul(oldRot).Mul(conj(estRot)).Normalized()
	}
	if fr.dt > 0 {
		p.fadeRot(applied)
	}
	return snapped
}

// fadeRot fades the orientation offset by k, as the position's faded.
func (p *Predictor) fadeRot(k float64) {
	if p.offRot != geom.Identity {
		p.offRot = geom.Identity.Slerp(p.offRot, k)
	}
}

// Jitter returns the standard deviation of arrival - sample time over the
// buffer of the path the last PoseAt drew from (the server path before
// any): a debug figure, computed when asked rather than every frame (the
// pass over the buffer was a measurable share of an Auto frame in the
// engine: bench/README.md, "Auto's cost"), and kept until a sample
// arrives on that path.
func (p *Predictor) Jitter() time.Duration {
	path := p.path
	if p.jitterStale[path] {
		p.jitter[path], p.jitterStale[path] = p.paths[path].jitter(), false
	}
	return p.jitter[path]
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

// conj returns the inverse of the unit quaternion q.
func conj(q geom.Quat) geom.Quat { return geom.Quat{X: -q.X, Y: -q.Y, Z: -q.Z, W: q.W} }
