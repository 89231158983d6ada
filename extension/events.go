package main

import (
	"fmt"
	"math"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// NetRoom's events (the @rpc stand-in) and chat: methods, signals and the
// conversion of event arguments between Variants and netroom's JSON values.

var (
	sigEventReceived = godot.NewSignal3[int64, string, godot.Array](netRoomClass, "event_received", "from_slot", "name", "args")
	sigChatReceived  = godot.NewSignal2[int64, string](netRoomClass, "chat_received", "from_slot", "text")
	sigHitResult     = godot.NewSignal1[godot.Dictionary](netRoomClass, "hit_result", "result")
)

func init() {
	c := netRoomClass
	godot.Method2(c, "send_event", func(n *NetRoom, name string, args godot.Array) {
		n.sendEvent(name, args, protocol.ToAll)
	}, "name", "args")
	godot.Method3(c, "send_event_to", func(n *NetRoom, slot int64, name string, args godot.Array) {
		n.sendEvent(name, args, int(slot))
	}, "slot", "name", "args")
	godot.Method1(c, "send_chat", func(n *NetRoom, text string) { _ = n.model.SendChat(text, protocol.ToAll) }, "text")
	godot.Method3(c, "report_hit", func(n *NetRoom, target int64, fireTime float64, point godot.Vector3) {
		_ = n.model.ReportHit(int(target), duration(fireTime), vec3From(point))
	}, "target_slot", "fire_server_time", "point")
}

// hitDict is a HitResult as hit_result's Dictionary.
func hitDict(h *protocol.HitResult) godot.Dictionary {
	d := godot.NewDictionary()
	godot.DictionarySet(d, "from_slot", int64(h.From))
	godot.DictionarySet(d, "target_slot", int64(h.Target))
	godot.DictionarySet(d, "accepted", h.Accepted)
	godot.DictionarySet(d, "reason", h.Reason)
	godot.DictionarySet(d, "damage", int64(h.Damage))
	godot.DictionarySet(d, "health", int64(h.Health))
	godot.DictionarySet(d, "killed", h.Killed)
	godot.DictionarySet(d, "kills", int64(h.Kills))
	godot.DictionarySet(d, "deaths", int64(h.Deaths))
	godot.DictionarySet(d, "rewind", seconds(protocol.DurationUS(h.RewindUS)))
	godot.DictionarySet(d, "miss_by", h.MissBy)
	return d
}

// sendEvent converts args and hands the event to the model; a refusal
// comes back as room_error, like every other request.
func (n *NetRoom) sendEvent(name string, args godot.Array, to int) {
	vals, err := argsFromArray(args, 1)
	if err != nil {
		_ = n.model.RefuseEvent(name, err) // reported through room_error
		return
	}
	_ = n.model.SendEvent(name, vals, to)
}

// emitGameEvent emits event_received or chat_received for e.
func (n *NetRoom) emitGameEvent(e *netroom.Event) error {
	switch e.Kind {
	case netroom.EventChat:
		return sigChatReceived.Emit(n, int64(e.Slot), e.Text)
	case netroom.EventHit:
		d := hitDict(e.Hit)
		defer d.Destroy()
		return sigHitResult.Emit(n, d)
	case netroom.EventProp:
		n.applyProp(e) // synced.go
		return nil
	}
	a := arrayOf(e.Args)
	defer a.Destroy()
	return sigEventReceived.Emit(n, int64(e.Slot), e.Text, a)
}

// argsFromArray converts an Array of Variants to netroom event values.
func argsFromArray(a godot.Array, depth int) ([]any, error) {
	out := make([]any, 0, a.Len())
	for i := range a.Len() {
		v, _ := a.At(i)
		x, err := argFromVariant(v, depth)
		v.Destroy()
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, x)
	}
	return out, nil
}

// argFromVariant converts one Variant: null, bool, int, float, String,
// StringName, Vector2/3 (as arrays of floats), Color (as [r, g, b, a]),
// Array, and Dictionary with String keys. Anything else (objects,
// callables, packed arrays...) is refused naming its type.
func argFromVariant(v godot.Variant, depth int) (any, error) {
	if depth > netroom.MaxArgDepth {
		return nil, fmt.Errorf("%w: nested more than %d deep", netroom.ErrBadArg, netroom.MaxArgDepth)
	}
	switch v.Type() {
	case godot.TypeNil:
		return nil, nil
	case godot.TypeBool:
		b, _ := godot.VariantAs[bool](v)
		return b, nil
	case godot.TypeInt:
		i, _ := godot.VariantAs[int64](v)
		return i, nil
	case godot.TypeFloat:
		f, _ := godot.VariantAs[float64](v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: %v is not finite", netroom.ErrBadArg, f)
		}
		return f, nil
	case godot.TypeString, godot.TypeStringName:
		s, _ := godot.VariantAs[string](v)
		return s, nil
	case godot.TypeVector2:
		p, _ := godot.VariantAs[godot.Vector2](v)
		return []float32{p.X, p.Y}, nil
	case godot.TypeVector3:
		p, _ := godot.VariantAs[godot.Vector3](v)
		return []float32{p.X, p.Y, p.Z}, nil
	case godot.TypeColor:
		c, _ := godot.VariantAs[godot.Color](v)
		return []float32{c.R, c.G, c.B, c.A}, nil
	case godot.TypeArray:
		a, _ := godot.VariantAs[godot.Array](v)
		defer a.Destroy()
		return argsFromArray(a, depth+1)
	case godot.TypeDictionary:
		d, _ := godot.VariantAs[godot.Dictionary](v)
		defer d.Destroy()
		keys := d.Keys()
		defer keys.Destroy()
		m := make(map[string]any, keys.Len())
		for i := range keys.Len() {
			k, _ := keys.At(i)
			if k.Type() != godot.TypeString && k.Type() != godot.TypeStringName {
				err := fmt.Errorf("%w: dictionary key of type %s (only String keys)", netroom.ErrBadArg, k.Type())
				k.Destroy()
				return nil, err
			}
			ks, _ := godot.VariantAs[string](k)
			e, _ := d.Get(k)
			k.Destroy()
			x, err := argFromVariant(e, depth+1)
			e.Destroy()
			if err != nil {
				return nil, fmt.Errorf("[%q]: %w", ks, err)
			}
			m[ks] = x
		}
		return m, nil
	}
	return nil, fmt.Errorf("%w: %s (events carry null, bool, int, float, String, Vector2/3, Color, Array and Dictionary with String keys)",
		netroom.ErrBadArg, v.Type())
}

// arrayOf converts decoded event values back to an Array (Destroy it).
func arrayOf(vals []any) godot.Array {
	a := godot.NewArray()
	for _, x := range vals {
		v := variantOf(x)
		a.Append(v)
		v.Destroy()
	}
	return a
}

// variantOf converts one decoded value (netroom.DecodeArgs) to a Variant.
func variantOf(x any) godot.Variant {
	switch x := x.(type) {
	case bool:
		return godot.NewVariant(x)
	case int64:
		return godot.NewVariant(x)
	case float64:
		return godot.NewVariant(x)
	case string:
		return godot.NewVariant(x)
	case []any:
		a := arrayOf(x)
		v := godot.NewVariant(a)
		a.Destroy()
		return v
	case map[string]any:
		d := godot.NewDictionary()
		for k, e := range x {
			ev := variantOf(e)
			godot.DictionarySet(d, k, ev)
			ev.Destroy()
		}
		v := godot.NewVariant(d)
		d.Destroy()
		return v
	}
	return godot.Variant{}
}
