package netroom_test

import (
	"fmt"

	"github.com/nearzero/nearzero/client/netroom"
)

// What a player types as the server address becomes the URL dialled.
func ExampleServerURL() {
	for _, in := range []string{"127.0.0.1:8787", "https://play.example.org", "ws://10.0.0.5:9000"} {
		u, _ := netroom.ServerURL(in)
		fmt.Println(u)
	}
	// Output:
	// ws://127.0.0.1:8787/ws
	// wss://play.example.org/ws
	// ws://10.0.0.5:9000/ws
}
