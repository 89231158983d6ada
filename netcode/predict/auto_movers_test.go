package predict

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// zigzag is a mover at speed along ±X that turns back at random every
// 0.2-0.7 s (seeded), as a character on a keyboard does.
type zigzag struct {
	turns []float64 // s
	speed float64
}

func newZigzag(seed uint64, dur, speed float64) zigzag {
	r := rand.New(rand.NewPCG(seed, seed))
	z := zigzag{speed: speed}
	for t := 0.0; t < dur; t += 0.2 + 0.5*r.Float64() {
		z.turns = append(z.turns, t)
	}
	return z
}

// at returns the position and velocity at t (s).
func (z zigzag) at(t float64) (geom.Vec3, geom.Vec3) {
	x, dir, last := 0.0, 1.0, 0.0
	for _, tt := range z.turns[1:] {
		if tt > t {
			break
		}
		x += dir * z.speed * (tt - last)
		dir, last = -dir, tt
	}
	x += dir * z.speed * (t - last)
	return geom.Vec3{X: x}, geom.Vec3{X: dir * z.speed}
}

// straightLine is a mover at constant velocity.
type straightLine struct{ v geom.Vec3 }

func (s straightLine) at(t float64) (geom.Vec3, geom.Vec3) { return s.v.Scale(t), s.v }

type mover interface {
	at(t float64) (geom.Vec3, geom.Vec3)
}

// drive feeds p a mover's samples at 60 Hz, arriving latency later, and
// draws a frame every 1/60 s; it returns the RMS drawn error over the
// second half and the number of frames whose drawn move departs by more
// than 0.1 m from every true move of the frame's length over the last
// 0.5 s (as the bench counts pops: drawing late is not popping).
func drive(p *Predictor, m mover, latency time.Duration, dur float64) (rms float64, pops int) {
	return driveWith(p, m, latency, dur, 0.1)
}

// driveWith is drive with pops counted above popSize (m).
func driveWith(p *Predictor, m mover, latency time.Duration, dur, popSize float64) (rms float64, pops int) {
	return driveJittered(p, m, latency, dur, popSize, nil)
}

// driveJittered is driveWith with each sample's arrival delayed by
// jitter's draw too (in order: a late one holds back those behind it).
func driveJittered(p *Predictor, m mover, latency time.Duration, dur, popSize float64,
	jitter func() time.Duration) (rms float64, pops int) {
	const step = time.Second / 60
	type pending struct {
		s   Sample
		arr time.Duration
	}
	var queue []pending
	var sq float64
	var n int
	var prevDrawn geom.Vec3
	next := time.Duration(0)
	for i := 0; float64(i)*step.Seconds() < dur; i++ {
		now := time.Duration(i) * step
		for next <= now {
			pos, vel := m.at(next.Seconds())
			arr := next + latency
			if jitter != nil {
				arr += jitter()
			}
			queue = append(queue, pending{s: Sample{Time: next, Seq: seqOf(int(next / step)), Pos: pos, Vel: vel,
				Rot: geom.Identity}, arr: arr})
			next += step
		}
		for len(queue) > 0 && queue[0].arr <= now {
			p.Add(PathDirect, queue[0].s, queue[0].arr)
			queue = queue[1:]
		}
		pose := p.PoseAt(now)
		if !pose.Valid {
			continue
		}
		truth, _ := m.at(now.Seconds())
		if now.Seconds() > dur/2 {
			d := pose.Pos.Sub(truth)
			sq += d.Dot(d)
			n++
			move, popped := pose.Pos.Sub(prevDrawn), true
			for lag := 0.0; lag <= 0.5 && popped; lag += 0.01 {
				a, _ := m.at(now.Seconds() - lag)
				b, _ := m.at(now.Seconds() - lag - step.Seconds())
				popped = move.Sub(a.Sub(b)).Len() > popSize
			}
			if popped {
				pops++
			}
		}
		prevDrawn = pose.Pos
	}
	return math.Sqrt(sq / float64(n)), pops
}

// eightWay is a runner on a keyboard, as test/godot's TestGodotCharacter
// drives it: one of eight directions (or standing, 15% of the holds) held
// 0.2-0.7 s and changed at once, back toward the centre beyond 10 m.
type eightWay struct{ t, x, z []float64 }

func newEightWay(seed uint64, dur, speed float64) eightWay {
	r := rand.New(rand.NewPCG(seed, 0x6e7a))
	var w eightWay
	var t, x, z float64
	heading := 0
	add := func() { w.t, w.x, w.z = append(w.t, t), append(w.x, x), append(w.z, z) }
	add()
	for t < dur {
		hold, v := 0.2+0.5*r.Float64(), speed
		if r.Float64() < 0.15 {
			v = 0
		} else {
			heading = (heading + 1 + r.IntN(7)) % 8
		}
		if math.Abs(x) > 10 || math.Abs(z) > 10 {
			heading, v = (int(math.Round(math.Atan2(-z, -x)/(math.Pi/4)))+8)%8, speed
		}
		a := float64(heading) * math.Pi / 4
		x, z, t = x+v*math.Cos(a)*hold, z+v*math.Sin(a)*hold, t+hold
		add()
	}
	return w
}

func (w eightWay) at(s float64) (geom.Vec3, geom.Vec3) {
	i := 1
	for i < len(w.t)-1 && w.t[i] < s {
		i++
	}
	h := w.t[i] - w.t[i-1]
	f := (s - w.t[i-1]) / h
	vel := geom.Vec3{X: (w.x[i] - w.x[i-1]) / h, Z: (w.z[i] - w.z[i-1]) / h}
	return geom.Vec3{X: w.x[i-1], Z: w.z[i-1]}.Add(vel.Scale(f * h)), vel
}

// replayEightWay draws a runner (newEightWay of seed, 6 m/s, 45 s) whose
// states arrive oneWay late with 2 ms of half-normal jitter, sent 0 to
// wait after their frame (uniform), and returns the error of p's drawing
// and of snap-on-arrival's at every frame from 5 s on (as test/godot's
// TestGodotCharacter measures).
func replayEightWay(p *Predictor, seed uint64, oneWay, wait time.Duration) (errs, snaps []float64) {
	return replayEightWayOff(p, seed, oneWay, wait, 0)
}

// replayEightWayOff is replayEightWay with every sample stamped off later
// than its true time (a clock error).
func replayEightWayOff(p *Predictor, seed uint64, oneWay, wait, off time.Duration) (errs, snaps []float64) {
	return replayEightWayJudged(p, seed, oneWay, wait, off, 0)
}

// replayEightWayAhead is replayEightWay under an input delay: every sample
// is placed delay ahead of its true time, as a room's input delay places
// it, and each frame is judged against where the runner truly was delay
// before (what its owner shows).
func replayEightWayAhead(p *Predictor, seed uint64, oneWay, wait, delay time.Duration) (errs, snaps []float64) {
	return replayEightWayJudged(p, seed, oneWay, wait, delay, delay)
}

// replayEightWayJudged is replayEightWay with every sample stamped off
// later than its true time and each frame judged against the truth judge
// before it.
func replayEightWayJudged(p *Predictor, seed uint64, oneWay, wait, off, judge time.Duration) (errs, snaps []float64) {
	const dur = 45.0
	w := newEightWay(seed, dur, 6)
	r := rand.New(rand.NewPCG(seed, 7))
	type pending struct {
		s   Sample
		arr time.Duration
	}
	var queue []pending
	var snap geom.Vec3
	const frame = time.Second / 60
	next := 3 * time.Millisecond
	for now := time.Duration(0); now.Seconds() < dur; now += frame {
		for ; next <= now; next += frame {
			pos, vel := w.at(next.Seconds())
			delay := oneWay + time.Duration(math.Abs(r.NormFloat64())*float64(2*time.Millisecond))
			if wait > 0 {
				delay += time.Duration(r.Int64N(int64(wait)))
			}
			queue = append(queue, pending{s: Sample{Time: next + off, Seq: seqOf(int(next / frame)), Pos: pos, Vel: vel,
				Rot: geom.Identity}, arr: next + delay})
		}
		if wait > 0 { // a later send may overtake an earlier one
			slices.SortStableFunc(queue, func(a, b pending) int { return int(a.arr - b.arr) })
		}
		for len(queue) > 0 && queue[0].arr <= now {
			if p.Add(PathDirect, queue[0].s, queue[0].arr) {
				snap = queue[0].s.Pos
			}
			queue = queue[1:]
		}
		pose := p.PoseAt(now)
		if !pose.Valid || now < 5*time.Second {
			continue
		}
		truth, _ := w.at((now - judge).Seconds())
		errs = append(errs, pose.Pos.Sub(truth).Len())
		snaps = append(snaps, snap.Sub(truth).Len())
	}
	return errs, snaps
}

// pct is the q quantile of e (nearest rank).
func pct(e []float64, q float64) float64 {
	s := append([]float64(nil), e...)
	slices.Sort(s)
	return s[int(math.Ceil(q*float64(len(s))))-1]
}

// mean is the mean of e.
func mean(e []float64) float64 {
	var sum float64
	for _, x := range e {
		sum += x
	}
	return sum / float64(len(e))
}

// weavingCar is a car at a steady speed whose turn rate switches at
// random (seeded) between left, straight and right every 0.3-1 s, as a
// driver steering does: each switch is a correction the receiver learns a
// data age late.
type weavingCar struct {
	pos   []geom.Vec3 // every millisecond
	head  []float64
	speed float64
}

func newWeavingCar(seed uint64, dur, speed float64) weavingCar {
	r := rand.New(rand.NewPCG(seed, seed))
	c := weavingCar{speed: speed}
	var p geom.Vec3
	psi, rate, next := 0.0, 0.0, 0.0
	for i := 0; float64(i) <= (dur+1)*1000; i++ {
		t := float64(i) / 1000
		if t >= next {
			rate = float64(r.IntN(3)-1) * 1.2 // rad/s
			next = t + 0.3 + 0.7*r.Float64()
		}
		c.pos, c.head = append(c.pos, p), append(c.head, psi)
		p = p.Add(geom.Vec3{X: math.Cos(psi), Z: math.Sin(psi)}.Scale(speed / 1000))
		psi += rate / 1000
	}
	return c
}

func (c weavingCar) at(t float64) (geom.Vec3, geom.Vec3) {
	i := min(max(int(math.Round(t*1000)), 0), len(c.pos)-1)
	return c.pos[i], geom.Vec3{X: math.Cos(c.head[i]), Z: math.Sin(c.head[i])}.Scale(c.speed)
}
