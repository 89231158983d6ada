package entity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
)

func TestPredictorWarnings(t *testing.T) {
	good := PredictorSetup{RootPath: "..", RootFound: true, RootClass: "CharacterBody3D", RootSpatial: true, RoomFound: true}
	with := func(f func(*PredictorSetup)) PredictorSetup { s := good; f(&s); return s }
	cases := []struct {
		name  string
		setup PredictorSetup
		want  []string
	}{
		{name: "complete", setup: good},
		{name: "empty root path", setup: with(func(s *PredictorSetup) { s.RootPath = "" }), want: []string{"root_path is empty"}},
		{name: "root not found", setup: with(func(s *PredictorSetup) { s.RootFound = false }), want: []string{`".." does not point`}},
		{name: "root not spatial", setup: with(func(s *PredictorSetup) { s.RootSpatial, s.RootClass, s.RootName = false, "Node", "Game" }),
			want: []string{`The root "Game" is a Node`}},
		{name: "no room above", setup: with(func(s *PredictorSetup) { s.RoomFound = false }), want: []string{"No NetRoom above"}},
		{name: "room path lost", setup: with(func(s *PredictorSetup) { s.RoomPath, s.RoomFound = "../Net", false }), want: []string{`room_path "../Net"`}},
		{name: "ghost after hide", setup: with(func(s *PredictorSetup) { s.Predict.GhostAfter = 3 * time.Second }),
			want: []string{"GhostAfter (3s) must be less than HideAfter (2s)"}},
		{name: "send rate", setup: with(func(s *PredictorSetup) { s.Send.Rate = 5000 }), want: []string{"Rate is 5000"}},
		{name: "everything wrong, in order", setup: PredictorSetup{RootPath: "x", Predict: predict.Config{PredictionCap: 2 * time.Second},
			Send: sender.Config{Rate: -1}}, want: []string{"does not point", "No NetRoom above", "PredictionCap", "Rate"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PredictorWarnings(tc.setup)
			if assert.Len(t, got, len(tc.want), "%q", got) {
				for i, phrase := range tc.want {
					assert.Contains(t, got[i], phrase)
				}
			}
		})
	}
}

func TestEntityWarnings(t *testing.T) {
	assert.Empty(t, EntityWarnings(3, false, "Node3D", true), "a player's entity: nothing to say")
	assert.Empty(t, EntityWarnings(0, true, "RigidBody2D", false))
	assert.Len(t, EntityWarnings(0, true, "CharacterBody3D", false), 1, "a shared root that is not a rigid body")
	assert.Len(t, EntityWarnings(0, true, "RigidBody3D", true), 1, "synced properties on a shared object")
}
