package room

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/ratelimit"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Defaults of EventLimits.
const (
	DefaultEventRate  = 30.0
	DefaultEventBurst = 60.0
	DefaultEventBytes = protocol.MaxEventSize
	DefaultChatRate   = 2.0
	DefaultChatBurst  = 5.0
	DefaultChatRunes  = protocol.MaxChatRunes
	DefaultChatWidth  = protocol.MaxChatWidth
	DefaultPropRate   = 20.0
	DefaultPropBurst  = 40.0
	DefaultPropKeys   = 32
)

// EventLimits bound what one player may send as events (protocol.Event)
// and chat (protocol.Chat). Each has its own budget, outside the control
// budget (ControlRate), so a game's events do not starve its pings. The
// zero value of every field means its default.
type EventLimits struct {
	// EventRate is how many events one player may send per second, and
	// EventBurst how many at once. Defaults 30 and 60. An event over it is
	// refused with CodeRateLimited (and counts toward AbuseLimit).
	EventRate, EventBurst float64
	// EventBytes is the largest event (name plus args JSON), at most
	// protocol.MaxEventSize. Default 4 KiB. A larger one is refused with
	// CodeBadRequest.
	EventBytes int
	// ChatRate is how many chat lines one player may send per second, and
	// ChatBurst how many at once. Defaults 2 and 5.
	ChatRate, ChatBurst float64
	// ChatRunes is the longest chat line in characters after
	// protocol.SanitizeChat, at most protocol.MaxChatRunes. Default 200.
	ChatRunes int
	// ChatWidth is the widest chat line in protocol.ChatWidth columns (a
	// per-character cost: 2 for CJK, 10 for U+FDFD), at most
	// protocol.MaxChatWidth. Default 400.
	ChatWidth int
	// PropRate is how many synced property changes (protocol.Prop) one
	// player may send per second, and PropBurst how many at once.
	// Defaults 20 and 40 (a client sends each entity's changes at most
	// 10 times a second, merged).
	PropRate, PropBurst float64
	// PropKeys is how many property keys the server keeps per player for
	// late joiners, each value at most protocol.MaxPropValue. Default 32;
	// a new key past it is refused with CodeBadRequest.
	PropKeys int
}

func (l EventLimits) withDefaults() EventLimits {
	setDefault(&l.EventRate, DefaultEventRate)
	setDefault(&l.EventBurst, DefaultEventBurst)
	setDefault(&l.EventBytes, DefaultEventBytes)
	setDefault(&l.ChatRate, DefaultChatRate)
	setDefault(&l.ChatBurst, DefaultChatBurst)
	setDefault(&l.ChatRunes, DefaultChatRunes)
	setDefault(&l.ChatWidth, DefaultChatWidth)
	setDefault(&l.PropRate, DefaultPropRate)
	setDefault(&l.PropBurst, DefaultPropBurst)
	setDefault(&l.PropKeys, DefaultPropKeys)
	return l
}

func (l EventLimits) validate() error {
	switch {
	case l.EventRate <= 0 || l.EventBurst < 1 || l.ChatRate <= 0 || l.ChatBurst < 1:
		return fmt.Errorf("EventRate %v, EventBurst %v, ChatRate %v, ChatBurst %v: need positive rates and bursts of at least 1",
			l.EventRate, l.EventBurst, l.ChatRate, l.ChatBurst)
	case l.PropRate <= 0 || l.PropBurst < 1 || l.PropKeys < 1:
		return fmt.Errorf("PropRate %v, PropBurst %v, PropKeys %d: need a positive rate, a burst and keys of at least 1", l.PropRate, l.PropBurst, l.PropKeys)
	case l.EventBytes < 1 || l.EventBytes > protocol.MaxEventSize:
		return fmt.Errorf("EventBytes %d outside 1..%d", l.EventBytes, protocol.MaxEventSize)
	case l.ChatRunes < 1 || l.ChatRunes > protocol.MaxChatRunes:
		return fmt.Errorf("ChatRunes %d outside 1..%d", l.ChatRunes, protocol.MaxChatRunes)
	case l.ChatWidth < 1 || l.ChatWidth > protocol.MaxChatWidth:
		return fmt.Errorf("ChatWidth %d outside 1..%d", l.ChatWidth, protocol.MaxChatWidth)
	}
	return nil
}

// eventBudget is one player's event, chat and property buckets, and the
// synced properties kept for late joiners.
type eventBudget struct {
	events, chat, props bucket
	set                 bool // the buckets were filled
	kept                map[propKey]json.RawMessage
	order               []propKey // kept's keys in first-set order, for a stable replay
	hit                 hitSeat   // hits.go
}

// propKey names one synced property of one of a player's entities.
type propKey struct {
	entity int
	key    string
}

func (b *eventBudget) fill(now time.Duration, l *EventLimits) {
	if !b.set {
		b.events, b.chat = ratelimit.Full(now, l.EventBurst), ratelimit.Full(now, l.ChatBurst)
		b.props, b.set = ratelimit.Full(now, l.PropBurst), true
	}
}

// ownBudget reports whether a control frame is of a type with its own
// budget (events, chat, props, hits, spawns, claims), which the control
// budget leaves alone.
func ownBudget(frame []byte) bool {
	if len(frame) < wire.ControlHeaderSize {
		return false
	}
	switch wire.ControlType(frame[3]) {
	case protocol.TypeEvent, protocol.TypeChat, protocol.TypeProp, protocol.TypeHit, protocol.TypeSpawn, protocol.TypeClaim:
		return true
	}
	return false
}

// recipients returns the seats a message with To goes to: every other
// connected player for protocol.ToAll, else the one in slot to, which
// must be another connected player.
func (r *Room) recipients(s *seat, to int) ([]*seat, *protocol.Error) {
	if to == protocol.ToAll {
		out := r.scratch[:0]
		for _, o := range r.seats {
			if o != nil && o != s && o.peer != nil {
				out = append(out, o)
			}
		}
		r.scratch = out
		return out, nil
	}
	o := r.seatAt(to)
	if o == nil || o == s || o.peer == nil {
		return nil, protocol.Errorf(protocol.CodeBadRequest, "no other connected player in slot %d", to)
	}
	r.scratch = append(r.scratch[:0], o)
	return r.scratch, nil
}

// relayEvent checks one event against the sender's limits and relays it.
func (r *Room) relayEvent(now time.Duration, s *seat, m *protocol.Event) *protocol.Error {
	l := &r.cfg.Events
	if n := m.Size(); n > l.EventBytes {
		return protocol.Errorf(protocol.CodeBadRequest, "event %q is %d bytes, at most %d", m.Name, n, l.EventBytes)
	}
	to, e := r.recipients(s, m.To)
	if e != nil {
		return e
	}
	s.ev.fill(now, l)
	if !s.ev.events.Take(now, l.EventRate, l.EventBurst) {
		r.rejectControl(now, s, RejectControlRate, protocol.Errorf(protocol.CodeRateLimited,
			"event %q refused: more than %.0f events per second (burst %.0f)", m.Name, l.EventRate, l.EventBurst))
		return nil
	}
	r.relayTo(now, s, to, &protocol.Event{Name: m.Name, Args: m.Args, To: m.To, From: s.slot})
	return nil
}

// relayChat sanitises one chat line, checks it against the sender's
// limits and relays it.
func (r *Room) relayChat(now time.Duration, s *seat, m *protocol.Chat) *protocol.Error {
	l := &r.cfg.Events
	text, err := protocol.SanitizeChat(m.Text)
	if err != nil {
		return protocol.Errorf(protocol.CodeBadRequest, "chat refused: %v", err)
	}
	if n := len([]rune(text)); n > l.ChatRunes {
		return protocol.Errorf(protocol.CodeBadRequest, "chat refused: %d characters, at most %d", n, l.ChatRunes)
	}
	if w := protocol.ChatWidth(text); w > l.ChatWidth {
		return protocol.Errorf(protocol.CodeBadRequest, "chat refused: %d columns wide, at most %d", w, l.ChatWidth)
	}
	to, e := r.recipients(s, m.To)
	if e != nil {
		return e
	}
	s.ev.fill(now, l)
	if !s.ev.chat.Take(now, l.ChatRate, l.ChatBurst) {
		r.rejectControl(now, s, RejectControlRate, protocol.Errorf(protocol.CodeRateLimited,
			"chat refused: more than %.0f lines per second (burst %.0f)", l.ChatRate, l.ChatBurst))
		return nil
	}
	r.relayTo(now, s, to, &protocol.Chat{Text: text, To: m.To, From: s.slot})
	return nil
}

// sendTo encodes m once and sends it to every seat in to.
func (r *Room) sendTo(to []*seat, m protocol.Message) {
	b, ok := r.encode(m)
	if !ok {
		return
	}
	for _, o := range to {
		o.peer.Send(b, true)
	}
}

// setProp keeps one synced property of the sender's entity and relays it
// to every other connected player.
func (r *Room) setProp(now time.Duration, s *seat, m *protocol.Prop) *protocol.Error {
	l := &r.cfg.Events
	k := propKey{m.Entity, m.Key}
	_, known := s.ev.kept[k]
	if !known && len(s.ev.kept) >= l.PropKeys {
		return protocol.Errorf(protocol.CodeBadRequest, "synced property %q refused: more than %d keys", m.Key, l.PropKeys)
	}
	s.ev.fill(now, l)
	if !s.ev.props.Take(now, l.PropRate, l.PropBurst) {
		r.rejectControl(now, s, RejectControlRate, protocol.Errorf(protocol.CodeRateLimited,
			"synced property %q refused: more than %.0f changes per second (burst %.0f)", m.Key, l.PropRate, l.PropBurst))
		return nil
	}
	if s.ev.kept == nil {
		s.ev.kept = map[propKey]json.RawMessage{}
	}
	if !known {
		s.ev.order = append(s.ev.order, k)
	}
	// A copy: the decoded message's bytes are the sender's to reuse.
	s.ev.kept[k] = append(json.RawMessage(nil), m.Value...)
	to, _ := r.recipients(s, protocol.ToAll)
	r.relayTo(now, s, to, &protocol.Prop{Slot: s.slot, Entity: m.Entity, Key: m.Key, Value: m.Value})
	return nil
}

// sendProps sends a player who just joined (or came back) every synced
// property the others' entities have, in the order they were first set.
func (r *Room) sendProps(s *seat) {
	if r.cfg.Hits.On {
		r.forgetSlot(s.slot) // what was sent from this slot's last occupant
	}
	for _, o := range r.seats {
		if o == nil || o == s || s.peer == nil {
			continue
		}
		for _, k := range o.ev.order {
			r.send(s.peer, &protocol.Prop{Slot: o.slot, Entity: k.entity, Key: k.key, Value: o.ev.kept[k]})
		}
	}
}
