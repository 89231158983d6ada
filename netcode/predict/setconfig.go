package predict

import "fmt"

// SetConfig changes the settings of a running predictor and keeps what it
// has learnt: the buffered samples, the smoothing offset, the visibility
// and contact state. The new settings apply from the next Add or PoseAt
// (a shorter HideAfter can hide the entity at once). Dim2D and BufferLen
// shape the buffers and cannot change: SetConfig refuses them (make a new
// predictor instead), as it refuses an invalid config; either way p is
// left unchanged. Switching Auto on starts its online tuning afresh;
// switching it off returns to the configured settings at once.
func (p *Predictor) SetConfig(cfg Config) error {
	next := cfg.withDefaults()
	if err := next.Validate(); err != nil {
		return fmt.Errorf("predict: set config: %w", err)
	}
	if next.Dim2D != p.cfg.Dim2D || next.BufferLen != p.cfg.BufferLen {
		return fmt.Errorf("predict: set config: %w: Dim2D %v and BufferLen %d are fixed at New (asked %v, %d)",
			ErrConfig, p.cfg.Dim2D, p.cfg.BufferLen, next.Dim2D, next.BufferLen)
	}
	switch {
	case next.Auto && p.auto == nil:
		// Switching Auto on starts its scoring from scratch; the samples
		// and the drawn offset are kept.
		p.auto = newTuner(next.autoParams())
	case next.Auto && next.autoParams() != p.cfg.autoParams():
		p.auto.par = *next.autoParams() // new constants; what was learnt stays
	case !next.Auto && p.auto != nil:
		// Off again: drop the candidates; the configured model draws from
		// the next frame.
		p.auto = nil
		p.drewModel = fullModel
	}
	p.cfg = next
	return nil
}
