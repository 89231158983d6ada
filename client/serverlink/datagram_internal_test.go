package serverlink

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestURLHost(t *testing.T) {
	for raw, want := range map[string]string{
		"ws://127.0.0.1:8787/ws":        "127.0.0.1",
		"wss://play.example.com/ws":     "play.example.com",
		"ws://[::1]:8787/ws?x=1":        "::1",
		"ws://localhost:8787":           "localhost",
		"wss://eu-1.example.com:443/ws": "eu-1.example.com",
	} {
		assert.Equal(t, want, urlHost(raw), raw)
	}
}
