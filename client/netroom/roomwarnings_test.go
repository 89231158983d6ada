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
