package simnet

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Window is the half-open interval of virtual time [From, To).
type Window struct {
	From, To time.Duration
}

// Contains reports whether From <= t < To.
func (w Window) Contains(t time.Duration) bool { return t >= w.From && t < w.To }

// Len returns To - From.
func (w Window) Len() time.Duration { return w.To - w.From }

// Defaults for a zero Stalls.
const (
	// DefaultStallEvery is the mean gap between stalls when Stalls.Every is 0.
	DefaultStallEvery = 10 * time.Second
	// DefaultStallFor is the stall length when Stalls.For is 0.
	DefaultStallFor = 200 * time.Millisecond
)

// Stalls models Wi-Fi style stalls (a background scan, a power-save nap):
// from time to time the link holds everything that would arrive for a
// while, then releases it all at once, in order. Nothing is lost. The gap
// from the end of one stall to the start of the next is exponential with
// mean Every.
type Stalls struct {
	// Every is the mean gap between stalls. Default DefaultStallEvery.
	Every time.Duration
	// For is the nominal length of one stall. Default DefaultStallFor.
	For time.Duration
	// Jitter spreads each stall's length uniformly over
	// For*(1 ± Jitter); in [0, 1]. Default 0: every stall lasts For.
	Jitter float64
}

// length draws one stall's length: For spread by Jitter. It draws from r
// only when Jitter is set.
func (st Stalls) length(r *rand.Rand) time.Duration {
	if st.Jitter == 0 {
		return st.For
	}
	return time.Duration(float64(st.For) * (1 + st.Jitter*(2*r.Float64()-1)))
}

func (st Stalls) withDefaults() Stalls {
	if st.Every == 0 {
		st.Every = DefaultStallEvery
	}
	if st.For == 0 {
		st.For = DefaultStallFor
	}
	return st
}

// Validate reports negative durations or a Jitter outside [0, 1].
func (st Stalls) Validate() error {
	switch {
	case st.Every < 0:
		return fmt.Errorf("simnet: Stalls.Every %v is negative", st.Every)
	case st.For < 0:
		return fmt.Errorf("simnet: Stalls.For %v is negative", st.For)
	case !(st.Jitter >= 0 && st.Jitter <= 1):
		return fmt.Errorf("simnet: Stalls.Jitter %v is outside [0, 1]", st.Jitter)
	}
	return nil
}

// LinkConfig describes one direction of a simulated link. The zero value
// is a perfect link: no delay, no loss, unordered.
type LinkConfig struct {
	// Latency is the base one-way delay. Default 0.
	Latency time.Duration
	// Jitter adds a random delay per packet. Default nil: none.
	Jitter Jitter
	// Loss decides which packets are lost. Default nil: none. A stateful
	// model (*GilbertElliott, *ExactLoss) must not be shared by two links.
	Loss Loss
	// Stalls holds and releases traffic from time to time. Default nil: none.
	Stalls *Stalls
	// Outages are windows in which the link is down: a packet sent inside
	// one, or due to arrive inside one, is dropped. On a Reliable link it
	// is held instead and arrives one Latency after the window ends (the
	// retransmission once the path is back), in order. Default none.
	Outages []Window
	// Ordered makes the link FIFO, as WebSocket or TCP: no packet overtakes
	// another, so jitter only delays. Default false: each packet travels on
	// its own, and jitter reorders.
	Ordered bool
	// Reliable turns each loss into a retransmit delay of RTO (doubling for
	// each further loss of the same packet, at most 8 times in all)
	// instead of a drop. It implies Ordered. Default false.
	Reliable bool
	// RTO is the Reliable retransmit delay. Default 3*Latency + 200 ms.
	RTO time.Duration
	// Name names the link's random streams (Scheduler.Rand), so that adding
	// a link never changes another's randomness. Default "link<n>", n
	// counting the unnamed links and frame schedules of the scheduler; name
	// links whenever the set of links may change between runs.
	Name string
}

// maxRetransmits bounds the retransmissions of one packet on a Reliable
// link, so that a loss probability of 1 still ends; the packet then arrives.
const maxRetransmits = 8

// validator is implemented by the jitter and loss models that can check
// their fields.
type validator interface{ Validate() error }

// Validate reports the first field that makes no sense: a negative
// duration, a probability outside [0, 1], an outage that ends before it
// starts.
func (c LinkConfig) Validate() error {
	if c.Latency < 0 {
		return fmt.Errorf("simnet: Latency %v is negative", c.Latency)
	}
	if c.RTO < 0 {
		return fmt.Errorf("simnet: RTO %v is negative", c.RTO)
	}
	if v, ok := c.Jitter.(validator); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	if v, ok := c.Loss.(validator); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	if c.Stalls != nil {
		if err := c.Stalls.Validate(); err != nil {
			return err
		}
	}
	for i, w := range c.Outages {
		if w.From > w.To {
			return fmt.Errorf("simnet: Outages[%d].From %v is after To %v", i, w.From, w.To)
		}
	}
	return nil
}

func (c LinkConfig) rto() time.Duration {
	if c.RTO > 0 {
		return c.RTO
	}
	return 3*c.Latency + 200*time.Millisecond
}

// LinkStats counts what a link did. Sent = Delivered + Lost + Dropped + InFlight.
type LinkStats struct {
	// Sent counts calls to Send.
	Sent int
	// Delivered counts packets handed to the deliver func.
	Delivered int
	// Lost counts packets the Loss model dropped (never on a Reliable link).
	Lost int
	// Dropped counts packets dropped by an outage.
	Dropped int
	// Retransmits counts losses a Reliable link turned into delay.
	Retransmits int
	// InFlight counts packets sent and not yet delivered or dropped.
	InFlight int
	// Stalls counts the stalls begun so far.
	Stalls int
	// MaxDelay and MeanDelay are over the delivered packets, send to delivery.
	MaxDelay, MeanDelay time.Duration
}

// queued is a packet waiting on an ordered link.
type queued struct {
	p         []byte
	sent, due time.Duration
}

// Link is one direction of a simulated network path, on the scheduler's
// virtual time. Like the Scheduler it is not safe for concurrent use.
type Link struct {
	s       *Scheduler
	cfg     LinkConfig
	name    string
	deliver func([]byte)

	rJitter, rLoss *rand.Rand
	stall          stallGen

	// Ordered path: a FIFO drained by one pump event, so order holds by
	// construction and a send allocates nothing.
	q       fifo
	armed   bool // a pump event is queued for q's head
	pumping bool // the pump is running (deliver may call Send)
	pumpFn  func()

	unordered  int // packets in flight on the unordered path
	stats      LinkStats
	totalDelay time.Duration
}

// NewLink returns a link on s that hands each arriving payload to deliver,
// at the arrival time (read s.Now() inside deliver). A nil deliver discards
// arrivals. deliver may call Send on any link, but must not call Step or
// RunUntil. It panics when cfg.Validate fails.
func NewLink(s *Scheduler, cfg LinkConfig, deliver func(payload []byte)) *Link {
	name := cfg.Name
	if name == "" {
		name = s.autoName("link")
	}
	if err := cfg.Validate(); err != nil {
		panic(fmt.Errorf("simnet: NewLink %q: %w", name, err))
	}
	if deliver == nil {
		deliver = func([]byte) {}
	}
	l := &Link{
		s:       s,
		cfg:     cfg,
		name:    name,
		deliver: deliver,
		rJitter: s.Rand(name + "/jitter"),
		rLoss:   s.Rand(name + "/loss"),
		stall:   stallGen{r: s.Rand(name + "/stalls")},
	}
	l.pumpFn = l.pump
	if cfg.Stalls != nil {
		l.stall.reset(*cfg.Stalls, s.now)
	}
	return l
}

// NewPair builds the two directions of a path: a->b with config ab
// delivering to toB, and b->a with config ba delivering to toA. Different
// configs model an asymmetric path. An empty Name becomes "pair<n>/ab" and
// "pair<n>/ba".
func NewPair(s *Scheduler, ab, ba LinkConfig, toB, toA func([]byte)) (aToB, bToA *Link) {
	if ab.Name == "" || ba.Name == "" {
		base := s.autoName("pair")
		if ab.Name == "" {
			ab.Name = base + "/ab"
		}
		if ba.Name == "" {
			ba.Name = base + "/ba"
		}
	}
	return NewLink(s, ab, toB), NewLink(s, ba, toA)
}

// Name returns the link's name, the root of its random stream names.
func (l *Link) Name() string { return l.name }

// Config returns the link's current configuration.
func (l *Link) Config() LinkConfig { return l.cfg }

// SetConfig changes the link's conditions from now on. Packets in flight
// keep the delay they were given at send time, but meet the new outages
// and stalls when they arrive. The random streams stay those of the
// original Name; changing Stalls restarts the stall schedule from now. It
// panics when cfg.Validate fails.
func (l *Link) SetConfig(cfg LinkConfig) {
	if err := cfg.Validate(); err != nil {
		panic(fmt.Errorf("simnet: SetConfig %q: %w", l.name, err))
	}
	old := l.cfg.Stalls
	if (old == nil) != (cfg.Stalls == nil) || (old != nil && *old != *cfg.Stalls) {
		if cfg.Stalls != nil {
			l.stall.reset(*cfg.Stalls, l.s.now)
		} else {
			l.stall.on = false
		}
	}
	l.cfg = cfg
}

// Send puts payload on the link at Now. The link owns payload from then on
// and hands the same slice to deliver.
func (l *Link) Send(payload []byte) {
	now := l.s.now
	l.stats.Sent++
	// Draw jitter and loss for every packet, whatever happens to it, so
	// that turning loss or an outage on never shifts the jitter of later
	// packets: ablations compare like with like.
	var jit time.Duration
	if l.cfg.Jitter != nil {
		jit = max(l.cfg.Jitter.Sample(l.rJitter), 0)
	}
	lost := l.cfg.Loss != nil && l.cfg.Loss.Lost(l.rLoss)
	due := now + l.cfg.Latency + jit
	if w, down := l.outage(now); down {
		if !l.cfg.Reliable {
			l.stats.Dropped++
			return
		}
		due = max(due, w.To+l.cfg.Latency)
	}
	if lost {
		if !l.cfg.Reliable {
			l.stats.Lost++
			return
		}
		rto := l.cfg.rto()
		due += rto
		l.stats.Retransmits++
		for i := 1; i < maxRetransmits && l.cfg.Loss.Lost(l.rLoss); i++ {
			rto *= 2
			due += rto
			l.stats.Retransmits++
		}
	}
	if !l.cfg.Ordered && !l.cfg.Reliable {
		l.unordered++
		l.s.At(due, func() { l.arriveUnordered(payload, now) })
		return
	}
	// No max with the previous due is needed: the pump only ever hands
	// out the head, so a packet due early waits behind its elders.
	l.q.push(queued{p: payload, sent: now, due: due})
	if !l.armed && !l.pumping {
		l.armed = true
		l.s.At(due, l.pumpFn)
	}
}

// Stats returns the link's counters so far.
func (l *Link) Stats() LinkStats {
	st := l.stats
	st.InFlight = l.unordered + l.q.n
	l.stall.at(l.s.now)
	st.Stalls = l.stall.begun
	if st.Delivered > 0 {
		st.MeanDelay = l.totalDelay / time.Duration(st.Delivered)
	}
	return st
}

// arriveUnordered runs when an unordered packet is due.
func (l *Link) arriveUnordered(p []byte, sent time.Duration) {
	now := l.s.now
	if _, down := l.outage(now); down {
		l.unordered--
		l.stats.Dropped++
		return
	}
	if end, held := l.stall.at(now); held {
		l.s.At(end, func() { l.arriveUnordered(p, sent) })
		return
	}
	l.unordered--
	l.arrive(p, sent)
}

// pump delivers the ordered queue's due head packets, then re-arms for
// the next head.
func (l *Link) pump() {
	l.armed = false
	l.pumping = true
	now := l.s.now
	for l.q.n > 0 {
		h := l.q.front()
		if h.due > now {
			break
		}
		if w, down := l.outage(now); down {
			if l.cfg.Reliable {
				h.due = w.To + l.cfg.Latency
				break
			}
			l.q.pop()
			l.stats.Dropped++
			continue
		}
		if end, held := l.stall.at(now); held {
			h.due = end
			break
		}
		p, sent := h.p, h.sent
		l.q.pop()
		l.arrive(p, sent)
	}
	l.pumping = false
	if l.q.n > 0 && !l.armed {
		l.armed = true
		l.s.At(l.q.front().due, l.pumpFn)
	}
}

func (l *Link) arrive(p []byte, sent time.Duration) {
	d := l.s.now - sent
	l.stats.Delivered++
	l.totalDelay += d
	l.stats.MaxDelay = max(l.stats.MaxDelay, d)
	l.deliver(p)
}

// outage returns the outage window containing t that ends last.
func (l *Link) outage(t time.Duration) (Window, bool) {
	var found Window
	ok := false
	for _, w := range l.cfg.Outages {
		if w.Contains(t) && (!ok || w.To > found.To) {
			found, ok = w, true
		}
	}
	return found, ok
}

// stallGen produces the stall windows of one link lazily, in time order.
// The windows depend only on the config, the start time and the stream, not
// on when they are asked for.
type stallGen struct {
	on      bool
	cfg     Stalls
	r       *rand.Rand
	cur     Window // the stall under way or the next one
	counted bool   // cur is in begun
	begun   int
}

func (g *stallGen) reset(cfg Stalls, now time.Duration) {
	g.on, g.cfg = true, cfg.withDefaults()
	g.cur, g.counted = Window{From: now, To: now}, true
}

// at returns the end of the stall containing t. Calls must come with t
// non-decreasing.
func (g *stallGen) at(t time.Duration) (end time.Duration, held bool) {
	if !g.on {
		return 0, false
	}
	for g.cur.To <= t {
		g.count()
		g.next()
	}
	if t >= g.cur.From {
		g.count()
		return g.cur.To, true
	}
	return 0, false
}

func (g *stallGen) count() {
	if !g.counted && g.cur.To > g.cur.From {
		g.begun++
	}
	g.counted = true
}

func (g *stallGen) next() {
	gap := time.Duration(g.r.ExpFloat64() * float64(g.cfg.Every))
	from := g.cur.To + gap
	g.cur, g.counted = Window{From: from, To: from + g.cfg.length(g.r)}, false
}

// fifo is a growable ring buffer of queued packets.
type fifo struct {
	buf     []queued // len is zero or a power of two
	head, n int
}

func (f *fifo) push(x queued) {
	if f.n == len(f.buf) {
		nb := make([]queued, max(16, 2*len(f.buf)))
		for i := 0; i < f.n; i++ {
			nb[i] = f.buf[(f.head+i)&(len(f.buf)-1)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.n)&(len(f.buf)-1)] = x
	f.n++
}

func (f *fifo) front() *queued { return &f.buf[f.head] }

func (f *fifo) pop() {
	f.buf[f.head] = queued{} // release the payload
	f.head = (f.head + 1) & (len(f.buf) - 1)
	f.n--
}
