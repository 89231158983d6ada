package netroom

// datagramSetter is the part of a ServerLink that turns the datagram path
// on and off live, and says whether states take it (*serverlink.Conn has
// it; a test's fake may not).
type datagramSetter interface {
	SetDatagrams(on bool)
	DatagramUp() bool
}

// ServerDatagrams reports whether the server link may carry states as
// datagrams (QUIC over UDP, when the server offers it; docs/protocol.md,
// "Datagram path"). On by default: Config.NoDatagrams turns it off.
func (r *Room) ServerDatagrams() bool { return !r.cfg.NoDatagrams }

// SetServerDatagrams turns the datagram path of the server link on or
// off, at once when connected and for every later connection: off, every
// state goes by the WebSocket, as with UDP blocked.
func (r *Room) SetServerDatagrams(on bool) {
	r.cfg.NoDatagrams = !on
	if ds, ok := r.link.(datagramSetter); ok {
		ds.SetDatagrams(on)
	}
}

// ServerDatagramUp reports whether states to and from the server go as
// datagrams now (false on the WebSocket, and while not connected).
func (r *Room) ServerDatagramUp() bool {
	ds, ok := r.link.(datagramSetter)
	return ok && ds.DatagramUp()
}
