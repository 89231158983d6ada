package clock

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nearzero/nearzero/netcode/simnet"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stream is a minute of states at 60 Hz over a jittery 40 ms link from a
// sender whose clock reads 3 h ahead: stamps and arrival times, in arrival
// order.
type stream struct {
	stamps   []wire.Stamp
	arrivals []time.Duration
}

const streamLen = time.Minute

func newStream(seed uint64) stream {
	r := rand.New(rand.NewPCG(seed, 1))
	jitter := simnet.NormalJitter{Sigma: 5 * time.Millisecond}
	var s stream
	last := time.Duration(0)
	for t := time.Duration(0); t < streamLen; t += time.Second / 60 {
		last = max(last, t+40*time.Millisecond+jitter.Sample(r)) // a late state holds back the next
		s.stamps = append(s.stamps, wire.StampOf(3*time.Hour+t))
		s.arrivals = append(s.arrivals, last)
	}
	return s
}

// feed restamps the stream once, shifted by round minutes so that a warm
// Restamper sees time keep going.
func (s stream) feed(r *Restamper, round int) time.Duration {
	shift := time.Duration(round) * streamLen
	var sum time.Duration
	for i, st := range s.stamps {
		sum += r.Restamp(st+wire.StampOf(shift), s.arrivals[i]+shift)
	}
	r.ObserveRTT(80*time.Millisecond, s.arrivals[len(s.arrivals)-1]+shift)
	return sum
}

func BenchmarkRestamp(b *testing.B) {
	s := newStream(1)
	r := newRestamper(b, nil)
	s.feed(r, 0) // warm: the deques have grown
	n := len(s.stamps)
	round, i := 1, 0
	b.ReportAllocs()
	for b.Loop() {
		shift := time.Duration(round) * streamLen
		r.Restamp(s.stamps[i]+wire.StampOf(shift), s.arrivals[i]+shift)
		if i++; i == n {
			i, round = 0, round+1
		}
	}
}

func BenchmarkSyncServerTime(b *testing.B) {
	s := newSync(b, nil)
	now := time.Duration(0)
	for range 20 {
		pingPong(s, now, time.Hour, 30*time.Millisecond)
		now = s.NextPing()
	}
	pingPong(s, now, time.Hour+100*time.Millisecond, 30*time.Millisecond) // a step: slewing
	pingPong(s, now+time.Second, time.Hour+130*time.Millisecond, 30*time.Millisecond)
	l := now + time.Second
	var sum time.Duration
	b.ReportAllocs()
	for b.Loop() {
		sum += s.ServerTime(l)
		l += time.Millisecond
	}
	_ = sum
}

func BenchmarkSyncObserve(b *testing.B) {
	s := newSync(b, nil)
	now := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		pingPong(s, now, time.Hour, 30*time.Millisecond)
		now += 2 * time.Second
	}
}

// TestNoAllocations pins the allocation budget: none per call once warm.
func TestNoAllocations(t *testing.T) {
	s := newStream(2)
	r := newRestamper(t, nil)
	s.feed(r, 0)
	round := 1
	assert.Zero(t, testing.AllocsPerRun(5, func() { s.feed(r, round); round++ }), "Restamp")

	sy := newSync(t, nil)
	now := time.Duration(0)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		pingPong(sy, now, time.Hour, 30*time.Millisecond)
		now = sy.NextPing()
		_ = sy.ServerTime(now) + sy.LocalTime(now)
	}), "Sync")
	require.True(t, sy.Synced())
}
