package testkit

import (
	"net"
	"time"

	"github.com/pion/ice/v4"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/netcode/clock"
)

// QuickSync is a clock sync that counts as synced after a few fast pings
// (tens of milliseconds on loopback instead of the game's seconds).
var QuickSync = clock.SyncConfig{WarmupInterval: 10 * time.Millisecond, SyncedAfter: 3, WarmupSamples: 4}

// LoopbackICE restricts direct links to UDP over 127.0.0.1 with short ICE
// time-outs (direct.Config.ICEOptions): everything stays on this machine.
var LoopbackICE = []ice.AgentOption{
	ice.WithNetworkTypes([]ice.NetworkType{ice.NetworkTypeUDP4}),
	ice.WithIPFilter(func(ip net.IP) bool { return ip.IsLoopback() }),
	ice.WithDisconnectedTimeout(time.Second),
	ice.WithFailedTimeout(2 * time.Second),
	ice.WithKeepaliveInterval(200 * time.Millisecond),
}

// LoopbackDirect sets c to link over 127.0.0.1 only: LoopbackICE, with
// loopback candidates gathered, sent and taken (direct drops them by
// default; they need host addresses shared).
func LoopbackDirect(c *direct.Config) {
	c.ICEOptions = LoopbackICE
	c.ShareHostCandidates, c.LoopbackCandidates = true, true
}
