package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

func TestCreateRoomClaimsCodesAtomically(t *testing.T) {
	const maxRooms = 40
	// The creators share one /24 and no room plays: only MaxRooms limits.
	s, err := New(&Config{MaxRooms: maxRooms, MaxRoomsPerPrefix: -1, PlayingReserve: -1, SmallNetReserve: -1}, Deps{})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Shutdown(context.Background())) }()

	// The first code the generator will draw is taken already: the claim
	// must skip it.
	const seed = 99
	s.rng = rand.New(rand.NewPCG(seed, seed))
	taken := protocol.NewRoomCode(rand.New(rand.NewPCG(seed, seed)))
	s.rooms[taken] = &host{code: taken}

	var mu sync.Mutex
	codes := map[string]bool{}
	full := 0
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, e := s.createRoom(fmt.Sprintf("10.0.0.%d", i))
			mu.Lock()
			defer mu.Unlock()
			if e != nil {
				assert.Equal(t, protocol.CodeServerFull, e.Code)
				full++
				return
			}
			assert.False(t, codes[h.code], "code %s handed out twice", h.code)
			assert.NotEqual(t, taken, h.code, "seed %d: a taken code is never reused", seed)
			codes[h.code] = true
		}()
	}
	wg.Wait()
	assert.Len(t, codes, maxRooms-1, "up to MaxRooms, counting the one already there")
	assert.Equal(t, 100-(maxRooms-1), full)
	delete(s.rooms, taken)
}
