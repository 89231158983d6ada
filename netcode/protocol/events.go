package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nearzero/nearzero/netcode/wire"
)

// Game messages: events (the @rpc stand-in) and chat. Both go either way:
// a client sends one with To; the server relays it with From set.
const (
	TypeEvent wire.ControlType = 18
	TypeChat  wire.ControlType = 19
)

// Limits of events and chat that every build enforces; a server may set
// tighter ones (room.EventLimits).
const (
	// MaxEventSize is the largest event in bytes: its name plus its args
	// as JSON.
	MaxEventSize = 4 << 10
	// MaxEventName is the longest event name in bytes.
	MaxEventName = 64
	// MaxChatRunes is the longest chat text in characters, after
	// SanitizeChat.
	MaxChatRunes = 200
	// MaxChatWidth is the widest chat text, after SanitizeChat, in
	// ChatWidth's columns: room for MaxChatRunes wide (CJK) characters,
	// while characters that render many columns wide (U+FDFD) cost that
	// many.
	MaxChatWidth = 2 * MaxChatRunes
	// MaxChatMarks is how many combining marks SanitizeChat keeps on one
	// character (more are dropped): enough for stacked diacritics (Thai,
	// Vietnamese, Hebrew points), not for a tower over the chat box.
	MaxChatMarks = 4
	// ToAll is the To of an event or chat line for every other player.
	ToAll = -1
	// MaxArgDepth is how deeply arrays and objects may nest inside event
	// and spawn args (the args array itself not counted) and in a synced
	// property value (itself counted): an argument is at depth 1. Clients
	// refuse deeper values when sending and the server refuses them
	// too, since a receiver's JSON decoder recurses once per level.
	MaxArgDepth = 16
)

var (
	// ErrEventTooBig indicates an event over MaxEventSize (or the room's
	// limit).
	ErrEventTooBig = errors.New("protocol: event too big")
	// ErrBadEvent indicates an event name outside the rules or args that
	// are not a JSON array.
	ErrBadEvent = errors.New("protocol: bad event")
	// ErrBadChat indicates chat text that is empty after SanitizeChat or
	// longer than MaxChatRunes.
	ErrBadChat = errors.New("protocol: bad chat text")
)

// Event is a named game event with arguments, reliable and ordered
// through the server: what Godot games do with @rpc. The sender sets To
// (a slot, or ToAll for every other player); the server relays it with
// From set to the sender's slot and To as sent. Args is a JSON array.
type Event struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
	To   int             `json:"to"`
	From int             `json:"from"`
}

// Chat is one chat line; the server sanitises Text (SanitizeChat) and
// relays it to every other player (or To alone) with From set.
type Chat struct {
	Text string `json:"text"`
	To   int    `json:"to"`
	From int    `json:"from"`
}

// Type implements Message.
func (*Event) Type() wire.ControlType { return TypeEvent }

// Type implements Message.
func (*Chat) Type() wire.ControlType { return TypeChat }

func init() {
	registry[TypeEvent] = entry{"event", func() Message { return new(Event) }}
	registry[TypeChat] = entry{"chat", func() Message { return new(Chat) }}
}

// Size is the event's size as the limits count it: name plus args bytes.
func (m *Event) Size() int { return len(m.Name) + len(m.Args) }

// CheckEvent checks an event's name and args against the rules: a name of
// 1 to MaxEventName bytes of printable UTF-8, args absent or a JSON array
// nesting at most MaxArgDepth levels inside it, and at most MaxEventSize
// bytes in all.
func CheckEvent(name string, args json.RawMessage) error {
	if n := len(name) + len(args); n > MaxEventSize {
		return fmt.Errorf("%w: event %.32q is %d bytes, at most %d", ErrEventTooBig, name, n, MaxEventSize)
	}
	if name == "" || len(name) > MaxEventName || !utf8.ValidString(name) {
		return fmt.Errorf("%w: name must be 1 to %d bytes of UTF-8", ErrBadEvent, MaxEventName)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: name %q has a control character", ErrBadEvent, name)
		}
	}
	if len(args) > 0 {
		a := strings.TrimLeft(string(args), " \t\r\n")
		if a == "" || a[0] != '[' || !json.Valid(args) {
			return fmt.Errorf("%w: args of %q are not a JSON array", ErrBadEvent, name)
		}
		if d := ArgDepth(args) - 1; d > MaxArgDepth {
			return fmt.Errorf("%w: args of %q nest %d deep, at most %d", ErrBadEvent, name, d, MaxArgDepth)
		}
	}
	return nil
}

// ArgDepth returns how deeply arrays and objects nest in the JSON text
// raw: 0 for a scalar, 1 for [1,2], 2 for [[1]]. Brackets inside strings
// do not count. It does not check that raw is valid JSON.
func ArgDepth(raw []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

func (m *Event) validate() error {
	if m.To < ToAll {
		return fmt.Errorf("to %d below %d", m.To, ToAll)
	}
	return CheckEvent(m.Name, m.Args)
}

func (m *Chat) validate() error {
	if m.To < ToAll {
		return fmt.Errorf("to %d below %d", m.To, ToAll)
	}
	// Bytes first, so a huge body costs no rune walk; 4 bytes per rune at most.
	if len(m.Text) > 4*MaxChatRunes+64 {
		return fmt.Errorf("%w: %d bytes", ErrBadChat, len(m.Text))
	}
	return nil
}

// SanitizeChat returns chat text as it is shown: control and format
// characters (bidi overrides, zero-width joiners...), invisible fillers
// (Hangul fillers and the other default-ignorable code points, the blank
// braille pattern: Invisible) and invalid UTF-8 dropped; newlines, tabs
// and line and paragraph separators made spaces; combining marks past
// MaxChatMarks on one character dropped; spaces trimmed. It fails with ErrBadChat when nothing is left,
// or more than MaxChatRunes characters or MaxChatWidth columns
// (ChatWidth) are.
func SanitizeChat(text string) (string, error) {
	var b strings.Builder
	marks := 0 // combining marks on the current character
	for _, r := range text {
		switch {
		case r == '\n' || r == '\t' || unicode.In(r, unicode.Zl, unicode.Zp):
			b.WriteByte(' ')
			marks = 0
			continue
		case r == utf8.RuneError || unicode.IsControl(r) || Invisible(r):
			continue
		case unicode.In(r, unicode.Mn, unicode.Me):
			if marks++; marks > MaxChatMarks {
				continue
			}
		default:
			marks = 0
		}
		b.WriteRune(r)
	}
	s := strings.TrimSpace(b.String())
	switch {
	case s == "":
		return "", fmt.Errorf("%w: empty", ErrBadChat)
	case utf8.RuneCountInString(s) > MaxChatRunes:
		return "", fmt.Errorf("%w: %d characters, at most %d", ErrBadChat, utf8.RuneCountInString(s), MaxChatRunes)
	}
	if w := ChatWidth(s); w > MaxChatWidth {
		return "", fmt.Errorf("%w: %d columns wide, at most %d", ErrBadChat, w, MaxChatWidth)
	}
	return s, nil
}

// ChatWidth is how wide text renders, roughly, in columns of a Latin
// letter: combining marks 0, East Asian wide characters and emoji 2,
// characters known to render far wider (Arabic ligatures such as U+FDFD,
// cuneiform) their rough width, anything else 1.
func ChatWidth(text string) int {
	w := 0
	for _, r := range text {
		w += runeWidth(r)
	}
	return w
}

func runeWidth(r rune) int {
	switch {
	case r == 0xFDFD: // ARABIC LIGATURE BISMILLAH AR-RAHMAN AR-RAHEEM: a whole phrase
		return 10
	case r == 0xFDFA || r == 0xFDFB: // two more phrase ligatures
		return 8
	case r == 0x2E3B: // three-em dash
		return 3
	case r >= 0x12000 && r <= 0x1254F: // cuneiform signs: up to several columns
		return 3
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	case unicode.In(r, unicode.Han, unicode.Hangul, unicode.Hiragana, unicode.Katakana),
		r >= 0xFF01 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6, // fullwidth forms
		r >= 0x1F300 && r <= 0x1FAFF, // emoji
		r == 0x3000:
		return 2
	}
	return 1
}
