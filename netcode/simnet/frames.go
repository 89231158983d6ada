package simnet

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// DefaultFramePeriod is the frame time when FrameConfig.Period is 0: 60 fps.
const DefaultFramePeriod = time.Second / 60

// FrameConfig describes the frame schedule of a simulated game main thread.
// Each frame lasts Period, plus a Jitter draw, plus a hitch now and then.
// The zero value is a steady 60 fps.
type FrameConfig struct {
	// Period is the nominal frame time. Default DefaultFramePeriod; 30 fps
	// for a slow device is time.Second/30.
	Period time.Duration
	// Jitter lengthens each frame by a random amount. Default nil: none.
	Jitter Jitter
	// Hitches makes a frame longer by about For, about every Every (an
	// exponential gap), as a busy main thread does (loading, garbage
	// collection, a shader compile). Default nil: none.
	Hitches *Stalls
	// Name names the random streams. Default "frames<n>", n counting the
	// scheduler's unnamed links and frame schedules.
	Name string
}

// Validate reports a negative Period or an invalid Jitter or Hitches.
func (c FrameConfig) Validate() error {
	if c.Period < 0 {
		return fmt.Errorf("simnet: FrameConfig.Period %v is negative", c.Period)
	}
	if v, ok := c.Jitter.(validator); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	if c.Hitches != nil {
		if err := c.Hitches.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Frame is one frame of a Frames schedule, as its callback sees it.
type Frame struct {
	// Index counts frames from 0.
	Index int
	// Start is the true time the frame starts (the scheduler's Now).
	Start time.Duration
	// Delta is the time since the previous frame started; Period for the first.
	Delta time.Duration
}

// Frames runs a callback once per frame of a main thread on the scheduler,
// and defers work posted from elsewhere (network arrivals) to the start of
// the next frame: during a long frame nothing posted runs, just as a busy
// engine thread does not see its network queue.
type Frames struct {
	s       *Scheduler
	cfg     FrameConfig
	name    string
	onFrame func(Frame)
	rJitter *rand.Rand
	rHitch  *rand.Rand

	posted, running []func()
	nextHitch       time.Duration
	frame           Frame
	stopped         bool
	tickFn          func()
}

// NewFrames starts a frame schedule on s whose first frame starts at Now
// (it runs when the scheduler gets there). onFrame runs at the start of
// every frame, after the work posted before it. It panics when cfg.Validate
// fails.
func NewFrames(s *Scheduler, cfg FrameConfig, onFrame func(Frame)) *Frames {
	name := cfg.Name
	if name == "" {
		name = s.autoName("frames")
	}
	if err := cfg.Validate(); err != nil {
		panic(fmt.Errorf("simnet: NewFrames %q: %w", name, err))
	}
	if cfg.Period == 0 {
		cfg.Period = DefaultFramePeriod
	}
	if cfg.Hitches != nil {
		h := cfg.Hitches.withDefaults()
		cfg.Hitches = &h
	}
	if onFrame == nil {
		onFrame = func(Frame) {}
	}
	f := &Frames{
		s:       s,
		cfg:     cfg,
		name:    name,
		onFrame: onFrame,
		rJitter: s.Rand(name + "/jitter"),
		rHitch:  s.Rand(name + "/hitches"),
		frame:   Frame{Index: -1, Start: s.now - cfg.Period},
	}
	f.nextHitch = f.hitchGap(s.now)
	f.tickFn = f.tick
	s.At(s.now, f.tickFn)
	return f
}

// Post runs fn at the start of the next frame, before onFrame, after what
// was posted earlier. Work posted from inside a frame waits for the next one.
func (f *Frames) Post(fn func()) { f.posted = append(f.posted, fn) }

// Stop ends the schedule: no further frame starts and posted work is dropped.
func (f *Frames) Stop() {
	f.stopped = true
	clear(f.posted)
	f.posted = f.posted[:0]
}

// Count returns the number of frames started so far.
func (f *Frames) Count() int { return f.frame.Index + 1 }

func (f *Frames) tick() {
	if f.stopped {
		return
	}
	now := f.s.now
	f.frame = Frame{Index: f.frame.Index + 1, Start: now, Delta: now - f.frame.Start}
	// Swap buffers: what the posted work posts lands in the next frame.
	f.running, f.posted = f.posted, f.running[:0]
	for i, fn := range f.running {
		fn()
		f.running[i] = nil
	}
	f.onFrame(f.frame)
	if f.stopped {
		return
	}
	d := f.cfg.Period
	if f.cfg.Jitter != nil {
		d += max(f.cfg.Jitter.Sample(f.rJitter), 0)
	}
	if f.cfg.Hitches != nil && now >= f.nextHitch {
		d += f.cfg.Hitches.length(f.rHitch)
		f.nextHitch = f.hitchGap(now + d)
	}
	f.s.At(now+d, f.tickFn)
}

// hitchGap returns the time of the next hitch, an exponential gap after t.
func (f *Frames) hitchGap(t time.Duration) time.Duration {
	if f.cfg.Hitches == nil {
		return t
	}
	return t + time.Duration(f.rHitch.ExpFloat64()*float64(f.cfg.Hitches.Every))
}
