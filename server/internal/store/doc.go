// Package store is the server's embedded storage: the identity secret,
// users' display names, and round results, in one SQLite file
// (modernc.org/sqlite: pure Go, no cgo). The schema is created on first
// open and versioned with PRAGMA user_version.
//
// Invariants: one connection (SQLite serialises writes anyway, and
// ":memory:" is then one database, not one per connection); every method
// takes a context and wraps its errors with what it was doing; results are
// written in one transaction per round.
package store
