package client

import "github.com/nearzero/nearzero/netcode/clock"

func syncWithSlew(rate float64) clock.SyncConfig { return clock.SyncConfig{SlewRate: rate} }
