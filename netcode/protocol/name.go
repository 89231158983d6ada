package protocol

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxNameLen is the longest display name in characters (runes).
const MaxNameLen = 24

// MaxNameWidth is the widest display name in ChatWidth's columns: room for
// MaxNameLen wide (CJK) characters, while a character that renders many
// columns wide (U+FDFD) costs that many.
const MaxNameWidth = 2 * MaxNameLen

// ErrBadName indicates a display name outside the rules of NormalizeName.
var ErrBadName = errors.New("protocol: bad display name")

// NormalizeName checks a display name and returns its normal form, by
// chat's rules (SanitizeChat): invalid UTF-8, control and format
// characters (bidi overrides, zero-width joiners) and the other invisible
// characters (Hangul fillers, the blank braille pattern...) are dropped,
// so a name can neither hide nor reorder other text nor look empty;
// combining marks past MaxChatMarks on one character are dropped, as are
// marks before any character and variation selectors but the first after
// a character (an emoji's presentation); spaces are trimmed and
// inner runs of white space collapsed to one space. What is left must be 1
// to MaxNameLen characters of letters, marks, digits, punctuation, symbols
// and spaces (private-use and unassigned code points are refused), at most
// MaxNameWidth columns wide (ChatWidth). Errors wrap ErrBadName.
//
// Two names that look alike (NameKey) are one name to a room.
func NormalizeName(s string) (string, error) {
	var b strings.Builder
	space := false // a space is owed before the next character
	n, marks := 0, 0
	vs := false // a variation selector sits on the current character
	for _, r := range s {
		mark := unicode.In(r, unicode.Mn, unicode.Me) // variation selectors among them
		switch {
		case r == utf8.RuneError || Invisible(r):
			continue
		case unicode.IsSpace(r):
			space = n > 0
			marks, vs = 0, false
			continue
		case mark && (n == 0 || space):
			continue // a mark needs a character to sit on
		case unicode.Is(unicode.Variation_Selector, r):
			if vs {
				continue
			}
			vs = true
		case mark:
			if marks++; marks > MaxChatMarks {
				continue
			}
		case unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
			marks, vs = 0, false
		default:
			return "", fmt.Errorf("%w: character %U not allowed", ErrBadName, r)
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
		if n > MaxNameLen {
			return "", fmt.Errorf("%w: longer than %d characters", ErrBadName, MaxNameLen)
		}
	}
	if n == 0 {
		return "", fmt.Errorf("%w: empty, or nothing visible", ErrBadName)
	}
	out := b.String()
	if w := ChatWidth(out); w > MaxNameWidth {
		return "", fmt.Errorf("%w: %d columns wide, at most %d", ErrBadName, w, MaxNameWidth)
	}
	return out, nil
}

// blank are visible-category characters that render as nothing: the
// blank braille pattern and the null notehead, favourites of empty names.
var blank = map[rune]bool{0x2800: true, 0x1D159: true}

// Invisible reports whether r renders as nothing and is dropped from
// names and chat: a control or format character (but white space, which
// becomes a space), another default-ignorable code point (Hangul fillers,
// the combining grapheme joiner...) or a blank pattern. Variation
// selectors, default-ignorable too, are marks: they are capped, not
// dropped.
func Invisible(r rune) bool {
	if unicode.IsSpace(r) {
		return false
	}
	return unicode.IsControl(r) || blank[r] || unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point)
}

// NameKey folds a display name to what it looks like, so that names a
// player could mistake for each other have one key: compatibility forms
// (fullwidth letters, ligatures) and case are folded, combining marks
// dropped, and the common Latin look-alikes of Cyrillic and Greek letters
// and digits (Cyrillic а, Greek Ο, zero, capital I against small l, "rn"
// against "m"...) mapped onto one letter. A room refuses a name whose key
// another player's name has.
func NameKey(name string) string {
	s := norm.NFKC.String(name)
	var b strings.Builder
	for _, r := range s {
		if to, ok := upperAlike[r]; ok { // before case folding: Η looks like H, η does not
			r = to
		}
		b.WriteRune(r)
	}
	s = cases.Fold().String(b.String())
	b.Reset()
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me):
			continue
		case unicode.IsSpace(r):
			r = ' '
		}
		if to, ok := lowerAlike[r]; ok {
			r = to
		}
		b.WriteRune(r)
	}
	return strings.NewReplacer("rn", "m", "vv", "w").Replace(b.String())
}

// upperAlike maps capitals that look like a Latin capital onto it, before
// case folding.
var upperAlike = map[rune]rune{
	// Cyrillic
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'Х': 'X', 'У': 'Y', 'Ѕ': 'S', 'Ј': 'J', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ү': 'Y',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P',
	'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
}

// lowerAlike maps small letters and digits that look like a small Latin
// letter onto it, after case folding. Capital I folds to i, which stands
// beside l in sans-serif type: i, l, 1 and the vertical strokes are one.
var lowerAlike = map[rune]rune{
	'0': 'o', 'i': 'l', '1': 'l', '|': 'l', 'ǀ': 'l', 'ı': 'l', 'ɡ': 'g',
	// Cyrillic
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'l', 'ј': 'j', 'ѕ': 's',
	'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'ү': 'y',
	// Greek
	'α': 'a', 'ο': 'o', 'ν': 'v', 'ρ': 'p', 'ι': 'l', 'υ': 'u', 'χ': 'x', 'ϲ': 'c', 'η': 'n', 'ω': 'w',
	'γ': 'y',
}
