package simnet

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestClockRead(t *testing.T) {
	tests := []struct {
		name   string
		clock  Clock
		trueAt time.Duration
		want   time.Duration
	}{
		{"perfect", Clock{}, 90 * time.Second, 90 * time.Second},
		{"offset only", Clock{Offset: -3 * time.Second}, 10 * time.Second, 7 * time.Second},
		{"50 ppm fast gains 50 µs a second", Clock{PPM: 50}, time.Second, time.Second + 50*time.Microsecond},
		{"50 ppm fast over a minute", Clock{PPM: 50}, time.Minute, time.Minute + 3*time.Millisecond},
		{"slow with offset", Clock{Offset: time.Hour, PPM: -100}, 10 * time.Second, time.Hour + 10*time.Second - time.Millisecond},
		{"before the origin", Clock{PPM: 50}, -time.Second, -time.Second - 50*time.Microsecond},
		{"ten hours keeps ns precision", Clock{PPM: 50}, 10 * time.Hour, 10*time.Hour + 1800*time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.clock.Read(tc.trueAt))
			assert.Equal(t, tc.trueAt, tc.clock.TrueTime(tc.want))
		})
	}
}

func TestClockInverse(t *testing.T) {
	r := NewScheduler(testSeed(t)).Rand("clock")
	for range 20000 {
		c := Clock{
			Offset: time.Duration(r.Int64N(int64(48*time.Hour))) - 24*time.Hour,
			PPM:    (r.Float64()*2 - 1) * 500,
		}
		tt := time.Duration(r.Int64N(int64(48*time.Hour))) - 24*time.Hour
		back := c.TrueTime(c.Read(tt))
		if !assert.LessOrEqual(t, math.Abs(float64(back-tt)), 1.0, "clock %+v at %v came back as %v", c, tt, back) {
			return
		}
	}
}

// TestClockTrueTimeIsFirstReading checks that TrueTime(l) is the first true
// time whose reading reaches l, for readings that Read may skip: a timer set
// there must not find the clock a nanosecond short (the bench's ping loop
// would then re-arm at the same instant for ever).
func TestClockTrueTimeIsFirstReading(t *testing.T) {
	r := NewScheduler(testSeed(t)).Rand("clock-first")
	for range 20000 {
		c := Clock{
			Offset: time.Duration(r.Int64N(int64(48*time.Hour))) - 24*time.Hour,
			PPM:    (r.Float64()*2 - 1) * 500,
		}
		local := time.Duration(r.Int64N(int64(48*time.Hour))) - 24*time.Hour
		tt := c.TrueTime(local)
		if !assert.GreaterOrEqual(t, c.Read(tt), local, "clock %+v: reading at TrueTime(%v)", c, local) ||
			!assert.Less(t, c.Read(tt-1), local, "clock %+v: TrueTime(%v) is not the first", c, local) {
			return
		}
	}
}

func TestClockSince(t *testing.T) {
	c := Clock{Offset: 5 * time.Second, PPM: 50}
	assert.Equal(t, 2*time.Second+100*time.Microsecond, c.Since(time.Minute, time.Minute+2*time.Second))
}
