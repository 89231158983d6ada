package entity

import (
	"fmt"

	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
)

// PredictorSetup is what the editor knows about a NetPredictor node, for
// its configuration warnings.
type PredictorSetup struct {
	// RootPath is the root_path property; RootFound whether it resolves to
	// a node, RootClass that node's class and RootSpatial whether it is a
	// Node3D or a Node2D.
	RootPath    string
	RootFound   bool
	RootClass   string
	RootName    string
	RootSpatial bool
	// RoomPath is the room_path property; RoomFound whether it (when set)
	// or the search above the node found a NetRoom.
	RoomPath  string
	RoomFound bool
	// Predict and Send are the settings as the inspector holds them.
	Predict predict.Config
	Send    sender.Config
}

// PredictorWarnings returns the configuration warnings of a NetPredictor
// node, one sentence each, in a fixed order: root, room, settings.
func PredictorWarnings(s PredictorSetup) []string {
	var w []string
	switch {
	case s.RootPath == "":
		w = append(w, `root_path is empty: point it to the Node3D or Node2D this node moves (default: the parent, "..").`)
	case !s.RootFound:
		w = append(w, fmt.Sprintf("root_path %q does not point to a node.", s.RootPath))
	case !s.RootSpatial:
		w = append(w, fmt.Sprintf("The root %q is a %s: NetPredictor moves a Node3D or a Node2D.", s.RootName, s.RootClass))
	}
	switch {
	case s.RoomPath != "" && !s.RoomFound:
		w = append(w, fmt.Sprintf("room_path %q does not point to a NetRoom.", s.RoomPath))
	case s.RoomPath == "" && !s.RoomFound:
		w = append(w, "No NetRoom above this node (an ancestor, or a child of an ancestor). "+
			"At run time a NetPredictor sends through the NetRoom above it, or through the only NetRoom in the tree, "+
			"or is bound by the NetRoom that spawns its scene: in a player scene used as a NetRoom's player_scene, "+
			"or instanced into the scene that holds the NetRoom, this is expected. Otherwise add a NetRoom or set room_path.")
	}
	if err := s.Predict.Validate(); err != nil {
		w = append(w, fmt.Sprintf("Prediction settings: %v.", err))
	}
	if err := s.Send.Validate(); err != nil {
		w = append(w, fmt.Sprintf("Sending settings: %v.", err))
	}
	return w
}

// EntityWarnings are the configuration warnings of a NetPredictor's
// entity settings: a shared object's root should be a rigid body, which
// the node freezes while another player owns it and lets simulate while
// this one does; and a shared object has no synced properties (their
// values would stay with the owner that set them).
func EntityWarnings(id int, shared bool, rootClass string, synced bool) []string {
	if !shared {
		return nil
	}
	var out []string
	if rootClass != "" && rootClass != "RigidBody3D" && rootClass != "RigidBody2D" {
		out = append(out, fmt.Sprintf("Shared object %d: its root is a %s. A RigidBody3D or RigidBody2D (freeze_mode "+
			"KINEMATIC) is handed over by itself: frozen and placed while another player owns it, simulating from "+
			"the drawn velocity once you do. Any other root must stop moving itself while is_owner() is false.", id, rootClass))
	}
	if synced {
		out = append(out, fmt.Sprintf("Shared object %d: synced_properties are not sent for shared objects "+
			"(send an event when a value changes instead).", id))
	}
	return out
}
