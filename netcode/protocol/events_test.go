package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/wire"
)

func TestEventAndChatRoundTrip(t *testing.T) {
	for _, m := range []Message{
		&Event{Name: "fire", Args: json.RawMessage(`[1,"a",[2.5,3],{"k":null}]`), To: ToAll, From: 2},
		&Event{Name: "ping", To: 3},
		&Chat{Text: "gg", To: ToAll, From: 1},
	} {
		b, err := Marshal(m)
		require.NoError(t, err)
		got, err := Decode(b)
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	assert.Equal(t, "event", TypeName(TypeEvent))
	assert.Equal(t, "chat", TypeName(TypeChat))
}

func TestCheckEvent(t *testing.T) {
	tests := []struct {
		name, args string
		err        error
	}{
		{"fire", `[1,2]`, nil},
		{"fire", ``, nil},
		{"fire", ` [ ]`, nil},
		{"", `[]`, ErrBadEvent},
		{strings.Repeat("n", MaxEventName+1), `[]`, ErrBadEvent},
		{"a\x00b", `[]`, ErrBadEvent},
		{"fire", `{"a":1}`, ErrBadEvent},
		{"fire", `[1,`, ErrBadEvent},
		{"fire", `"x"`, ErrBadEvent},
		{"fire", `["` + strings.Repeat("x", MaxEventSize) + `"]`, ErrEventTooBig},
	}
	for _, tt := range tests {
		err := CheckEvent(tt.name, json.RawMessage(tt.args))
		if tt.err == nil {
			assert.NoError(t, err, "%q %q", tt.name, tt.args)
		} else {
			assert.ErrorIs(t, err, tt.err, "%q %.20q", tt.name, tt.args)
		}
	}
}

func TestEventDecodeRefusesBadBodies(t *testing.T) {
	for _, body := range []string{
		`{"name":"x","args":{"a":1},"to":-1}`,
		`{"name":"","to":-1}`,
		`{"name":"x","to":-2}`,
	} {
		_, err := Decode(rawFrame(t, TypeEvent, body))
		assert.ErrorIs(t, err, ErrBadBody, body)
	}
}

func TestSanitizeChat(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"  hello  ", "hello", true},
		{"a\x00b\x1bc", "abc", true},
		{"line\nbreak", "line break", true},
		{"evil\u202eright", "evilright", true},
		{"zero\u200dwidth", "zerowidth", true},
		{"héllo 世界 😀", "héllo 世界 😀", true},
		{"\x01\x02 ", "", false},
		{"", "", false},
		{strings.Repeat("é", MaxChatRunes), strings.Repeat("é", MaxChatRunes), true},
		{strings.Repeat("é", MaxChatRunes+1), "", false},
	}
	for _, tt := range tests {
		got, err := SanitizeChat(tt.in)
		if !tt.ok {
			assert.ErrorIs(t, err, ErrBadChat, "%q", tt.in)
			continue
		}
		require.NoError(t, err, "%q", tt.in)
		assert.Equal(t, tt.want, got)
	}
}

func rawFrame(t *testing.T, ty wire.ControlType, body string) []byte {
	t.Helper()
	b, err := wire.AppendControl(nil, ty, []byte(body))
	require.NoError(t, err)
	return b
}

func TestCheckProp(t *testing.T) {
	tests := []struct {
		key, value string
		ok         bool
	}{
		{"health", `100`, true},
		{":name", `"Ann"`, true},
		{"modulate", `[1,0.5,0.5,1]`, true},
		{"x", `null`, true},
		{"", `1`, false},
		{strings.Repeat("k", MaxPropKey+1), `1`, false},
		{"a\nb", `1`, false},
		{"x", ``, false},
		{"x", `1 2`, false},
		{"x", `"` + strings.Repeat("v", MaxPropValue) + `"`, false},
	}
	for _, tt := range tests {
		err := CheckProp(tt.key, json.RawMessage(tt.value))
		if tt.ok {
			assert.NoError(t, err, "%q", tt.key)
		} else {
			assert.ErrorIs(t, err, ErrBadProp, "%.20q %.20q", tt.key, tt.value)
		}
	}
}

// TestArgDepth checks the nesting rule clients and the server share:
// brackets in strings do not count, and event and spawn args may nest
// MaxArgDepth levels inside their array, a property value MaxArgDepth in
// all. Before, 2040 levels passed CheckEvent.
func TestArgDepth(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for raw, want := range map[string]int{`1`: 0, `"[[["`: 0, `[1,2]`: 1, `[[1],{"a":[2]}]`: 3, `["\"[", []]`: 2,
		`{"[":"]"}`: 1, nest(2040): 2040} {
		assert.Equal(t, want, ArgDepth([]byte(raw)), raw)
	}
	require.NoError(t, CheckEvent("x", json.RawMessage(nest(MaxArgDepth+1))))
	assert.ErrorIs(t, CheckEvent("x", json.RawMessage(nest(MaxArgDepth+2))), ErrBadEvent)
	assert.ErrorIs(t, CheckEvent("x", json.RawMessage(nest(2040))), ErrBadEvent)
	require.NoError(t, CheckProp("k", json.RawMessage(nest(MaxArgDepth))))
	assert.ErrorIs(t, CheckProp("k", json.RawMessage(nest(MaxArgDepth+1))), ErrBadProp)
	require.NoError(t, CheckSpawn(&Spawn{Entity: 1, Scene: "s", Args: json.RawMessage(nest(MaxArgDepth + 1))}))
	assert.ErrorIs(t, CheckSpawn(&Spawn{Entity: 1, Scene: "s", Args: json.RawMessage(nest(MaxArgDepth + 2))}), ErrBadSpawn)
}

// TestSanitizeChatInvisibleAndWide replays what passed SanitizeChat
// before: line and paragraph separators (line breaks in most renderers),
// Hangul fillers (invisible "empty" lines), 199 combining marks on one
// letter (a tower over the chat box) and 200 x U+FDFD (one ligature as
// wide as a phrase: about 2000 columns).
func TestSanitizeChatInvisibleAndWide(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"one\u2028two\u2029three", "one two three", true},
		{"\u3164", "", false},
		{"\u115f\u1160\uffa0\u3164", "", false},
		{"a\u3164b", "ab", true},
		{"a" + strings.Repeat("\u0301", 199), "a" + strings.Repeat("\u0301", MaxChatMarks), true},
		{"tie\u0302\u0301ng Vie\u0323\u0302t", "tie\u0302\u0301ng Vie\u0323\u0302t", true}, // decomposed Vietnamese keeps its marks
		{strings.Repeat("\ufdfd", 200), "", false},
		{strings.Repeat("\ufdfd", MaxChatWidth/10), strings.Repeat("\ufdfd", MaxChatWidth/10), true},
		{strings.Repeat("世", MaxChatRunes), strings.Repeat("世", MaxChatRunes), true},
	}
	for _, tt := range tests {
		got, err := SanitizeChat(tt.in)
		if !tt.ok {
			assert.ErrorIs(t, err, ErrBadChat, "%.20q", tt.in)
			continue
		}
		require.NoError(t, err, "%.20q", tt.in)
		assert.Equal(t, tt.want, got)
	}
	assert.Equal(t, 5, ChatWidth("hello"))
	assert.Equal(t, 4, ChatWidth("世界"))
	assert.Equal(t, 1, ChatWidth("e\u0301"))
	assert.Equal(t, 2000, ChatWidth(strings.Repeat("\ufdfd", 200)))
}
