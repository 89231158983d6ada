package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nearzero/nearzero/netcode/wire"
)

var (
	// ErrUnknownType indicates a control frame of a type this build does not know.
	ErrUnknownType = errors.New("protocol: unknown control type")
	// ErrBadBody indicates a control body that is not valid JSON for its
	// type, or whose fields are out of range.
	ErrBadBody = errors.New("protocol: bad control body")
	// ErrNotControl indicates a binary message that is not a control frame.
	ErrNotControl = errors.New("protocol: not a control frame")
)

// encoder is a JSON encoder with its buffer, reused through encoders.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// encoders hold encoders that do not escape HTML: bodies never go into a
// web page, and the escapes turn each "<", ">" or "&" of a name into six
// bytes, which let a room of such names outgrow one control message.
var encoders = sync.Pool{New: func() any {
	e := new(encoder)
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// Append appends m as a control frame of this build's protocol version.
// Bodies are JSON without HTML escapes.
func Append(dst []byte, m Message) ([]byte, error) {
	e := encoders.Get().(*encoder)
	defer func() {
		if e.buf.Cap() <= 2*wire.MaxControlBody { // do not pin an oversized buffer
			e.buf.Reset()
			encoders.Put(e)
		}
	}()
	if err := e.enc.Encode(m); err != nil {
		return dst, fmt.Errorf("protocol: encode %s: %w", TypeName(m.Type()), err)
	}
	body := bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")) // Encode ends each value with a newline
	out, err := wire.AppendControl(dst, m.Type(), body)
	if err != nil {
		return dst, fmt.Errorf("protocol: encode %s: %w", TypeName(m.Type()), err)
	}
	return out, nil
}

// Marshal returns m as a new control frame.
func Marshal(m Message) ([]byte, error) { return Append(nil, m) }

// MustMarshal is Marshal for messages known to encode (tests, examples,
// constant messages); it panics on error.
func MustMarshal(m Message) []byte {
	b, err := Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// Decode decodes a control frame into a new message of its type and checks
// its fields. It returns ErrNotControl for a state or empty frame, a
// *wire.UpdateRequiredError for another protocol version, ErrUnknownType,
// or an error wrapping ErrBadBody. It never panics.
func Decode(frame []byte) (Message, error) {
	if wire.KindOf(frame) != wire.KindControl {
		return nil, ErrNotControl
	}
	c, err := wire.DecodeControl(frame)
	if err != nil {
		return nil, fmt.Errorf("protocol: %w", err)
	}
	m := New(c.Type)
	if m == nil {
		return nil, fmt.Errorf("%w %d", ErrUnknownType, c.Type)
	}
	if len(c.Body) > 0 {
		if err := json.Unmarshal(c.Body, m); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadBody, TypeName(c.Type), err)
		}
	}
	if v, ok := m.(interface{ validate() error }); ok {
		if err := v.validate(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadBody, TypeName(c.Type), err)
		}
	}
	return m, nil
}

// MaxClient is the longest Hello.Client in bytes.
const MaxClient = 64

// MaxSignalData is the longest Signal.Data in bytes (a direct link's offer
// is well under 1 KiB with a few candidates).
const MaxSignalData = 8 << 10

func (m *Hello) validate() error {
	if len(m.Client) > MaxClient {
		return fmt.Errorf("client is %d bytes, at most %d", len(m.Client), MaxClient)
	}
	if len(m.Token) > 256 {
		return errors.New("token too long")
	}
	return nil
}

func (m *Loading) validate() error {
	if m.Progress < 0 || m.Progress > 1 || math.IsNaN(m.Progress) {
		return fmt.Errorf("progress %v outside 0..1", m.Progress)
	}
	return nil
}

func (m *Settings) validate() error {
	if m.RoundUS < 0 {
		return fmt.Errorf("round_us %d is negative", m.RoundUS)
	}
	if len(m.Game) > MaxGameSettings {
		return fmt.Errorf("game settings are %d bytes, at most %d", len(m.Game), MaxGameSettings)
	}
	if m.InputDelay != nil {
		return m.InputDelay.Validate()
	}
	return nil
}

// Validate reports an input delay setting out of range: an unknown mode,
// or a delay or cap outside 0 to MaxInputDelayUS.
func (d *InputDelay) Validate() error {
	switch d.Mode {
	case InputDelayOff, InputDelayFixed, InputDelayAdaptive:
	default:
		return fmt.Errorf("input delay mode %q unknown (%q, %q or %q)", d.Mode, InputDelayOff, InputDelayFixed, InputDelayAdaptive)
	}
	if d.US < 0 || d.US > MaxInputDelayUS || d.CapUS < 0 || d.CapUS > MaxInputDelayUS {
		return fmt.Errorf("input delay %d us, cap %d us: each must be 0 to %d", d.US, d.CapUS, MaxInputDelayUS)
	}
	return nil
}

// MaxRegion is the longest Create.Region in bytes.
const MaxRegion = 64

func (m *Create) validate() error {
	if len(m.Region) > MaxRegion {
		return fmt.Errorf("region is %d bytes, at most %d", len(m.Region), MaxRegion)
	}
	if m.Settings != nil {
		return m.Settings.validate()
	}
	return nil
}

func (m *Join) validate() error {
	if m.Via != "" && !m.Via.Valid() {
		return fmt.Errorf("via %q unknown", m.Via)
	}
	return nil
}

func (m *Signal) validate() error {
	switch m.Kind {
	case SignalOffer, SignalAnswer, SignalCandidate:
	default:
		return fmt.Errorf("signal kind %q unknown", m.Kind)
	}
	if len(m.Data) > MaxSignalData {
		return fmt.Errorf("signal data is %d bytes, at most %d", len(m.Data), MaxSignalData)
	}
	return nil
}

func (m *Invite) validate() error {
	if len(m.Channel) > 32 || !utf8.ValidString(m.Channel) {
		return errors.New("channel too long or not UTF-8")
	}
	return nil
}

func (m *Kick) validate() error {
	if m.Slot < 0 {
		return fmt.Errorf("slot %d is negative", m.Slot)
	}
	return nil
}

func (m *Finish) validate() error {
	if math.IsNaN(m.Score) || math.IsInf(m.Score, 0) {
		return errors.New("score not finite")
	}
	return nil
}

// DurationUS converts microseconds to a Duration.
func DurationUS(us int64) time.Duration { return time.Duration(us) * 1000 }

// US converts a Duration to whole microseconds, rounding down.
func US(d time.Duration) int64 { return int64(d / 1000) }
