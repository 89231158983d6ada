package server

import (
	"errors"
	"log/slog"
	"net"
	"runtime/debug"

	"github.com/pion/stun/v4"
)

// serveSTUN answers STUN binding requests on conn until it closes: each
// gets the address it came from (XOR-MAPPED-ADDRESS), which is how a
// player behind a NAT learns the address its NAT gives it (a server
// reflexive candidate). Anything else is ignored. The answer is hardly
// larger than the request, so the responder amplifies nothing worth
// having.
func serveSTUN(conn net.PacketConn, log *slog.Logger) {
	buf := make([]byte, 1500)
	for {
		n, addr, err := conn.ReadFrom(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue // an ICMP error surfacing on the socket, and the like
		}
		answerSTUN(conn, buf[:n], addr, log)
	}
}

// answerSTUN answers one packet, if it is a binding request. A panic (a
// bug) loses that answer only.
func answerSTUN(conn net.PacketConn, b []byte, addr net.Addr, log *slog.Logger) {
	defer func() {
		if v := recover(); v != nil {
			log.Error("stun: recovered a panic", "panic", v, "stack", string(debug.Stack()))
		}
	}()
	ua, ok := addr.(*net.UDPAddr)
	if !ok || !stun.IsMessage(b) {
		return
	}
	req := &stun.Message{Raw: append([]byte(nil), b...)}
	if err := req.Decode(); err != nil || req.Type != stun.BindingRequest {
		return
	}
	resp, err := stun.Build(stun.NewTransactionIDSetter(req.TransactionID), stun.BindingSuccess,
		&stun.XORMappedAddress{IP: ua.IP, Port: ua.Port}, stun.Fingerprint)
	if err != nil {
		return
	}
	_, _ = conn.WriteTo(resp.Raw, addr)
}
