package clock

import (
	"testing"
	"time"

	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func durationRange(lo, hi time.Duration) *rapid.Generator[time.Duration] {
	return rapid.Map(rapid.Int64Range(int64(lo), int64(hi)), func(v int64) time.Duration { return time.Duration(v) })
}

// checkMapping asserts, at times around now, that the applied offset moves
// at most rate per second and that the mapping t -> t+offset(t) never
// decreases and is inverted by inverse (when not nil).
func checkMapping(t *rapid.T, now time.Duration, rate float64, offset, inverse func(time.Duration) time.Duration) {
	l1 := now + durationRange(-10*time.Second, 30*time.Second).Draw(t, "l1")
	l2 := l1 + durationRange(0, 30*time.Second).Draw(t, "dl")
	o1, o2 := offset(l1), offset(l2)
	assert.LessOrEqual(t, float64(absDur(o2-o1)), rate*float64(l2-l1)+1, "offset slid too fast")
	assert.LessOrEqual(t, l1+o1, l2+o2, "mapped time ran backwards")
	if inverse != nil {
		assert.InDelta(t, float64(l1), float64(inverse(l1+o1)), 2, "inverse")
		assert.InDelta(t, float64(l2), float64(inverse(l2+o2)), 2, "inverse")
	}
}

func TestSyncProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, err := NewSync(nil)
		require.NoError(t, err)
		now := durationRange(-time.Hour, time.Hour).Draw(t, "start")
		offset := durationRange(-time.Hour, time.Hour).Draw(t, "offset")
		for range rapid.IntRange(1, 50).Draw(t, "pongs") {
			now += durationRange(0, 5*time.Second).Draw(t, "wait")
			if rapid.IntRange(0, 4).Draw(t, "step") == 0 {
				offset += durationRange(-time.Second, time.Second).Draw(t, "delta")
			}
			rtt := durationRange(-time.Millisecond, 6*time.Second).Draw(t, "rtt")
			up := time.Duration(float64(rtt) * rapid.Float64Range(0, 1).Draw(t, "up share"))
			sent := now - rtt
			if rtt > 0 {
				s.Sent(sent)
				require.GreaterOrEqual(t, s.NextPing(), sent)
			}

			was, before := s.off.set, s.Offset(now)
			s.Observe(sent, sent+up+offset, now)
			if after := s.Offset(now); was && after != before {
				assert.Greater(t, absDur(after-before), DefaultJumpAbove, "a change at an update must be a jump")
				assert.Equal(t, s.Target(), after, "a jump lands on the target")
			}
			if s.RTT() > 0 && rtt > 0 && rtt <= DefaultMaxRTT {
				assert.LessOrEqual(t, s.RTT(), rtt)
			}
			checkMapping(t, now, DefaultSyncSlewRate, s.Offset, func(u time.Duration) time.Duration { return s.LocalTime(u) })
			l := now + durationRange(-time.Minute, time.Minute).Draw(t, "l")
			assert.Equal(t, l+s.Offset(l), s.ServerTime(l))
		}
	})
}

func TestRestampProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r, err := NewRestamper(nil)
		require.NoError(t, err)
		arrival := durationRange(-time.Hour, 24*time.Hour).Draw(t, "start")
		sender := durationRange(-24*time.Hour, 24*time.Hour).Draw(t, "sender offset")
		for range rapid.IntRange(1, 200).Draw(t, "states") {
			arrival += durationRange(0, 3*time.Second).Draw(t, "wait")
			switch rapid.IntRange(0, 9).Draw(t, "event") {
			case 0:
				sender += durationRange(-12*time.Hour, 12*time.Hour).Draw(t, "sender step")
			case 1:
				r.ObserveRTT(durationRange(-time.Millisecond, time.Second).Draw(t, "rtt"), arrival)
			}
			var stamp wire.Stamp
			if rapid.IntRange(0, 19).Draw(t, "garbage") == 0 {
				stamp = wire.Stamp(rapid.Uint32().Draw(t, "stamp"))
			} else {
				stamp = wire.StampOf(arrival - sender - durationRange(0, 2*time.Second).Draw(t, "delay"))
			}

			was, before, rttKnown := r.off.set, r.Offset(arrival), r.rttKnown
			got := r.Restamp(stamp, arrival)
			after := r.Offset(arrival)
			assert.Equal(t, stamp, wire.StampOf(got-after), "the result is the unwrapped stamp plus the applied offset")
			if !rttKnown && r.rttKnown {
				assert.Equal(t, r.Target(), after, "the first round trip is taken at once")
			} else if was && after != before {
				assert.Greater(t, absDur(after-before), DefaultRestampJumpAbove, "a change at an update must be a jump")
				assert.Equal(t, r.Target(), after, "a jump lands on the target")
			}
			checkMapping(t, arrival, DefaultRestampSlewRate, r.Offset, nil)
		}
	})
}

// TestMinQueue compares the monotonic deque with a brute-force window.
func TestMinQueue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q minQueue
		type item struct{ at, v time.Duration }
		var all []item
		now := time.Duration(0)
		const window = 10
		for range rapid.IntRange(1, 300).Draw(t, "pushes") {
			now += durationRange(0, 3).Draw(t, "dt")
			v := durationRange(-20, 20).Draw(t, "v")
			q.expire(now-window, 0)
			q.push(now, v)
			all = append(all, item{now, v})
			want := v
			for _, it := range all {
				if it.at >= now-window {
					want = min(want, it.v)
				}
			}
			got, ok := q.min()
			require.True(t, ok)
			require.Equal(t, want, got)
		}
	})
}
