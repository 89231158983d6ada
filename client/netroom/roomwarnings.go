package netroom

import "fmt"

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
}

// RoomWarnings returns the configuration warnings of a NetRoom node, one
// sentence each, in a fixed order: server address, player scene, spawn
// path, spawnable scenes' parents.
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
	return w
}
