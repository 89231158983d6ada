package netroom

import (
	"fmt"

	"github.com/nearzero/nearzero/client/serverlink"
)

// RoomSetup is what the editor knows about a NetRoom node, for its
// configuration warnings.
type RoomSetup struct {
	// Server is the server_address property.
	Server string
	// HasPlayerScene reports whether player_scene is set.
	HasPlayerScene bool
	// SpawnPath is the spawn_path property, and SpawnPathOK whether it
	// resolves to a node (only checked when the path is not empty).
	SpawnPath   string
	SpawnPathOK bool
	// LostParents are the spawnable_scenes entries whose parent
	// (ParseSpawnable) does not resolve to a node.
	LostParents []string
	// Lag and LagOn are the lag simulator's settings and lag_enabled;
	// DirectLag and DirectLagApart the direct links' own and
	// direct_lag_apart (NoEffect).
	Lag, DirectLag        LagConfig
	LagOn, DirectLagApart bool
}

// LagConfig is the lag simulator's setting (serverlink.LagConfig).
type LagConfig = serverlink.LagConfig

// NoEffect returns a warning for each setting of s that is set but has no
// effect as the others stand: direct_lag_* without direct_lag_apart (the
// lag_* settings cover the direct links then), lag_* without
// lag_enabled. A game that set direct_lag_latency_ms alone had it ignored
// without a word. The node shows them in the editor and prints each once
// when a running game sets them so.
func NoEffect(s RoomSetup) []string {
	var w []string
	if !s.DirectLagApart && s.DirectLag != (LagConfig{}) {
		w = append(w, "direct_lag_latency_ms, direct_lag_jitter_ms and direct_lag_loss_percent have no effect while "+
			"direct_lag_apart is off: the lag_* settings cover the direct links too. Set direct_lag_apart = true "+
			"to give the direct links their own.")
	}
	if !s.LagOn && s.Lag != (LagConfig{}) {
		w = append(w, "lag_latency_ms, lag_jitter_ms and lag_loss_percent have no effect while lag_enabled is off.")
	}
	return w
}

// RoomWarnings returns the configuration warnings of a NetRoom node, one
// sentence each, in a fixed order: server address, player scene, spawn
// path, spawnable scenes' parents, settings without effect (NoEffect).
func RoomWarnings(s RoomSetup) []string {
	var w []string
	if s.Server == "" {
		w = append(w, "No server_address: set the room server's address (ws://host:port/ws or host:port), "+
			"in the inspector or from a script before create_room or join_room.")
	} else if _, err := ServerURL(s.Server); err != nil {
		w = append(w, fmt.Sprintf("server_address is not usable: %v.", err))
	}
	if !s.HasPlayerScene {
		w = append(w, "No player_scene: remote players are not spawned or drawn until one is set. "+
			"Set a scene with a NetPredictor in it (setting it from a script later spawns the players already in the room).")
	}
	if s.SpawnPath != "" && !s.SpawnPathOK {
		w = append(w, fmt.Sprintf("spawn_path %q does not point to a node.", s.SpawnPath))
	}
	for _, e := range s.LostParents {
		scene, parent := ParseSpawnable(e)
		w = append(w, fmt.Sprintf("spawnable_scenes: the parent %q of %s does not point to a node.", parent, scene))
	}
	return append(w, NoEffect(s)...)
}
