package netroom

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRoomWarnings(t *testing.T) {
	cases := []struct {
		name  string
		setup RoomSetup
		want  []string // a phrase of each warning, in order
	}{
		{name: "complete", setup: RoomSetup{Server: "127.0.0.1:8787", HasPlayerScene: true, SpawnPath: "..", SpawnPathOK: true}},
		{name: "bare", setup: RoomSetup{SpawnPath: "..", SpawnPathOK: true}, want: []string{"No server_address", "No player_scene"}},
		{name: "bad address", setup: RoomSetup{Server: "ftp://x", HasPlayerScene: true}, want: []string{"not usable"}},
		{name: "spawn path lost", setup: RoomSetup{Server: "h:1", HasPlayerScene: true, SpawnPath: "../World"}, want: []string{`"../World" does not point`}},
		{name: "spawn parent lost", setup: RoomSetup{Server: "h:1", HasPlayerScene: true,
			LostParents: []string{"res://rocket.tscn|../Shots"}}, want: []string{`the parent "../Shots" of res://rocket.tscn does not point`}},
		// A game set direct_lag_latency_ms alone: ignored without a word.
		{name: "direct lag without apart", setup: RoomSetup{Server: "h:1", HasPlayerScene: true,
			DirectLag: LagConfig{Latency: 80e6}}, want: []string{"direct_lag_apart is off"}},
		{name: "direct lag apart", setup: RoomSetup{Server: "h:1", HasPlayerScene: true,
			DirectLag: LagConfig{Latency: 80e6}, DirectLagApart: true}},
		{name: "lag without enabled", setup: RoomSetup{Server: "h:1", HasPlayerScene: true,
			Lag: LagConfig{Loss: 0.1}}, want: []string{"lag_enabled is off"}},
		{name: "lag enabled", setup: RoomSetup{Server: "h:1", HasPlayerScene: true, Lag: LagConfig{Loss: 0.1}, LagOn: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RoomWarnings(tc.setup)
			if assert.Len(t, got, len(tc.want), "%q", got) {
				for i, phrase := range tc.want {
					assert.Contains(t, got[i], phrase)
				}
			}
		})
	}
}
