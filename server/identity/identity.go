package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// MinSecret is the shortest accepted secret in bytes.
const MinSecret = 32

var (
	// ErrBadToken indicates a token that is malformed or was not issued
	// under this secret.
	ErrBadToken = errors.New("identity: bad token")
	// ErrShortSecret indicates a secret shorter than MinSecret bytes.
	ErrShortSecret = errors.New("identity: secret too short")
)

const (
	prefix = "v1."
	macLen = 16
	idRaw  = 16
)

var b64 = base64.RawURLEncoding

// Issuer issues and verifies tokens. It is safe for concurrent use.
type Issuer struct {
	secret []byte // read-only after NewIssuer
}

// NewIssuer returns an Issuer for secret (at least MinSecret bytes; copied).
func NewIssuer(secret []byte) (*Issuer, error) {
	if len(secret) < MinSecret {
		return nil, fmt.Errorf("new issuer: %w: %d bytes, need %d", ErrShortSecret, len(secret), MinSecret)
	}
	return &Issuer{secret: append([]byte(nil), secret...)}, nil
}

// NewSecret returns MinSecret random bytes.
func NewSecret() ([]byte, error) {
	b := make([]byte, MinSecret)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("new secret: %w", err)
	}
	return b, nil
}

// New issues a new identity: a random user id and its token.
func (i *Issuer) New() (user, token string, err error) {
	var raw [idRaw]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", "", fmt.Errorf("new identity: %w", err)
	}
	user = "u" + b64.EncodeToString(raw[:])
	return user, i.Token(user), nil
}

// Token returns the token for user.
func (i *Issuer) Token(user string) string {
	return prefix + user + "." + b64.EncodeToString(i.mac(user))
}

// Verify returns the user id a token was issued for, or an error wrapping
// ErrBadToken.
func (i *Issuer) Verify(token string) (string, error) {
	rest, ok := strings.CutPrefix(token, prefix)
	if !ok {
		return "", fmt.Errorf("%w: unknown format", ErrBadToken)
	}
	user, sig, ok := strings.Cut(rest, ".")
	if !ok || len(user) != 1+b64.EncodedLen(idRaw) || user[0] != 'u' {
		return "", fmt.Errorf("%w: malformed", ErrBadToken)
	}
	mac, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, i.mac(user)) {
		return "", fmt.Errorf("%w: signature does not match", ErrBadToken)
	}
	return user, nil
}

func (i *Issuer) mac(user string) []byte {
	h := hmac.New(sha256.New, i.secret)
	h.Write([]byte("nearzero-user:"))
	h.Write([]byte(user))
	return h.Sum(nil)[:macLen]
}
