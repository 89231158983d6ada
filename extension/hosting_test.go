package main

import (
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/bindings/godot/fakeengine"
	"github.com/nearzero/nearzero/client/netroom"
)

func TestHostingGlue(t *testing.T) { runChild(t, "TestHostingGlueChild") }

// TestHostingGlueChild drives NetRoom.host_local on the fake engine: the
// server serves, server_address points at it, a taken port is a
// room_error, and leaving the tree stops it.
func TestHostingGlueChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestHostingGlue starts")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene, godot.LevelEditor} {
		fakeengine.Initialize(uint32(l))
	}

	// A free port (the default, 8787, may be in use on a test machine).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	main := node(t, "Node", "Main")
	roomObj := node(t, "NetRoom", "Room")
	fakeengine.AddChild(main, roomObj)
	fakeengine.SetInTree(main, true)
	virtual(t, roomObj, "_enter_tree")

	r, ok := fakeengine.Call("NetRoom", "is_local_server_running", roomObj)
	require.True(t, ok)
	assert.Zero(t, r.Int)
	r, ok = fakeengine.Call("NetRoom", "host_local", roomObj, int64(port))
	require.True(t, ok)
	suffix := ":" + strconv.Itoa(port) + "/ws"
	assert.Regexp(t, `^ws://\d+\.\d+\.\d+\.\d+`+suffix+`$`, r.String, "the LAN address")
	r, _ = fakeengine.Call("NetRoom", "get_server_address", roomObj)
	assert.Equal(t, "ws://127.0.0.1"+suffix, r.String)
	r, _ = fakeengine.Call("NetRoom", "is_local_server_running", roomObj)
	assert.Equal(t, int64(1), r.Int)
	r, _ = fakeengine.Call("NetRoom", "get_local_server_address", roomObj)
	assert.Contains(t, r.String, suffix)
	r, _ = fakeengine.Call("NetRoom", "host_local", roomObj, int64(port))
	assert.Contains(t, r.String, suffix, "hosting again on the same port: the same server")

	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := hc.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/healthz")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// A second NetRoom on the same port: refused, said as room_error.
	other := node(t, "NetRoom", "Other")
	fakeengine.AddChild(main, other)
	from := len(fakeengine.Records())
	r, _ = fakeengine.Call("NetRoom", "host_local", other, int64(port))
	assert.Empty(t, r.String)
	assert.True(t, contains(since(from), "emit room_error "+strconv.Itoa(int(netroom.CodeLocal))+" could not host"), "%v", since(from))
	r, _ = fakeengine.Call("NetRoom", "is_local_server_running", other)
	assert.Zero(t, r.Int)

	// Leaving the tree stops the server: the port is free at once.
	virtual(t, roomObj, "_exit_tree")
	r, _ = fakeengine.Call("NetRoom", "is_local_server_running", roomObj)
	assert.Zero(t, r.Int)
	l, err = net.Listen("tcp", "0.0.0.0:"+strconv.Itoa(port))
	require.NoError(t, err, "the port is free after _exit_tree")
	require.NoError(t, l.Close())

	// stop_local_server: the same, by hand.
	r, _ = fakeengine.Call("NetRoom", "host_local", other, int64(port))
	assert.Contains(t, r.String, suffix)
	fakeengine.Call("NetRoom", "stop_local_server", other)
	r, _ = fakeengine.Call("NetRoom", "is_local_server_running", other)
	assert.Zero(t, r.Int)
}

// TestRelayGlueChild drives NetRoom.start_udp_relay on the fake engine:
// datagrams go through with the NetRoom's lag settings, applied live, and
// leaving the tree closes the relays.
func TestRelayGlueChild(t *testing.T) {
	if os.Getenv(glueChildEnv) != "1" {
		t.Skip("skipped: runs in the child process TestRelayGlue starts")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	require.True(t, fakeengine.Load(), "%v", fakeengine.Records())
	for _, l := range []godot.Level{godot.LevelCore, godot.LevelServers, godot.LevelScene, godot.LevelEditor} {
		fakeengine.Initialize(uint32(l))
	}
	echo, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer echo.Close()
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := echo.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = echo.WriteToUDP(buf[:n], from)
		}
	}()

	main := node(t, "Node", "Main")
	roomObj := node(t, "NetRoom", "Room")
	fakeengine.AddChild(main, roomObj)
	fakeengine.SetInTree(main, true)
	virtual(t, roomObj, "_enter_tree")
	fakeengine.Call("NetRoom", "set_lag_latency_ms", roomObj, 40.0)
	fakeengine.Call("NetRoom", "set_lag_enabled", roomObj, true)

	from := len(fakeengine.Records())
	r, ok := fakeengine.Call("NetRoom", "start_udp_relay", roomObj, "127.0.0.1", int64(0))
	require.True(t, ok)
	assert.Zero(t, r.Int, "port 0 refused")
	assert.True(t, contains(since(from), "emit room_error "+strconv.Itoa(int(netroom.CodeLocal))+" could not start the UDP relay"), "%v", since(from))

	r, _ = fakeengine.Call("NetRoom", "start_udp_relay", roomObj, "", int64(echo.LocalAddr().(*net.UDPAddr).Port))
	require.NotZero(t, r.Int)
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(r.Int)})
	require.NoError(t, err)
	defer c.Close()
	rtt := func() time.Duration {
		start := time.Now()
		_, err := c.Write([]byte{1})
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(2*time.Second)))
		buf := make([]byte, 8)
		_, err = c.Read(buf)
		require.NoError(t, err)
		return time.Since(start)
	}
	assert.GreaterOrEqual(t, rtt(), 80*time.Millisecond, "40 ms each way, set before the relay started")
	fakeengine.Call("NetRoom", "set_lag_enabled", roomObj, false)
	assert.Less(t, rtt(), 80*time.Millisecond, "lag off, live (under the 40 ms each way it had)")

	virtual(t, roomObj, "_exit_tree")
	_, err = c.Write([]byte{2})
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	_, err = c.Read(make([]byte, 8))
	assert.Error(t, err, "closed with the tree exit: no reply")
}

func TestRelayGlue(t *testing.T) { runChild(t, "TestRelayGlueChild") }
