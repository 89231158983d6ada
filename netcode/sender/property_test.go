package sender

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// TestSenderProperties drives a sender with random interleavings of
// samples (some stale or invalid), polls, teleports and resets, and checks
// the package invariants against a small model.
func TestSenderProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dim2D := rapid.Bool().Draw(rt, "dim2D")
		rate := rapid.SampledFrom([]float64{20, 60, 144}).Draw(rt, "rate")
		s, err := New(Config{Dim2D: dim2D, Rate: rate})
		require.NoError(rt, err)

		// The model.
		var (
			now        = origin
			has        bool          // an accepted sample since New or Reset
			newest     time.Duration // its time
			sentNewest bool          // it has been sent
			pendingTel = false       // Teleport or Reset with no accepted sample since
			carryTel   bool          // an accepted, flagged sample not sent yet
			flagged    wire.Stamp    // the stamp sent with the flag last
			hasFlagged bool
			seq        wire.Seq
			sends      []time.Duration // since New or the last Reset
			sent       uint64
			heartbeats uint64
			pos        geom.Vec3
			lastPoll   time.Duration
			polled     bool
		)
		for range rapid.IntRange(1, 300).Draw(rt, "steps") {
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0, 1, 2, 3: // a frame's sample
				now += time.Duration(rapid.Int64Range(0, int64(ms(40))).Draw(rt, "dt"))
				// Frame times may repeat or run back (stale samples);
				// the clock Poll reads does not.
				at := now - time.Duration(rapid.Int64Range(0, int64(ms(2))).Draw(rt, "back"))
				pos = pos.Add(geom.Vec3{X: rapid.Float64Range(-1, 1).Draw(rt, "dx"), Y: rapid.Float64Range(-1, 1).Draw(rt, "dy")})
				p := pos
				bad := rapid.IntRange(0, 19).Draw(rt, "bad") == 0
				if bad {
					p.X = math.NaN()
				}
				before := s.Stats()
				if rapid.Bool().Draw(rt, "withVel") {
					s.SampleWithVelocity(at, p, geom.Identity, geom.Vec3{X: rapid.Float64Range(-1e5, 1e5).Draw(rt, "vx")})
				} else {
					s.Sample(at, p, geom.Identity)
				}
				accepted := !bad && (!has || (at > newest && wire.StampOf(at) != wire.StampOf(newest)))
				assert.Equal(rt, accepted, s.Stats().Samples == before.Samples+1, "accepted")
				if accepted {
					if pendingTel {
						carryTel, pendingTel = true, false
					}
					has, newest, sentNewest = true, at, false
				}
			case 4, 5, 6, 7: // a poll, on the same clock
				now += time.Duration(rapid.Int64Range(0, int64(ms(30))).Draw(rt, "wait"))
				due := s.NextDue()
				var early time.Duration
				if polled && now > lastPoll {
					early = min(now-lastPoll, period(rate)) / 2
				}
				lastPoll, polled = now, true
				b, ok, err := poll(s, now, 1, nil)
				require.NoError(rt, err)
				assert.Equal(rt, has && now >= due-early, ok, "sends when due, or less than half a gap early")
				if has {
					if ok {
						assert.Greater(rt, s.NextDue(), now, "one state per Poll")
					} else {
						assert.Equal(rt, due, s.NextDue(), "the schedule moves only when sending")
					}
				} else {
					assert.Equal(rt, time.Duration(math.MaxInt64), s.NextDue())
				}
				if !ok {
					continue
				}
				var st wire.State
				require.NoError(rt, wire.DecodeState(b, &st))
				assert.Equal(rt, seq, st.Seq, "Seq counts sends")
				seq++
				assert.Equal(rt, wire.StampOf(newest), st.Stamp, "the newest sample's stamp")
				assert.Equal(rt, dim2D, st.Dim2D)
				wantTel := false
				switch {
				case carryTel:
					wantTel, carryTel = true, false
					flagged, hasFlagged = st.Stamp, true
				case hasFlagged && sentNewest && st.Stamp == flagged:
					wantTel = true // a heartbeat of the flagged sample
				}
				assert.Equal(rt, wantTel, st.Flags&wire.FlagTeleport != 0, "teleport flag")
				if sentNewest {
					heartbeats++
				}
				sentNewest = true
				sends = append(sends, now)
				sent++
				// No burst: n sends span at least n-1 intervals, less
				// how late the first may be (under an interval, or the
				// schedule restarts) and how early the last may be (half
				// an interval). A Reset starts afresh, so only sends
				// since then count.
				for i := range sends {
					limit := sec(now-sends[i])*rate + 2.5
					assert.LessOrEqual(rt, float64(len(sends)-i), limit, "sends since %v", sends[i])
				}
			case 8:
				s.Teleport()
				pendingTel = true
			case 9:
				if rapid.IntRange(0, 4).Draw(rt, "reset") == 0 {
					s.Reset()
					has, sentNewest, pendingTel, carryTel, hasFlagged = false, false, true, false, false
					sends = sends[:0]
				}
			}
		}
		st := s.Stats()
		assert.Equal(rt, sent, st.Sent)
		assert.Equal(rt, heartbeats, st.Heartbeats)
	})
}
