package entity

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Change flags what a Remote's frame changed; each flag is one
// NetPredictor signal.
type Change uint8

// Changes.
const (
	// ChangeGhost: the entity became a ghost or stopped being one
	// (ghost_changed(ghost)).
	ChangeGhost Change = 1 << iota
	// ChangeHidden: the entity became hidden or visible again
	// (hidden_changed(hidden)).
	ChangeHidden
	// ChangeSnapped: the correction was too big to fade and the entity
	// jumped (snapped()).
	ChangeSnapped
)

// Remote is the drawing side of one remote entity: its predictor plus the
// visibility it last reported. Bound in a netroom.Room, it is the
// Receiver the Room routes that entity's states to. Not safe for
// concurrent use (the engine's main thread owns it); Add and Frame never
// allocate.
type Remote struct {
	pred *predict.Predictor
	pose predict.Pose
	// ghost and hidden as last reported; an entity starts hidden (no data).
	ghost, hidden bool
	added         uint64
	// received keeps the recent states for the comparison markers
	// (figures.go); loss estimates the server link's losses.
	received markerRing
	loss     lossEstimate
	counts   drawCounts // pops, snaps, drawn speed (counts.go)
	dim2D    bool
}

var _ netroom.Receiver = (*Remote)(nil)

// NewRemote returns a Remote predicting with cfg (zero fields: defaults).
func NewRemote(cfg predict.Config) (*Remote, error) {
	p, err := predict.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("entity.NewRemote: %w", err)
	}
	return &Remote{pred: p, hidden: true, dim2D: cfg.Dim2D}, nil
}

// Config returns the predictor's configuration, defaults filled in.
func (r *Remote) Config() predict.Config { return r.pred.Config() }

// SetConfig changes the predictor's settings and keeps its samples and
// smoothing (predict.Predictor.SetConfig: the dimension cannot change).
func (r *Remote) SetConfig(cfg predict.Config) error {
	if err := r.pred.SetConfig(cfg); err != nil {
		return fmt.Errorf("entity: remote: %w", err)
	}
	return nil
}

// Add stores a received state whose stamp maps to local on the local
// clock, which arrived at arrival on path. It reports whether the
// predictor took it (see predict.Predictor.Add).
func (r *Remote) Add(path predict.Path, s *wire.State, local, arrival time.Duration) bool {
	return r.AddSample(path, predict.SampleOf(s, local), arrival)
}

// AddSample stores a sample already on the local clock (a custom
// transport, or a test feeding states by hand).
func (r *Remote) AddSample(path predict.Path, s predict.Sample, arrival time.Duration) bool {
	if !r.pred.Add(path, s, arrival) {
		return false
	}
	r.added++
	if r.received.add(s.Time, s.Seq, s.Pos) {
		r.loss.add(s.Seq) // each state once, whichever path brought it
	}
	return true
}

// Added returns how many samples the predictor took.
func (r *Remote) Added() uint64 { return r.added }

// Frame returns the pose to draw at now and what changed since the last
// frame. Call it once per rendered frame with non-decreasing now.
func (r *Remote) Frame(now time.Duration) (predict.Pose, Change) {
	r.pose = r.pred.PoseAt(now)
	var ch Change
	if ghost := r.pose.Visibility == predict.Ghost; ghost != r.ghost {
		r.ghost = ghost
		ch |= ChangeGhost
	}
	if hidden := r.pose.Visibility == predict.Hidden; hidden != r.hidden {
		r.hidden = hidden
		ch |= ChangeHidden
	}
	if r.pose.Snapped {
		ch |= ChangeSnapped
	}
	r.counts.frame(now, &r.pose, r.dim2D)
	return r.pose, ch
}

// Pose returns the pose of the last Frame.
func (r *Remote) Pose() predict.Pose { return r.pose }

// Jitter returns the arrival jitter of the path the last Frame drew from
// (predict.Predictor.Jitter): a debug figure, computed when asked.
func (r *Remote) Jitter() time.Duration { return r.pred.Jitter() }

// Ghost reports whether the last Frame drew a ghost.
func (r *Remote) Ghost() bool { return r.ghost }

// Hidden reports whether the last Frame hid the entity (true before the
// first data).
func (r *Remote) Hidden() bool { return r.hidden }

// Reset forgets every sample: the entity is hidden until new data arrives.
// The visibility last reported is kept, so the next Frame reports the
// change.
func (r *Remote) Reset() {
	r.pred.Reset()
	r.received = markerRing{}
}
