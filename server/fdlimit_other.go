//go:build !unix

package server

// RaiseFileLimit does nothing here: this system has no RLIMIT_NOFILE. It
// returns 0 (unknown); the connection caps take their fixed defaults.
func RaiseFileLimit() (uint64, error) { return 0, nil }

// fileLimit returns 0: unknown on this system.
func fileLimit() uint64 { return 0 }
