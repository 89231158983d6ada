package server_test

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/server"
)

func TestShareUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	quic, other := server.ShareUDP(pc)
	peer, err := net.Dial("udp", pc.LocalAddr().String())
	require.NoError(t, err)
	defer peer.Close()

	read := func(c net.PacketConn) []byte {
		t.Helper()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		b := make([]byte, 100)
		n, addr, err := c.ReadFrom(b)
		require.NoError(t, err)
		assert.Equal(t, peer.LocalAddr().String(), addr.String())
		return b[:n]
	}
	// A QUIC packet sets the fixed bit; a STUN message starts with two
	// zero bits.
	_, err = peer.Write([]byte{0xc0, 1, 2})
	require.NoError(t, err)
	_, err = peer.Write([]byte{0x00, 1, 3})
	require.NoError(t, err)
	assert.Equal(t, []byte{0xc0, 1, 2}, read(quic))
	assert.Equal(t, []byte{0x00, 1, 3}, read(other))

	_, err = other.WriteTo([]byte("answer"), peer.LocalAddr())
	require.NoError(t, err)
	b := make([]byte, 10)
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := peer.Read(b)
	require.NoError(t, err)
	assert.Equal(t, "answer", string(b[:n]), "written through the shared socket")

	require.NoError(t, quic.SetReadDeadline(time.Now()))
	_, _, err = quic.ReadFrom(b)
	assert.True(t, errors.Is(err, os.ErrDeadlineExceeded), "a past deadline: %v", err)
	require.NoError(t, quic.SetReadDeadline(time.Time{}))

	// A side blocked in ReadFrom returns when it closes; the socket stays
	// open for the other side until it closes too.
	got := make(chan error, 1)
	go func() { _, _, err := quic.ReadFrom(b); got <- err }()
	require.NoError(t, quic.Close())
	assert.ErrorIs(t, <-got, net.ErrClosed)
	_, err = other.WriteTo([]byte("still"), peer.LocalAddr())
	require.NoError(t, err, "the other side still writes")
	require.NoError(t, other.Close())
	_, err = pc.WriteTo([]byte("x"), peer.LocalAddr())
	assert.ErrorIs(t, err, net.ErrClosed, "the socket closed with both sides")
}
