package main

import (
	"fmt"
	"math"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/typedargs"
)

// NetRoom's events (the @rpc stand-in) and chat: methods, signals and the
// conversion of event arguments between Variants and their typed JSON (netcode/typedargs).

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
	godot.Method2(c, "send_event_all", func(n *NetRoom, name string, args godot.Array) {
		if vals, ok := n.eventArgs(name, args); ok {
			_ = n.model.SendEventAll(name, vals)
		}
	}, "name", "args")
	godot.Method2(c, "send_event_to_host", func(n *NetRoom, name string, args godot.Array) {
		if vals, ok := n.eventArgs(name, args); ok {
			_ = n.model.SendEventToHost(name, vals)
		}
	}, "name", "args")
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
	if vals, ok := n.eventArgs(name, args); ok {
		_ = n.model.SendEvent(name, vals, to)
	}
}

// eventArgs converts an event's args; false when refused (reported
// through room_error).
func (n *NetRoom) eventArgs(name string, args godot.Array) ([]any, bool) {
	vals, err := argsFromArray(args, 1)
	if err != nil {
		_ = n.model.RefuseEvent(name, err)
		return nil, false
	}
	return vals, true
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

// argsFromArray converts an Array of Variants to typedargs values.
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

// argFromVariant converts one Variant to the typedargs value of the same
// Godot type (typedargs.Encode lists them): null, bool, int, float,
// String, StringName, the math types, Array, Dictionary with int, String
// or StringName keys, and the packed arrays but PackedColorArray and
// PackedVector4Array. Anything else (objects, callables, NodePath...) is
// refused naming its type.
func argFromVariant(v godot.Variant, depth int) (any, error) {
	if depth > typedargs.MaxDepth {
		return nil, fmt.Errorf("%w: nested more than %d deep", typedargs.ErrBadArg, typedargs.MaxDepth)
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
			return nil, fmt.Errorf("%w: %v is not finite", typedargs.ErrBadArg, f)
		}
		return f, nil
	case godot.TypeString:
		s, _ := godot.VariantAs[string](v)
		return s, nil
	case godot.TypeStringName:
		return typedargs.StringName(stringNameOf(v)), nil
	case godot.TypeVector2:
		p, _ := godot.VariantAs[godot.Vector2](v)
		return typedargs.Vector2{p.X, p.Y}, nil
	case godot.TypeVector2i:
		p, _ := godot.VariantAs[godot.Vector2i](v)
		return typedargs.Vector2i{p.X, p.Y}, nil
	case godot.TypeVector3:
		p, _ := godot.VariantAs[godot.Vector3](v)
		return typedargs.Vector3{p.X, p.Y, p.Z}, nil
	case godot.TypeVector3i:
		p, _ := godot.VariantAs[godot.Vector3i](v)
		return typedargs.Vector3i{p.X, p.Y, p.Z}, nil
	case godot.TypeVector4:
		p, _ := godot.VariantAs[godot.Vector4](v)
		return typedargs.Vector4{p.X, p.Y, p.Z, p.W}, nil
	case godot.TypeColor:
		c, _ := godot.VariantAs[godot.Color](v)
		return typedargs.Color{c.R, c.G, c.B, c.A}, nil
	case godot.TypeQuaternion:
		q, _ := godot.VariantAs[godot.Quaternion](v)
		return typedargs.Quaternion{q.X, q.Y, q.Z, q.W}, nil
	case godot.TypeRect2:
		r, _ := godot.VariantAs[godot.Rect2](v)
		return typedargs.Rect2{r.Position.X, r.Position.Y, r.Size.X, r.Size.Y}, nil
	case godot.TypeBasis:
		b, _ := godot.VariantAs[godot.Basis](v)
		return typedargs.Basis(basisNumbers(b)), nil
	case godot.TypeTransform2D:
		t, _ := godot.VariantAs[godot.Transform2D](v)
		return typedargs.Transform2D{t.X.X, t.X.Y, t.Y.X, t.Y.Y, t.Origin.X, t.Origin.Y}, nil
	case godot.TypeTransform3D:
		t, _ := godot.VariantAs[godot.Transform3D](v)
		var out typedargs.Transform3D
		b := basisNumbers(t.Basis)
		copy(out[:], b[:])
		out[9], out[10], out[11] = t.Origin.X, t.Origin.Y, t.Origin.Z
		return out, nil
	case godot.TypePackedByteArray:
		b, _ := godot.VariantAs[[]byte](v)
		if b == nil {
			b = []byte{}
		}
		return b, nil
	case godot.TypePackedInt32Array, godot.TypePackedInt64Array, godot.TypePackedFloat32Array,
		godot.TypePackedFloat64Array, godot.TypePackedVector2Array, godot.TypePackedVector3Array,
		godot.TypePackedStringArray:
		return packedFromVariant(v)
	case godot.TypeArray:
		a, _ := godot.VariantAs[godot.Array](v)
		defer a.Destroy()
		return argsFromArray(a, depth+1)
	case godot.TypeDictionary:
		return dictFromVariant(v, depth)
	}
	return nil, fmt.Errorf("%w: %s (events carry null, bool, int, float, String, StringName, Vector2/2i/3/3i/4, Color, "+
		"Quaternion, Rect2, Basis, Transform2D/3D, Array, Dictionary with int or String keys and the packed arrays "+
		"of bytes, ints, floats, strings and Vector2/3)", typedargs.ErrBadArg, v.Type())
}

// stringNameOf returns the text of a StringName Variant.
func stringNameOf(v godot.Variant) string {
	n, _ := godot.VariantAs[godot.StringName](v)
	defer n.Destroy()
	return n.String()
}

// basisNumbers returns b's rows, row after row.
func basisNumbers(b godot.Basis) [9]float32 {
	var out [9]float32
	for r, row := range b.Rows {
		out[3*r], out[3*r+1], out[3*r+2] = row.X, row.Y, row.Z
	}
	return out
}

// basisOf is basisNumbers's inverse.
func basisOf(n []float32) godot.Basis {
	var b godot.Basis
	for r := range b.Rows {
		b.Rows[r] = godot.Vector3{X: n[3*r], Y: n[3*r+1], Z: n[3*r+2]}
	}
	return b
}

// packedFromVariant converts a packed array other than bytes through an
// Array of its elements: the engine converts packed arrays to and from
// Arrays, so the bindings need no accessor per packed type.
func packedFromVariant(v godot.Variant) (any, error) {
	t := v.Type()
	av, ok := v.Convert(godot.TypeArray)
	if !ok {
		return nil, fmt.Errorf("%w: %s not converted to an Array", typedargs.ErrBadArg, t)
	}
	defer av.Destroy()
	a, _ := godot.VariantAs[godot.Array](av)
	defer a.Destroy()
	switch t {
	case godot.TypePackedInt32Array:
		return elements(a, func(x int64) int32 { return int32(x) }), nil
	case godot.TypePackedInt64Array:
		return elements(a, func(x int64) int64 { return x }), nil
	case godot.TypePackedFloat32Array:
		return elements(a, func(x float32) float32 { return x }), nil
	case godot.TypePackedFloat64Array:
		return elements(a, func(x float64) float64 { return x }), nil
	case godot.TypePackedVector2Array:
		return typedargs.PackedVector2Array(elements(a, func(p godot.Vector2) typedargs.Vector2 {
			return typedargs.Vector2{p.X, p.Y}
		})), nil
	case godot.TypePackedVector3Array:
		return typedargs.PackedVector3Array(elements(a, func(p godot.Vector3) typedargs.Vector3 {
			return typedargs.Vector3{p.X, p.Y, p.Z}
		})), nil
	}
	return elements(a, func(s string) string { return s }), nil
}

// elements reads every element of a as E and converts it with conv (an
// element of another type reads as E's zero value).
func elements[E godot.Convertible, T any](a godot.Array, conv func(E) T) []T {
	out := make([]T, a.Len())
	for i := range out {
		e, _ := godot.ArrayAt[E](a, i)
		out[i] = conv(e)
	}
	return out
}

// dictFromVariant converts a Dictionary, in its order, keeping int, String
// and StringName keys apart.
func dictFromVariant(v godot.Variant, depth int) (any, error) {
	d, _ := godot.VariantAs[godot.Dictionary](v)
	defer d.Destroy()
	keys := d.Keys()
	defer keys.Destroy()
	out := make(typedargs.Dict, 0, keys.Len())
	for i := range keys.Len() {
		k, _ := keys.At(i)
		var key any
		switch k.Type() {
		case godot.TypeString:
			key, _ = godot.VariantAs[string](k)
		case godot.TypeStringName:
			key = typedargs.StringName(stringNameOf(k))
		case godot.TypeInt:
			key, _ = godot.VariantAs[int64](k)
		default:
			err := fmt.Errorf("%w: dictionary key of type %s (only int, String and StringName keys)", typedargs.ErrBadArg, k.Type())
			k.Destroy()
			return nil, err
		}
		e, _ := d.Get(k)
		k.Destroy()
		x, err := argFromVariant(e, depth+1)
		e.Destroy()
		if err != nil {
			return nil, fmt.Errorf("[%v]: %w", key, err)
		}
		out = append(out, typedargs.KeyValue{Key: key, Value: x})
	}
	return out, nil
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

// variantOf converts one decoded value (typedargs.Decode) to a Variant
// of the type it left as.
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
	case typedargs.StringName:
		n := godot.NewStringName(string(x))
		defer n.Destroy()
		return godot.NewVariant(n)
	case typedargs.Vector2:
		return godot.NewVariant(godot.Vector2{X: x[0], Y: x[1]})
	case typedargs.Vector2i:
		return godot.NewVariant(godot.Vector2i{X: x[0], Y: x[1]})
	case typedargs.Vector3:
		return godot.NewVariant(godot.Vector3{X: x[0], Y: x[1], Z: x[2]})
	case typedargs.Vector3i:
		return godot.NewVariant(godot.Vector3i{X: x[0], Y: x[1], Z: x[2]})
	case typedargs.Vector4:
		return godot.NewVariant(godot.Vector4{X: x[0], Y: x[1], Z: x[2], W: x[3]})
	case typedargs.Color:
		return godot.NewVariant(godot.Color{R: x[0], G: x[1], B: x[2], A: x[3]})
	case typedargs.Quaternion:
		return godot.NewVariant(godot.Quaternion{X: x[0], Y: x[1], Z: x[2], W: x[3]})
	case typedargs.Rect2:
		return godot.NewVariant(godot.Rect2{Position: godot.Vector2{X: x[0], Y: x[1]}, Size: godot.Vector2{X: x[2], Y: x[3]}})
	case typedargs.Basis:
		return godot.NewVariant(basisOf(x[:]))
	case typedargs.Transform2D:
		return godot.NewVariant(godot.Transform2D{X: godot.Vector2{X: x[0], Y: x[1]}, Y: godot.Vector2{X: x[2], Y: x[3]},
			Origin: godot.Vector2{X: x[4], Y: x[5]}})
	case typedargs.Transform3D:
		return godot.NewVariant(godot.Transform3D{Basis: basisOf(x[:9]), Origin: godot.Vector3{X: x[9], Y: x[10], Z: x[11]}})
	case []byte:
		return godot.NewVariant(x)
	case []int32:
		return packedVariant(godot.TypePackedInt32Array, len(x), func(i int) godot.Variant { return godot.NewVariant(int64(x[i])) })
	case []int64:
		return packedVariant(godot.TypePackedInt64Array, len(x), func(i int) godot.Variant { return godot.NewVariant(x[i]) })
	case []float32:
		return packedVariant(godot.TypePackedFloat32Array, len(x), func(i int) godot.Variant { return godot.NewVariant(float64(x[i])) })
	case []float64:
		return packedVariant(godot.TypePackedFloat64Array, len(x), func(i int) godot.Variant { return godot.NewVariant(x[i]) })
	case typedargs.PackedVector2Array:
		return packedVariant(godot.TypePackedVector2Array, len(x), func(i int) godot.Variant {
			return godot.NewVariant(godot.Vector2{X: x[i][0], Y: x[i][1]})
		})
	case typedargs.PackedVector3Array:
		return packedVariant(godot.TypePackedVector3Array, len(x), func(i int) godot.Variant {
			return godot.NewVariant(godot.Vector3{X: x[i][0], Y: x[i][1], Z: x[i][2]})
		})
	case []string:
		return packedVariant(godot.TypePackedStringArray, len(x), func(i int) godot.Variant { return godot.NewVariant(x[i]) })
	case []any:
		a := arrayOf(x)
		v := godot.NewVariant(a)
		a.Destroy()
		return v
	case typedargs.Dict:
		d := godot.NewDictionary()
		for _, kv := range x {
			k, ev := variantOf(kv.Key), variantOf(kv.Value)
			d.Set(k, ev)
			k.Destroy()
			ev.Destroy()
		}
		v := godot.NewVariant(d)
		d.Destroy()
		return v
	}
	return godot.Variant{}
}

// packedVariant builds a packed array of type t from n elements through
// an Array (see packedFromVariant); Nil if the engine refuses.
func packedVariant(t godot.VariantType, n int, elem func(i int) godot.Variant) godot.Variant {
	a := godot.NewArray()
	defer a.Destroy()
	for i := range n {
		e := elem(i)
		a.Append(e)
		e.Destroy()
	}
	av := godot.NewVariant(a)
	defer av.Destroy()
	p, _ := av.Convert(t)
	return p
}
