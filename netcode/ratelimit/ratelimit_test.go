package ratelimit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nearzero/nearzero/netcode/ratelimit"
)

const ms = time.Millisecond

func TestBurstThenRate(t *testing.T) {
	b := ratelimit.Full(0, 3)
	for i := range 3 {
		assert.True(t, b.Take(0, 10, 3), "burst token %d", i)
	}
	assert.False(t, b.Take(0, 10, 3), "burst spent")
	assert.False(t, b.Take(99*ms, 10, 3), "not yet a whole token at 10/s")
	assert.True(t, b.Take(100*ms, 10, 3), "one token per 100 ms")
	assert.False(t, b.Take(100*ms, 10, 3))
	assert.True(t, b.Take(10*time.Second, 10, 3))
	assert.InDelta(t, 2, b.Tokens, 1e-9, "refilled to the burst, not beyond")
}

func TestTakeN(t *testing.T) {
	b := ratelimit.Full(0, 1000)
	assert.True(t, b.TakeN(0, 100, 1000, 800))
	assert.False(t, b.TakeN(0, 100, 1000, 300), "not enough: nothing taken")
	assert.InDelta(t, 200, b.Tokens, 1e-9)
	assert.True(t, b.TakeN(time.Second, 100, 1000, 300))
}

func TestTimeBackwardsEarnsNothing(t *testing.T) {
	b := ratelimit.Full(time.Second, 1)
	assert.True(t, b.Take(time.Second, 1, 1))
	assert.False(t, b.Take(0, 1, 1))
	assert.Equal(t, time.Second, b.At, "the refill clock never goes back")
}

func TestDebt(t *testing.T) {
	b := ratelimit.Full(0, 2)
	b.Tokens -= 5 // a flood recorded as a debt
	b.Refill(time.Second, 2, 2)
	assert.InDelta(t, -1, b.Tokens, 1e-9, "a debt is paid off by time")
	assert.False(t, b.Take(time.Second, 2, 2))
	assert.True(t, b.Take(2*time.Second, 2, 2))
}
