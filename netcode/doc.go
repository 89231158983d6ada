// Package netcode is the root of nearzero's pure core: everything that decides
// where a remote entity is drawn, with no cgo, no engine and no sockets, so the
// game client, the room server, the bench and the headless tests all run the
// same code.
//
// Subpackages:
//
//	geom       vectors and quaternions
//	wire       the binary wire format and version constants
//	protocol   the room protocol's control messages, codes and limits
//	clock      clock sync to the server and the shared re-stamp estimator
//	predict    the remote-entity predictor (the receiving side)
//	sender     sampling and the send schedule (the owning side)
//	lagsim     the lag simulator, a delay line on injected time
//	ratelimit  the token bucket behind every budget
//	motion     the per-entity motion checks (speed, moves, teleports, bounds)
//	inputdelay the opt-in input delay (the owner's input late, states ahead)
//	simnet     virtual time and simulated links for tests and the bench
//	version    the release version
//
// docs/architecture.md describes how they fit together.
//
// Invariants: nothing under netcode/ imports "C", bindings/, extension/ or
// server/ (test/boundaries enforces it); time is always an argument
// (time.Duration since an arbitrary origin), never read from the wall clock;
// randomness is seeded.
package netcode
