package netroom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// ErrBadArg indicates an event argument of a type events cannot carry
// (only null, bool, integers, finite floats, strings, arrays and
// string-keyed maps of those), or nested too deep.
var ErrBadArg = errors.New("netroom: event argument not carried")

// MaxArgDepth is how deeply event arguments may nest (arrays in arrays):
// the protocol's limit, which the server enforces too.
const MaxArgDepth = protocol.MaxArgDepth

// SendEvent sends a named event with args, reliable and ordered through
// the server, to slot to or to every other player (protocol.ToAll). Args
// hold what EncodeArgs takes. An event the server would refuse for its size
// or name is refused here, with EventError and the error returned; the
// server's rate limit (30 per second, burst 60, by default) comes back as
// EventError with protocol.CodeRateLimited.
func (r *Room) SendEvent(name string, args []any, to int) error {
	raw, err := EncodeArgs(args)
	if err != nil {
		return r.fail(fmt.Errorf("send_event %q: %w", name, err))
	}
	if err := protocol.CheckEvent(name, raw); err != nil {
		return r.fail(fmt.Errorf("send_event: %w", err))
	}
	if to < protocol.ToAll {
		return r.fail(fmt.Errorf("send_event %q: to %d: want a slot or -1 for everyone", name, to))
	}
	return r.sendInRoom(&protocol.Event{Name: name, Args: raw, To: to})
}

// RefuseEvent reports an event whose arguments the caller could not
// convert (the engine glue's Variants) as SendEvent reports its own
// refusals: EventError, and err wrapped.
func (r *Room) RefuseEvent(name string, err error) error {
	return r.fail(fmt.Errorf("send_event %q: %w", name, err))
}

// ReportHit reports that our shot fired at fire (server clock: what
// ServerTime gave for the frame that fired) hit the player in target
// where we drew it, at point (metres; pixels with Z 0 in 2D). The server
// decides (it rebuilds what we drew from what it relayed us, rewinding at
// most 250 ms by default) and answers with EventHit.
func (r *Room) ReportHit(target int, fire time.Duration, point geom.Vec3) error {
	return r.sendInRoom(&protocol.Hit{Target: target, FireUS: protocol.US(fire), Point: [3]float64{point.X, point.Y, point.Z}})
}

// SendChat sends a chat line to every other player (to = protocol.ToAll)
// or one slot. The text is sanitised as the server does
// (protocol.SanitizeChat); empty or over 200 characters is refused here.
func (r *Room) SendChat(text string, to int) error {
	s, err := protocol.SanitizeChat(text)
	if err != nil {
		return r.fail(fmt.Errorf("send_chat: %w", err))
	}
	if to < protocol.ToAll {
		return r.fail(fmt.Errorf("send_chat: to %d: want a slot or -1 for everyone", to))
	}
	return r.sendInRoom(&protocol.Chat{Text: s, To: to})
}

// EncodeArgs encodes event arguments as a JSON array. It takes nil, bool,
// int, int32, int64, float32, float64 (finite), string, []any,
// map[string]any, []float32/[]float64 (vectors), nested at most MaxArgDepth
// deep; anything else fails with ErrBadArg naming its place.
func EncodeArgs(args []any) (json.RawMessage, error) {
	if len(args) == 0 {
		return nil, nil
	}
	for i, a := range args {
		if err := checkArg(a, 1); err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
	}
	b, err := json.Marshal(floatsKept(args))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadArg, err)
	}
	return b, nil
}

func checkArg(a any, depth int) error {
	if depth > MaxArgDepth {
		return fmt.Errorf("%w: nested more than %d deep", ErrBadArg, MaxArgDepth)
	}
	switch v := a.(type) {
	case nil, bool, int, int32, int64, string:
	case float32:
		return checkFloat(float64(v))
	case float64:
		return checkFloat(v)
	case []float32:
		for _, f := range v {
			if err := checkFloat(float64(f)); err != nil {
				return err
			}
		}
	case []float64:
		for _, f := range v {
			if err := checkFloat(f); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := checkArg(e, depth+1); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case map[string]any:
		for k, e := range v {
			if err := checkArg(e, depth+1); err != nil {
				return fmt.Errorf("[%q]: %w", k, err)
			}
		}
	default:
		return fmt.Errorf("%w: %T", ErrBadArg, a)
	}
	return nil
}

// floatsKept returns a copy of a (checked by checkArg) whose floats are
// json.Numbers written with a fraction or exponent ("1.0", not "1"), so
// they decode as floats again: a GDScript float stays a float.
func floatsKept(a any) any {
	switch v := a.(type) {
	case float32:
		return floatNumber(float64(v), 32)
	case float64:
		return floatNumber(v, 64)
	case []float32:
		out := make([]any, len(v))
		for i, f := range v {
			out[i] = floatNumber(float64(f), 32)
		}
		return out
	case []float64:
		out := make([]any, len(v))
		for i, f := range v {
			out[i] = floatNumber(f, 64)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = floatsKept(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = floatsKept(e)
		}
		return out
	}
	return a
}

func floatNumber(f float64, bits int) json.Number {
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return json.Number(s)
}

func checkFloat(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%w: %v is not finite", ErrBadArg, f)
	}
	return nil
}

// DecodeArgs decodes an event's JSON array of arguments: numbers written
// without a fraction or exponent that fit come back as int64, the rest as
// float64 (EncodeArgs writes every float with one, so types survive); arrays as []any, objects as map[string]any. Absent args are an
// empty list.
func DecodeArgs(raw json.RawMessage) ([]any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var out []any
	if err := d.Decode(&out); err != nil {
		return nil, fmt.Errorf("netroom: event args: %w", err)
	}
	for i := range out {
		out[i] = numbers(out[i])
	}
	return out, nil
}

// numbers replaces json.Numbers by int64 or float64.
func numbers(a any) any {
	switch v := a.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case []any:
		for i := range v {
			v[i] = numbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = numbers(v[k])
		}
	}
	return a
}

// applyGameMessage turns a relayed event or chat line into its Event;
// false for another message.
func (r *Room) applyGameMessage(m protocol.Message) bool {
	switch m := m.(type) {
	case *protocol.Event:
		args, err := DecodeArgs(m.Args)
		if err != nil {
			r.emit(errorEvent(fmt.Errorf("event %q from slot %d: %w", m.Name, m.From, err)))
			return true
		}
		r.emit(Event{Kind: EventGameEvent, Slot: m.From, Text: m.Name, Args: args})
	case *protocol.Chat:
		r.emit(Event{Kind: EventChat, Slot: m.From, Text: m.Text})
	case *protocol.Prop:
		r.applyProp(m) // props.go
	case *protocol.HitResult:
		r.emit(Event{Kind: EventHit, Slot: m.Target, Hit: m})
	case *protocol.RoomState:
		r.pruneProps(m)
		return false // the room's own handling follows
	case *protocol.Left:
		r.props = nil
		return false
	default:
		return false
	}
	return true
}
