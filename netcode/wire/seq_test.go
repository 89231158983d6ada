package wire

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSeqWrap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a, b  Seq
		diff  int
		newer bool
	}{
		{"equal", 5, 5, 0, false},
		{"next", 6, 5, 1, true},
		{"previous", 5, 6, -1, false},
		{"across the wrap", 2, 65534, 4, true},
		{"behind across the wrap", 65534, 2, -4, false},
		{"half way ahead", 32767, 0, 32767, true},
		{"half way is behind", 32768, 0, -32768, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.diff, tc.a.Diff(tc.b))
			assert.Equal(t, tc.newer, tc.a.Newer(tc.b))
		})
	}
}

func TestStampWrap(t *testing.T) {
	period := time.Duration(1<<32) * StampUnit
	for _, tc := range []struct {
		name string
		t, o time.Duration
		want time.Duration
	}{
		{"same", time.Second, time.Second, 0},
		{"forward", 1500 * time.Millisecond, time.Second, 500 * time.Millisecond},
		{"backward", time.Second, 1500 * time.Millisecond, -500 * time.Millisecond},
		{"across the wrap", period + 20*time.Millisecond, period - 30*time.Millisecond, 50 * time.Millisecond},
		{"sub-millisecond", time.Second + 130*time.Microsecond, time.Second, 130 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, StampOf(tc.t).Sub(StampOf(tc.o)))
		})
	}
}

func TestStampRounding(t *testing.T) {
	assert.Equal(t, Stamp(0), StampOf(4*time.Microsecond))
	assert.Equal(t, Stamp(1), StampOf(5*time.Microsecond))
	assert.Equal(t, Stamp(1), StampOf(14*time.Microsecond))
	assert.Equal(t, Stamp(0), StampOf(-5*time.Microsecond))
	assert.Equal(t, Stamp(0xffffffff), StampOf(-6*time.Microsecond))
}

func TestStampNear(t *testing.T) {
	period := time.Duration(1<<32) * StampUnit
	for _, tc := range []struct {
		name     string
		truth    time.Duration
		ref      time.Duration
		expected time.Duration
	}{
		{"reference equals truth", 10 * time.Second, 10 * time.Second, 10 * time.Second},
		{"reference ahead", 10 * time.Second, 10*time.Second + 3*time.Hour, 10 * time.Second},
		{"reference behind", 10 * time.Second, 10*time.Second - 5*time.Hour, 10 * time.Second},
		{"after several wraps", 5*period + 123*time.Millisecond, 5 * period, 5*period + 123*time.Millisecond},
		{"negative times", -2 * time.Second, -time.Second, -2 * time.Second},
		{"reference off the grid", time.Second, time.Second + 3*time.Microsecond, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.expected, StampOf(tc.truth).Near(tc.ref))
		})
	}
}
