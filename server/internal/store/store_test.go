package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/nearzero/nearzero/netcode/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestSecretCreatedOnceAndKept(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nz.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	calls := 0
	mk := func() ([]byte, error) { calls++; return []byte("0123456789abcdef0123456789abcdef"), nil }
	a, err := s.Secret(ctx, mk)
	require.NoError(t, err)
	b, err := s.Secret(ctx, mk)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, 1, calls)
	require.NoError(t, s.Close())

	s2 := open(t, path) // the schema exists: opening again works and keeps data
	c, err := s2.Secret(ctx, mk)
	require.NoError(t, err)
	assert.Equal(t, a, c, "the secret survives a restart")

	_, err = open(t, Memory).Secret(ctx, func() ([]byte, error) { return nil, errors.New("no entropy") })
	assert.ErrorContains(t, err, "no entropy")
}

func TestUsers(t *testing.T) {
	ctx := context.Background()
	s := open(t, Memory)
	_, ok, err := s.UserName(ctx, "u1")
	require.NoError(t, err)
	assert.False(t, ok)
	now := time.Unix(1700000000, 0)
	require.NoError(t, s.SaveUser(ctx, "u1", "Ann", now))
	require.NoError(t, s.SaveUser(ctx, "u1", "Ann Lee", now.Add(time.Hour)))
	name, ok, err := s.UserName(ctx, "u1")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "Ann Lee", name)
}

func TestResultsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := open(t, Memory)
	now := time.Unix(1700000000, 0)
	for round := 1; round <= 3; round++ {
		res := &protocol.Results{Code: "ABCDEF", Round: round, Aborted: round == 2, StartUS: 10, EndUS: 20, RoundUS: 30,
			Players: []protocol.PlayerResult{
				{Slot: 1, User: "u1", Name: "Ann", Status: protocol.StatusFinished, TimeUS: 5, Score: 2.5, Place: 1},
				{Slot: 0, User: "u0", Name: "Bob", Status: protocol.StatusDNF},
			}}
		require.NoError(t, s.SaveResults(ctx, res, now))
	}
	require.NoError(t, s.SaveResults(ctx, &protocol.Results{Code: "ZZZZZZ", Round: 1}, now))
	got, err := s.Results(ctx, "ABCDEF", 2)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, 3, got[0].Round, "newest first")
	assert.Equal(t, 2, got[1].Round)
	assert.True(t, got[1].Aborted)
	require.Len(t, got[0].Players, 2)
	assert.Equal(t, protocol.PlayerResult{Slot: 1, User: "u1", Name: "Ann", Status: protocol.StatusFinished, TimeUS: 5, Score: 2.5, Place: 1}, got[0].Players[0])
	assert.Equal(t, "u0", got[0].Players[1].User)
	require.NoError(t, s.Ping(ctx))
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nz.db")
	s := open(t, path)
	_, err := s.db.ExecContext(ctx, "PRAGMA user_version = 99")
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = Open(ctx, path)
	assert.ErrorIs(t, err, ErrNewerSchema)
}

func TestCancelledContext(t *testing.T) {
	s := open(t, Memory)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.SaveUser(ctx, "u", "n", time.Now())
	assert.ErrorIs(t, err, context.Canceled)
}

func TestFilesArePrivate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := syscall.Umask(0o022) // the usual umask: files would be 0644
	defer syscall.Umask(old)

	fresh := filepath.Join(dir, "new.db")
	s := open(t, fresh)
	_, err := s.Secret(ctx, func() ([]byte, error) { return []byte("0123456789abcdef0123456789abcdef"), nil })
	require.NoError(t, err)
	require.NoError(t, s.SaveUser(ctx, "u", "n", time.Now()))

	// A database an older build created world-readable is tightened.
	loose := filepath.Join(dir, "old.db")
	require.NoError(t, os.WriteFile(loose, nil, 0o644))
	require.NoError(t, os.WriteFile(loose+"-wal", nil, 0o644))
	open(t, loose)

	for _, p := range []string{fresh, fresh + "-wal", fresh + "-shm", loose, loose + "-wal", loose + "-shm"} {
		fi, err := os.Stat(p)
		require.NoError(t, err, p)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "%s holds the signing secret", filepath.Base(p))
	}
}

func TestUserRowsComeWithResults(t *testing.T) {
	ctx := context.Background()
	s := open(t, Memory)
	now := time.Unix(1700000000, 0)
	require.NoError(t, s.RenameUser(ctx, "u1", "Ann", now))
	_, ok, err := s.UserName(ctx, "u1")
	require.NoError(t, err)
	assert.False(t, ok, "a rename does not create a user")

	res := &protocol.Results{Code: "ABCDEF", Round: 1, Players: []protocol.PlayerResult{
		{Slot: 0, User: "u1", Name: "Ann", Status: protocol.StatusFinished, Place: 1}}}
	require.NoError(t, s.SaveResults(ctx, res, now))
	name, ok, err := s.UserName(ctx, "u1")
	require.NoError(t, err)
	require.True(t, ok, "results create their players' rows")
	assert.Equal(t, "Ann", name)
	require.NoError(t, s.RenameUser(ctx, "u1", "Ann Lee", now))
	name, _, err = s.UserName(ctx, "u1")
	require.NoError(t, err)
	assert.Equal(t, "Ann Lee", name)
}

func TestInterruptedRounds(t *testing.T) {
	ctx := context.Background()
	s := open(t, Memory)
	now := time.Unix(1700000000, 0)
	p := []protocol.PlayerResult{{Slot: 0, User: "u0", Name: "Bob", Status: protocol.StatusDNF}}
	require.NoError(t, s.SaveResults(ctx, &protocol.Results{Code: "ABCDEF", Round: 1, Players: p}, now))
	require.NoError(t, s.SaveInterrupted(ctx, &protocol.Results{Code: "ABCDEF", Round: 2, Players: p}, now))
	got, err := s.Rounds(ctx, "ABCDEF", 5)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.True(t, got[0].Interrupted)
	assert.Equal(t, 2, got[0].Round)
	assert.Equal(t, p, got[0].Players)
	assert.False(t, got[1].Interrupted)
}

func TestMigratesVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	s := open(t, path)
	// Make it look like a version 1 database: no interrupted column.
	for _, q := range []string{"DROP TABLE rounds", `CREATE TABLE rounds (id INTEGER PRIMARY KEY AUTOINCREMENT,
		room TEXT NOT NULL, round INTEGER NOT NULL, aborted INTEGER NOT NULL, start_us INTEGER NOT NULL,
		end_us INTEGER NOT NULL, round_us INTEGER NOT NULL, saved_ms INTEGER NOT NULL)`,
		`INSERT INTO rounds (room, round, aborted, start_us, end_us, round_us, saved_ms) VALUES ('ABCDEF', 1, 0, 0, 0, 0, 0)`,
		"PRAGMA user_version = 1"} {
		_, err := s.db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, s.Close())
	s = open(t, path)
	got, err := s.Rounds(ctx, "ABCDEF", 5)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.False(t, got[0].Interrupted)
	require.NoError(t, s.SaveInterrupted(ctx, &protocol.Results{Code: "ABCDEF", Round: 2}, time.Now()))
}
