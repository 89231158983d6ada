package room

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// BenchmarkRelay measures the relay path in memory: 8 players each sending
// 60 states a second, every state checked, re-stamped, kept and sent to the
// 7 others. One op is one incoming state; ns/relayed and allocs/relayed
// are per state sent on (fan-out 8: 7 per op). With busy, the server says
// it is behind (Hooks.Behind), so each state is also placed on its
// sender's timeline against the room's evidence of a backlog
// (timeline.go), the most the checks cost.
func BenchmarkRelay(b *testing.B) {
	for _, players := range []int{2, 8, 16} {
		b.Run(fmt.Sprintf("players=%d", players), func(b *testing.B) {
			benchRelay(b, players, false)
		})
	}
	b.Run("players=8/busy", func(b *testing.B) { benchRelay(b, 8, true) })
}

func benchRelay(b *testing.B, players int, busy bool) {
	now := time.Hour
	var hooks *Hooks
	if busy {
		hooks = &Hooks{Behind: func() time.Duration { return 50 * time.Millisecond }}
	}
	r, err := New("ABCDEF", &Config{MaxPlayers: players}, hooks, now)
	require.NoError(b, err)
	peers := make([]*CountPeer, players)
	frames := make([][]byte, players)
	for i := range peers {
		peers[i] = &CountPeer{}
		_, err := r.Join(now, peers[i], Member{User: string(rune('a' + i))})
		require.NoError(b, err)
		frames[i], err = wire.AppendState(nil, &wire.State{Fields: wire.HasAcc | wire.HasTurn | wire.HasExtras,
			Pos: geom.Vec3{X: float64(i)}, Vel: geom.Vec3{X: 1}, Rot: geom.Quat{W: 1}})
		require.NoError(b, err)
		r.HandleFrame(now, peers[i], protocol.MustMarshal(&protocol.Ping{TUS: 1, RTTUS: 30_000}))
		peers[i].States, peers[i].Controls = 0, 0
	}
	step := time.Second / 60 / time.Duration(players) // each player at 60 Hz
	b.ReportAllocs()
	b.SetBytes(int64(len(frames[0])))
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now += step
		k := i % players
		f := frames[k]
		binary.LittleEndian.PutUint16(f[2:], uint16(i/players+1))
		binary.LittleEndian.PutUint32(f[4:], uint32(wire.StampOf(now-20*time.Millisecond)))
		r.HandleFrame(now, peers[k], f)
	}
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	relayed := 0
	for _, p := range peers {
		relayed += p.States
		require.False(b, p.Closed)
	}
	require.Equal(b, b.N*(players-1), relayed, "every state relayed to every other player")
	b.ReportMetric(float64(relayed)/b.Elapsed().Seconds(), "relayed/s")
	b.ReportMetric(float64(players-1), "relayed/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(relayed), "ns/relayed")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(relayed), "allocs/relayed")
}
