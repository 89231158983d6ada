package room

import (
	"time"

	"github.com/nearzero/nearzero/netcode/wire"
)

// The room judges a player's states (the rate limit and the motion rules)
// on the player's own timeline when the server is behind its reading, not
// by when the server got round to them: a server that falls behind (a
// busy machine, a pause) delivers seconds of states at once, and judged by
// arrival they look like a flood and a teleport, although the player did
// nothing wrong.
//
// The player's timeline is its clock as the room has measured it: every
// state's stamp and every ping's time, against their arrival, give the
// smallest gap (the clock offset plus the fastest delivery) over a long
// window; a state's sender time plus that gap is when it would have been
// read on time. A connection may begin while the server is behind, and
// not be read on time before the backlog drains: then its smallest gap
// holds the backlog, and the states read at once as it drains would all
// take the time they were read. So the gap is also bounded from below by
// the arrivals less the server's own delay at the time (Hooks.Behind, at
// least as long as a message waited, by the server's measure), the
// largest of those over the window, and the smaller bound counts. A state is judged at that time, but never after its
// arrival, never before the previous state's, and never earlier than its
// arrival less the credit: nothing while the server keeps up
// (Hooks.Behind is 0), else the larger of the server's own measure of its
// delay and the room's evidence of a backlog (how late its players'
// messages came lately, the lower median over the players: no one player
// can raise it for itself, nor one lower it much in a full room), at most
// Config.BacklogCredit. A forged stamp buys nothing arrival times did not
// while the server keeps up, and no more than the server's real delay
// when it does not (the lower bound only ever makes a state's time
// earlier, and the credit bounds how much).
//
// A state refused on time (rate, distance) while the room's evidence
// shows it behind, and which itself came late, is refused as late: no
// Error to the player and no abuse score. The server's delay is not the
// player's doing.

// DefaultBacklogCredit is Config.BacklogCredit's default.
const DefaultBacklogCredit = 2 * time.Second

// clockWindow is how long the smallest gap is kept: longer than any
// backlog the checks forgive, so that one draining does not read as the
// player's clock stepping forward.
const clockWindow = 60 * time.Second

// lateWindow is how long a late message counts as evidence of a backlog:
// the players read after the others in a burst still show it.
const lateWindow = 5 * time.Second

// behindAfter is the evidence from which the room counts itself behind:
// above what jitter shows of a room that keeps up.
const behindAfter = 250 * time.Millisecond

// senderClock is what the room knows of one player's clock. It outlives
// the player's connection: a client that reconnects keeps its clock, and
// the seat keeps what was judged on it (its motion tracks and rate
// buckets, on this timeline). Measured afresh, the new connection's clock
// would be placed as if its first message had waited the server's whole
// delay, while a new connection's first messages are read at once: its
// states would be judged up to the credit earlier than the old ones, and
// an honest move across the reconnect, measured over that much less time,
// refused (a teleport, the rate). So the next connection resumes the
// clock, unless its first message reads as a different clock (resume).
type senderClock struct {
	low  [2]time.Duration // smallest gap (arrival - sender time) in this half window and the last
	high [2]time.Duration // largest gap less the server's delay then, likewise
	half time.Duration    // arrival time this half window began
	set  bool             // a gap was observed
	// heard is the newest sender time read, on the server clock, and
	// rhythm the sender time between the last two messages read: news
	// older than the player's own rhythm is overdue.
	heard, rhythm time.Duration
	last          time.Duration // the last message's time on the server clock
	// late is the most a message arrived after its time on the server
	// clock, in this half of lateWindow and the last, from lateHalf on.
	late     [2]time.Duration
	lateHalf time.Duration
	judge    time.Duration // the time the last state was judged at
	ever     bool          // judge is set
	// resumed: kept from the player's previous connection; the next
	// message tells whether it still reads the player's stamps.
	resumed bool
}

// offset returns the smallest gap over the window, or the largest gap
// less the server's delay if that is smaller.
func (c *senderClock) offset() time.Duration {
	return min(c.low[0], c.low[1], max(c.high[0], c.high[1]))
}

// observe records sender time stamp arriving at now, while the server
// says it is behind by lag (0 while it keeps up), and returns it on the
// server clock: when it would have arrived with the fastest delivery seen
// (now less lag for the first one).
func (c *senderClock) observe(now time.Duration, stamp wire.Stamp, lag time.Duration) time.Duration {
	lag = max(0, lag)
	c.resume(now, stamp, lag)
	if !c.set {
		gap := now - stamp.Near(0)
		*c = senderClock{low: [2]time.Duration{gap, gap}, high: [2]time.Duration{gap - lag, gap - lag}, half: now,
			set: true, heard: now - lag, last: now - lag, lateHalf: now}
		c.late[0] = lag
		return now - lag
	}
	off := c.offset()
	sent := stamp.Near(now - off)
	gap := now - sent
	if now-c.half >= clockWindow/2 {
		c.low[1], c.low[0], c.high[1], c.high[0], c.half = c.low[0], gap, c.high[0], gap-lag, now
	}
	c.low[0], c.high[0] = min(c.low[0], gap), max(c.high[0], gap-lag)
	at := sent + off
	c.rhythm, c.last = max(0, at-c.last), at
	c.heard = max(c.heard, min(at, now))
	if now-c.lateHalf >= lateWindow/2 {
		c.late[1], c.late[0] = c.late[0], 0
		if now-c.lateHalf >= lateWindow {
			c.late[1] = 0
		}
		c.lateHalf = now
	}
	c.late[0] = max(c.late[0], now-at)
	return at
}

// behind returns how far behind the room was in reading this player, as
// far as it can tell at now: how late a message of it came within
// lateWindow, or how overdue its news is by its own rhythm, whichever is
// more.
func (c *senderClock) behind(now time.Duration) time.Duration {
	b := now - c.heard - c.rhythm
	switch since := now - c.lateHalf; {
	case since < lateWindow/2:
		b = max(b, c.late[0], c.late[1])
	case since < lateWindow:
		b = max(b, c.late[0])
	}
	return b
}

// judgeAt returns the time a state whose sender time maps to at, arriving
// at now, is judged at: at, but no later than now, no earlier than now
// less credit, and never before the last state's.
func (c *senderClock) judgeAt(now, at, credit time.Duration) time.Duration {
	lo := now - credit
	if c.ever {
		lo = max(lo, c.judge)
	}
	t := min(now, max(lo, at))
	c.judge, c.ever = t, true
	return t
}

// reset forgets the clock.
func (c *senderClock) reset() { *c = senderClock{} }

// reconnect keeps the clock for the player's next connection (resume).
func (c *senderClock) reconnect() { c.resumed = c.set }

// resume decides, at the first message of a new connection, stamped stamp
// and arriving at now while the server says it is behind by lag, whether
// the clock kept from the previous connection still reads the player's
// stamps: it does unless it places that message further back from its
// arrival than lag, the wait a fresh clock would assume, and jitter
// (behindAfter) allow. A client that restarted brings a new clock: one
// behind the old is measured afresh, as a new player's; one ahead of it
// shows a smaller gap than any before, which the kept clock takes at once
// (observe).
//
// A state on a kept clock is judged as on one connection: never after its
// arrival nor before the last state judged on the old connection
// (judgeAt), so a forged stamp buys no more across a reconnect than on one
// connection.
func (c *senderClock) resume(now time.Duration, stamp wire.Stamp, lag time.Duration) {
	if !c.resumed {
		return
	}
	c.resumed = false
	off := c.offset()
	if at := stamp.Near(now-off) + off; now-at > lag+behindAfter {
		c.reset()
	}
}

// stateTime returns the time the checks judge s's state stamped stamp,
// arriving at now, at (see the comment above), and whether the room is
// behind by its evidence and the state came late: then what refuses it on
// time (rate, distance) is the room's delay, not the player's doing.
func (r *Room) stateTime(now time.Duration, s *seat, stamp wire.Stamp) (time.Duration, bool) {
	d := r.serverDelay()
	at := s.clk.observe(now, stamp, d)
	credit, evidence := r.backlog(now, d)
	return s.clk.judgeAt(now, at, credit), evidence >= behindAfter && now-at >= behindAfter
}

// serverDelay is Hooks.Behind: how far behind its own work the server
// says it runs, 0 while it keeps up or when the credit is off.
func (r *Room) serverDelay() time.Duration {
	if r.hooks.Behind == nil || r.cfg.BacklogCredit <= 0 {
		return 0
	}
	return max(0, r.hooks.Behind())
}

// backlog returns, at now, with the server's delay d, the credit states
// are judged with (0 while the server keeps up) and the room's evidence
// of its backlog: the lower median, over its connected players, of how far
// behind it was in reading each lately (senderClock.behind).
func (r *Room) backlog(now, d time.Duration) (credit, evidence time.Duration) {
	if r.cfg.BacklogCredit <= 0 || d <= 0 {
		return 0, 0
	}
	var ages [MaxSlots]time.Duration
	n := 0
	for _, o := range r.seats {
		if o == nil || o.peer == nil || !o.clk.set {
			continue
		}
		// Insertion into sorted order: a room holds a few dozen at most.
		a, i := o.clk.behind(now), n
		for ; i > 0 && ages[i-1] > a; i-- {
			ages[i] = ages[i-1]
		}
		ages[i] = a
		n++
	}
	if n > 0 {
		evidence = max(0, ages[(n-1)/2])
	}
	return min(r.cfg.BacklogCredit, max(d, evidence)), evidence
}
