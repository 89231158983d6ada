package netroom

import (
	"context"
	"time"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// ServerLink is the Room's link to the room server: the part of
// *serverlink.Conn a Room uses (the direct links to other players are
// client/direct's). It exists so that tests can drive a Room without a
// server; DialServer returns the real one.
type ServerLink interface {
	Create(ctx context.Context, settings *protocol.Settings) (*protocol.Joined, error)
	Join(ctx context.Context, codeOrLink string) (*protocol.Joined, error)
	Leave(ctx context.Context) error
	Send(m protocol.Message) error
	SendState(s *wire.State) error
	PollEvents(dst []serverlink.Event) []serverlink.Event
	PollStates(dst []serverlink.RemoteState) []serverlink.RemoteState
	Synced() bool
	ServerTime(local time.Duration) time.Duration
	LocalTime(server time.Duration) time.Duration
	RTT() time.Duration
	Token() string
	Close(ctx context.Context) error
}

// Dialer connects to the server at url (already normalised by ServerURL).
// It may block; a Room calls it from a goroutine.
type Dialer func(ctx context.Context, url string, opts *serverlink.Options) (ServerLink, error)

// DialServer is the default Dialer: serverlink.Dial.
func DialServer(ctx context.Context, url string, opts *serverlink.Options) (ServerLink, error) {
	c, err := serverlink.Dial(ctx, url, opts)
	if err != nil {
		return nil, err // serverlink.Dial names the URL already
	}
	return c, nil
}

var _ ServerLink = (*serverlink.Conn)(nil)
