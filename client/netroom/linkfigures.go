package netroom

import "time"

// The link's figures a game shows beside the drawn entities, to compare
// and debug (the NetRoom's rtt_ms, jitter_ms, loss_percent and
// clock_offset_ms).

// LinkFigures returns the server link's figures as the received states
// show them, over the Receivers bound now: the mean arrival jitter of their
// drawn paths and the estimated share of states lost; ok is false when no
// bound Receiver has received a state.
func (r *Room) LinkFigures() (jitter time.Duration, loss float64, ok bool) {
	var sumJitter time.Duration
	var sumLoss float64
	n := 0
	for slot := range MaxSlots {
		rem := r.Bound(slot)
		if rem == nil {
			continue
		}
		l, has := rem.Loss()
		if !has {
			continue
		}
		sumJitter += rem.Jitter()
		sumLoss += l
		n++
	}
	if n == 0 {
		return 0, 0, false
	}
	return sumJitter / time.Duration(n), sumLoss / float64(n), true
}

// ClockOffset returns the server clock minus the local clock at now;
// ok is false until the clock is synchronised.
func (r *Room) ClockOffset(now time.Duration) (offset time.Duration, ok bool) {
	t, ok := r.ServerTime(now)
	if !ok {
		return 0, false
	}
	return t - now, true
}
