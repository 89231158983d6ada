// Package faults is the fault suite of a nearzero cluster (README,
// "Faults"): real processes on loopback, each fault scripted while players
// play, and what the players saw measured.
//
// Each scenario starts a NATS server with JetStream on a file store (this
// test binary run again as a child process, serving the nats-server
// module's server), three nearzero-server nodes (the command built once
// with go build) whose links to NATS each pass through a TCP proxy the
// test can cut, and 12 players (package client, in the test process) in 4
// rooms of 3, each playing a round at 30 Hz, having dialled the nodes in
// turn. Then one fault:
//
//   - node SIGKILL, node SIGTERM (drain), node hung (SIGSTOP, then
//     SIGCONT once its players moved on) of the node running the most
//     rooms;
//   - NATS restart (SIGKILL, restarted on its data 4 s later), NATS paused
//     (SIGSTOP for 4 s), one node cut from NATS for 4 s.
//
// The directory's TTL is 6 s (a refresh every 2 s, 0.8 s for each
// directory call), the seat hold 20 s.
// A player whose room is lost makes a new one with its room-mates (the
// first of them to ask creates it, the others join by code), as a game's
// lobby would; one whose client gave up dials the next node, as a load
// balancer would send it.
//
// Each scenario checks, waiting on conditions with generous bounds (never
// a wall-time bound on the outcome):
//
//   - every player back to playing (states from its room-mates arriving);
//     the time from the fault is measured (p50, max) for the players
//     affected (a reconnect, a lost room, or a second without states);
//   - every room code joinable through every node still running, a TTL
//     and a refresh after the fault healed;
//   - no two rooms under one code (every join of a code lands in the room
//     of its players);
//   - every round whose results the players saw is stored, and every
//     round a drain interrupted is stored as interrupted.
//
// The measured table is logged (go test -v) and written to the file named
// by $NEARZERO_FAULTS_TABLE. The suite needs the go command (to build the
// server) and skips in -short mode.
package faults
