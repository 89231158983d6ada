package server

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/room"
)

// BenchmarkRelayToQueues is the server's relay path without sockets: the
// room under its host lock (as a connection's reader calls it), Prometheus
// counters, and each recipient connection's state queue (copy, lock,
// wake-up). One op is one incoming state relayed to players-1 queues.
func BenchmarkRelayToQueues(b *testing.B) {
	for _, players := range []int{2, 8} {
		b.Run(fmt.Sprintf("players=%d", players), func(b *testing.B) {
			// Real time runs far faster than 60 Hz here: lift the rate limit.
			s := &Server{cfg: (&Config{Room: room.Config{MaxPlayers: players, SendRate: 1e9}}).withDefaults(), log: discardLog()}
			var err error
			s.m, err = newTestMetrics()
			require.NoError(b, err)
			h, err := s.newHost("ABCDEF", "127.0.0.1")
			require.NoError(b, err)
			conns := make([]*conn, players)
			frames := make([][]byte, players)
			for i := range conns {
				conns[i] = &conn{s: s, wake: make(chan struct{}, 1), ring: make([]byte, s.cfg.StateQueue*slotSize), log: discardLog()}
				h.do(func(now time.Duration) {
					_, err = h.r.Join(now, conns[i], room.Member{User: fmt.Sprint("u", i)})
				})
				require.NoError(b, err)
				conns[i].ctl = nil
				frames[i], err = wire.AppendState(nil, &wire.State{Fields: wire.HasAcc | wire.HasTurn | wire.HasExtras,
					Vel: geom.Vec3{X: 1}, Rot: geom.Quat{W: 1}})
				require.NoError(b, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				k := i % players
				f := frames[k]
				binary.LittleEndian.PutUint16(f[2:], uint16(i/players+1))
				binary.LittleEndian.PutUint32(f[4:], uint32(wire.StampOf(time.Since(start))))
				c := conns[k]
				h.do(func(now time.Duration) { h.r.HandleFrame(now, c, f) })
				if k == players-1 { // the writers keep up: empty the queues
					for _, c := range conns {
						c.qmu.Lock()
						c.n, c.head = 0, 0
						c.qmu.Unlock()
					}
				}
			}
			b.StopTimer()
			h.stop(0)
			require.InDelta(b, float64(b.N*(players-1)), s.m.RelayedTotal.Value(), 0, "every state relayed")
			b.ReportMetric(float64(b.N*(players-1))/b.Elapsed().Seconds(), "relayed/s")
		})
	}
}
