package wire

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestControlRoundTrip(t *testing.T) {
	body := []byte(`{"code":"ABCDEF"}`)
	b, err := AppendControl(nil, 9, body)
	require.NoError(t, err)
	assert.Equal(t, KindControl, KindOf(b))
	c, err := DecodeControl(b)
	require.NoError(t, err)
	assert.Equal(t, ProtocolVersion, c.Version)
	assert.Equal(t, ControlType(9), c.Type)
	assert.Equal(t, body, c.Body)

	empty, err := AppendControl(nil, 1, nil)
	require.NoError(t, err)
	c, err = DecodeControl(empty)
	require.NoError(t, err)
	assert.Empty(t, c.Body)
}

func TestControlRejects(t *testing.T) {
	_, err := AppendControl(nil, 1, make([]byte, MaxControlBody+1))
	assert.ErrorIs(t, err, ErrTooLarge)

	ok, err := AppendControl(nil, 2, []byte("{}"))
	require.NoError(t, err)
	other := append([]byte(nil), ok...)
	binary.LittleEndian.PutUint16(other[1:], ProtocolVersion+1)
	big := append([]byte{0xC0, 0, 0, 1}, make([]byte, MaxControlBody+1)...)
	binary.LittleEndian.PutUint16(big[1:], ProtocolVersion)

	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrKind},
		{"state frame", []byte{0x40, 0, 0, 0}, ErrKind},
		{"reserved bits set", []byte{0xC1, 1, 0, 1}, ErrKind},
		{"truncated header", ok[:3], ErrTruncated},
		{"other protocol", other, ErrUpdateRequired},
		{"oversized body", big, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeControl(tc.b)
			assert.ErrorIs(t, err, tc.want)
		})
	}

	c, err := DecodeControl(other)
	var ur *UpdateRequiredError
	require.True(t, errors.As(err, &ur))
	assert.Equal(t, "protocol", ur.What)
	assert.Equal(t, ProtocolVersion+1, ur.Peer)
	assert.Equal(t, ControlType(2), c.Type, "the type is still reported")
	assert.Contains(t, err.Error(), "update required")
}

func TestCheckVersions(t *testing.T) {
	assert.NoError(t, CheckVersions(ProtocolVersion, RulesVersion))
	err := CheckVersions(ProtocolVersion, RulesVersion+1)
	require.ErrorIs(t, err, ErrUpdateRequired)
	assert.Contains(t, err.Error(), "rules version")
	assert.Contains(t, err.Error(), "this build is older")
	err = CheckVersions(ProtocolVersion-1, RulesVersion)
	require.ErrorIs(t, err, ErrUpdateRequired)
	assert.Contains(t, err.Error(), "the peer is older")
}
