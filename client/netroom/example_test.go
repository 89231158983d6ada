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

// The motion profiles of NetPredictor.
func ExampleProfile_Preset() {
	for _, p := range []netroom.Profile{netroom.ProfileVehicle, netroom.ProfileCharacter} {
		predictionCap, tau, _ := p.Preset()
		fmt.Printf("%s: prediction cap %v, smoothing %v\n", p, predictionCap, tau)
	}
	// Output:
	// vehicle: prediction cap 300ms, smoothing 150ms
	// character: prediction cap 150ms, smoothing 50ms
}
