// Package netbench is nearzero's netcode bench as a library: two simulated
// players and a real room server (server/room) on one simulated clock
// (netcode/simnet), running the game client's own code (client/netroom's
// Local and Remote, client/core) over simulated links, each drawing the
// other player, compared every rendered frame with where the other player
// truly was at that same true moment.
//
// Run runs one Scenario and returns its rows; RunTable runs many in
// parallel; WriteText, WriteJSON and WriteTraces print them. The command in
// the parent directory is the thin main, and bench/README.md defines every
// column, scenario, method and ablation.
//
// # Invariants
//
//   - A run is a pure function of its scenario, variant, tuning and seed:
//     same seed, same numbers (wall_seconds aside), whatever the
//     parallelism. Every random draw comes from a named simnet stream.
//   - Nothing reads the wall clock except to report wall_seconds.
//   - Only the sockets are simulated: the states are those the game's
//     sending side hands out (client/entity.Local) and client/core
//     encodes, the server path goes through a real room.Room (checks,
//     re-stamping, relay), and nearzero draws with the game's drawing side
//     (client/entity.Remote). The baselines and the error split's
//     reference predictors are the bench's own.
//   - The truth of each bot is stepped at 2 ms on true time, independent of
//     frames and network, except where a scenario couples them (contact
//     impulses, round starts).
package netbench
