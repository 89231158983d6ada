package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/nearzero/nearzero/netcode/protocol"
)

// Memory is the path of a database that lives in memory (tests).
const Memory = ":memory:"

// schemaVersion is the PRAGMA user_version of the current schema.
const schemaVersion = 2

const schema = `
CREATE TABLE IF NOT EXISTS secret (
	id    INTEGER PRIMARY KEY CHECK (id = 1),
	value BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	seen_ms    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS rounds (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	room     TEXT NOT NULL,
	round    INTEGER NOT NULL,
	aborted  INTEGER NOT NULL,
	start_us INTEGER NOT NULL,
	end_us   INTEGER NOT NULL,
	round_us INTEGER NOT NULL,
	saved_ms INTEGER NOT NULL,
	interrupted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS rounds_room ON rounds (room, id);
CREATE TABLE IF NOT EXISTS round_players (
	round_id INTEGER NOT NULL REFERENCES rounds (id),
	slot     INTEGER NOT NULL,
	user_id  TEXT NOT NULL,
	name     TEXT NOT NULL,
	status   TEXT NOT NULL,
	time_us  INTEGER NOT NULL,
	score    REAL NOT NULL,
	place    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS round_players_user ON round_players (user_id);
`

// ErrNewerSchema indicates a database written by a newer server build.
var ErrNewerSchema = errors.New("store: database schema is newer than this build")

// Store is the embedded database. It is safe for concurrent use.
type Store struct {
	db *sql.DB
}

// Open opens (creating if needed) the database at path, or an in-memory one
// for Memory, and creates the schema on first run. The database holds the
// identity signing secret, so its files (with -wal and -shm) are made
// readable by the owner only (0600), whatever the umask, and files an
// older build left readable by others are tightened.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := private(path); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db}
	if err := s.init(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// SQLite gives -wal and -shm the main file's mode; check anyway.
	if err := private(path); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return s, nil
}

// private creates the database file at path with mode 0600 if it does not
// exist and sets 0600 on it and its -wal and -shm files if they do.
// In-memory and URI ("file:") databases are left alone.
func private(path string) error {
	if path == "" || path == Memory || strings.HasPrefix(path, "file:") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("make %s private: %w", p, err)
		}
	}
	return nil
}

func (s *Store) init(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, "PRAGMA busy_timeout = 5000"); err != nil {
		return fmt.Errorf("set busy timeout: %w", err)
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("set journal mode: %w", err)
	}
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("%w: version %d, this build knows %d", ErrNewerSchema, v, schemaVersion)
	}
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if v == 1 { // version 2 marks rounds the server stopped while they ran
		if _, err := s.db.ExecContext(ctx, "ALTER TABLE rounds ADD COLUMN interrupted INTEGER NOT NULL DEFAULT 0"); err != nil {
			return fmt.Errorf("migrate schema to version 2: %w", err)
		}
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("write schema version: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return nil
}

// Secret returns the server's identity secret, creating it with newSecret
// on first use.
func (s *Store) Secret(ctx context.Context, newSecret func() ([]byte, error)) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, "SELECT value FROM secret WHERE id = 1").Scan(&b)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read secret: %w", err)
	}
	b, err = newSecret()
	if err != nil {
		return nil, fmt.Errorf("create secret: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, "INSERT OR IGNORE INTO secret (id, value) VALUES (1, ?)", b); err != nil {
		return nil, fmt.Errorf("store secret: %w", err)
	}
	// Read back: a concurrent first call may have won.
	if err := s.db.QueryRowContext(ctx, "SELECT value FROM secret WHERE id = 1").Scan(&b); err != nil {
		return nil, fmt.Errorf("read secret: %w", err)
	}
	return b, nil
}

// UserName returns the stored display name of user; ok is false for an
// unknown user.
func (s *Store) UserName(ctx context.Context, user string) (name string, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, "SELECT name FROM users WHERE id = ?", user).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read user %s: %w", user, err)
	}
	return name, true, nil
}

// SaveUser records user with its display name, seen at now.
func (s *Store) SaveUser(ctx context.Context, user, name string, now time.Time) error {
	ms := now.UnixMilli()
	_, err := s.db.ExecContext(ctx, `INSERT INTO users (id, name, created_ms, seen_ms) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, seen_ms = excluded.seen_ms`, user, name, ms, ms)
	if err != nil {
		return fmt.Errorf("save user %s: %w", user, err)
	}
	return nil
}

// RenameUser changes the stored name of user, seen at now; an unknown
// user stays unknown (rows are made by SaveResults).
func (s *Store) RenameUser(ctx context.Context, user, name string, now time.Time) error {
	_, err := s.db.ExecContext(ctx, "UPDATE users SET name = ?, seen_ms = ? WHERE id = ?", name, now.UnixMilli(), user)
	if err != nil {
		return fmt.Errorf("rename user %s: %w", user, err)
	}
	return nil
}

// SaveResults stores one round's results, saved at now, and records each
// player as a user (name and last seen).
func (s *Store) SaveResults(ctx context.Context, res *protocol.Results, now time.Time) error {
	return s.saveRound(ctx, res, false, now)
}

// SaveInterrupted stores a round the server stopped while it ran, with the
// players who were in it; Round.Interrupted marks it.
func (s *Store) SaveInterrupted(ctx context.Context, res *protocol.Results, now time.Time) error {
	return s.saveRound(ctx, res, true, now)
}

func (s *Store) saveRound(ctx context.Context, res *protocol.Results, interrupted bool, now time.Time) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("save results of room %s round %d: %w", res.Code, res.Round, err)
		}
	}()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	ms := now.UnixMilli()
	r, err := tx.ExecContext(ctx, `INSERT INTO rounds (room, round, aborted, start_us, end_us, round_us, saved_ms, interrupted)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, res.Code, res.Round, res.Aborted, res.StartUS, res.EndUS, res.RoundUS, ms, interrupted)
	if err != nil {
		return err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return err
	}
	for _, p := range res.Players {
		if _, err = tx.ExecContext(ctx, `INSERT INTO round_players (round_id, slot, user_id, name, status, time_us, score, place)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, p.Slot, p.User, p.Name, p.Status, p.TimeUS, p.Score, p.Place); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `INSERT INTO users (id, name, created_ms, seen_ms) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, seen_ms = excluded.seen_ms`, p.User, p.Name, ms, ms); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Round is one stored round.
type Round struct {
	protocol.Results
	// Interrupted marks a round the server stopped while it ran (a second
	// SIGTERM, or the drain grace ran out); Players are who was in it.
	Interrupted bool
}

// Results returns up to limit of the newest rounds of room code, newest first.
func (s *Store) Results(ctx context.Context, code string, limit int) ([]protocol.Results, error) {
	rounds, err := s.Rounds(ctx, code, limit)
	if err != nil {
		return nil, err
	}
	out := make([]protocol.Results, len(rounds))
	for i, r := range rounds {
		out[i] = r.Results
	}
	return out, nil
}

// Rounds returns up to limit of the newest rounds of room code, newest
// first, with whether each was interrupted.
func (s *Store) Rounds(ctx context.Context, code string, limit int) (_ []Round, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("read results of room %s: %w", code, err)
		}
	}()
	rows, err := s.db.QueryContext(ctx, `SELECT id, round, aborted, start_us, end_us, round_us, interrupted FROM rounds
		WHERE room = ? ORDER BY id DESC LIMIT ?`, code, limit)
	if err != nil {
		return nil, err
	}
	var out []Round
	var ids []int64
	for rows.Next() {
		var id int64
		r := Round{Results: protocol.Results{Code: code}}
		if err := rows.Scan(&id, &r.Round, &r.Aborted, &r.StartUS, &r.EndUS, &r.RoundUS, &r.Interrupted); err != nil {
			_ = rows.Close()
			return nil, err
		}
		out, ids = append(out, r), append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, id := range ids {
		prows, err := s.db.QueryContext(ctx, `SELECT slot, user_id, name, status, time_us, score, place
			FROM round_players WHERE round_id = ? ORDER BY rowid`, id)
		if err != nil {
			return nil, err
		}
		for prows.Next() {
			var p protocol.PlayerResult
			if err := prows.Scan(&p.Slot, &p.User, &p.Name, &p.Status, &p.TimeUS, &p.Score, &p.Place); err != nil {
				_ = prows.Close()
				return nil, err
			}
			out[i].Players = append(out[i].Players, p)
		}
		if err := prows.Close(); err != nil {
			return nil, err
		}
		if err := prows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}
