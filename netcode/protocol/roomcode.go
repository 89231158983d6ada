package protocol

import (
	"errors"
	"math/rand/v2"
	"net/url"
	"strings"
)

// CodeAlphabet is the alphabet of room codes: digits and capitals without
// the look-alikes 0/O and 1/I/L. 31 symbols, so 6 give 887 million codes.
const CodeAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// CodeLen is the length of a room code.
const CodeLen = 6

// ErrBadRoomCode indicates text that is neither a room code nor an invite
// link carrying one.
var ErrBadRoomCode = errors.New("protocol: not a room code or invite link")

// NewRoomCode draws a random room code from r. Uniqueness is the caller's
// job (the server claims codes atomically in its room directory).
func NewRoomCode(r *rand.Rand) string {
	var b [CodeLen]byte
	for i := range b {
		b[i] = CodeAlphabet[r.IntN(len(CodeAlphabet))]
	}
	return string(b[:])
}

// ValidRoomCode reports whether s is exactly a room code (upper case, no
// separators).
func ValidRoomCode(s string) bool {
	if len(s) != CodeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(CodeAlphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// ParseRoomCode extracts a room code from what a user typed or opened: a
// code in any case with spaces or dashes ("abc-def"), or an invite link
// ("https://host/join/ABCDEF", "nearzero://join/ABCDEF", or any URL with a
// "code" query parameter). It returns ErrBadRoomCode otherwise.
func ParseRoomCode(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "", ErrBadRoomCode
		}
		if c := u.Query().Get("code"); c != "" {
			s = c
		} else {
			p := strings.TrimRight(u.Path, "/")
			if p == "" { // nearzero://join/ABCDEF parses "join" as the host
				p = u.Host
			}
			s = p[strings.LastIndexByte(p, '/')+1:]
		}
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ' || r == '-' || r == '\t':
			continue
		case r >= 'a' && r <= 'z':
			r -= 'a' - 'A'
		}
		b.WriteRune(r)
	}
	c := b.String()
	if !ValidRoomCode(c) {
		return "", ErrBadRoomCode
	}
	return c, nil
}

// InviteLink returns the invite link for code under base, a URL such as
// "https://play.example.com" or "nearzero://": base + "/join/" + code.
func InviteLink(base, code string) string {
	if strings.HasSuffix(base, "://") {
		return base + "join/" + code
	}
	return strings.TrimRight(base, "/") + "/join/" + code
}
