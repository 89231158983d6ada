// Package netlab is the network lab: direct links and the server path
// through real kernel networking, real NATs and a real delaying, lossy
// network, in the test suite (go test ./test/netlab/, TestNetworks).
//
// # Topology
//
// Network namespaces, one per part:
//
//	player ── veth ── router (nftables NAT) ══ impairment ══ pub (nearzero-server)
//	player ── veth ── router (nftables NAT) ══ impairment ══╝
//
// "pub" holds the room server (server/cmd/nearzero-server, built by the
// test) on 203.0.113.1, with its datagram path and STUN responder (UDP, on
// its port number) and, where a case asks, its embedded TURN relay. Each player sits on its own 192.168.1.0/24
// behind a router that masquerades it onto 198.51.100.0/24 in one of three
// modes (NAT): port-kept (plain masquerade: endpoint-independent mapping),
// symmetric (masquerade fully-random) or UDP blocked; the router drops
// unasked-for packets to itself, as a home router's firewall does. A LAN
// case puts both players on one bridge behind one NAT with every UDP
// packet to the server dropped (its STUN and TURN unreachable).
//
// The kernel here has no netem and no NFQUEUE, so the link between a
// router and pub is a pair of TUN devices, made by the test process and
// moved into the two namespaces, joined by a userspace stage (Impairment)
// that delays each packet by Delay ± Jitter (uniform: packets may
// reorder, as netem's jitter does) and drops it with probability Loss,
// each way, seeded.
//
// The players are the player program (test/netlab/player): a headless
// client/netroom Room, as a NetRoom drives it, started with "ip netns
// exec". It sends a 60 Hz mover whose path is a function of the wall clock
// that every namespace shares (At), so each player knows where the other
// truly was at each frame it draws, and records per frame the path drawn
// from, the state age and the drawn error, whether the server link's
// datagram path was up, and every state sent and received (Result). The test turns two players' records into a row of
// README.md's "Networks" table (RowOf) and checks each case's goals.
//
// # Running
//
// The lab needs root, ip (iproute2), nft (nftables), /dev/net/tun and the
// go command; elsewhere, and in -short mode, it skips with one line saying
// why. It removes every namespace it made when a test ends, failed or not,
// and sweeps what a killed run left (names carry the process id). A case
// run while the machine was too busy to keep the lab's time (the test's
// 5 ms timers fired over 20 ms late, p99) is skipped, saying so, not
// judged. A full run takes about three minutes; environment variables
// pick parts:
//
//	NETLAB_CASES=LAN,symmetric   cases whose names contain one of these
//	NETLAB_SEED=3                the cases' seed
//	NETLAB_SERVER_SEEDS=6        runs the simulator comparison pools
//	NETLAB_TABLE=path            write the table there
//	NETLAB_KEEP=dir              keep the players' records there
//	NETLAB_LOGS=1                log the server's and players' output
package netlab
