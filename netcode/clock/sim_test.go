package clock

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/nearzero/nearzero/netcode/simnet"
	"github.com/nearzero/nearzero/netcode/wire"
)

// This file is a tiny seeded simulation of two machines: true time advances;
// each machine's clock reads offset + (1+ppm·1e-6)·true (plus any steps); a
// link delays a packet by base + jitter, drops some and holds packets during
// stalls.

// simClock is one machine's clock as a function of true time.
type simClock struct {
	offset time.Duration
	ppm    float64
	steps  []clockStep // in order of at
}

// clockStep adds delta to a clock from true time at on (a restart, a reload).
type clockStep struct{ at, delta time.Duration }

// read returns the clock reading at true time t.
func (c simClock) read(t time.Duration) time.Duration {
	r := c.offset + t
	if c.ppm != 0 {
		r += time.Duration(math.Round(float64(t) * c.ppm * 1e-6))
	}
	for _, s := range c.steps {
		if t >= s.at {
			r += s.delta
		}
	}
	return r
}

// trueAt is the inverse of read for a clock without steps.
func (c simClock) trueAt(local time.Duration) time.Duration {
	return time.Duration(math.Round(float64(local-c.offset) / (1 + c.ppm*1e-6)))
}

// stall holds every packet that enters the link during [at, at+hold) until
// at+hold, then releases them together (Wi-Fi retries, a busy router).
type stall struct{ at, hold time.Duration }

// queue is a bottleneck from at: the one-way delay grows linearly by peak
// over grow (a queue filling), then falls back over drain (it draining).
// FIFO order holds while peak < drain.
type queue struct{ at, grow, drain, peak time.Duration }

// extra returns the queueing delay of a packet sent at true time t.
func (q queue) extra(t time.Duration) time.Duration {
	switch {
	case t < q.at || t >= q.at+q.grow+q.drain:
		return 0
	case t < q.at+q.grow:
		return time.Duration(float64(q.peak) * float64(t-q.at) / float64(q.grow))
	default:
		return time.Duration(float64(q.peak) * (1 - float64(t-q.at-q.grow)/float64(q.drain)))
	}
}

// simLink is one direction of a link.
type simLink struct {
	base   time.Duration
	jitter simnet.Jitter
	loss   float64 // probability of a drop
	stalls []stall
	queues []queue
}

// delay returns the one-way delay of a packet sent at true time t, and false
// when the packet is lost. It draws from r in the same order whatever the
// outcome, so worlds that differ only in base latencies see the same draws.
func (l simLink) delay(r *rand.Rand, t time.Duration) (time.Duration, bool) {
	lost := r.Float64() < l.loss
	d := l.base
	if l.jitter != nil {
		d += l.jitter.Sample(r)
	}
	for _, q := range l.queues {
		d += q.extra(t)
	}
	for _, s := range l.stalls {
		if t >= s.at && t < s.at+s.hold {
			d = max(d, s.at+s.hold-t)
		}
	}
	return d, !lost
}

// syncWorld is a client pinging a server.
type syncWorld struct {
	client, server simClock
	up, down       simLink
}

// truth is the true server-minus-client offset at true time t.
func (w syncWorld) truth(t time.Duration) time.Duration { return w.server.read(t) - w.client.read(t) }

// syncRun is what happened in one simulated run.
type syncRun struct {
	pings   []time.Duration // local times of the pings
	samples int             // pongs observed
	meas    []syncMeas      // the error on a regular grid of true time
	jumps   []syncJump      // discontinuities of the applied offset, the first sync excluded
}

type syncMeas struct {
	at, err time.Duration // true time; applied minus true offset
	synced  bool
}

type syncJump struct{ at, size time.Duration }

type pong struct{ arrive, sent, server time.Duration }

// runSync drives s through the world for dur of true time, measuring the
// error every `every` from `from` on.
func runSync(s *Sync, w syncWorld, seed uint64, dur, from, every time.Duration) syncRun {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var run syncRun
	var pending []pong // by arrival
	next := from
	const never = time.Duration(math.MaxInt64)
	for t := time.Duration(0); t < dur; {
		tp := max(w.client.trueAt(s.NextPing()), t)
		ta := never
		if len(pending) > 0 {
			ta = pending[0].arrive
		}
		switch {
		case next <= tp && next <= ta:
			t = next
			local := w.client.read(t)
			run.meas = append(run.meas, syncMeas{at: t, err: s.Offset(local) - w.truth(t), synced: s.Synced()})
			next += every
		case ta <= tp:
			t = ta
			p := pending[0]
			pending = pending[1:]
			received := w.client.read(t)
			was := s.off.set
			before := s.Offset(received)
			s.Observe(p.sent, p.server, received)
			run.samples++
			if after := s.Offset(received); was && after != before {
				run.jumps = append(run.jumps, syncJump{at: t, size: after - before})
			}
		default:
			t = tp
			local := w.client.read(t)
			s.Sent(local)
			run.pings = append(run.pings, local)
			d1, ok1 := w.up.delay(r, t)
			d2, ok2 := w.down.delay(r, t+d1)
			if ok1 && ok2 {
				p := pong{arrive: t + d1 + d2, sent: local, server: w.server.read(t + d1)}
				i := sort.Search(len(pending), func(i int) bool { return pending[i].arrive > p.arrive })
				pending = slices.Insert(pending, i, p)
			}
		}
	}
	return run
}

// errStats returns the 95th percentile and the largest absolute error of the
// measurements taken at or after true time from.
func errStats(meas []syncMeas, from time.Duration) (p95, worst time.Duration) {
	var abs []time.Duration
	for _, m := range meas {
		if m.at >= from {
			abs = append(abs, absDur(m.err))
		}
	}
	return percentile(abs, 0.95), slices.Max(abs)
}

// percentile returns the q-quantile of v (which it sorts) by the nearest rank.
func percentile(v []time.Duration, q float64) time.Duration {
	slices.Sort(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(i, 0)]
}

// stampWorld is a sender streaming states to a receiver.
type stampWorld struct {
	sender, receiver simClock
	link             simLink       // sender to receiver; round trips use it both ways
	every            time.Duration // send interval (default 1/60 s)
	wait             simnet.Jitter // time from sampling a state to sending it (busy main thread)
	rttEvery         time.Duration // round trips measured this far apart after 16 at 250 ms (default 2 s; negative: none)
	exactRTT         bool          // measure the round trip as 2·base, without jitter
}

// stampMeas is one restamped state.
type stampMeas struct {
	at      time.Duration // true arrival time
	arrival time.Duration // arrival on the receiver's clock
	applied time.Duration // applied offset at arrival, after the update
	err     time.Duration // restamped minus true sample time on the receiver's clock
	jumped  bool          // the applied offset jumped at this state
}

// runRestamp streams states sampled during [0, dur) of true time through r,
// in arrival order, with round trips reported every rttEvery.
func runRestamp(r *Restamper, w stampWorld, seed uint64, dur time.Duration) []stampMeas {
	rng := rand.New(rand.NewPCG(seed, seed^0x57a3))
	every, rttEvery := w.every, w.rttEvery
	if every == 0 {
		every = time.Second / 60
	}
	if rttEvery == 0 {
		rttEvery = 2 * time.Second
	}
	type state struct {
		sampled, arrive time.Duration
		stamp           wire.Stamp
	}
	var states []state
	for t := time.Duration(0); t < dur; t += every {
		wait := time.Duration(0)
		if w.wait != nil {
			wait = w.wait.Sample(rng)
		}
		d, ok := w.link.delay(rng, t+wait)
		if ok {
			states = append(states, state{t, t + wait + d, wire.StampOf(w.sender.read(t))})
		}
	}
	slices.SortStableFunc(states, func(a, b state) int { return int(a.arrive - b.arrive) })

	out := make([]stampMeas, 0, len(states))
	nextRTT, nrtt := time.Duration(0), 0
	for _, s := range states {
		for rttEvery > 0 && nextRTT <= s.arrive {
			rtt := 2 * w.link.base
			if !w.exactRTT {
				d1, _ := w.link.delay(rng, nextRTT)
				d2, _ := w.link.delay(rng, nextRTT+d1)
				rtt = w.receiver.read(nextRTT+d1+d2) - w.receiver.read(nextRTT)
			}
			r.ObserveRTT(rtt, w.receiver.read(nextRTT))
			if nrtt++; nrtt < DefaultWarmupSamples {
				nextRTT += DefaultWarmupInterval // as Sync pings
			} else {
				nextRTT += rttEvery
			}
		}
		arrival := w.receiver.read(s.arrive)
		was := r.off.set
		before := r.Offset(arrival)
		got := r.Restamp(s.stamp, arrival)
		out = append(out, stampMeas{
			at:      s.arrive,
			arrival: arrival,
			applied: r.Offset(arrival),
			err:     got - w.receiver.read(s.sampled),
			jumped:  was && r.Offset(arrival) != before,
		})
	}
	return out
}

// stampStats returns the 95th percentile and the largest absolute error of
// the states that arrived at or after true time from.
func stampStats(meas []stampMeas, from time.Duration) (p95, worst time.Duration) {
	var abs []time.Duration
	for _, m := range meas {
		if m.at >= from {
			abs = append(abs, absDur(m.err))
		}
	}
	return percentile(abs, 0.95), slices.Max(abs)
}
