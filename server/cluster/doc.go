// Package cluster lets several nearzero room servers share one room
// directory through NATS JetStream, so that a game outgrows one machine
// without a cluster protocol of its own.
//
// # Directory
//
// Two JetStream key-value buckets hold the directory:
//
//	rooms   room code -> id of the node that runs it
//	nodes   node id   -> Info as JSON: public URL, region, load, draining
//
// Both buckets have a TTL (Config.TTL): an entry lives that long after its
// last write. Each node rewrites its node entry and every room it runs
// every Config.Refresh (a third of the TTL by default), so the entries of
// a node that dies expire on their own within one TTL; nothing has to
// notice the death. A room code is claimed with a create-if-absent write,
// which makes codes unique across nodes.
//
// # Placement and redirects
//
// Each node watches the nodes bucket and keeps the live entries in memory,
// so placing a room needs no network round trip: Place picks the node of
// the requested region with the fewest rooms (then players) that is not
// draining and not full, preferring this node on a tie; rooms placed but
// not yet claimed count where they were placed, so that a burst of
// creates spreads. The server then
// answers the client with a redirect to that node ("create there"), and
// the client creates the room there: the node that runs a room is always
// the node the client talks to, and no node reserves a room for another.
// Locate answers a join on the wrong node with the owner's public URL.
//
// # Failure
//
//   - A node that dies: its entries expire within Config.TTL; a join or
//     reconnect by one of its codes is then answered "room gone" (the
//     room's state died with the node). The other nodes log it once its
//     entry expired, and place no new room there once it missed two
//     refreshes. Peers lists the other nodes for the welcome, so that a
//     client whose node died can ask another.
//   - NATS unreachable, paused or restarted: rooms already running go on;
//     new rooms cannot be claimed (creates fail with an internal error)
//     and joins of codes not on this node fail. A refresh that fails is
//     retried after a quarter of Refresh; when NATS answers again (a
//     reconnect) every entry is written at once and the watch restarted.
//     An entry of this node's found at a revision it never recorded (a
//     write that timed out landed later) is adopted, never taken for
//     another node's; a claim or delete that timed out is looked at again
//     until its late write, if any, is undone. Writes made while the
//     connection is down fail at once rather than being sent later.
//   - The watch: this node's own entry, written every refresh, must come
//     back through it within half a refresh; if not, the watch is
//     restarted (NATS lost its stream under it).
//   - A node started while NATS is unreachable starts detached (Claim and
//     Locate fail, Place keeps rooms here) and joins once NATS answers.
//   - A node restarted with the same id drops the room entries its earlier
//     life left behind, at Start.
//
// *Node implements the Cluster interface of package server; a server
// without one (the default) has no directory and no NATS code path.
package cluster
