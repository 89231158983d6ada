package room

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/motion"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// TestForgedStampsCannotBuySpeed replays the attack that moved a player at
// 4000 m/s against a 200 m/s limit: 80 states a second (under the rate
// limit), each stamped 260 ms after the one before (just over the old
// per-state allowance) and 50 m further on, with a modest reported speed.
// The stamp allowance is one bucket refilled by real time, so the forged
// stamps buy at most StampGapAllowance once, and the player is kicked.
func TestForgedStampsCannotBuySpeed(t *testing.T) {
	h := newHarness(t, testConfig())
	a, slotA := h.join("a")
	b, _ := h.join("b")
	b.Take()
	stamp := time.Minute
	var far float64 // farthest position relayed
	for i := 0; i < 3*80 && !a.Closed; i++ {
		h.now += time.Second / 80
		stamp += 260 * time.Millisecond
		h.r.HandleFrame(h.now, a, stateFrame(t, i, stamp, geom.Vec3{X: 50 * float64(i)}, geom.Vec3{X: 150}, 0))
		for _, s := range States(b.Take()) {
			far = max(far, s.Pos.X)
		}
	}
	assert.Positive(t, h.metrics.rejected[RejectTeleport], "forged stamps are caught")
	assert.True(t, a.Closed, "and the forger is disconnected")
	assert.Equal(t, protocol.CodeImplausible, a.CloseCode)
	// What slipped through before the kick is bounded by the speed limit
	// over the time, the allowance once, and the slack per state.
	limit := motion.DefaultSpeedFactor * motion.DefaultTopSpeed
	assert.Less(t, far, limit*(3+motion.DefaultStampGapAllowance.Seconds())+3*80*motion.DefaultMoveSlack,
		"relayed positions stay within what the limit allows (slot %d)", slotA)
}

// honestRun is an honest player's traffic for TestHonestPlayPasses.
type honestRun struct {
	name   string
	dur    time.Duration // true time the player plays
	speed  float64       // along x, m/s
	render time.Duration // render frame time: one Poll, and one state sent, per frame
	physEv int           // a new sample every physEv render frames (others heartbeat)
	hitch  time.Duration // every hitchEvery frames, a frame takes this long instead
	every  int
	delay  time.Duration // one-way delay, plus up to jitter
	jitter time.Duration
	drift  float64       // sender clock rate error (1e-4 = 100 ppm fast)
	stall  time.Duration // at dur/2, nothing arrives for this long, then all at once
}

// TestHonestPlayPasses runs honest players near the speed limit through
// jitter, frame hitches, slow physics, clock drift and network stalls:
// not one state may be refused.
func TestHonestPlayPasses(t *testing.T) {
	const tick = time.Second / 60
	limit := motion.DefaultSpeedFactor * motion.DefaultTopSpeed
	runs := []honestRun{
		{name: "steady 60 Hz", dur: 20 * time.Second, speed: 0.99 * limit, render: tick, physEv: 1},
		{name: "jitter 0-200 ms", dur: 60 * time.Second, speed: 0.99 * limit, render: tick, physEv: 1,
			delay: 20 * time.Millisecond, jitter: 200 * time.Millisecond},
		{name: "30 fps with 150 ms hitches", dur: 60 * time.Second, speed: 0.99 * limit, render: 2 * tick, physEv: 1,
			hitch: 150 * time.Millisecond, every: 45, delay: 30 * time.Millisecond, jitter: 40 * time.Millisecond},
		{name: "30 Hz physics, 60 Hz sends (heartbeats)", dur: 30 * time.Second, speed: 0.99 * limit, render: tick,
			physEv: 2, delay: 30 * time.Millisecond, jitter: 30 * time.Millisecond},
		{name: "fast clock 500 ppm for 20 min", dur: 20 * time.Minute, speed: 0.99 * limit, render: tick, physEv: 1,
			drift: 5e-4, delay: 30 * time.Millisecond, jitter: 50 * time.Millisecond},
		{name: "slow clock 500 ppm for 20 min", dur: 20 * time.Minute, speed: 0.9 * limit, render: tick, physEv: 1,
			drift: -5e-4, delay: 30 * time.Millisecond, jitter: 50 * time.Millisecond},
		{name: "2 s network stall", dur: 20 * time.Second, speed: 0.99 * limit, render: tick, physEv: 1,
			delay: 30 * time.Millisecond, jitter: 20 * time.Millisecond, stall: 2 * time.Second},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.RateBurst = 1000 // a stall delivers seconds of states at once; the rate limit is not under test
			cfg.SeatHold = time.Hour
			h := newHarness(t, cfg)
			a, _ := h.join("a")
			b, _ := h.join("b")
			rng := rand.New(rand.NewPCG(1, 2))
			origin := h.now + time.Second // true time 0 on the server clock
			var (
				sent, lastArr time.Duration
				sampleAt      time.Duration // true time of the newest sample
				frame         int
			)
			for seq := 0; sent < run.dur; seq++ {
				frame++
				step := run.render
				if run.every > 0 && frame%run.every == 0 {
					step = run.hitch
				}
				sent += step
				if frame%run.physEv == 0 {
					sampleAt = sent
				}
				stamp := time.Duration(float64(sampleAt) * (1 + run.drift))
				arr := sent + run.delay
				if run.jitter > 0 {
					arr += time.Duration(rng.Int64N(int64(run.jitter)))
				}
				if half := run.dur / 2; run.stall > 0 && sent >= half && sent < half+run.stall {
					arr = max(arr, half+run.stall)
				}
				arr = max(arr, lastArr) // one TCP stream: in order
				lastArr = arr
				h.now = origin + arr
				frameB := stateFrame(t, seq, stamp, geom.Vec3{X: run.speed * sampleAt.Seconds()}, geom.Vec3{X: run.speed}, 0)
				h.r.HandleFrame(h.now, a, frameB)
				if seq%256 == 0 {
					b.Take()
					a.Take()
				}
			}
			assert.Empty(t, nonZero(h.metrics.rejected), "no honest state is refused")
			assert.False(t, a.Closed)
		})
	}
}

func nonZero(m map[Reject]int) map[Reject]int {
	out := map[Reject]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// TestReconnectKeepsLastPosition replays the jump-reconnect-jump attack:
// a jump of 1e6 m is refused, and the first state after a reconnect (or a
// leave and rejoin) is checked against the last accepted position, with
// the time since that state as the allowance.
func TestReconnectKeepsLastPosition(t *testing.T) {
	const tick = time.Second / 60
	far := geom.Vec3{X: 1e6}
	for _, how := range []string{"reconnect", "leave and rejoin", "kicked and rejoin"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, testConfig())
			a, _ := h.join("a")
			b, _ := h.join("b")
			seq := 0
			send := func(p *MemPeer, pos geom.Vec3, flags wire.Flags) {
				h.now += tick
				h.r.HandleFrame(h.now, p, stateFrame(t, seq, h.now, pos, geom.Vec3{}, flags))
				seq++
			}
			for range 10 {
				send(a, geom.Vec3{}, 0)
			}
			send(a, far, 0)
			require.Equal(t, 1, h.metrics.rejected[RejectTeleport], "the jump is refused")
			switch how {
			case "reconnect":
				h.r.Disconnect(h.now, a)
			case "leave and rejoin":
				h.r.Leave(h.now, a)
			case "kicked and rejoin":
				for !a.Closed {
					send(a, far, 0)
				}
			}
			h.now += 2 * time.Second
			a2 := &MemPeer{}
			_, err := h.r.Join(h.now, a2, Member{User: "a"})
			require.NoError(t, err)
			b.Take()
			seq = 0 // a new client process starts its sequence again
			rejected := h.metrics.rejected[RejectTeleport]
			send(a2, far, 0)
			assert.Equal(t, rejected+1, h.metrics.rejected[RejectTeleport], "the jump after the %s is refused", how)
			assert.Empty(t, States(b.Take()), "and not relayed")

			// An honest return: where the player was, or as far as the
			// limit allows since the last accepted state.
			send(a2, geom.Vec3{X: 300}, 0)
			assert.Len(t, States(b.Take()), 1, "a move within the limit since the last accepted state passes")
		})
	}
}

// TestTeleportFlagAfterReconnect checks that a respawn (FlagTeleport) is
// still allowed after a reconnect, and that its heartbeats (same sample,
// new sequence number) are not taken for a second teleport.
func TestTeleportFlagAfterReconnect(t *testing.T) {
	const tick = time.Second / 60
	cfg := testConfig()
	cfg.MaxTeleport = -1 // a jump of 100 km
	h := newHarness(t, cfg)
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.r.HandleFrame(h.now, a, stateFrame(t, 0, h.now, geom.Vec3{}, geom.Vec3{}, 0))
	h.now += 5 * time.Second
	h.r.Disconnect(h.now, a)
	a2 := &MemPeer{}
	_, err := h.r.Join(h.now, a2, Member{User: "a"})
	require.NoError(t, err)
	b.Take()
	stamp := h.now
	for i := range 5 { // the respawn sample, then heartbeats of it
		h.now += tick
		h.r.HandleFrame(h.now, a2, stateFrame(t, i, stamp, geom.Vec3{X: 1e5}, geom.Vec3{}, wire.FlagTeleport))
	}
	assert.Empty(t, nonZero(h.metrics.rejected))
	assert.Len(t, States(b.Take()), 5)
}

// TestWorldBounds checks the optional bounds: a state outside is refused,
// even the first one after a join and even one flagged as a teleport.
func TestWorldBounds(t *testing.T) {
	cases := []struct {
		name   string
		cfg    func(*Config)
		pos    geom.Vec3
		dim2D  bool
		flags  wire.Flags
		refuse bool
	}{
		{name: "off by default", pos: geom.Vec3{X: 1e30}},
		{name: "inside", cfg: func(c *Config) { c.WorldBounds = 1000 }, pos: geom.Vec3{X: 999, Y: -999, Z: 1000}},
		{name: "outside on x", cfg: func(c *Config) { c.WorldBounds = 1000 }, pos: geom.Vec3{X: 1001}, refuse: true},
		{name: "outside on -z", cfg: func(c *Config) { c.WorldBounds = 1000 }, pos: geom.Vec3{Z: -1e6}, refuse: true},
		{name: "teleport flag does not help", cfg: func(c *Config) { c.WorldBounds = 1000 }, pos: geom.Vec3{Y: 5000},
			flags: wire.FlagTeleport, refuse: true},
		{name: "2D bounds in pixels", cfg: func(c *Config) { c.WorldBounds = 10; c.WorldBounds2D = 5000 },
			pos: geom.Vec3{X: 4000}, dim2D: true},
		{name: "2D outside", cfg: func(c *Config) { c.WorldBounds2D = 5000 }, pos: geom.Vec3{X: -6000}, dim2D: true,
			refuse: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			h := newHarness(t, cfg)
			a, _ := h.join("a")
			b, _ := h.join("b")
			b.Take()
			f := stateFrame(t, 0, h.now, tc.pos, geom.Vec3{}, tc.flags)
			if tc.dim2D {
				f = stateFrame2D(t, 0, h.now, tc.pos.X, 0, tc.flags)
			}
			h.r.HandleFrame(h.now, a, f) // the first state after the join
			if tc.refuse {
				assert.Equal(t, 1, h.metrics.rejected[RejectBounds])
				assert.Empty(t, States(b.Take()))
				return
			}
			assert.Empty(t, nonZero(h.metrics.rejected))
			assert.Len(t, States(b.Take()), 1)
		})
	}
	assert.ErrorIs(t, (&Config{Limits: motion.Limits{WorldBounds: -1}}).Validate(), ErrInvalidConfig)
}

// TestDimensionFollowsTheHost closes a way round the speed limit: 2D
// states are judged in pixels (2000 px/s by default), so a player of a 3D
// game sending 2D states would move 20 times as fast. Once the host has
// sent a state, the room takes only states of the host's dimension.
func TestDimensionFollowsTheHost(t *testing.T) {
	h := newHarness(t, testConfig())
	host, _ := h.join("host")
	cheat, _ := h.join("cheat")
	h.r.HandleFrame(h.now, cheat, stateFrame2D(t, 0, h.now, 0, 0, 0))
	assert.Empty(t, nonZero(h.metrics.rejected), "before the host sends, either passes")
	h.r.HandleFrame(h.now, host, stateFrame(t, 0, h.now, geom.Vec3{}, geom.Vec3{}, 0))
	host.Take()
	for i := 1; i <= 10; i++ {
		h.now += time.Second / 60
		h.r.HandleFrame(h.now, cheat, stateFrame2D(t, i, h.now, 60*float64(i), 3000, 0)) // 3600 px/s: fine for 2D
	}
	assert.Equal(t, 10, h.metrics.rejected[RejectMalformed], "the room carries 3D states: 2D ones are refused")
	assert.Empty(t, States(host.Take()))
	errs := errorsIn(msgs(cheat))
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[0].Message, "3D")
	h.now += time.Second / 60
	h.r.HandleFrame(h.now, cheat, stateFrame(t, 11, h.now, geom.Vec3{}, geom.Vec3{}, 0))
	assert.Len(t, States(host.Take()), 1, "3D states pass")
}

// TestMoveSlackIsPerTime replays the slack attack: at the rate limit (90
// states a second) each state moved the speed limit's distance plus
// almost all of MoveSlack, so the slack paid per state added 90 m/s in 3D
// (283 m/s against 200 allowed) and 2880 px/s in 2D, without one
// rejection. The slack is now a budget refilled over MoveSlackRefill.
func TestMoveSlackIsPerTime(t *testing.T) {
	for _, dim2D := range []bool{false, true} {
		t.Run(map[bool]string{false: "3D", true: "2D"}[dim2D], func(t *testing.T) {
			h := newHarness(t, testConfig())
			a, _ := h.join("a")
			b, _ := h.join("b")
			limit, slack := motion.DefaultSpeedFactor*motion.DefaultTopSpeed, motion.DefaultMoveSlack
			if dim2D {
				limit, slack = motion.DefaultSpeedFactor*motion.DefaultTopSpeed2D, motion.DefaultMoveSlack2D
			}
			const rate = 90 // the rate limit: 60 x 1.5
			gap := time.Second / rate
			start := h.now
			var x, far float64
			for i := range 3 * rate {
				h.now += gap
				x += limit*gap.Seconds() + 0.99*slack
				f := stateFrame(t, i, h.now, geom.Vec3{X: x}, geom.Vec3{X: limit * 0.99}, 0)
				if dim2D {
					f = stateFrame2D(t, i, h.now, x, limit*0.99, 0)
				}
				h.r.HandleFrame(h.now, a, f)
				for _, s := range States(b.Take()) {
					far = max(far, s.Pos.X)
				}
			}
			speed := far / (h.now - start).Seconds()
			t.Logf("relayed speed %.0f per second against a limit of %.0f; rejected %d", speed, limit, h.metrics.rejected[RejectTeleport])
			assert.Positive(t, h.metrics.rejected[RejectTeleport], "the slack bought per state is caught")
			assert.Less(t, speed, 1.02*limit, "relayed positions stay near the speed limit")
		})
	}
}

// TestTeleportBudget replays the teleport hops: one state flagged
// wire.FlagTeleport a second (TeleportEvery), each 5 km from the last,
// moved a player at 5 km/s for as long as it liked. Now only
// TeleportsPerMinute jumps pass in a minute; the rest are refused as
// teleports (abuse score).
func TestTeleportBudget(t *testing.T) {
	cfg := testConfig()
	cfg.MaxTeleport = -1 // hops of 5 km
	h := newHarness(t, cfg)
	a, _ := h.join("a")
	b, _ := h.join("b")
	h.r.HandleFrame(h.now, a, stateFrame(t, 0, h.now, geom.Vec3{}, geom.Vec3{}, 0))
	b.Take()
	hops, x := 0, 0.0
	for i := 1; i <= 120; i++ {
		h.now += time.Second
		x += 5000
		h.r.HandleFrame(h.now, a, stateFrame(t, i, h.now, geom.Vec3{X: x}, geom.Vec3{}, wire.FlagTeleport))
		n := len(States(b.Take()))
		hops += n
		if i == motion.DefaultTeleportsPerMinute {
			assert.Equal(t, motion.DefaultTeleportsPerMinute, hops, "the budget passes at once")
		}
		if n == 0 {
			x -= 5000 // a refused hop: the next one starts from the last accepted position
		}
	}
	t.Logf("hops of 5 km relayed in 120 s: %d (%.0f m/s); refused %d", hops, float64(hops)*5000/120, h.metrics.rejected[RejectTeleport])
	// 12 at once, and one per 5 s all along.
	assert.InDelta(t, motion.DefaultTeleportsPerMinute+120/5, hops, 1.5)
	assert.Equal(t, 120-hops, h.metrics.rejected[RejectTeleport], "the rest are refused as teleports")
	assert.False(t, a.Closed, "one refusal a second is forgiven (AbuseDecay)")
}

// TestMotionLimitsDefaults: the room's motion rules are motion's, with
// motion's defaults for the fields a Config leaves zero, and a field set
// on the Config reaches the rules the room checks by.
func TestMotionLimitsDefaults(t *testing.T) {
	assert.Equal(t, motion.Defaults(), (&Config{}).MotionLimits())
	r, err := New("ABCD", nil, nil, 0)
	require.NoError(t, err)
	assert.Equal(t, motion.Defaults(), r.limits, "a nil Config")

	cfg := &Config{Limits: motion.Limits{TopSpeed: 30, WorldBounds: 500}}
	want := motion.Defaults()
	want.TopSpeed, want.WorldBounds = 30, 500
	assert.Equal(t, want, cfg.MotionLimits())
	r, err = New("ABCD", cfg, nil, 0)
	require.NoError(t, err)
	assert.Equal(t, want, r.limits)
	assert.Equal(t, 30.0, r.cfg.TopSpeed, "promoted from the embedded Limits")
}
