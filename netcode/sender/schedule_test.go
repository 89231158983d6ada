package sender

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
)

// still is an entity standing at the origin.
func still(time.Duration) (geom.Vec3, geom.Vec3, geom.Quat) {
	return geom.Vec3{}, geom.Vec3{}, geom.Identity
}

func TestScheduleCount(t *testing.T) {
	for _, tc := range []struct {
		name    string
		frameHz float64
		jitter  time.Duration
		rate    float64
		want    int
	}{
		{"144 Hz frames, 60 Hz sends", 144, 0, 60, 600},
		{"jittery 144 Hz frames", 144, ms(2), 60, 600},
		{"240 Hz frames", 240, ms(1), 60, 600},
		// Frames at the rate: every frame sends, even the ones that come
		// a little early (see Poll on where the phase sits).
		{"60 Hz frames, 60 Hz sends", 60, 0, 60, 600},
		{"jittery 60 Hz frames, 60 Hz sends", 60, ms(4), 60, 600},
		{"144 Hz frames, 30 Hz sends", 144, ms(2), 30, 300},
		{"1000 Hz frames and sends", 1000, 0, 1000, 10000},
		{"odd rate", 144, ms(1), 47.3, 473},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSender(t, Config{Rate: tc.rate})
			got := drive(t, s, still, frames(tc.frameHz, 10*time.Second, tc.jitter, newRand(t, 10)), false, false)
			assert.InDelta(t, tc.want, len(got), 1)
			assert.Equal(t, uint64(len(got)), s.Stats().Sent)
		})
	}
}

// TestScheduleNoDrift checks the phase: the i-th send is due a fixed
// i/Rate after the first sample, and goes at the frame nearest to that,
// however the frames jitter.
func TestScheduleNoDrift(t *testing.T) {
	const rate = 60.0
	for _, tc := range []struct {
		frameHz float64
		jitter  time.Duration
	}{
		{144, 0}, {144, ms(1)}, {144, ms(3)},
		{120, 0}, {120, ms(2)}, // due times on every other frame
		{60, 0}, {60, ms(4)}, // due times on every frame
	} {
		t.Run(fmt.Sprintf("%v Hz frames, jitter %v", tc.frameHz, tc.jitter), func(t *testing.T) {
			s := newSender(t, Config{Rate: rate})
			got := drive(t, s, still, frames(tc.frameHz, 10*time.Second, tc.jitter, newRand(t, 11)), false, false)
			require.InDelta(t, 600, len(got), 1)
			// The frame nearest the due time: at most half a frame gap
			// either side, where gaps vary by twice the jitter.
			maxOff := period(tc.frameHz)/2 + 3*tc.jitter + 2 // ns of rounding
			for i, st := range got {
				due := origin + time.Duration(math.Round(float64(i)*float64(time.Second)/rate))
				off := st.now - due
				assert.LessOrEqual(t, off, maxOff, "send %d late", i)
				assert.GreaterOrEqual(t, off, -maxOff, "send %d early", i)
			}
		})
	}
}

func TestScheduleStall(t *testing.T) {
	const rate = 60.0
	interval := period(rate)
	s := newSender(t, Config{Rate: rate})
	before := frames(144, time.Second, 0, nil)
	drive(t, s, still, before, false, false)
	resume := before[len(before)-1] + 500*time.Millisecond
	var after []time.Duration
	for _, ft := range frames(144, time.Second, 0, nil) {
		after = append(after, ft-origin+resume)
	}
	got := drive(t, s, still, after, false, false)
	require.NotEmpty(t, got)
	assert.Equal(t, resume, got[0].now, "the first frame after the stall sends")
	if len(got) > 1 {
		assert.GreaterOrEqual(t, got[1].now-got[0].now, interval/2, "no burst to catch up")
	}
	for i := range got {
		// No window of 100 ms holds more than the rate allows.
		n := 0
		for _, o := range got[i:] {
			if o.now-got[i].now < 100*time.Millisecond {
				n++
			}
		}
		assert.LessOrEqual(t, n, 7, "sends in the 100 ms from %v", got[i].now-resume)
	}
	assert.InDelta(t, 60, len(got), 1, "the rate resumes")
}

func TestHeartbeat(t *testing.T) {
	t.Run("30 Hz samples, 60 Hz polls", func(t *testing.T) {
		s := newSender(t, Config{Rate: 60})
		var got []sent
		for i, ft := range frames(60, 10*time.Second, 0, nil) {
			if i%2 == 0 {
				s.Sample(ft, geom.Vec3{X: float64(i)}, geom.Identity)
			}
			if st, ok := pollOnce(t, s, ft); ok {
				got = append(got, st)
			}
		}
		assert.InDelta(t, 600, len(got), 1, "the rate is kept")
		assert.InDelta(t, 300, s.Stats().Heartbeats, 1)
		for i := 1; i < len(got); i++ {
			a, b := got[i-1], got[i]
			assert.Equal(t, a.st.Seq+1, b.st.Seq)
			if b.st.Stamp == a.st.Stamp {
				// A heartbeat: the same sample again, under a new Seq.
				a.st.Seq = b.st.Seq
				assert.Equal(t, a.st, b.st, "heartbeat %d", i)
			}
		}
	})
	t.Run("30 fps frames polling once each", func(t *testing.T) {
		s := newSender(t, Config{Rate: 60})
		got := drive(t, s, still, frames(30, 10*time.Second, ms(3), newRand(t, 12)), false, false)
		assert.InDelta(t, 300, len(got), 1, "one send per frame: no catching up")
		assert.Zero(t, s.Stats().Heartbeats)
	})
	t.Run("a single sample", func(t *testing.T) {
		s := newSender(t, Config{Rate: 60})
		s.Sample(origin, geom.Vec3{X: 1}, geom.Identity)
		var got []sent
		for _, now := range frames(144, time.Second, 0, nil) {
			if st, ok := pollOnce(t, s, now); ok {
				got = append(got, st)
			}
		}
		assert.InDelta(t, 60, len(got), 1, "a still entity heartbeats at the rate")
		for _, st := range got {
			assert.Equal(t, got[0].st.Stamp, st.st.Stamp)
		}
	})
}

func TestNothingBeforeFirstSample(t *testing.T) {
	s := newSender(t, Config{})
	assert.Equal(t, time.Duration(math.MaxInt64), s.NextDue())
	for _, now := range []time.Duration{-time.Hour, 0, origin, time.Hour} {
		_, ok := pollOnce(t, s, now)
		assert.False(t, ok, "at %v", now)
	}
	_, ok := s.Latest()
	assert.False(t, ok)

	s.Sample(origin, geom.Vec3{}, geom.Identity)
	assert.Equal(t, origin, s.NextDue(), "due at the first sample")
	_, ok = pollOnce(t, s, origin-time.Millisecond)
	assert.False(t, ok)
	_, ok = pollOnce(t, s, origin)
	assert.True(t, ok)
	assert.Equal(t, origin+period(DefaultRate), s.NextDue(), "the first sample sets the phase")
	_, ok = pollOnce(t, s, origin)
	assert.False(t, ok, "one state per Poll")
}

// TestScheduleEarly checks the early allowance: a Poll sends up to half the
// gap since the previous Poll before the due time, so the Poll nearest the
// due time sends.
func TestScheduleEarly(t *testing.T) {
	s := newSender(t, Config{Rate: 60}) // due at 0, 16.7, 33.3, 50 ms
	s.Sample(origin, geom.Vec3{}, geom.Identity)
	for _, tc := range []struct {
		at   float64 // ms after origin
		want bool
		why  string
	}{
		{0, true, "due at the first sample"},
		{10, false, "6.7 ms early, more than half the 10 ms gap"},
		{15, true, "1.7 ms early, less than half the 5 ms gap"},
		{30, true, "3.3 ms early, less than half the 15 ms gap (the next Poll would be later)"},
		{31, false, "sent already"},
		{48, true, "2 ms early, less than half the 17 ms gap (capped at half an interval, 8.3 ms)"},
		{60, false, "6.7 ms early, more than half the 12 ms gap"},
		{66, true, "0.7 ms early, less than half the 6 ms gap"},
		{200, true, "late: sends, and resumes from now"},
		{201, false, "one state per stall, no burst"},
		{210, false, "6.7 ms early, more than half the 9 ms gap"},
		{216, true, "0.7 ms early"},
	} {
		_, ok := pollOnce(t, s, origin+ms(tc.at))
		assert.Equal(t, tc.want, ok, "poll at %v ms: %s", tc.at, tc.why)
	}
	assert.InDelta(t, origin+ms(200)+2*period(60), s.NextDue(), 1)
}
