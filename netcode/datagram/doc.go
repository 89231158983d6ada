// Package datagram is the datagram path to the room server, the parts
// both ends share: the binding of a QUIC connection to a WebSocket
// session, the keepalive, when the path counts as up, the splitting of
// state batches into datagrams and the dropping of reordered states. It
// is pure: time is an argument, and the sockets (quic-go) live in
// server/ and client/serverlink.
//
// The WebSocket connection stays the first contact and the fallback: its
// welcome offers the path (protocol.DatagramOffer: a UDP port, the SHA-256
// hash of the server's certificate and a one-time binding token). The
// client opens a QUIC connection (RFC 9000, ALPN "nearzero-dgram/1",
// unreliable datagrams of RFC 9221), accepts the server's certificate by
// that hash alone (as WebTransport's serverCertificateHashes does, so a
// self-signed certificate needs no CA), and binds it on one bidirectional
// stream: Bind then the token, answered by BindOK and the next token, the
// one a later QUIC connection of the same session binds with. Then each
// datagram carries what one WebSocket message would (a batch of state
// frames, or one ping, pong or echo control frame), or a keepalive
// (Keepalive).
//
// Each end sends states over the path only while it is Up (Path): it has
// heard from the other end over it within DeadAfter, and the other end's
// last word said it hears this one (a keepalive's flag; a state or a ping
// says so by being sent). In a room, an end that sent nothing for
// KeepaliveEvery sends a keepalive (outside one the path rests). A path that dies (UDP blocked, a NAT mapping gone)
// is thus left by both ends within DeadAfter plus a keepalive, and taken
// again as soon as it answers. docs/protocol.md has the whole description.
package datagram
