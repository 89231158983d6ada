package netroom

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/typedargs"
)

// SendEvent sends a named event with args, reliable and ordered through
// the server, to slot to or to every other player (protocol.ToAll). Args
// hold what typedargs.Encode takes. When to is our own slot the event is not
// sent: it comes back here (see SendEventAll). An event the server would
// refuse for its size or name is refused here, with EventError and the
// error returned; the server's rate limit (30 per second, burst 60, by
// default) comes back as EventError with protocol.CodeRateLimited.
func (r *Room) SendEvent(name string, args []any, to int) error {
	raw, err := r.checkEvent(name, args, to)
	if err != nil {
		return err
	}
	if to == r.slot && r.inRoom {
		return r.deliverLocal(name, raw)
	}
	return r.sendInRoom(&protocol.Event{Name: name, Args: raw, To: to})
}

// SendEventAll sends the event to every other player and runs it here
// too, what @rpc("call_local") does: EventGameEvent from our own slot at
// the next Update (not during this call), with args decoded as the others
// get them. Nothing runs here when the send is refused.
func (r *Room) SendEventAll(name string, args []any) error {
	raw, err := r.checkEvent(name, args, protocol.ToAll)
	if err != nil {
		return err
	}
	if err := r.sendInRoom(&protocol.Event{Name: name, Args: raw, To: protocol.ToAll}); err != nil {
		return err
	}
	return r.deliverLocal(name, raw)
}

// SendEventToHost sends the event to the room's host alone (it runs here
// when we are the host): for requests one machine decides.
func (r *Room) SendEventToHost(name string, args []any) error {
	if !r.inRoom {
		return r.fail(fmt.Errorf("send_event_to_host %q: %w", name, ErrNotInRoom))
	}
	return r.SendEvent(name, args, r.room.Host) // the live host, whatever View a handler sees
}

// checkEvent encodes and checks an event as the server will.
func (r *Room) checkEvent(name string, args []any, to int) (json.RawMessage, error) {
	raw, err := typedargs.Encode(args)
	if err != nil {
		return nil, r.fail(fmt.Errorf("send_event %q: %w", name, err))
	}
	if err := protocol.CheckEvent(name, raw); err != nil {
		return nil, r.fail(fmt.Errorf("send_event: %w", err))
	}
	if to < protocol.ToAll {
		return nil, r.fail(fmt.Errorf("send_event %q: to %d: want a slot or -1 for everyone", name, to))
	}
	return raw, nil
}

// deliverLocal queues an event of ours as received from our own slot,
// decoded from the bytes the others get so the types match theirs.
func (r *Room) deliverLocal(name string, raw json.RawMessage) error {
	if !r.inRoom {
		return r.fail(fmt.Errorf("event %q: %w", name, ErrNotInRoom))
	}
	args, err := typedargs.Decode(raw)
	if err != nil {
		return r.fail(fmt.Errorf("event %q: %w", name, err))
	}
	r.emit(Event{Kind: EventGameEvent, Slot: r.slot, Text: name, Args: args})
	return nil
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

// applyGameMessage turns a relayed event or chat line into its Event;
// false for another message.
func (r *Room) applyGameMessage(m protocol.Message) bool {
	switch m := m.(type) {
	case *protocol.Event:
		args, err := typedargs.Decode(m.Args)
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
