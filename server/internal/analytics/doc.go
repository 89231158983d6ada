// Package analytics records the player funnel: one Event per player per
// step (joined a room, loaded, ready, start clicked, ...), written as JSON
// lines to a configurable sink.
//
// Invariants: Sink.Emit never blocks (a full queue drops the event and
// counts it); a Sink's goroutine ends at Close; the rooms that produce
// events know nothing of where they go.
package analytics
