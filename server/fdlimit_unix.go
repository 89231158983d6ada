//go:build unix

package server

import (
	"fmt"
	"syscall"
)

// RaiseFileLimit raises the soft limit on open files (RLIMIT_NOFILE) to
// the hard limit where the system allows it, and returns the soft limit
// then in force. Each connection takes a descriptor, so the defaults of
// Config.MaxSockets and MaxConns follow this limit; call it before New.
// Go raises the limit itself at start on most systems: this makes sure,
// and says what it is.
func RaiseFileLimit() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, fmt.Errorf("read the open-file limit: %w", err)
	}
	if l.Cur < l.Max {
		want := l
		want.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
			return uint64(l.Cur), fmt.Errorf("raise the open-file limit from %d to %d: %w", l.Cur, l.Max, err)
		}
		l = want
	}
	return uint64(l.Cur), nil
}

// fileLimit returns the soft limit on open files, or 0 when unknown.
func fileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return uint64(l.Cur)
}
