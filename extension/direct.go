package main

import (
	"time"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/serverlink"
)

// registerDirect declares NetRoom's direct-link properties: direct_links
// (on by default; the model does the rest), direct_share_host_candidates
// (off by default: host candidates go as mDNS names) and the direct
// links' own lag simulator settings, used only with direct_lag_apart (by
// default the lag_* settings cover every link).
func registerDirect(c *godot.Class[NetRoom]) {
	c.Group("Direct Links", "direct_")
	godot.Property(c, "direct_links", func(n *NetRoom) bool { return n.model.DirectLinks() },
		func(n *NetRoom, v bool) { n.model.SetDirectLinks(v) })
	godot.Property(c, "direct_share_host_candidates", func(n *NetRoom) bool { return n.model.ShareHostCandidates() },
		func(n *NetRoom, v bool) { n.model.SetShareHostCandidates(v) })
	godot.Property(c, "direct_lag_apart", func(n *NetRoom) bool { return n.model.DirectLagApart() },
		func(n *NetRoom, v bool) { _ = n.model.SetDirectLagApart(v) }) // an error reaches room_error
	godot.Property(c, "direct_lag_latency_ms", func(n *NetRoom) float64 { return ms(n.model.DirectLag().Latency) },
		func(n *NetRoom, v float64) { l := n.model.DirectLag(); l.Latency = msDur(v); n.setDirectLag(l) }).
		Range(0, 1000, 1, "or_greater", "suffix:ms")
	godot.Property(c, "direct_lag_jitter_ms", func(n *NetRoom) float64 { return ms(n.model.DirectLag().Jitter) },
		func(n *NetRoom, v float64) { l := n.model.DirectLag(); l.Jitter = msDur(v); n.setDirectLag(l) }).
		Range(0, 500, 1, "or_greater", "suffix:ms")
	godot.Property(c, "direct_lag_loss_percent", func(n *NetRoom) float64 { return 100 * n.model.DirectLag().Loss },
		func(n *NetRoom, v float64) {
			l := n.model.DirectLag()
			l.Loss = min(max(v, 0), 100) / 100
			n.setDirectLag(l)
		}).
		Range(0, 100, 0.1, "suffix:%")
}

func msDur(v float64) time.Duration { return time.Duration(max(v, 0) * float64(time.Millisecond)) }

func (n *NetRoom) setDirectLag(l serverlink.LagConfig) { _ = n.model.SetDirectLag(l) } // an error reaches room_error
