package main

import (
	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// The room's input delay (client/netroom, SetInputDelay): set by the host
// before creating the room or in the lobby; read back, the room's once
// seated.

// inputDelayModes are protocol's modes by InputDelayMode value.
var inputDelayModes = [...]string{protocol.InputDelayOff, protocol.InputDelayFixed, protocol.InputDelayAdaptive}

func registerInputDelay(c *godot.Class[NetRoom]) {
	c.Group("Input Delay", "input_delay_")
	godot.Property(c, "input_delay_mode", func(n *NetRoom) int64 {
		mode, _ := n.inputDelay()
		return mode
	}, func(n *NetRoom, v int64) {
		n.delayMode = min(max(v, 0), int64(len(inputDelayModes)-1))
		n.applyInputDelay()
	}).OfEnum(inputDelayMode, "INPUT_DELAY_")
	godot.Property(c, "input_delay_ms", func(n *NetRoom) float64 {
		_, ms := n.inputDelay()
		return ms
	}, func(n *NetRoom, v float64) {
		n.delayMS = min(max(v, 0), float64(protocol.MaxInputDelayUS)/1000)
		n.applyInputDelay()
	}).Range(0, float64(protocol.MaxInputDelayUS)/1000, 1, "suffix:ms")
	godot.Property(c, "input_delay_now_ms", func(n *NetRoom) float64 { return ms(n.model.InputDelay()) }, nil)
}

// inputDelay returns the mode and milliseconds to show: the room's while
// seated (the fixed delay, or the adaptive cap), else the ones set.
func (n *NetRoom) inputDelay() (mode int64, ms float64) {
	if !n.model.InRoom() {
		return n.delayMode, n.delayMS
	}
	d := n.model.InputDelaySetting()
	for i, m := range inputDelayModes {
		if m == d.Mode {
			mode = int64(i)
		}
	}
	switch d.Mode {
	case protocol.InputDelayFixed:
		return mode, float64(d.US) / 1000
	case protocol.InputDelayAdaptive:
		return mode, float64(d.CapUS) / 1000
	}
	return mode, n.delayMS
}

// applyInputDelay hands the setting to the room: asked for by the next
// create_room, or sent at once by the host in the lobby. A guest's is
// refused with an error printed.
func (n *NetRoom) applyInputDelay() {
	d := protocol.InputDelay{Mode: inputDelayModes[n.delayMode]}
	us := int64(n.delayMS * 1000)
	switch d.Mode {
	case protocol.InputDelayFixed:
		d.US = us
	case protocol.InputDelayAdaptive:
		d.CapUS = us
	}
	if err := n.model.SetInputDelay(d); err != nil {
		godot.PrintError("NetRoom input delay: " + err.Error())
	}
}
