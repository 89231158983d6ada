package entity

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/typedargs"
)

func TestPropsSetRefuses(t *testing.T) {
	var p Props
	assert.ErrorIs(t, p.Set("health", math.NaN()), typedargs.ErrBadArg)
	assert.ErrorIs(t, p.Set("", 1), protocol.ErrBadProp)
	big := make([]any, protocol.MaxPropValue)
	assert.ErrorIs(t, p.Set("big", big), protocol.ErrBadProp)
	require.NoError(t, p.Set("health", 100))
}

func TestSyncedWarnings(t *testing.T) {
	assert.Empty(t, SyncedWarnings([]string{"health", "modulate", "label:text"}))
	many := make([]string, MaxSyncedKeys+1)
	for i := range many {
		many[i] = string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	tests := []struct {
		paths []string
		want  string
	}{
		{[]string{"health", ""}, "empty entry"},
		{[]string{"health", "health"}, "twice"},
		{[]string{string(make([]byte, protocol.MaxPropKey+1))}, "longer than 64 bytes"},
		{many, "at most 32"},
	}
	for _, tt := range tests {
		ws := SyncedWarnings(tt.paths)
		require.Len(t, ws, 1, "%q", tt.paths)
		assert.Contains(t, ws[0], tt.want)
	}
}
