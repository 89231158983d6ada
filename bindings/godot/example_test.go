package godot_test

import (
	"fmt"

	"github.com/nearzero/nearzero/bindings/godot"
)

type Greeter struct {
	godot.Node
	speed float64
}

func (g *Greeter) Ready()                {}
func (g *Greeter) Process(delta float64) {}
func (g *Greeter) Greet(name string) string {
	return "hello " + name
}

// A class declaration is plain Go data until Register hands it to the engine
// at SCENE init, so it can be inspected without Godot.
func ExampleNewClass() {
	c := godot.NewClass[Greeter]("Greeter")
	c.Group("Motion", "")
	godot.Property(c, "speed",
		func(g *Greeter) float64 { return g.speed },
		func(g *Greeter, v float64) { g.speed = v }).Range(0, 10, 0.1, "suffix:m/s")
	godot.Method1R(c, "greet", (*Greeter).Greet, "name")
	godot.NewSignal1[string](c, "greeted", "name")
	c.Constant("MAX_SPEED", 10)
	fmt.Print(c.Describe())
	fmt.Println("errors:", c.Err())
	// Output:
	// class Greeter extends Node
	//   virtuals _ready, _process
	//   group "Motion" prefix ""
	//   property speed: float hint 1 "0,10,0.1,suffix:m/s" usage 6 get get_speed set set_speed
	//   method get_speed() -> float const
	//   method set_speed(value: float)
	//   method greet(name: String) -> String
	//   signal greeted(name: String)
	//   const MAX_SPEED = 10
	// errors: <nil>
}

func ExampleRangeHint() {
	fmt.Println(godot.RangeHint(0, 2, 0.01, "or_greater", "suffix:s"))
	// Output: 0,2,0.01,or_greater,suffix:s
}
