package netbench

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
)

// BotKind is the kind of body a bot drives.
type BotKind uint8

// Bot kinds.
const (
	// Vehicle has momentum: about 20 m/s top speed, 4.5 m long, steering
	// and pedals that take time to move, turns and brakes.
	Vehicle BotKind = iota
	// Character changes direction instantly, stops dead and jumps.
	Character
)

// String returns "vehicle" or "character".
func (k BotKind) String() string {
	if k == Character {
		return "character"
	}
	return "vehicle"
}

// Vehicle and character physics of the smooth movers (Physics Smooth). The
// numbers are those of a plausible simulation-leaning car and a brisk
// third-person character.
const (
	vehWheelbase = 2.7  // m (4.5 m long)
	vehMaxSteer  = 0.5  // rad at the wheels
	vehSteerRate = 1.5  // rad/s the wheels turn at most
	vehLatAcc    = 9.0  // m/s², grip limit: the yaw rate is clipped to it
	vehAccMax    = 6.0  // m/s² at full throttle from standstill
	vehTopSpeed  = 21.0 // m/s where full throttle is cancelled by drag
	vehBrakeMax  = 9.0  // m/s² at full brake
	vehRolling   = 0.25 // m/s² rolling resistance
	vehJerk      = 60.0 // m/s³: how fast the longitudinal acceleration may change (pedal and drivetrain response)

	charRunSpeed = 6.0 // m/s
	charJumpV    = 5.0 // m/s straight up
	gravity      = 9.8 // m/s²

	// botStep is the physics step of the truth: fine enough that linear
	// interpolation between steps is exact to 5 µm (a·dt²/8 at 9 m/s²).
	botStep = 2 * time.Millisecond
	// inputTick is how often a driver decides its input (a 60 Hz game).
	inputTick = time.Second / 60
	// histLen is the truth history kept, in steps (4 s): queries reach at
	// most a prediction horizon back.
	histLen = 2048
)

// physics are the body parameters of a bot. smoothPhysics are the
// original movers; arcadePhysics the harder ones every scenario uses unless
// it says Smooth: grip above 1 g, quick steering, pedals that act at once,
// reverse gear, a character that reaches full speed in about 0.13 s.
type physics struct {
	maxSteer, steerRate, latAcc, accMax, topSpeed, brakeMax, jerk float64
	reverseSpeed                                                  float64 // m/s top speed in reverse (0: no reverse)
	charAccel, charDecel                                          float64 // m/s² (0: instant)
}

var (
	smoothPhysics = physics{maxSteer: vehMaxSteer, steerRate: vehSteerRate, latAcc: vehLatAcc, accMax: vehAccMax,
		topSpeed: vehTopSpeed, brakeMax: vehBrakeMax, jerk: vehJerk}
	arcadePhysics = physics{maxSteer: 0.6, steerRate: 5, latAcc: 13, accMax: 9, topSpeed: 26, brakeMax: 14,
		jerk: 300, reverseSpeed: 8, charAccel: 45, charDecel: 60}
)

// obstacle is a round pillar in the ground plane.
type obstacle struct {
	x, z, r float64
}

// arena is the walled ground the bots move in: a square of half-size half
// (m) with walls, and pillars. Bodies slide along what they hit (a vehicle
// bounces back a little from a head-on hit).
type arena struct {
	half    float64
	pillars []obstacle
}

// collide keeps a body of radius rad out of the walls and pillars: it
// moves pos out and returns the velocity with the part into the surface
// removed (times 1+bounce), and whether it touched.
func (a *arena) collide(pos *geom.Vec3, vel geom.Vec3, rad, bounce float64) (geom.Vec3, bool) {
	hit := false
	push := func(n geom.Vec3, depth float64) {
		*pos = pos.Add(n.Scale(depth))
		if vn := vel.Dot(n); vn < 0 {
			vel = vel.Sub(n.Scale((1 + bounce) * vn))
		}
		hit = true
	}
	lim := a.half - rad
	if pos.X > lim {
		push(geom.Vec3{X: -1}, pos.X-lim)
	} else if pos.X < -lim {
		push(geom.Vec3{X: 1}, -lim-pos.X)
	}
	if pos.Z > lim {
		push(geom.Vec3{Z: -1}, pos.Z-lim)
	} else if pos.Z < -lim {
		push(geom.Vec3{Z: 1}, -lim-pos.Z)
	}
	for _, o := range a.pillars {
		dx, dz := pos.X-o.x, pos.Z-o.z
		d := math.Hypot(dx, dz)
		if d < o.r+rad && d > 1e-9 {
			push(geom.Vec3{X: dx / d, Z: dz / d}, o.r+rad-d)
		}
	}
	return vel, hit
}

// Input is a bot's control input, held until the next one.
type Input struct {
	Throttle float64 // 0..1 (-1..0 drives a vehicle in reverse, with arcade physics)
	Brake    float64 // 0..1 (vehicle)
	Steer    float64 // -1..1, positive turns left (counter-clockwise seen from above) (vehicle)
	Heading  float64 // rad about +Y, the direction to run in (character); 0 runs toward -Z
	Jump     bool    // jump if on the ground (character)
}

// Kin is a bot's true kinematic state at one instant.
type Kin struct {
	Pos, Vel, Acc geom.Vec3
	Rot           geom.Quat
	Turn          float64 // rad/s about +Y
}

// forward returns the direction a yaw of psi faces (Godot's -Z at 0).
func forward(psi float64) geom.Vec3 {
	s, c := math.Sincos(psi)
	return geom.Vec3{X: -s, Z: -c}
}

// yawOf returns the yaw whose forward is the horizontal direction of v.
func yawOf(v geom.Vec3) float64 { return math.Atan2(-v.X, -v.Z) }

// driver chooses a bot's input at each input tick.
type driver interface {
	input(t time.Duration, k Kin) Input
}

// bot is the truth of one player's entity: a body stepped at botStep on
// true time, driven by a driver, with a history for looking back.
// Its motion does not depend on frame timing or the network, except where
// a scenario makes it (contact impulses, round starts).
type bot struct {
	kind BotKind
	drv  driver
	ph   physics
	room *arena        // walls and pillars; nil for open ground
	hits int           // collisions so far
	rec  *[]InputEvent // when recording, input changes are appended here
	who  string        // the recording's client name

	t        time.Duration // time of the newest step
	nextTick time.Duration
	// frameInput: the owner's main thread reads the input at its frames
	// (tickFrame), as a game does, instead of every inputTick of true time;
	// the state then changes course only at the owner's frames, where it is
	// sampled.
	frameInput bool
	in         Input
	hold       bool // waiting at the start: no throttle, full brake

	// vehicle
	psi, speed, acc, steer, turn float64
	// both
	pos geom.Vec3
	// character
	vel      geom.Vec3 // horizontal
	vy       float64
	onGround bool
	jumpEdge bool // the jump input was up at the last tick

	hist       [histLen]bstate // hist[i % histLen] is the state at step i
	steps      int64           // index of the newest step
	teleportAt time.Duration
	teleported bool
}

// newBot returns a bot at pos facing yaw psi, at rest, at time 0.
func newBot(kind BotKind, drv driver, pos geom.Vec3, psi float64) *bot {
	b := &bot{kind: kind, drv: drv, ph: smoothPhysics, pos: pos, psi: psi, onGround: true}
	b.hist[0] = b.state()
	return b
}

// bstate is the compact state of a body kept in the history; Kin is
// computed from it when asked.
type bstate struct {
	pos                   geom.Vec3
	vel                   geom.Vec3 // character: the horizontal velocity
	psi, speed, acc, turn float64   // speed is the horizontal speed for a character
	vy                    float64   // character
	air                   bool      // character in the air
}

// kin returns the kinematic state of st.
func (k BotKind) kin(st *bstate) Kin {
	f := forward(st.psi)
	rot := geom.AxisAngle(geom.Up3D, st.psi)
	if k == Character {
		out := Kin{Pos: st.pos, Vel: st.vel, Rot: rot}
		out.Vel.Y = st.vy
		if hs := math.Hypot(st.vel.X, st.vel.Z); hs > 1e-9 {
			out.Acc = geom.Vec3{X: st.vel.X / hs * st.acc, Z: st.vel.Z / hs * st.acc}
		}
		if st.air {
			out.Acc.Y = -gravity
		}
		return out
	}
	side := geom.Up3D.Cross(f)
	return Kin{
		Pos:  st.pos,
		Vel:  f.Scale(st.speed),
		Acc:  f.Scale(st.acc).Add(side.Scale(st.speed * st.turn)),
		Rot:  rot,
		Turn: st.turn,
	}
}

// state returns the body's current compact state.
func (b *bot) state() bstate {
	if b.kind == Character {
		return bstate{pos: b.pos, vel: b.vel, psi: b.psi, speed: b.speed, acc: b.acc, vy: b.vy, air: !b.onGround}
	}
	return bstate{pos: b.pos, psi: b.psi, speed: b.speed, acc: b.acc, turn: b.turn}
}

// kin returns the current kinematic state.
func (b *bot) kin() Kin {
	st := b.state()
	return b.kind.kin(&st)
}

// advance steps the body until its newest step is at or after t.
func (b *bot) advance(t time.Duration) {
	for b.t < t {
		if !b.frameInput && b.t >= b.nextTick {
			b.tick()
		}
		b.step(botStep.Seconds())
		b.t += botStep
		b.steps++
		b.hist[b.steps%histLen] = b.state()
	}
}

// tickFrame reads the input at a frame of the owner (frameInput).
func (b *bot) tickFrame() {
	if b.frameInput {
		b.tick()
	}
}

// tick asks the driver for the next input.
func (b *bot) tick() {
	in := b.drv.input(b.t, b.kin())
	if b.hold {
		in = Input{Brake: 1, Heading: in.Heading}
		if b.kind == Character {
			in.Heading = b.psi
		}
	}
	if b.rec != nil && in != b.in {
		*b.rec = append(*b.rec, InputEvent{At: b.t, Client: b.who, Input: in})
	}
	b.in = in
	b.nextTick += inputTick
}

// step integrates the body over dt seconds.
func (b *bot) step(dt float64) {
	in := b.in
	if b.kind == Character {
		target := clamp(in.Throttle, 0, 1) * charRunSpeed
		b.acc = 0
		switch {
		case b.ph.charAccel == 0 || b.speed == target:
			b.speed = target
		case b.speed < target:
			b.speed = min(target, b.speed+b.ph.charAccel*dt)
			b.acc = b.ph.charAccel
		default:
			b.speed = max(target, b.speed-b.ph.charDecel*dt)
			b.acc = -b.ph.charDecel
		}
		b.psi = in.Heading
		b.vel = forward(b.psi).Scale(b.speed)
		if in.Jump && !b.jumpEdge && b.onGround {
			b.vy, b.onGround = charJumpV, false
		}
		b.jumpEdge = in.Jump
		if !b.onGround {
			b.vy -= gravity * dt
			b.pos.Y += b.vy * dt
			if b.pos.Y <= 0 {
				b.pos.Y, b.vy, b.onGround = 0, 0, true
			}
		}
		b.pos = b.pos.Add(b.vel.Scale(dt))
		if b.room != nil {
			v, hit := b.room.collide(&b.pos, b.vel, 0.4, 0)
			if hit {
				b.vel, b.hits = v, b.hits+1
				b.acc = 0
			}
		}
		return
	}
	ph := &b.ph
	v := b.speed
	thr := clamp(in.Throttle, -1, 1)
	if ph.reverseSpeed == 0 {
		thr = max(thr, 0)
	}
	var target float64
	switch {
	case thr >= 0 && v >= -0.1:
		target = thr * ph.accMax * max(0, 1-(v/ph.topSpeed)*(v/ph.topSpeed))
	case thr < 0 && v <= 0.1:
		target = thr * ph.accMax * max(0, 1-(v/ph.reverseSpeed)*(v/ph.reverseSpeed))
	default: // the throttle against the motion brakes
		target = -math.Copysign(math.Abs(thr)*ph.brakeMax, v)
	}
	if br := clamp(in.Brake, 0, 1) * ph.brakeMax; br > 0 && v != 0 {
		target -= math.Copysign(br, v)
	}
	if v > 0 {
		target -= vehRolling
	} else if v < 0 {
		target += vehRolling
	}
	b.acc += clamp(target-b.acc, -ph.jerk*dt, ph.jerk*dt)
	nv := v + b.acc*dt
	stop := (v > 0 && nv <= 0 && thr >= 0) || (v < 0 && nv >= 0 && thr <= 0)
	if v == 0 && nv != 0 && (thr == 0 || (nv > 0) != (thr > 0)) {
		stop = true
	}
	if stop {
		// Brakes and drag stop the car; they do not drive it backwards.
		nv = 0
		b.acc = 0
	}
	b.speed = nv
	b.steer += clamp(clamp(in.Steer, -1, 1)*ph.maxSteer-b.steer, -ph.steerRate*dt, ph.steerRate*dt)
	turn := 0.0
	if b.steer != 0 {
		turn = b.speed * math.Tan(b.steer) / vehWheelbase
	}
	if lim := ph.latAcc / max(math.Abs(b.speed), 0.5); math.Abs(turn) > lim {
		turn = math.Copysign(lim, turn)
	}
	b.turn = turn
	mid := b.psi + turn*dt/2
	b.psi += turn * dt
	if b.psi > math.Pi || b.psi <= -math.Pi {
		b.psi = geom.WrapAngle(b.psi)
	}
	b.pos = b.pos.Add(forward(mid).Scale((v + b.speed) / 2 * dt))
	if b.room != nil {
		f := forward(b.psi)
		u, hit := b.room.collide(&b.pos, f.Scale(b.speed), 1.2, 0.2)
		if hit {
			b.hits++
			b.acc, b.turn = 0, 0
			sp := u.Len()
			switch {
			case sp < 0.3:
				b.speed = 0
			case u.Dot(f) >= 0:
				b.psi, b.speed = yawOf(u), sp
			default:
				b.psi, b.speed = yawOf(u.Scale(-1)), -sp
			}
		}
	}
}

// at returns the true state at time t (after advancing to it). t must be
// within the history: not before the newest step minus histLen steps.
func (b *bot) at(t time.Duration) Kin {
	b.advance(t)
	if t < 0 {
		t = 0
	}
	i := int64(t / botStep)
	if i >= b.steps {
		return b.kind.kin(&b.hist[b.steps%histLen])
	}
	if i < b.steps-histLen+2 {
		i = b.steps - histLen + 2
	}
	f := float64(t-time.Duration(i)*botStep) / float64(botStep)
	k0, k1 := &b.hist[i%histLen], &b.hist[(i+1)%histLen]
	st := bstate{
		pos:   k0.pos.Lerp(k1.pos, f),
		vel:   k0.vel.Lerp(k1.vel, f),
		psi:   k0.psi + geom.WrapAngle(k1.psi-k0.psi)*f,
		speed: k0.speed + (k1.speed-k0.speed)*f,
		acc:   k0.acc + (k1.acc-k0.acc)*f,
		turn:  k0.turn + (k1.turn-k0.turn)*f,
		vy:    k0.vy + (k1.vy-k0.vy)*f,
		air:   k0.air,
	}
	return b.kind.kin(&st)
}

// headingAt returns the yaw of the horizontal direction of travel at t
// and whether the bot moved faster than minSpeed then (both kinds move
// along their yaw). t must be within the history.
func (b *bot) headingAt(t time.Duration, minSpeed float64) (float64, bool) {
	b.advance(t)
	i := min(max(int64(t/botStep), b.steps-histLen+1, 0), b.steps)
	st := &b.hist[i%histLen]
	return st.psi, st.speed > minSpeed
}

// impulse changes the velocity by dv now (a contact): the vehicle's speed
// and heading follow the new horizontal velocity at once.
func (b *bot) impulse(dv geom.Vec3) {
	if b.kind == Character {
		return
	}
	u := forward(b.psi).Scale(b.speed).Add(geom.Vec3{X: dv.X, Z: dv.Z})
	b.speed = u.Len()
	if b.speed > 1e-3 {
		b.psi = yawOf(u)
	}
	b.hist[b.steps%histLen] = b.state()
}

// spawn moves the bot to pos facing psi, at rest and held, now: a
// teleport.
func (b *bot) spawn(pos geom.Vec3, psi float64) {
	b.pos, b.psi = pos, psi
	b.speed, b.acc, b.steer, b.turn = 0, 0, 0, 0
	b.vel, b.vy, b.onGround = geom.Vec3{}, 0, true
	b.hold = true
	b.teleportAt, b.teleported = b.t, true
	b.hist[b.steps%histLen] = b.state()
}

// sinceTeleport reports how long before t the bot last teleported, and
// false if it never did.
func (b *bot) sinceTeleport(t time.Duration) (time.Duration, bool) {
	return t - b.teleportAt, b.teleported
}

func clamp(x, lo, hi float64) float64 { return max(lo, min(hi, x)) }

// vehicleDriver drives a vehicle around an arena in random segments:
// cruising at top speed, turning, braking hard, weaving. It steers back
// toward the centre when it strays past arena metres.
type vehicleDriver struct {
	r     *rand.Rand
	arena float64

	mode           int // 0 cruise, 1 turn, 2 brake, 3 slalom
	until          time.Duration
	target, steer  float64
	brake, weavePh float64
}

func (d *vehicleDriver) input(t time.Duration, k Kin) Input {
	if t >= d.until {
		d.pick(t)
	}
	in := Input{}
	steer := d.steer
	switch d.mode {
	case 2:
		in.Brake = d.brake
	case 3:
		steer = 0.6 * math.Sin(2*math.Pi*t.Seconds()/1.6+d.weavePh)
	}
	speed := k.Vel.Len()
	if d.mode != 2 {
		in.Throttle = clamp((d.target-speed)*0.5+0.3, 0, 1)
		if speed > d.target+2 {
			in.Throttle, in.Brake = 0, clamp((speed-d.target-2)*0.2, 0, 1)
		}
	}
	// Back toward the centre when outside the arena and heading out.
	if r := math.Hypot(k.Pos.X, k.Pos.Z); r > d.arena {
		f := k.Rot.Rotate(geom.Vec3{Z: -1})
		in2 := geom.Vec3{X: -k.Pos.X / r, Z: -k.Pos.Z / r}
		if f.Dot(in2) < 0.7 {
			steer = 1
			if geom.Up3D.Dot(f.Cross(in2)) < 0 {
				steer = -1
			}
		}
	}
	in.Steer = steer
	return in
}

func (d *vehicleDriver) pick(t time.Duration) {
	u := d.r.Float64()
	secs := func(lo, hi float64) time.Duration {
		return time.Duration((lo + (hi-lo)*d.r.Float64()) * float64(time.Second))
	}
	sign := 1.0
	if d.r.IntN(2) == 0 {
		sign = -1
	}
	switch {
	case u < 0.35:
		d.mode, d.target, d.steer = 0, 20, 0.1*(2*d.r.Float64()-1)
		d.until = t + secs(1.5, 4)
	case u < 0.7:
		d.mode, d.target, d.steer = 1, 14+6*d.r.Float64(), sign*(0.3+0.7*d.r.Float64())
		d.until = t + secs(1, 3)
	case u < 0.85:
		d.mode, d.target, d.steer, d.brake = 2, 20, 0, 0.4+0.6*d.r.Float64()
		d.until = t + secs(0.6, 1.5)
	default:
		d.mode, d.target, d.steer, d.weavePh = 3, 18, 0, 2*math.Pi*d.r.Float64()
		d.until = t + secs(2, 5)
	}
}

// characterDriver runs a character in random directions with instant
// turns (sometimes a full reversal), stops, and jumps.
type characterDriver struct {
	r     *rand.Rand
	arena float64

	until    time.Duration
	jumpAt   time.Duration
	jumpTill time.Duration
	heading  float64
	throttle float64
}

func (d *characterDriver) input(t time.Duration, k Kin) Input {
	if t >= d.until {
		turn := (math.Pi/6 + d.r.Float64()*5*math.Pi/6)
		if d.r.IntN(2) == 0 {
			turn = -turn
		}
		if d.r.Float64() < 0.15 {
			turn = math.Pi // a full reversal
		}
		d.heading = geom.WrapAngle(d.heading + turn)
		if r := math.Hypot(k.Pos.X, k.Pos.Z); r > d.arena {
			d.heading = yawOf(geom.Vec3{X: -k.Pos.X, Z: -k.Pos.Z})
		}
		d.throttle = 1
		if d.r.Float64() < 0.15 {
			d.throttle = 0
		}
		d.until = t + time.Duration((0.4+1.1*d.r.Float64())*float64(time.Second))
	}
	if t >= d.jumpAt {
		d.jumpTill = t + 100*time.Millisecond
		d.jumpAt = t + time.Duration((1+4*d.r.Float64())*float64(time.Second))
	}
	return Input{Throttle: d.throttle, Heading: d.heading, Jump: t < d.jumpTill}
}

// contactDriver drives a vehicle around a circular track alongside the
// other player, drifting across the lane now and then so the two rub and
// bump. It aims at what it draws of the other player, as a real player
// would.
type contactDriver struct {
	r      *rand.Rand
	lane   float64                  // m, its own lane offset from the centre line
	radius float64                  // m, the track's radius
	other  func() (geom.Vec3, bool) // where it draws the other player
	period float64                  // s, of the drift across the lane
	phase  float64
}

func (d *contactDriver) input(t time.Duration, k Kin) Input {
	ang := math.Atan2(k.Pos.Z, k.Pos.X)
	// Drift toward the other lane once a period, far enough to touch.
	drift := math.Max(0, math.Sin(2*math.Pi*t.Seconds()/d.period+d.phase))
	off := d.lane * (1 - 1.6*drift*drift)
	// Aim 18 m ahead on the (counter-clockwise) track, at the lane offset.
	ahead := ang + 18/d.radius
	rr := d.radius + off
	aim := geom.Vec3{X: rr * math.Cos(ahead), Z: rr * math.Sin(ahead)}
	f := k.Rot.Rotate(geom.Vec3{Z: -1})
	to := aim.Sub(k.Pos)
	errAng := math.Atan2(geom.Up3D.Dot(f.Cross(to)), f.Dot(to))
	target := 18.0
	if p, ok := d.other(); ok {
		// Keep alongside: speed up when behind the other player.
		oa := math.Atan2(p.Z, p.X)
		target += clamp(geom.WrapAngle(oa-ang)*d.radius*0.5, -4, 3)
	}
	speed := k.Vel.Len()
	in := Input{Steer: clamp(errAng*2.5, -1, 1), Throttle: clamp((target-speed)*0.5+0.3, 0, 1)}
	if speed > target+1.5 {
		in.Throttle, in.Brake = 0, clamp((speed-target-1.5)*0.3, 0, 1)
	}
	return in
}

// replayDriver plays recorded inputs: each holds from its time until the
// next.
type replayDriver struct {
	events []InputEvent // this client's, in time order
	i      int
}

func (d *replayDriver) input(t time.Duration, _ Kin) Input {
	for d.i+1 < len(d.events) && d.events[d.i+1].At <= t {
		d.i++
	}
	if len(d.events) == 0 || d.events[d.i].At > t {
		return Input{}
	}
	return d.events[d.i].Input
}

// keyVehicleDriver drives like a player on a keyboard: steering keys held
// 0.1-0.6 s (left, right or none), pedals on or off (throttle, coast,
// brake, and now and then reverse). It steers hard away from the walls
// it is heading for, but not always in time: it hits walls and pillars.
type keyVehicleDriver struct {
	r    *rand.Rand
	room *arena

	steerUntil, pedalUntil time.Duration
	steer, throttle, brake float64
	stuckSince             time.Duration // when it last moved freely
}

func (d *keyVehicleDriver) input(t time.Duration, k Kin) Input {
	secs := func(lo, hi float64) time.Duration {
		return time.Duration((lo + (hi-lo)*d.r.Float64()) * float64(time.Second))
	}
	if t >= d.steerUntil {
		switch u := d.r.Float64(); {
		case u < 0.3:
			d.steer = -1
		case u < 0.6:
			d.steer = 1
		default:
			d.steer = 0
		}
		d.steerUntil = t + secs(0.1, 0.6)
	}
	if t >= d.pedalUntil {
		d.throttle, d.brake = 0, 0
		switch u := d.r.Float64(); {
		case u < 0.65:
			d.throttle = 1
			d.pedalUntil = t + secs(0.5, 2.5)
		case u < 0.8:
			d.pedalUntil = t + secs(0.3, 1)
		case u < 0.93:
			d.brake = 1
			d.pedalUntil = t + secs(0.2, 0.8)
		default:
			d.throttle = -1
			d.pedalUntil = t + secs(0.5, 1.5)
		}
	}
	if k.Vel.Len() > 1 || d.throttle == 0 {
		d.stuckSince = t
	} else if t-d.stuckSince > 700*time.Millisecond {
		// Against a wall: back off the other way, steering.
		d.throttle, d.brake, d.stuckSince = -d.throttle, 0, t
		d.pedalUntil = t + secs(0.6, 1.2)
		d.steer, d.steerUntil = 1, d.pedalUntil
	}
	in := Input{Throttle: d.throttle, Brake: d.brake, Steer: d.steer}
	// Heading for a wall within 1.2 s: steer toward the centre.
	ahead := k.Pos.Add(k.Vel.Scale(1.2))
	if lim := d.room.half - 12; math.Abs(ahead.X) > lim || math.Abs(ahead.Z) > lim {
		f := k.Rot.Rotate(geom.Vec3{Z: -1})
		to := geom.Vec3{X: -k.Pos.X, Z: -k.Pos.Z}
		in.Steer = 1
		if geom.Up3D.Dot(f.Cross(to)) < 0 {
			in.Steer = -1
		}
		if in.Throttle < 0 {
			in.Steer = -in.Steer
		}
	}
	return in
}

// keyCharacterDriver runs a character like a player on WASD: one of eight
// directions (or none) held 0.2-0.7 s, changed at once (full reversals
// included), with jumps now and then. It heads back toward the centre
// when near the walls.
type keyCharacterDriver struct {
	r    *rand.Rand
	room *arena

	until, jumpAt, jumpTill time.Duration
	heading, throttle       float64
	noJump                  bool // a top-down 2D game: no height
}

func (d *keyCharacterDriver) input(t time.Duration, k Kin) Input {
	if t >= d.until {
		d.throttle = 1
		if d.r.Float64() < 0.12 {
			d.throttle = 0
		} else {
			d.heading = geom.WrapAngle(d.heading + float64(1+d.r.IntN(7))*math.Pi/4)
		}
		if lim := d.room.half - 6; math.Abs(k.Pos.X) > lim || math.Abs(k.Pos.Z) > lim {
			// Back toward the centre, on the nearest of the eight directions.
			h := yawOf(geom.Vec3{X: -k.Pos.X, Z: -k.Pos.Z})
			d.heading, d.throttle = geom.WrapAngle(math.Round(h/(math.Pi/4))*math.Pi/4), 1
		}
		d.until = t + time.Duration((0.2+0.5*d.r.Float64())*float64(time.Second))
	}
	if t >= d.jumpAt && !d.noJump {
		d.jumpTill = t + 100*time.Millisecond
		d.jumpAt = t + time.Duration((1+4*d.r.Float64())*float64(time.Second))
	}
	return Input{Throttle: d.throttle, Heading: d.heading, Jump: t < d.jumpTill}
}

// Arenas of the hard movers: walls and a few pillars to hit.
func vehicleArena() *arena {
	return &arena{half: 110, pillars: []obstacle{{30, 20, 4}, {-40, -35, 5}, {-20, 45, 3}, {55, -50, 4}, {5, -30, 3}}}
}

func characterArena() *arena {
	return &arena{half: 30, pillars: []obstacle{{8, 6, 1.5}, {-10, -9, 2}, {-6, 12, 1}, {14, -12, 1.5}}}
}
