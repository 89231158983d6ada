package client

import "github.com/nearzero/nearzero/netcode/protocol"

// answerProbe answers a pong's probe (protocol.Pong.Probe) at once, by
// the path every message takes out (the lag simulator, the writer's
// queue): the server times the answer to learn the round trip our states
// see, and trusts our claimed one (Ping.RTTUS) no further. Servers that do
// not measure send no probe.
func (c *Client) answerProbe(m protocol.Message) {
	if p, ok := m.(*protocol.Pong); ok && p.Probe != 0 {
		_ = c.sendMsg(&protocol.Echo{Probe: p.Probe})
	}
}
