package protocol

import (
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
)

// TestInvisibleAndTowerNames replays item 12 of "Security, round four":
// names of invisible characters (24x U+3164 HANGUL FILLER, U+2800 BRAILLE
// PATTERN BLANK), of phrase-wide ligatures (U+FDFD), with 23 combining
// marks on one letter or 20 variation selectors, were all accepted (chat
// already strips these). Names now follow chat's rules.
func TestInvisibleAndTowerNames(t *testing.T) {
	refused := map[string]string{
		"24x U+3164":           strings.Repeat("\u3164", 24),
		"24x U+2800":           strings.Repeat("\u2800", 24),
		"U+3164 among spaces":  " \u3164 \u3164 ",
		"24x U+FDFD":           strings.Repeat("\uFDFD", 24),
		"20x U+FE0F":           strings.Repeat("\uFE0F", 20),
		"U+115F U+1160 U+FFA0": "\u115F\u1160\uFFA0",
	}
	for name, in := range refused {
		got, err := NormalizeName(in)
		t.Logf("%s: %q, %v", name, got, err)
		assert.ErrorIs(t, err, ErrBadName, name)
	}
	zalgo := "Z" + strings.Repeat("\u0301", 23)
	got, err := NormalizeName(zalgo)
	t.Logf("Z with 23 marks: %q (%d runes), %v", got, len([]rune(got)), err)
	if assert.NoError(t, err) {
		assert.LessOrEqual(t, marksOn(got), MaxChatMarks, "marks per character capped")
	}
	got, err = NormalizeName("x" + strings.Repeat("\uFE0F", 20))
	t.Logf("x with 20 variation selectors: %q, %v", got, err)
	if assert.NoError(t, err) {
		assert.Equal(t, "x\uFE0F", got, "one selector per character (an emoji's presentation)")
	}
}

// marksOn is the most combining marks on one character of s.
func marksOn(s string) int {
	most, run := 0, 0
	for _, r := range s {
		if unicode.In(r, unicode.Mn, unicode.Me) {
			run++
			most = max(most, run)
		} else {
			run = 0
		}
	}
	return most
}

// TestNameKey: names a player could mistake for each other share a key;
// names that read differently do not.
func TestNameKey(t *testing.T) {
	same := [][]string{
		{"Alice", "alice", "ALICE", "Аlice", "Ａｌｉｃｅ", "Alíce", "AIice"}, // Cyrillic А, fullwidth, an accent, capital I for l
		{"Host", "Ηost", "HOST", "Нost"},                                // Greek Η, Cyrillic Н
		{"Bob 01", "Bob Ol", "bob ol"},
		{"modern", "rnodern"},
		{"Zoë", "Zoe"},
	}
	for _, names := range same {
		for _, n := range names[1:] {
			assert.Equal(t, NameKey(names[0]), NameKey(n), "%q and %q", names[0], n)
		}
	}
	differ := [][2]string{{"Alice", "Alicia"}, {"Ann", "Anna"}, {"Bob", "Rob"}, {"李小龍", "李小龙"}}
	for _, p := range differ {
		assert.NotEqual(t, NameKey(p[0]), NameKey(p[1]), "%q and %q", p[0], p[1])
	}
}
