package simnet

import (
	"encoding/binary"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testSeed returns the seed for a randomized test: 1, or SIMNET_SEED when
// set. A failing test prints it with the command that reruns it.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(1)
	if v := os.Getenv("SIMNET_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SIMNET_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d; rerun: SIMNET_SEED=%d go test -run '^%s$' ./netcode/simnet", seed, seed, t.Name())
		}
	})
	return seed
}

// arrival records one delivered packet.
type arrival struct {
	id        int
	sent, got time.Duration
}

// recorder numbers the packets it sends and records what arrives.
type recorder struct {
	s    *Scheduler
	sent []time.Duration // send time by id
	got  []arrival
}

func newRecorder(s *Scheduler) *recorder { return &recorder{s: s} }

// packet returns the payload for the next id and records its send time.
func (r *recorder) packet() []byte {
	id := len(r.sent)
	r.sent = append(r.sent, r.s.Now())
	return binary.LittleEndian.AppendUint32(nil, uint32(id))
}

func (r *recorder) deliver(p []byte) {
	id := int(binary.LittleEndian.Uint32(p))
	r.got = append(r.got, arrival{id: id, sent: r.sent[id], got: r.s.Now()})
}

// sendEvery sends one packet on l every period from Now until Now+total
// (exclusive) and returns after running the scheduler until everything is
// delivered or dropped.
func (r *recorder) sendEvery(l *Link, period, total time.Duration) {
	start := r.s.Now()
	for t := start; t < start+total; t += period {
		r.s.At(t, func() { l.Send(r.packet()) })
	}
	for r.s.Step() {
	}
}

// delays returns the one-way delay of every arrival.
func (r *recorder) delays() []time.Duration {
	d := make([]time.Duration, len(r.got))
	for i, a := range r.got {
		d[i] = a.got - a.sent
	}
	return d
}

// inversions counts arrivals that came after a packet sent later.
func (r *recorder) inversions() int {
	n, maxID := 0, -1
	for _, a := range r.got {
		if a.id < maxID {
			n++
		}
		maxID = max(maxID, a.id)
	}
	return n
}

// quantile returns the q-quantile of d (sorted copy, nearest rank).
func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

func mean(d []time.Duration) time.Duration {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

func sqrt(x float64) float64 { return math.Sqrt(x) }
