package predict_test

import (
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
)

// A remote entity moving at 10 m/s along +X was sampled at t=0 and its state
// arrived 30 ms later; at 50 ms it is drawn where it is now, 0.5 m on.
func ExamplePredictor_PoseAt() {
	p, err := predict.New(predict.Config{})
	if err != nil {
		panic(err)
	}
	p.Add(predict.PathDirect, predict.Sample{
		Time: 0,
		Seq:  1,
		Vel:  geom.Vec3{X: 10},
		Rot:  geom.Identity,
	}, 30*time.Millisecond)

	pose := p.PoseAt(50 * time.Millisecond)
	fmt.Printf("x at 50 ms: %.2f m (age %v, %v)\n", pose.Pos.X, pose.Age, pose.Visibility)
	// Output: x at 50 ms: 0.50 m (age 50ms, visible)
}
