//go:build unix

package server

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRaiseFileLimit(t *testing.T) {
	var before syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &before))
	n, err := RaiseFileLimit()
	require.NoError(t, err)
	assert.Equal(t, uint64(before.Max), n, "the soft limit is raised to the hard one")
	assert.Equal(t, n, fileLimit())
}
