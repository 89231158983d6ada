package simnet

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bridgeLog records what each side received.
type bridgeLog struct{ atA, atB []string }

func newLoggedBridge() (*Bridge, *bridgeLog) {
	lg := &bridgeLog{}
	b := NewBridge(
		func(p []byte) { lg.atB = append(lg.atB, string(p)) },
		func(p []byte) { lg.atA = append(lg.atA, string(p)) },
	)
	return b, lg
}

func sendAll(b *Bridge, d Dir, ps ...string) {
	for _, p := range ps {
		b.Send(d, []byte(p))
	}
}

func TestBridgeScripts(t *testing.T) {
	tests := []struct {
		name     string
		script   func(b *Bridge)
		atB, atA []string
		leftAB   int
	}{
		{"deliver in order", func(b *Bridge) {
			sendAll(b, AtoB, "1", "2", "3")
			assert.Equal(t, 2, b.Deliver(AtoB, 2))
		}, []string{"1", "2"}, nil, 1},
		{"deliver more than queued", func(b *Bridge) {
			sendAll(b, AtoB, "1")
			assert.Equal(t, 1, b.Deliver(AtoB, 5))
			assert.Equal(t, 0, b.Deliver(AtoB, -1))
		}, []string{"1"}, nil, 0},
		{"drop the oldest", func(b *Bridge) {
			sendAll(b, AtoB, "1", "2", "3", "4")
			assert.Equal(t, 2, b.Drop(AtoB, 2))
			b.Deliver(AtoB, 1)
		}, []string{"3"}, nil, 1},
		{"reorder reverses", func(b *Bridge) {
			sendAll(b, AtoB, "1", "2", "3")
			b.Reorder(AtoB)
			assert.Equal(t, "3", string(b.Peek(AtoB, 0)))
			assert.Nil(t, b.Peek(AtoB, 3))
			b.Deliver(AtoB, 3)
		}, []string{"3", "2", "1"}, nil, 0},
		{"swap", func(b *Bridge) {
			sendAll(b, AtoB, "1", "2", "3")
			b.Swap(AtoB, 0, 2)
			b.Deliver(AtoB, 3)
		}, []string{"3", "2", "1"}, nil, 0},
		{"directions are separate", func(b *Bridge) {
			sendAll(b, AtoB, "a1", "a2")
			sendAll(b, BtoA, "b1")
			b.Drop(BtoA, 1)
			assert.Equal(t, 2, b.DeliverAll())
		}, []string{"a1", "a2"}, nil, 0},
		{"sender func", func(b *Bridge) {
			send := b.Sender(BtoA)
			send([]byte("x"))
			send([]byte("y"))
			assert.Equal(t, 2, b.Len(BtoA))
			b.DeliverAll()
		}, nil, []string{"x", "y"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, lg := newLoggedBridge()
			tc.script(b)
			assert.Equal(t, tc.atB, lg.atB)
			assert.Equal(t, tc.atA, lg.atA)
			assert.Equal(t, tc.leftAB, b.Len(AtoB))
		})
	}
}

func TestBridgePingPong(t *testing.T) {
	var b *Bridge
	var got []string
	// B answers each ping with a pong; A answers pongs until the fifth.
	b = NewBridge(
		func(p []byte) { got = append(got, "B<-"+string(p)); b.Send(BtoA, []byte("pong")) },
		func(p []byte) {
			got = append(got, "A<-"+string(p))
			if len(got) < 10 {
				b.Send(AtoB, []byte("ping"))
			}
		},
	)
	b.Send(AtoB, []byte("ping"))
	require.Equal(t, 1, b.DeliverAll(), "the reply waits for the next call")
	assert.Equal(t, 1, b.Len(BtoA))
	assert.Equal(t, 9, b.Flush(100))
	assert.Len(t, got, 10)
	assert.Equal(t, "A<-pong", got[9])
}

func TestBridgeFlushEndless(t *testing.T) {
	var b *Bridge
	b = NewBridge(func(p []byte) { b.Send(AtoB, p) }, nil)
	b.Send(AtoB, []byte("loop"))
	assert.PanicsWithValue(t, "simnet: Bridge.Flush: still 1+0 payloads queued after 50 rounds", func() { b.Flush(50) })
}

func TestDirString(t *testing.T) {
	assert.Equal(t, "AtoB", AtoB.String())
	assert.Equal(t, "BtoA", BtoA.String())
	assert.Equal(t, "Dir(7)", Dir(7).String())
}
