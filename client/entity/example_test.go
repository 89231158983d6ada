package entity_test

import (
	"fmt"

	"github.com/nearzero/nearzero/client/entity"
)

// The motion profiles of NetPredictor.
func ExampleProfile_Preset() {
	for _, p := range []entity.Profile{entity.ProfileVehicle, entity.ProfileCharacter} {
		predictionCap, tau, _ := p.Preset()
		fmt.Printf("%s: prediction cap %v, smoothing %v\n", p, predictionCap, tau)
	}
	// Output:
	// vehicle: prediction cap 300ms, smoothing 150ms
	// character: prediction cap 150ms, smoothing 50ms
}
