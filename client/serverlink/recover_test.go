package serverlink

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDelayLineSurvivesPanic: a panic while delivering is reported as
// ErrPanic, loses that message only, and the line keeps delivering.
func TestDelayLineSurvivesPanic(t *testing.T) {
	var mu sync.Mutex
	var got []byte
	var faults []error
	d, err := newDelayLine(LagConfig{Latency: time.Millisecond}, 1, func(b []byte, _ bool) {
		if b[0] == 1 {
			panic("boom")
		}
		mu.Lock()
		got = append(got, b[0])
		mu.Unlock()
	})
	require.NoError(t, err)
	defer d.close()
	d.onPanic(func(err error) {
		mu.Lock()
		faults = append(faults, err)
		mu.Unlock()
	})
	for i := range 3 {
		d.push([]byte{byte(i)}, true)
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 2
	}, 5*time.Second, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []byte{0, 2}, got)
	require.Len(t, faults, 1)
	assert.ErrorIs(t, faults[0], ErrPanic)
	assert.ErrorContains(t, faults[0], "lag simulator: boom")
}
