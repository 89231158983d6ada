// Package metrics is the server's Prometheus instrumentation. Metrics
// implements room.Metrics for the rooms and adds the connection-level
// counters; everything registers on the Registerer passed to New (never
// the global one), so tests and embedders get their own.
//
// Invariants: every method is cheap and never blocks (atomic adds on
// pre-resolved series); label values come from fixed sets (reasons, codes,
// phases), never from user input.
package metrics
