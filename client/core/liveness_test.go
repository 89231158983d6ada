package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

const ms = time.Millisecond

// TestLivenessSilentPeer: a peer that goes silent is pinged every third of
// the time-out and called dead once the time-out and the round trip have
// passed with nothing; one that answers never is.
func TestLivenessSilentPeer(t *testing.T) {
	l := Liveness{Timeout: 2400 * ms}
	l.Reset(0)
	rtt := 60 * ms
	var pings []time.Duration
	dead := time.Duration(-1)
	for now := time.Duration(0); now <= 5*time.Second; now += ms {
		if l.Probe(now) {
			pings = append(pings, now)
		}
		if l.Dead(now, rtt) {
			dead = now
			break
		}
	}
	assert.Equal(t, []time.Duration{800 * ms, 1600 * ms, 2400 * ms}, pings, "a ping after each third of silence")
	assert.Equal(t, 2461*ms, dead, "dead after the time-out plus the round trip")

	// The same peer answering each ping after the round trip lives on.
	l.Reset(0)
	for now := time.Duration(0); now <= time.Minute; now += ms {
		if l.Probe(now) {
			l.Heard(now + rtt) // the pong, booked when it arrives (in the future here, as a reader would)
		}
		assert.False(t, l.Dead(now, rtt), "at %v", now)
	}
}

// TestLivenessTraffic: a link with traffic needs no keepalive.
func TestLivenessTraffic(t *testing.T) {
	l := Liveness{Timeout: 2400 * ms}
	l.Reset(0)
	for now := time.Duration(0); now <= 10*time.Second; now += 16 * ms {
		l.Heard(now)
		assert.False(t, l.Probe(now))
		assert.False(t, l.Dead(now, 0))
	}
}

// TestLivenessNext: the next look is the earlier of the next keepalive and
// the verdict, never in the past.
func TestLivenessNext(t *testing.T) {
	l := Liveness{Timeout: 3 * time.Second}
	l.Reset(time.Second)
	assert.Equal(t, 2*time.Second, l.Next(time.Second, 0), "first keepalive")
	assert.True(t, l.Probe(2*time.Second))
	assert.Equal(t, 3*time.Second, l.Next(2*time.Second, 0))
	assert.True(t, l.Probe(3*time.Second))
	assert.True(t, l.Probe(4*time.Second))
	assert.Equal(t, 4*time.Second+ms+500*ms, l.Next(4*time.Second, 500*ms), "the verdict, round trip included")
	assert.Equal(t, 9*time.Second, l.Next(9*time.Second, 0), "overdue: now")
	assert.Equal(t, "0s", (&Liveness{}).Silence(0).String())
	off := Liveness{}
	assert.False(t, off.Probe(time.Hour))
	assert.False(t, off.Dead(time.Hour, 0))
}
