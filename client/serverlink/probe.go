package serverlink

import (
	"github.com/nearzero/nearzero/client/core"
	"github.com/nearzero/nearzero/netcode/protocol"
)

// answerProbe answers a pong's probe at once, by the path every message
// takes out (core.Echo says why). Servers that do not measure send none.
func (c *Conn) answerProbe(m protocol.Message) {
	if p, ok := m.(*protocol.Pong); ok {
		if e, ok := core.Echo(p); ok {
			_ = c.sendDatagramMsg(&e) // the way states go
		}
	}
}
