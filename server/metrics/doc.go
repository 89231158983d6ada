// Package metrics is the server's instrumentation: counters, gauges and a
// histogram kept with atomic operations and no dependency, so a server
// embedded in a game (server/embedded) links no exporter. Metrics
// implements room.Metrics for the rooms and adds the connection-level
// counters. Package metrics/prom exposes a Metrics to Prometheus for the
// standalone server.
//
// Invariants: every method is cheap and never blocks (atomic adds on
// pre-resolved series); label values come from fixed sets (reasons, codes,
// phases), never from user input.
package metrics
