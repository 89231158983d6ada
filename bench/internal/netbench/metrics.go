package netbench

import (
	"math"
	"slices"

	"github.com/nearzero/nearzero/netcode/geom"
)

// Metric parameters (the README defines each column with them).
const (
	// JumpThreshold is how far a drawn frame-to-frame move may differ from
	// the true one before it counts as a big jump (m).
	JumpThreshold = 0.5
	// PopThreshold is how far a drawn frame-to-frame move may differ from
	// every true move before it counts as a pop (m).
	PopThreshold = 0.1
	// PopEventGap merges pop frames: a pop frame within this long (s) after
	// the first frame of an event of the same size class belongs to it, as a
	// player sees one stutter, not each of its frames (a steady stutter is
	// still up to ten events a second).
	PopEventGap = 0.1
	// PopRelFraction and PopRelFloor make the speed-relative pop: a frame
	// whose move departs from every true move by more than PopRelFraction
	// of the frame's true travel (and at least PopRelFloor m, so that a
	// standing entity's millimetre of drift is not one).
	PopRelFraction = 0.5
	PopRelFloor    = 0.02
	// offPathWindow is how far back the true path reaches for the off-path
	// distance, and offPathStep its sampling.
	offPathWindow = 2.0  // s
	offPathStep   = 0.02 // s
	// reversalLookback is the span of true directions of travel a drawn
	// move must go against to count as backward (see series.add).
	reversalLookback = 0.3 // s
	// popLookback and popLagStep: a drawn move is a pop only when it
	// departs from every true move of the same length in time over the last
	// popLookback (lag allowed: drawing late is not popping).
	popLookback = 0.5  // s
	popLagStep  = 0.01 // s
	// teleportGraceS is how long after a true teleport (a respawn) frames
	// are not judged: the drawn entity must jump too, after the latency.
	teleportGraceS = 1.0
	// WobbleCutoff is the frequency above which error counts as wobble (Hz).
	WobbleCutoff = 2.0
	// reversalMinSpeed is the true speed below which travel has no
	// direction for the reversal count (m/s).
	reversalMinSpeed = 0.5
	// reversalDeadband is the smallest per-frame drawn move along the
	// direction of travel that counts as forward or backward (m).
	reversalDeadband = 0.001
	// segmentGapS breaks the wobble filter where frames were not drawn.
	segmentGapS = 0.25
)

// PopSizes are the absolute thresholds (m) pop events are counted at:
// PopEvents[i] in a Row is events above PopSizes[i]. 0.1 m is a visible
// stutter on a character, 0.3 m a hop, 0.5 m a jump; 0.2 m is the vehicle
// goal's.
var PopSizes = [numPopSizes]float64{0.1, 0.2, 0.3, 0.5}

// numPopSizes is len(PopSizes); popRel indexes the speed-relative class
// after them.
const (
	numPopSizes = 4
	popRel      = numPopSizes
)

// frameIn is what one client saw in one rendered frame, for one method.
type frameIn struct {
	t       float64   // true time, s
	drawn   geom.Vec3 // where the method drew the other player
	truth   Kin       // where the other player truly was
	pastCap bool
	// dirs are the unit horizontal true directions of travel over the last
	// reversalLookback (newest first), where the entity moved faster than
	// reversalMinSpeed; shared by the methods of one frame.
	dirs []geom.Vec3
	// trail is the true path over the last offPathWindow, newest first.
	trail []geom.Vec3
	// moves are the true moves over this frame's time span at lags of
	// 0, popLagStep, ... popLookback: what a drawn move may match.
	moves []geom.Vec3

	// nearzero only
	hasSplit bool
	pieces   [numPieces]geom.Vec3
	timingS  float64 // Age - true age, s
	age      float64 // Pose.Age, s
	path     uint8
	corr     float64
}

// Error pieces: the drawn error is their sum, frame by frame.
const (
	pieceTiming = iota
	piecePredictor
	pieceStale
	pieceSmoothing
	numPieces
)

// series accumulates one method's frames as seen by one client.
type series struct {
	t, along, side []float64
	err            []geom.Vec3
	errLen, off    []float64 // error length; distance off the true path

	// nearzero only
	timing, age, corr []float64
	path              []uint8
	pieceSq           [numPieces]float64
	nPieces           int

	pastCap, jumps, pops, reversals int
	// popEvents counts pop events per class (PopSizes, then the relative
	// one), popStart the true time each class's last event began.
	popEvents [numPopSizes + 1]int
	popStart  [numPopSizes + 1]float64

	has               bool
	prevDrawn, prevTr geom.Vec3
	prevT             float64
	dirState          int // +1 drawn moving forward, -1 backward, 0 unknown
}

// grow preallocates room for n frames.
func (s *series) grow(n int, split bool) {
	s.t, s.along, s.side = make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	s.err = make([]geom.Vec3, 0, n)
	s.errLen, s.off = make([]float64, 0, n), make([]float64, 0, n)
	if split {
		s.timing, s.age, s.corr = make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
		s.path = make([]uint8, 0, n)
	}
}

// alongDir returns the unit direction of travel: the true velocity's, or the
// facing when slower than 0.5 m/s.
func alongDir(k Kin) geom.Vec3 {
	if s := k.Vel.Len(); s > 0.5 {
		return k.Vel.Scale(1 / s)
	}
	return k.Rot.Rotate(geom.Vec3{Z: -1})
}

func (s *series) add(f *frameIn) {
	e := f.drawn.Sub(f.truth.Pos)
	d := alongDir(f.truth)
	a := e.Dot(d)
	side := e.Sub(d.Scale(a)).Len()
	s.t = append(s.t, f.t)
	s.along = append(s.along, a)
	s.side = append(s.side, side)
	s.err = append(s.err, e)
	el := e.Len()
	s.errLen = append(s.errLen, el)
	s.off = append(s.off, offPath(f.drawn, el, f.trail))
	if f.pastCap {
		s.pastCap++
	}
	if f.hasSplit {
		s.timing = append(s.timing, f.timingS)
		s.age = append(s.age, f.age)
		s.corr = append(s.corr, f.corr)
		s.path = append(s.path, f.path)
		for i, p := range f.pieces {
			s.pieceSq[i] += p.Dot(p)
		}
		s.nPieces++
	}
	if s.has && f.t-s.prevT < segmentGapS {
		dd := f.drawn.Sub(s.prevDrawn)
		dt := f.truth.Pos.Sub(s.prevTr)
		dep := dd.Sub(dt).Len()
		if dep > JumpThreshold {
			s.jumps++
		}
		if dep > min(PopThreshold, PopRelFloor) {
			// The departure from the nearest true move: a pop of any class
			// departs from every true move by more than its threshold.
			near := dep
			for _, m := range f.moves {
				near = min(near, dd.Sub(m).Len())
			}
			if near > PopThreshold {
				s.pops++
			}
			for k, thr := range PopSizes {
				s.popEvent(k, near > thr, f.t)
			}
			rel := max(PopRelFraction*dt.Len(), PopRelFloor)
			s.popEvent(popRel, near > rel, f.t)
		}
		s.dirState = reversalStep(s.dirState, geom.Vec3{X: dd.X, Z: dd.Z}, f.dirs, &s.reversals)
	} else {
		s.dirState = 0
	}
	s.has, s.prevDrawn, s.prevTr, s.prevT = true, f.drawn, f.truth.Pos, f.t
}

// popEvent counts a pop frame of class k at true time t as a new event
// unless it is within PopEventGap of the start of the class's last event.
func (s *series) popEvent(k int, popped bool, t float64) {
	if !popped {
		return
	}
	if s.popEvents[k] == 0 || t-s.popStart[k] >= PopEventGap {
		s.popEvents[k]++
		s.popStart[k] = t
	}
}

// reversalStep judges one drawn move dd (horizontal) against the true
// directions of travel dirs (newest first) and returns the new direction
// state, counting a reversal into *n. The move is forward when it goes
// along the newest true direction (by more than reversalDeadband), and
// backward when it goes against every true direction of the lookback: the
// drawn entity moved where the truth did not go at any time in that span
// (an overshoot pulled back, a bounce on a stop). A reversal is a backward
// move after a forward one. A real turn is no reversal, however sharp: the
// truth went that way too. Without a true direction the state resets.
func reversalStep(state int, dd geom.Vec3, dirs []geom.Vec3, n *int) int {
	if len(dirs) == 0 {
		return 0
	}
	if dd.Dot(dirs[0]) > reversalDeadband {
		return 1
	}
	for _, u := range dirs {
		if dd.Dot(u) >= -reversalDeadband {
			return state
		}
	}
	if state == 1 {
		*n++
	}
	return -1
}

// offPath returns the distance from p to the polyline path (the true path,
// newest first), or errLen (the distance to its newest point) when that is
// already small.
func offPath(p geom.Vec3, errLen float64, path []geom.Vec3) float64 {
	best := errLen
	if best < 0.02 {
		return best
	}
	for i := 1; i < len(path); i++ {
		a, b := path[i], path[i-1]
		ab := b.Sub(a)
		l2 := ab.Dot(ab)
		u := 0.0
		if l2 > 0 {
			u = clamp(p.Sub(a).Dot(ab)/l2, 0, 1)
		}
		if d := p.Sub(a.Add(ab.Scale(u))).Len(); d < best {
			best = d
			if best < 1e-3 {
				break
			}
		}
	}
	return best
}

// stats fills the error columns of r from s; minutes is the measured time.
func (s *series) stats(r *Row, minutes float64) {
	n := len(s.along)
	r.Frames = n
	if n == 0 {
		return
	}
	abs := make([]float64, n)
	var sum float64
	for i, a := range s.along {
		abs[i] = math.Abs(a)
		sum += a
	}
	slices.Sort(abs)
	side := slices.Clone(s.side)
	slices.Sort(side)
	el := slices.Clone(s.errLen)
	slices.Sort(el)
	var elSum float64
	for _, x := range el {
		elSum += x
	}
	r.Mean, r.P50, r.P95, r.P99, r.Max = elSum/float64(n), pct(el, 0.5), pct(el, 0.95), pct(el, 0.99), el[n-1]
	off := slices.Clone(s.off)
	slices.Sort(off)
	r.OffPathP95, r.OffPathMax = pct(off, 0.95), off[n-1]
	r.AlongP50, r.AlongP95, r.AlongMax = pct(abs, 0.5), pct(abs, 0.95), abs[n-1]
	r.SideP50, r.SideP95, r.SideMax = pct(side, 0.5), pct(side, 0.95), side[n-1]
	r.Bias = sum / float64(n)
	r.Wobble = wobble(s.t, s.err)
	if minutes > 0 {
		r.ReversalsPerMin = float64(s.reversals) / minutes
		r.JumpsPerMin = float64(s.jumps) / minutes
		r.PopsPerMin = float64(s.pops) / minutes
		for k := range PopSizes {
			r.PopEvents[k] = float64(s.popEvents[k]) / minutes
		}
		r.PopRelPerMin = float64(s.popEvents[popRel]) / minutes
	}
	r.PastCapShare = float64(s.pastCap) / float64(n)
	if s.nPieces > 0 {
		rms := func(i int) *float64 { v := math.Sqrt(s.pieceSq[i] / float64(s.nPieces)); return &v }
		r.SplitTiming, r.SplitPredictor = rms(pieceTiming), rms(piecePredictor)
		r.SplitStale, r.SplitSmoothing = rms(pieceStale), rms(pieceSmoothing)
	}
}

// slideRate returns the mean absolute rate of change of the timing error,
// in ms per second, taken between the first frames after successive whole
// seconds of true time (so that it measures the slide of the clock mapping,
// not the frame-to-frame noise).
func (s *series) slideRate() float64 {
	var sum float64
	var n int
	lastSec, lastT, lastE := math.Inf(-1), 0.0, 0.0
	for i := range s.timing {
		t := s.t[i]
		if sec := math.Floor(t); sec > lastSec {
			if dt := t - lastT; sec == lastSec+1 && dt > 0 {
				sum += math.Abs(s.timing[i]-lastE) / dt * 1000
				n++
			}
			lastSec, lastT, lastE = sec, t, s.timing[i]
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// pct returns the q-quantile of sorted xs (nearest rank).
func pct(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(len(xs)-1, i))]
}

// wobble returns the RMS length of the error's part above WobbleCutoff: the
// error minus a zero-phase low-pass (a first-order filter run forward then
// backward), restarted wherever frames were not drawn for segmentGapS.
func wobble(t []float64, e []geom.Vec3) float64 {
	n := len(t)
	if n < 2 {
		return 0
	}
	lp := make([]geom.Vec3, n)
	w := 2 * math.Pi * WobbleCutoff
	var sq float64
	start := 0
	for i := 1; i <= n; i++ {
		if i < n && t[i]-t[i-1] < segmentGapS {
			continue
		}
		// Segment [start, i).
		lp[start] = e[start]
		for j := start + 1; j < i; j++ {
			k := -math.Expm1(-(t[j] - t[j-1]) * w)
			lp[j] = lp[j-1].Add(e[j].Sub(lp[j-1]).Scale(k))
		}
		for j := i - 2; j >= start; j-- {
			k := -math.Expm1(-(t[j+1] - t[j]) * w)
			lp[j] = lp[j+1].Add(lp[j].Sub(lp[j+1]).Scale(k))
		}
		for j := start; j < i; j++ {
			h := e[j].Sub(lp[j])
			sq += h.Dot(h)
		}
		start = i
	}
	return math.Sqrt(sq / float64(n))
}
