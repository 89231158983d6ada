package protocol

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/wire"
)

func TestEntityMessagesRoundTrip(t *testing.T) {
	for _, m := range []Message{
		&Spawn{Slot: 2, Entity: 3, Scene: "res://bullet.tscn", Args: json.RawMessage(`[1,"red"]`),
			Pos: [3]float64{1, 2, 3}, Rot: [4]float64{0, 0, 0, 1}},
		&Despawn{Slot: 2, Entity: 3},
		&Claim{Entity: 130},
		&Owner{Entity: 130, Slot: 1, Epoch: 7, Known: true, Stamp: 123456, Pos: [3]float64{4, 5, 6}, Vel: [3]float64{1, 0, 0}},
		&Owner{Entity: 131, Slot: NoOwner, Reason: "too far"},
	} {
		b, err := Marshal(m)
		require.NoError(t, err)
		got, err := Decode(b)
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	assert.Equal(t, "spawn", TypeName(TypeSpawn))
	assert.Equal(t, "owner", TypeName(TypeOwner))
	assert.Equal(t, "too_many", CodeTooMany.String())
}

func TestCheckSpawn(t *testing.T) {
	ok := Spawn{Entity: 1, Scene: "bullet"}
	require.NoError(t, CheckSpawn(&ok))
	shared := Spawn{Entity: wire.FirstShared, Scene: "ball", Args: json.RawMessage(` []`)}
	require.NoError(t, CheckSpawn(&shared))
	for name, m := range map[string]Spawn{
		"entity 0":        {Entity: 0, Scene: "x"},
		"entity 256":      {Entity: 256, Scene: "x"},
		"no scene":        {Entity: 1},
		"long scene":      {Entity: 1, Scene: strings.Repeat("s", MaxSceneName+1)},
		"control in name": {Entity: 1, Scene: "a\nb"},
		"args not array":  {Entity: 1, Scene: "x", Args: json.RawMessage(`{"a":1}`)},
		"args too big":    {Entity: 1, Scene: "x", Args: json.RawMessage(`["` + strings.Repeat("a", MaxSpawnArgs) + `"]`)},
		"nan position":    {Entity: 1, Scene: "x", Pos: [3]float64{math.NaN()}},
	} {
		assert.ErrorIs(t, CheckSpawn(&m), ErrBadSpawn, name)
	}
	assert.NoError(t, CheckEntity(1, false))
	assert.Error(t, CheckEntity(0, false))
	assert.Error(t, CheckEntity(5, true), "a claim names a shared object")
	assert.NoError(t, CheckEntity(255, true))
	assert.Error(t, CheckEntity(256, true))
}
