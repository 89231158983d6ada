package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/server/room"
)

// TestSecurityFlags: the limits of "Security, round four" have flags,
// listed with their defaults by -h, and reach the configuration.
func TestSecurityFlags(t *testing.T) {
	var out syncBuf
	require.Zero(t, run([]string{"-h"}, nil, &out, &out, nil))
	for _, want := range []string{"-max-teleport", "(default 2000)", "-max-teleport-2d", "(default 40000)",
		"-hit-range", "(default 300)", "-hit-range-2d", "(default 6000)", "-hit-fire-slack", "(default 50ms)",
		"-claim-after-spawn", "(default 3s)", "-spawn-clearance", "-spawn-area", "-spawn-area-2d",
		"-kick-ban", "(default 5m0s)", "-signal-candidates", "(default 32)",
		"-max-conns-per-prefix", "-conn-reserve", "(default 0.1)", "-small-net-reserve", "(default 0.25)",
		"-turn-allocation-lifetime", "(default 2m0s)", "-turn-allocations-per-user", "-turn-allocations-per-addr",
		"(default 64)", "-turn-max-allocations"} {
		assert.Contains(t, out.String(), want)
	}

	o, err := parse([]string{"-max-teleport", "-1", "-max-teleport-2d", "900", "-hit-range", "-1", "-hit-fire-slack", "80ms",
		"-claim-after-spawn", "1s", "-spawn-clearance", "6", "-spawn-area", "-10,0,-10,10,5,10", "-spawn-area-2d", "0,0,640,480",
		"-kick-ban", "1m", "-signal-candidates", "8", "-max-conns-per-prefix", "100", "-conn-reserve", "0.2",
		"-small-net-reserve", "-1", "-turn-allocation-lifetime", "1m", "-turn-allocations-per-user", "4",
		"-turn-allocations-per-addr", "8", "-turn-max-allocations", "50"}, io.Discard)
	require.NoError(t, err)
	c := o.config()
	r := c.Room
	assert.Equal(t, []any{-1.0, 900.0, -1.0, 80 * time.Millisecond}, []any{r.MaxTeleport, r.MaxTeleport2D, r.Hits.Range, r.Hits.FireSlack})
	assert.Equal(t, []any{time.Second, 6.0, time.Minute, 8}, []any{r.Entities.ClaimAfterSpawn, r.Entities.SpawnClearance, r.KickBan, r.SignalCandidates})
	assert.Equal(t, room.Area{Min: geom.Vec3{X: -10, Z: -10}, Max: geom.Vec3{X: 10, Y: 5, Z: 10}}, r.Entities.SpawnArea)
	assert.Equal(t, room.Area{Max: geom.Vec3{X: 640, Y: 480}}, r.Entities.SpawnArea2D)
	assert.Equal(t, []any{100, 0.2, -1.0}, []any{c.MaxConnsPerPrefix, c.ConnReserve, c.SmallNetReserve})
	assert.Equal(t, []any{time.Minute, 4, 8, 50}, []any{o.turn.AllocationLifetime, o.turn.AllocationsPerUser,
		o.turn.AllocationsPerAddr, o.turn.MaxAllocations})
	require.NoError(t, c.Validate())

	_, err = parse([]string{"-spawn-area", "1,2,3"}, io.Discard)
	assert.ErrorContains(t, err, "minx,miny")
}
