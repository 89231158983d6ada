package identity

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func issuer(t *testing.T, fill byte) *Issuer {
	t.Helper()
	i, err := NewIssuer([]byte(strings.Repeat(string(rune(fill)), MinSecret)))
	require.NoError(t, err)
	return i
}

func TestIssueAndVerify(t *testing.T) {
	i := issuer(t, 'a')
	seen := map[string]bool{}
	for n := 0; n < 100; n++ {
		user, token, err := i.New()
		require.NoError(t, err)
		assert.False(t, seen[user], "user ids are unique")
		seen[user] = true
		got, err := i.Verify(token)
		require.NoError(t, err)
		assert.Equal(t, user, got)
	}
}

func TestVerifyRejects(t *testing.T) {
	i := issuer(t, 'a')
	user, token, err := i.New()
	require.NoError(t, err)
	other, err := issuer(t, 'b').Verify(token)
	assert.ErrorIs(t, err, ErrBadToken, "another server's secret")
	assert.Empty(t, other)

	// Change a middle character of the MAC: the last one carries padding bits.
	tampered := []byte(i.Token(user))
	k := len(tampered) - 5
	if tampered[k] == 'A' {
		tampered[k] = 'B'
	} else {
		tampered[k] = 'A'
	}
	cases := map[string]string{
		"empty":          "",
		"no prefix":      strings.TrimPrefix(token, "v1."),
		"other version":  "v2." + strings.TrimPrefix(token, "v1."),
		"tampered mac":   string(tampered),
		"other user":     "v1.u" + strings.Repeat("A", 22) + "." + strings.SplitN(token, ".", 3)[2],
		"short user":     "v1.uAAA." + strings.SplitN(token, ".", 3)[2],
		"no mac":         "v1." + user,
		"not base64 mac": "v1." + user + ".!!!!",
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := i.Verify(tok)
			assert.ErrorIs(t, err, ErrBadToken)
		})
	}
}

func TestSecrets(t *testing.T) {
	_, err := NewIssuer(make([]byte, MinSecret-1))
	assert.ErrorIs(t, err, ErrShortSecret)
	s1, err := NewSecret()
	require.NoError(t, err)
	s2, err := NewSecret()
	require.NoError(t, err)
	assert.Len(t, s1, MinSecret)
	assert.NotEqual(t, s1, s2)
}

func BenchmarkVerify(b *testing.B) {
	i, _ := NewIssuer(make([]byte, MinSecret))
	_, tok, _ := i.New()
	b.ReportAllocs()
	for n := 0; n < b.N; n++ {
		if _, err := i.Verify(tok); err != nil {
			b.Fatal(err)
		}
	}
}
