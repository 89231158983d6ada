package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

// samples returns one filled message of every type.
func samples() []Message {
	room := RoomState{Code: "ABCDEF", Rev: 7, Phase: PhaseCountdown, PhaseUS: 10, DeadlineUS: 3_000_010, GoUS: 3_000_010,
		Round: 2, Host: 1, Settings: Settings{RoundUS: 60_000_000, Game: json.RawMessage(`{"track":"x"}`)},
		Players: []PlayerState{{Slot: 1, User: "u1", Name: "Ann", Connected: true, Loaded: 1, Ready: true, Participant: true}}}
	return []Message{
		&Hello{Rules: wire.RulesVersion, Token: "t", Name: "Ann", Client: "test"},
		&Welcome{User: "u1", Token: "t", Name: "Ann", ServerUS: 5, Protocol: wire.ProtocolVersion, Rules: wire.RulesVersion,
			Limits: Limits{MaxPlayers: 8, SendRate: 60, MaxStates: 90, NameMax: MaxNameLen, SeatHoldUS: 20_000_000}},
		&Create{Settings: &Settings{RoundUS: 1}},
		&Join{Code: "ABCDEF", Via: ViaLink},
		&Joined{Code: "ABCDEF", Invite: "x/join/ABCDEF", Slot: 3, Reconnected: true, Room: room},
		&Leave{},
		&Left{Reason: "r"},
		&SetName{Name: "Bob"},
		&Loading{Progress: 0.5},
		&Ready{Ready: true},
		&Settings{RoundUS: 90_000_000, Game: json.RawMessage(`{"laps":3}`)},
		&Start{},
		&InPosition{},
		&Finish{Score: 12.5},
		&Vote{Restart: true},
		&Ping{TUS: 123, RTTUS: 40_000},
		&Pong{TUS: 123, ServerUS: 456, Probe: 7},
		&Echo{Probe: 7},
		&DirectLink{Slot: 2, Up: true},
		&Signal{To: 1, From: 0, Kind: SignalOffer, Data: "sdp"},
		&Invite{Channel: "copy"},
		&Kick{Slot: 2},
		&Event{Name: "fire", Args: json.RawMessage(`[1,"a"]`), To: ToAll, From: 1},
		&Chat{Text: "gg", To: ToAll, From: 1},
		&Prop{Slot: 1, Key: "health", Value: json.RawMessage(`75`)},
		&Hit{Target: 2, FireUS: 123, Point: [3]float64{1, 2, 3}},
		&Spawn{Slot: 1, Entity: 2, Scene: "bullet", Args: json.RawMessage(`[1]`), Rot: [4]float64{0, 0, 0, 1}},
		&Despawn{Slot: 1, Entity: 2},
		&Claim{Entity: 128},
		&Owner{Entity: 128, Slot: 1, Epoch: 2, Known: true, Stamp: 9, Pos: [3]float64{1, 2, 3}},
		&HitResult{From: 1, Target: 2, Accepted: true, Damage: 25, Health: 75, Kills: 1, Deaths: 0, RewindUS: 80_000, MissBy: 0.25},
		&room,
		&Notice{Kind: NoticeTimeWarning, LeftUS: 10_000_000},
		&Results{Code: "ABCDEF", Round: 2, StartUS: 1, EndUS: 2, RoundUS: 3,
			Players: []PlayerResult{{Slot: 0, User: "u", Name: "A", Status: StatusFinished, TimeUS: 5, Place: 1}}},
		Errorf(CodeRoomFull, "room %s is full", "ABCDEF"),
	}
}

func TestRoundTripEveryType(t *testing.T) {
	seen := map[wire.ControlType]bool{}
	for _, m := range samples() {
		t.Run(TypeName(m.Type()), func(t *testing.T) {
			b, err := Marshal(m)
			require.NoError(t, err)
			got, err := Decode(b)
			require.NoError(t, err)
			assert.Equal(t, m, got)
			seen[m.Type()] = true
		})
	}
	for _, ty := range Types() {
		assert.True(t, seen[ty], "no sample for %s", TypeName(ty))
	}
}

func TestEmptyBodyDecodes(t *testing.T) {
	for _, ty := range []wire.ControlType{TypeLeave, TypeStart, TypeInPosition, TypeReady} {
		b, err := wire.AppendControl(nil, ty, nil)
		require.NoError(t, err)
		m, err := Decode(b)
		require.NoError(t, err, TypeName(ty))
		assert.Equal(t, ty, m.Type())
	}
}

func TestDecodeErrors(t *testing.T) {
	ctl := func(ty wire.ControlType, body string) []byte {
		b, err := wire.AppendControl(nil, ty, []byte(body))
		require.NoError(t, err)
		return b
	}
	otherVersion := ctl(TypeHello, `{}`)
	otherVersion[1]++
	state, err := wire.AppendState(nil, &wire.State{Rot: geom.Quat{W: 1}})
	require.NoError(t, err)
	cases := []struct {
		name  string
		frame []byte
		want  error
	}{
		{"empty", nil, ErrNotControl},
		{"state", state, ErrNotControl},
		{"truncated header", []byte{0xC0, 1}, wire.ErrTruncated},
		{"other version", otherVersion, wire.ErrUpdateRequired},
		{"unknown type", ctl(200, `{}`), ErrUnknownType},
		{"not json", ctl(TypeJoin, `{`), ErrBadBody},
		{"wrong json type", ctl(TypeReady, `{"ready":"yes"}`), ErrBadBody},
		{"progress over 1", ctl(TypeLoading, `{"progress":1.5}`), ErrBadBody},
		{"negative round", ctl(TypeSettings, `{"round_us":-1}`), ErrBadBody},
		{"huge game settings", ctl(TypeSettings, `{"game":"`+strings.Repeat("x", MaxGameSettings)+`"}`), ErrBadBody},
		{"unknown signal kind", ctl(TypeSignal, `{"to":1,"kind":"hack","data":""}`), ErrBadBody},
		{"unknown via", ctl(TypeJoin, `{"code":"ABCDEF","via":"teleport"}`), ErrBadBody},
		{"long client", ctl(TypeHello, `{"client":"`+strings.Repeat("c", MaxClient+1)+`"}`), ErrBadBody},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode(tc.frame)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

func TestAppendTooLarge(t *testing.T) {
	_, err := Marshal(&Signal{Kind: SignalOffer, Data: strings.Repeat("x", wire.MaxControlBody)})
	assert.ErrorIs(t, err, wire.ErrTooLarge)
}

// TestMarshalDoesNotEscapeHTML checks that names are sent as they are: the
// standard encoder's HTML escaping turns each "<", ">" and "&" into six
// bytes, which let a room of such names outgrow one control message.
func TestMarshalDoesNotEscapeHTML(t *testing.T) {
	b, err := Marshal(&SetName{Name: "<&>"})
	require.NoError(t, err)
	c, err := wire.DecodeControl(b)
	require.NoError(t, err)
	assert.Equal(t, `{"name":"<&>"}`, string(c.Body), "no \\u003c escapes and no trailing newline")
	m, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, "<&>", m.(*SetName).Name)
}

func TestCodes(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Codes() {
		assert.False(t, names[c.String()], "duplicate name %s", c)
		names[c.String()] = true
		ok := c == CodeNormal || c == CodeGoingAway || c == CodeTooBig || (c >= 4000 && c <= 4999)
		assert.True(t, ok, "code %d outside the allowed ranges", c)
	}
	assert.Equal(t, "code_4999", Code(4999).String())

	closeErr := fmt.Errorf("read: %w", &CloseError{Code: CodeRoomFull, Reason: "full"})
	assert.Equal(t, CodeRoomFull, CloseCodeOf(closeErr))
	assert.Equal(t, Code(-1), CloseCodeOf(errors.New("eof")))
	assert.Equal(t, Code(-1), CloseCodeOf(nil))
	assert.Equal(t, Code(-1), CloseCodeOf(Errorf(CodeNotHost, "x")), "an Error message is not a close")
	assert.Equal(t, CodeNotHost, CodeOf(fmt.Errorf("start: %w", Errorf(CodeNotHost, "x"))))
	assert.Equal(t, CodeRoomFull, CodeOf(closeErr))
	assert.Contains(t, closeErr.Error(), "room_full (4004): full")
}

func TestParseRoomCode(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"ABCDEF", "ABCDEF"},
		{"abcdef", "ABCDEF"},
		{" abc-def ", "ABCDEF"},
		{"ABC DEF", "ABCDEF"},
		{"https://play.example.com/join/XYZ234", "XYZ234"},
		{"https://play.example.com/join/xyz234/", "XYZ234"},
		{"nearzero://join/XYZ234", "XYZ234"},
		{"http://127.0.0.1:8787/?code=xyz234", "XYZ234"},
		{"ABCDE0", ""},     // 0 is a look-alike
		{"ABCDEO", ""},     // O too
		{"ABCDE1", ""},     // and 1
		{"ABCDEI", ""},     // I
		{"ABCDEL", ""},     // L
		{"ABCDE", ""},      // short
		{"ABCDEFG", ""},    // long
		{"ÄBCDEF", ""},     // not ASCII
		{"", ""},           // nothing
		{"http://%zz", ""}, // bad URL
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRoomCode(tc.in)
			if tc.want == "" {
				assert.ErrorIs(t, err, ErrBadRoomCode)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNewRoomCode(t *testing.T) {
	const seed = 42
	r := rand.New(rand.NewPCG(seed, seed))
	assert.NotContains(t, CodeAlphabet, "0")
	for _, c := range "0O1IL" {
		assert.NotContains(t, CodeAlphabet, string(c))
	}
	seen := map[string]bool{}
	counts := map[rune]int{}
	for i := 0; i < 2000; i++ {
		c := NewRoomCode(r)
		require.True(t, ValidRoomCode(c), "seed %d: %q", seed, c)
		seen[c] = true
		for _, ch := range c {
			counts[ch]++
		}
		link := InviteLink("https://h.example/", c)
		got, err := ParseRoomCode(link)
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}
	assert.Greater(t, len(seen), 1990, "seed %d: codes repeat too often", seed)
	assert.Len(t, counts, len(CodeAlphabet), "seed %d: every symbol is used", seed)
	assert.Equal(t, "nearzero://join/ABCDEF", InviteLink("nearzero://", "ABCDEF"))
}

func TestNormalizeName(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"Ann", "Ann"},
		{"  Ann   Lee  ", "Ann Lee"},
		{"Zoë", "Zoë"},
		{"李小龍", "李小龍"},
		{"x_X-99!", "x_X-99!"},
		{"🙂 smile", "🙂 smile"},
		{strings.Repeat("a", MaxNameLen), strings.Repeat("a", MaxNameLen)},
		{strings.Repeat("a", MaxNameLen+1), ""},
		{"", ""},
		{"   ", ""},
		{"a\x00b", "ab"},             // chat's rules: invisible characters are dropped, not refused
		{"evil\u202Etxt", "eviltxt"}, // right-to-left override
		{"zero\u200Bwidth", "zerowidth"},
		{"bad\xffutf8", "badutf8"},
		{"\u200B\u3164", ""},
		{"\uE000 private", ""},
		{"tab\tinside", "tab inside"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := NormalizeName(tc.in)
			if tc.want == "" {
				assert.ErrorIs(t, err, ErrBadName)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNextState(t *testing.T) {
	full := &wire.State{Fields: wire.HasAcc | wire.HasTurn | wire.HasExtras, Rot: geom.Quat{W: 1}}
	flat := &wire.State{Dim2D: true, Rot: geom.Angle2D(1)}
	var batch []byte
	var sizes []int
	for i, s := range []*wire.State{full, flat, {Rot: geom.Quat{W: 1}}, {Dim2D: true, Fields: wire.HasExtras}} {
		s.Seq = wire.Seq(i)
		var err error
		n := len(batch)
		batch, err = wire.AppendState(batch, s)
		require.NoError(t, err)
		sizes = append(sizes, len(batch)-n)
	}
	rest := batch
	for i, want := range sizes {
		var frame []byte
		var ok bool
		frame, rest, ok = NextState(rest)
		require.True(t, ok, "frame %d", i)
		assert.Len(t, frame, want)
		var s wire.State
		require.NoError(t, wire.DecodeState(frame, &s))
		assert.Equal(t, wire.Seq(i), s.Seq)
	}
	assert.Empty(t, rest)

	_, _, ok := NextState(batch[:10])
	assert.False(t, ok, "truncated")
	_, _, ok = NextState([]byte{0xC0, 1, 0, 1})
	assert.False(t, ok, "control frame")
	assert.Zero(t, StateLen(nil))
}

func FuzzDecode(f *testing.F) {
	for _, m := range samples() {
		f.Add(MustMarshal(m))
	}
	f.Add([]byte{})
	f.Add([]byte{0xC0})
	f.Add([]byte{0xC0, 1, 0, 13, '{'})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			assert.Nil(t, m)
			return
		}
		// Whatever decodes re-encodes and decodes to the same message.
		b2, err := Marshal(m)
		require.NoError(t, err)
		m2, err := Decode(b2)
		require.NoError(t, err)
		assert.Equal(t, m, m2)
	})
}

func FuzzNextState(f *testing.F) {
	b, _ := wire.AppendState(nil, &wire.State{Rot: geom.Quat{W: 1}})
	f.Add(append(b, b...))
	f.Add([]byte{0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			frame, rest, ok := NextState(b)
			if !ok {
				return
			}
			assert.Equal(t, len(b), len(frame)+len(rest))
			b = rest
		}
	})
}

func TestKick(t *testing.T) {
	b, err := Marshal(&Kick{Slot: 3})
	require.NoError(t, err)
	m, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, &Kick{Slot: 3}, m)
	_, err = Decode(MustMarshal(&Kick{Slot: -1}))
	assert.ErrorIs(t, err, ErrBadBody)
	assert.Equal(t, "kicked", CodeKicked.String())
	assert.True(t, CodeKicked.Fatal(), "a kicked client must not reconnect on its own")
}
