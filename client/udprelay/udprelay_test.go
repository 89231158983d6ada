package udprelay

import (
	"encoding/binary"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nearzero/nearzero/netcode/lagsim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ms = time.Millisecond

// echo is a UDP server on loopback that sends every datagram back and
// counts them.
type echo struct {
	conn *net.UDPConn
	got  atomic.Int64
	done chan struct{}
}

func newEcho(t *testing.T) *echo {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	e := &echo{conn: c, done: make(chan struct{})}
	go func() {
		defer close(e.done)
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			e.got.Add(1)
			_, _ = c.WriteToUDP(buf[:n], from)
		}
	}()
	t.Cleanup(func() { _ = c.Close(); <-e.done })
	return e
}

func (e *echo) addr() string { return e.conn.LocalAddr().String() }

// client is the local program behind the relay (an ENet client).
func client(t *testing.T, r *Relay) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, r.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip sends one datagram and returns how long its echo took.
func roundTrip(t *testing.T, c *net.UDPConn, id uint32) time.Duration {
	t.Helper()
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], id)
	start := time.Now()
	_, err := c.Write(b[:])
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	buf := make([]byte, 64)
	for {
		n, err := c.Read(buf)
		require.NoError(t, err)
		if n == 4 && binary.BigEndian.Uint32(buf) == id {
			return time.Since(start)
		}
	}
}

func TestDelayAndLiveChange(t *testing.T) {
	e := newEcho(t)
	r, err := New(e.addr(), Config{}, nil)
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, "127.0.0.1", r.Addr().IP.String())
	assert.NotZero(t, r.Port())
	c := client(t, r)

	assert.Less(t, roundTrip(t, c, 1), 120*ms, "off: no delay (under the 60 ms each way below)")

	require.NoError(t, r.SetConfig(Config{Latency: 60 * ms}))
	assert.Equal(t, 60*ms, r.Config().Latency)
	rtt := roundTrip(t, c, 2)
	assert.GreaterOrEqual(t, rtt, 120*ms, "60 ms each way")
	assert.Less(t, rtt, time.Second)

	require.NoError(t, r.SetConfig(Config{Latency: 10 * ms}))
	rtt = roundTrip(t, c, 3)
	assert.GreaterOrEqual(t, rtt, 20*ms)
	assert.Less(t, rtt, 120*ms, "the change applies live (under the 60 ms each way before it)")

	require.Error(t, r.SetConfig(Config{Latency: time.Hour}), "out of range")
	assert.Equal(t, 10*ms, r.Config().Latency, "kept")
	assert.Eventually(t, func() bool { return r.Stats() == Stats{ToServer: 3, ToClient: 3} }, time.Second, ms,
		"counted (just after the write the client read)")
}

func TestOrderWithoutJitter(t *testing.T) {
	e := newEcho(t)
	r, err := New(e.addr(), Config{Latency: 5 * ms}, nil)
	require.NoError(t, err)
	defer r.Close()
	c := client(t, r)
	const n = 100
	for i := range n {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(i))
		_, err := c.Write(b[:])
		require.NoError(t, err)
	}
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	buf := make([]byte, 64)
	for i := range n {
		_, err := c.Read(buf)
		require.NoError(t, err)
		require.Equal(t, uint32(i), binary.BigEndian.Uint32(buf), "in order")
	}
}

func TestLoss(t *testing.T) {
	e := newEcho(t)
	r, err := New(e.addr(), Config{Loss: 0.3}, &Options{Seed: 7})
	require.NoError(t, err)
	defer r.Close()
	c := client(t, r)
	const n = 1000
	var back atomic.Int64
	readDone := make(chan struct{})
	go func() { // read while sending: the socket's buffer holds a few hundred
		defer close(readDone)
		buf := make([]byte, 64)
		for {
			_ = c.SetReadDeadline(time.Now().Add(300 * ms))
			if _, err := c.Read(buf); err != nil {
				return
			}
			back.Add(1)
		}
	}()
	for i := range n {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(i))
		_, err := c.Write(b[:])
		require.NoError(t, err)
		if i%50 == 0 {
			time.Sleep(ms) // let the loopback buffers drain
		}
	}
	<-readDone
	// On a loaded machine the kernel may drop loopback datagrams before a
	// reader takes them: the relay's own losses are what is checked, as a
	// share of what reached it.
	st := r.Stats()
	toServer, toClient := st.ToServer+st.LostToServer, st.ToClient+st.LostToClient
	t.Logf("sent %d; the relay read %d from the client, %d replies; the server got %d, the client %d", n, toServer, toClient, e.got.Load(), back.Load())
	require.Greater(t, toServer, uint64(n/2), "most datagrams reached the relay")
	require.Greater(t, toClient, uint64(n/4), "most replies reached the relay")
	assert.InDelta(t, 0.3, float64(st.LostToServer)/float64(toServer), 0.07, "30%% lost on the way to the server")
	assert.InDelta(t, 0.3, float64(st.LostToClient)/float64(toClient), 0.07, "and 30%% of the replies")
	assert.LessOrEqual(t, uint64(e.got.Load()), st.ToServer, "the server got no more than the relay sent")
	assert.LessOrEqual(t, toClient, uint64(e.got.Load()), "a reply for each datagram the server got, at most")
	assert.LessOrEqual(t, uint64(back.Load()), st.ToClient, "the client got no more than the relay sent")

	require.NoError(t, r.SetConfig(Config{Loss: 1}))
	before := e.got.Load()
	for range 20 {
		_, err := c.Write([]byte{1})
		require.NoError(t, err)
	}
	time.Sleep(50 * ms)
	assert.Equal(t, before, e.got.Load(), "all lost")
}

func TestJitterReorders(t *testing.T) {
	e := newEcho(t)
	r, err := New(e.addr(), Config{Latency: 5 * ms, Jitter: 40 * ms}, &Options{Seed: 3})
	require.NoError(t, err)
	defer r.Close()
	c := client(t, r)
	const n = 50
	for i := range n {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(i))
		_, err := c.Write(b[:])
		require.NoError(t, err)
		time.Sleep(ms)
	}
	require.NoError(t, c.SetReadDeadline(time.Now().Add(2*time.Second)))
	buf := make([]byte, 64)
	seen, swapped, last := 0, false, -1
	for seen < n {
		_, err := c.Read(buf)
		require.NoError(t, err)
		id := int(binary.BigEndian.Uint32(buf))
		swapped = swapped || id < last
		last = id
		seen++
	}
	assert.True(t, swapped, "jitter beyond the send interval reorders")
}

// TestServerNotUpYet: datagrams to a port nobody listens on yet (ICMP
// port unreachable) do not stop the relay; once the server is up, it works.
func TestServerNotUpYet(t *testing.T) {
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	addr := l.LocalAddr().String()
	require.NoError(t, l.Close())
	r, err := New(addr, Config{}, nil)
	require.NoError(t, err)
	defer r.Close()
	c := client(t, r)
	for range 5 {
		_, err := c.Write([]byte{0})
		require.NoError(t, err)
		time.Sleep(2 * ms)
	}
	uaddr, err := net.ResolveUDPAddr("udp", addr)
	require.NoError(t, err)
	srv, err := net.ListenUDP("udp", uaddr)
	require.NoError(t, err)
	defer srv.Close()
	_, err = c.Write([]byte{9})
	require.NoError(t, err)
	require.NoError(t, srv.SetReadDeadline(time.Now().Add(2*time.Second)))
	buf := make([]byte, 8)
	for {
		n, from, err := srv.ReadFromUDP(buf)
		require.NoError(t, err)
		if n == 1 && buf[0] == 9 {
			_, err = srv.WriteToUDP([]byte{10}, from)
			require.NoError(t, err)
			break
		}
	}
	require.NoError(t, c.SetReadDeadline(time.Now().Add(2*time.Second)))
	n, err := c.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, []byte{10}, buf[:n])
}

func TestNewRefuses(t *testing.T) {
	_, err := New("127.0.0.1:9", Config{Loss: 2}, nil)
	require.ErrorIs(t, err, lagsim.ErrInvalidConfig)
	_, err = New("no-port", Config{}, nil)
	require.Error(t, err)
}

func TestCloseStops(t *testing.T) {
	e := newEcho(t)
	r, err := New(e.addr(), Config{Latency: 500 * ms}, nil)
	require.NoError(t, err)
	c := client(t, r)
	_, err = c.Write([]byte{1}) // waiting in the line when the relay closes
	require.NoError(t, err)
	time.Sleep(10 * ms)
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "repeat")
	// goleak (TestMain) checks the goroutines ended.
}
