package protocol

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen is the longest display name in characters (runes).
const MaxNameLen = 24

// ErrBadName indicates a display name outside the rules of NormalizeName.
var ErrBadName = errors.New("protocol: bad display name")

// NormalizeName checks a display name and returns its normal form: spaces
// trimmed and inner runs of white space collapsed to one space. A name is 1
// to MaxNameLen characters of letters, marks, digits, punctuation, symbols
// and spaces; control and format characters (bidi overrides, zero-width
// joiners) and invalid UTF-8 are refused, so a name cannot hide or reorder
// other text. Errors wrap ErrBadName.
func NormalizeName(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: not UTF-8", ErrBadName)
	}
	var b strings.Builder
	space := false
	n := 0
	for _, r := range strings.TrimSpace(s) {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
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
		return "", fmt.Errorf("%w: empty", ErrBadName)
	}
	return b.String(), nil
}
